// load_kernel_source: quoted includes found recursively relative to the including file,
// named as written, hashed with the main file; missing files are errors with file:line.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

using tiletune::testing::TempDir;

TEST(LoadKernelSource, Transpose) {
  const KernelSource source = load_kernel_source(tiletune::testing::source_dir() / "kernels/transpose.cu");
  EXPECT_EQ(source.main.name, "transpose.cu");
  EXPECT_NE(source.main.text.find("transpose("), std::string::npos);
  EXPECT_TRUE(source.headers.empty());
  ASSERT_EQ(source.hash.size(), 32u);
  EXPECT_EQ(source.hash.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(load_kernel_source(tiletune::testing::source_dir() / "kernels/transpose.cu").hash, source.hash);
}

TEST(LoadKernelSource, NestedIncludesRelativeToTheIncludingFile) {
  TempDir dir;
  const auto main = dir.write("k/main.cu",
                              "#include \"inc/a.cuh\"\n"
                              "// #include \"commented_out.cuh\"\n"
                              "/* #include \"also_commented.cuh\" */\n"
                              "  #  include \"inc/a.cuh\"  // twice: loaded once\n"
                              "extern \"C\" __global__ void k(int* p) { p[0] = A + B; }\n");
  dir.write("k/inc/a.cuh", "#pragma once\n#include \"b.cuh\"\n#define A 1\n");
  dir.write("k/inc/b.cuh", "#pragma once\n#include \"a.cuh\"\n#define B 2\n");  // a cycle
  const KernelSource source = load_kernel_source(main);
  ASSERT_EQ(source.headers.size(), 3u);
  EXPECT_EQ(source.headers[0].name, "inc/a.cuh");
  EXPECT_EQ(source.headers[1].name, "b.cuh");
  EXPECT_EQ(source.headers[2].name, "a.cuh");  // the same file, under the name b.cuh uses
  EXPECT_NE(source.headers[1].text.find("#define B 2"), std::string::npos);

  // NVRTC finds them by those names.
  const CompileResult result = compile_nvrtc({&source, {}, "sm_90", "k"});
  EXPECT_TRUE(result.ok()) << result.error << "\n" << result.log;

  // Editing a header changes the hash.
  const std::string before = source.hash;
  dir.write("k/inc/b.cuh", "#pragma once\n#include \"a.cuh\"\n#define B 3\n");
  EXPECT_NE(load_kernel_source(main).hash, before);
}

TEST(LoadKernelSource, MissingIncludeNamesTheIncludingFileAndLine) {
  TempDir dir;
  const auto main = dir.write("main.cu", "#include \"ok.cuh\"\n");
  dir.write("ok.cuh", "// fine\n\n#include \"nope/missing.cuh\"\n");
  try {
    (void)load_kernel_source(main);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ok.cuh:3"), std::string::npos) << what;
    EXPECT_NE(what.find("nope/missing.cuh"), std::string::npos) << what;
  }
}

TEST(LoadKernelSource, AngleIncludesAreLeftToNvrtc) {
  TempDir dir;
  const KernelSource source = load_kernel_source(dir.write("main.cu", "#include <not_ours.h>\n#include<also.h>\n"));
  EXPECT_TRUE(source.headers.empty());
}

TEST(LoadKernelSource, MissingMainFile) {
  TempDir dir;
  try {
    (void)load_kernel_source(dir.path() / "absent.cu");
    FAIL() << "expected Error";
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find("absent.cu"), std::string::npos) << e.what(); }
}

TEST(LoadKernelSource, TwoFilesUnderOneNameAreRefused) {
  TempDir dir;
  const auto main = dir.write("main.cu", "#include \"x/a.cuh\"\n#include \"y/b.cuh\"\n");
  dir.write("x/a.cuh", "#include \"config.h\"\n");
  dir.write("x/config.h", "#define V 1\n");
  dir.write("y/b.cuh", "#include \"config.h\"\n");
  dir.write("y/config.h", "#define V 2\n");
  try {
    (void)load_kernel_source(main);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("b.cuh:1"), std::string::npos) << what;
    EXPECT_NE(what.find("config.h"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tiletune
