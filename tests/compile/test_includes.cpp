// Headers and include paths: the include directives found without a preprocessor, the search
// NVRTC does (headers next to the source by name, then -I, then the toolkit's), dependencies
// named the same in every checkout and hashed by content, the toolkit override, -I made
// absolute against a base, files that are not regular or too large refused at once, and CUB's
// block-level primitives compiled with NVRTC.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "compile/includes.hpp"
#include "scoped_env.hpp"
#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using compile_detail::IncludeDirective;
using tiletune::testing::TempDir;

using tiletune::testing::ScopedEnv;

std::vector<std::string> dependency_names(const KernelSource& source) {
  std::vector<std::string> names;
  for (const auto& d : source.dependencies) names.push_back(d.name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(IncludeDirectives, EveryFormOutsideComments) {
  const auto found = compile_detail::include_directives(
      "#include \"a.h\"\n"
      "  #  include <b/c.h>  // trailing\n"
      "// #include \"commented.h\"\n"
      "/* #include <also.h>\n   #include <still.h> */\n"
      "#include_next <d.h>\n"
      "#if __has_include(<e.h>) && __has_include( \"f.h\" )\n#endif\n"
      "#include MACRO_HEADER\n"
      "const char* s = \"#include <in_a_string.h>\";\n");
  ASSERT_EQ(found.size(), 5u);
  EXPECT_EQ(found[0].name, "a.h");
  EXPECT_EQ(found[0].form, IncludeDirective::Form::quoted);
  EXPECT_EQ(found[0].line, 1);
  EXPECT_EQ(found[1].name, "b/c.h");
  EXPECT_EQ(found[1].form, IncludeDirective::Form::angle);
  EXPECT_EQ(found[2].name, "d.h");
  EXPECT_TRUE(found[2].next);
  EXPECT_EQ(found[2].line, 6);
  EXPECT_EQ(found[3].name, "e.h");
  EXPECT_TRUE(found[3].probe);
  EXPECT_EQ(found[4].name, "f.h");
  EXPECT_EQ(found[4].form, IncludeDirective::Form::quoted);
}

TEST(IncludeSearchOptions, EverySpellingOfADirectory) {
  const auto search = include_search({"-Ia", "-I b", "-I", "c", "--include-path=d", "--include-path", "e", "-DX=1",
                                      "--pre-include=p.h", "-include", "q.h"});
  EXPECT_EQ(search.include_dirs, (std::vector<fs::path>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(search.pre_includes, (std::vector<std::string>{"p.h", "q.h"}));
  EXPECT_EQ(search.toolkit_dirs, toolkit_include_dirs());

  const auto resolved =
      resolve_include_dirs({"-Iinc", "-I", "../up", "-I/abs", "--include-path=x/./y", "-DA=1"}, "/base/dir");
  EXPECT_EQ(resolved,
            (std::vector<std::string>{"-I/base/dir/inc", "-I/base/up", "-I/abs", "-I/base/dir/x/y", "-DA=1"}));
}

TEST(ToolkitIncludeDirs, DefaultAndOverride) {
  {
    ScopedEnv unset("TILETUNE_CUDA_INCLUDE", nullptr);
    const auto dirs = toolkit_include_dirs();
    ASSERT_EQ(dirs.size(), 2u);  // CUDA 13: include/ and include/cccl
    EXPECT_TRUE(fs::exists(dirs[0] / "cuda_fp16.h")) << dirs[0];
    EXPECT_TRUE(fs::exists(dirs[1] / "cub" / "block" / "block_reduce.cuh")) << dirs[1];
  }
  TempDir dir;
  fs::create_directories(dir.path() / "one");
  fs::create_directories(dir.path() / "two");
  const std::string list =
      (dir.path() / "one").string() + ":" + (dir.path() / "missing").string() + ":" + (dir.path() / "two").string();
  ScopedEnv set("TILETUNE_CUDA_INCLUDE", list.c_str());
  EXPECT_EQ(toolkit_include_dirs(), (std::vector<fs::path>{dir.path() / "one", dir.path() / "two"}));
}

// A tree written the same way at two places: a kernel, a header next to it, a library under
// -I whose header includes a sibling by a quoted path.
fs::path write_tree(const TempDir& dir, const std::string& root) {
  dir.write(root + "/lib/tile/tile.cuh", "#pragma once\n#include \"detail.cuh\"\n#define TILE_FLOATS 1024\n");
  dir.write(root + "/lib/tile/detail.cuh", "#pragma once\n#define TILE_DETAIL 1\n");
  dir.write(root + "/k/local.cuh", "#define LOCAL 1\n");
  return dir.write(root + "/k/k.cu",
                   "#include \"local.cuh\"\n#include <tile/tile.cuh>\n"
                   "extern \"C\" __global__ void k(float* p) {\n"
                   "  __shared__ float s[TILE_FLOATS];\n  s[threadIdx.x] = p[threadIdx.x];\n  __syncthreads();\n"
                   "  p[threadIdx.x] = s[threadIdx.x ^ 1] + LOCAL + TILE_DETAIL;\n}\n");
}

TEST(LoadKernelSource, HeadersThroughIncludeDirsAreHashedDependenciesWithStableNames) {
  TempDir dir;
  const fs::path a = write_tree(dir, "a");
  const fs::path b = write_tree(dir, "b");
  const KernelSource in_a = load_kernel_source(a, include_search({"-I" + (dir.path() / "a/lib").string()}));
  const KernelSource in_b = load_kernel_source(b, include_search({"-I" + (dir.path() / "b/lib").string()}));
  ASSERT_EQ(in_a.headers.size(), 1u);  // local.cuh, handed over by name
  EXPECT_EQ(in_a.headers[0].name, "local.cuh");
  EXPECT_EQ(dependency_names(in_a),
            (std::vector<std::string>{"include[0]/tile/tile.cuh", "include[0]/tile/detail.cuh"}));
  EXPECT_EQ(in_a.hash, in_b.hash);  // the same tree elsewhere: the same hash

  dir.write("b/lib/tile/detail.cuh", "#pragma once\n#define TILE_DETAIL 2\n");
  EXPECT_NE(load_kernel_source(b, include_search({"-I" + (dir.path() / "b/lib").string()})).hash, in_a.hash);

  // NVRTC finds them the same way.
  const std::vector<std::string> options{"-I" + (dir.path() / "a/lib").string()};
  const CompileResult result = compile_nvrtc({&in_a, options, "sm_90", "k"});
  ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log;
  EXPECT_EQ(result.kernel->resources.static_shared_bytes, 4096);
}

TEST(LoadKernelSource, AQuotedIncludeOfADiskHeaderIsFoundBesideItFirst) {
  TempDir dir;
  dir.write("one/v.cuh", "#define V 1\n");
  dir.write("two/wrap.cuh", "#include \"v.cuh\"\n");
  dir.write("two/v.cuh", "#define V 2\n");
  const KernelSource source =
      load_kernel_source(dir.write("k.cu", "#include <wrap.cuh>\n"),
                         include_search({"-I" + (dir.path() / "one").string(), "-I" + (dir.path() / "two").string()}));
  EXPECT_EQ(dependency_names(source), (std::vector<std::string>{"include[1]/wrap.cuh", "include[1]/v.cuh"}));
}

TEST(LoadKernelSource, ToolkitHeadersAreDependencies) {
  TempDir dir;
  const KernelSource source = load_kernel_source(dir.write("k.cu", "#include <cuda_fp16.h>\n"));
  const auto names = dependency_names(source);
  EXPECT_TRUE(has(names, "toolkit[0]/cuda_fp16.h")) << ::testing::PrintToString(names);
  EXPECT_TRUE(has(names, "toolkit[0]/cuda_fp16.hpp")) << ::testing::PrintToString(names);

  // With the override, its headers are the ones found and hashed.
  dir.write("fake/cuda_fp16.h", "#define FAKE 1\n");
  const std::string fake = (dir.path() / "fake").string();
  ScopedEnv set("TILETUNE_CUDA_INCLUDE", fake.c_str());
  const KernelSource faked = load_kernel_source(dir.path() / "k.cu");
  EXPECT_EQ(dependency_names(faked), std::vector<std::string>{"toolkit[0]/cuda_fp16.h"});
  dir.write("fake/cuda_fp16.h", "#define FAKE 2\n");
  EXPECT_NE(load_kernel_source(dir.path() / "k.cu").hash, faked.hash);
}

// Loading must fail at once, not block on a FIFO or read a device without end.
template <typename F>
std::string error_within_a_second(F&& load) {
  const auto start = std::chrono::steady_clock::now();
  try {
    load();
  } catch (const Error& e) {
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(LoadKernelSource, OnlyRegularFilesAreRead) {
  TempDir dir;
  const fs::path fifo = dir.path() / "fifo.cu";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string what = error_within_a_second([&] { (void)load_kernel_source(fifo); });
  EXPECT_NE(what.find("fifo.cu' is a FIFO"), std::string::npos) << what;

  what = error_within_a_second([&] { (void)load_kernel_source("/dev/zero"); });
  EXPECT_NE(what.find("is a character device"), std::string::npos) << what;

  // A header next to the source, and one under -I.
  ASSERT_EQ(::mkfifo((dir.path() / "pipe.cuh").c_str(), 0600), 0);
  const fs::path beside = dir.write("beside.cu", "#include \"pipe.cuh\"\n");
  what = error_within_a_second([&] { (void)load_kernel_source(beside); });
  EXPECT_NE(what.find("header '"), std::string::npos) << what;
  EXPECT_NE(what.find("pipe.cuh' is a FIFO"), std::string::npos) << what;
  fs::create_directories(dir.path() / "inc");
  ASSERT_EQ(::mkfifo((dir.path() / "inc" / "lib.cuh").c_str(), 0600), 0);
  const fs::path through = dir.write("through.cu", "#include <lib.cuh>\n");
  what = error_within_a_second(
      [&] { (void)load_kernel_source(through, include_search({"-I" + (dir.path() / "inc").string()})); });
  EXPECT_NE(what.find("lib.cuh' is a FIFO"), std::string::npos) << what;
}

TEST(LoadKernelSource, FilesOverTheSizeCapAreRefused) {
  TempDir dir;
  const fs::path big = dir.write("big.cuh", "");
  fs::resize_file(big, kMaxSourceFileBytes + 1);  // sparse: no 16 MiB written
  const fs::path main = dir.write("k.cu", "#include \"big.cuh\"\n");
  const std::string what = error_within_a_second([&] { (void)load_kernel_source(main); });
  EXPECT_NE(what.find("big.cuh' has 16777217 bytes, more than the 16 MiB"), std::string::npos) << what;
  fs::resize_file(big, kMaxSourceFileBytes);  // at the cap: read
  EXPECT_EQ(load_kernel_source(main).headers.at(0).text.size(), kMaxSourceFileBytes);
}

// CUB under NVRTC: the block-level headers compile, and so does <cub/cub.cuh> (tiletune's
// device-side umbrella: CUB's own pulls in the host-side device algorithms).
TEST(Cub, BlockReduceCompilesForSm90) {
  TempDir dir;
  const KernelSource source =
      load_kernel_source(dir.write("block_sum.cu",
                                   "#include <cub/block/block_reduce.cuh>\n"
                                   "template <int BLOCK>\n"
                                   "__global__ void block_sum(const float* in, float* out) {\n"
                                   "  using Reduce = cub::BlockReduce<float, BLOCK>;\n"
                                   "  __shared__ typename Reduce::TempStorage storage;\n"
                                   "  const float total = Reduce(storage).Sum(in[blockIdx.x * BLOCK + threadIdx.x]);\n"
                                   "  if (threadIdx.x == 0) out[blockIdx.x] = total;\n"
                                   "}\n"));
  EXPECT_TRUE(has(dependency_names(source), "toolkit[1]/cub/block/block_reduce.cuh"));
  const CompileResult result = compile_nvrtc({&source, {}, "sm_90", "block_sum<256>"});
  ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log;
  EXPECT_GT(result.kernel->resources.static_shared_bytes, 0);
  EXPECT_EQ(result.kernel->resources.barriers, 1);
  std::printf("[ info ] cub::BlockReduce<float, 256>: %zu headers hashed, %d registers, %d B smem, %.0f ms\n",
              source.dependencies.size(), result.kernel->resources.registers,
              result.kernel->resources.static_shared_bytes, result.seconds * 1e3);
}

// A kernel written for nvcc includes CUB's umbrella header: under NVRTC it gets tiletune's
// device-side umbrella, named and hashed like any header, and compiles; a space's own -I
// that provides a cub/cub.cuh keeps precedence.
TEST(Cub, TheUmbrellaHeaderCompilesThroughTiletunesOwn) {
  TempDir dir;
  const std::string kernel =
      "#include <cub/cub.cuh>\n"
      "extern \"C\" __global__ void cross(const double* in, double* partial) {\n"
      "  typedef cub::BlockReduce<double, block_size_x, cub::BLOCK_REDUCE_WARP_REDUCTIONS, block_size_y> Reduce;\n"
      "  __shared__ typename Reduce::TempStorage storage;\n"
      "  const double total = Reduce(storage).Sum(in[threadIdx.y * block_size_x + threadIdx.x]);\n"
      "  if (threadIdx.x == 0 && threadIdx.y == 0) partial[blockIdx.x] = total;\n"
      "}\n";
  const KernelSource source = load_kernel_source(dir.write("cross.cu", kernel));
  ASSERT_FALSE(source.headers.empty());
  EXPECT_EQ(source.headers.front().name, "cub/cub.cuh");
  EXPECT_NE(source.headers.front().text.find("device-side primitives"), std::string::npos);
  EXPECT_TRUE(has(dependency_names(source), "toolkit[1]/cub/block/block_reduce.cuh"));
  const CompileResult result = compile_nvrtc({&source, {"-Dblock_size_x=32", "-Dblock_size_y=4"}, "sm_90", "cross"});
  ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log.substr(0, 2000);
  EXPECT_GT(result.kernel->resources.static_shared_bytes, 0);

  // A cub/cub.cuh of the space's own -I is the one used.
  dir.write("mine/cub/cub.cuh", "#pragma once\n#define MY_CUB 1\n");
  const KernelSource own =
      load_kernel_source(dir.path() / "cross.cu", include_search({"-I" + (dir.path() / "mine").string()}));
  EXPECT_TRUE(own.headers.empty());
  EXPECT_TRUE(has(dependency_names(own), "include[0]/cub/cub.cuh"));
}

// Params reach NVRTC as #define lines before the source, not as -D options, which NVRTC also
// applies to its built-in header: -DT=float broke its `template <typename T>`.
TEST(Macros, AParamNamedTLeavesNvrtcsOwnHeaderAlone) {
  TempDir dir;
  const KernelSource source = load_kernel_source(
      dir.write("fill.cu", "extern \"C\" __global__ void fill(T* out) {\n  out[threadIdx.x] = (T)VALUE;\n}\n"));
  const CompileResult result = compile_nvrtc({&source, {"-DT=double", "-DVALUE", "-DUNUSED="}, "sm_90", "fill"});
  ASSERT_TRUE(result.ok()) << result.error;
  // The options reported (and keyed) are the ones given; line numbers still count from the source.
  EXPECT_NE(std::find(result.options.begin(), result.options.end(), "-DT=double"), result.options.end());
  const KernelSource broken =
      load_kernel_source(dir.write("broken.cu", "extern \"C\" __global__ void fill(T* out) {\n  out[0] = nope;\n}\n"));
  const CompileResult failed = compile_nvrtc({&broken, {"-DT=float"}, "sm_90", "fill"});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error.find("broken.cu(2): error"), std::string::npos) << failed.error;
}

// A param whose name a header uses as an identifier: the reason says so.
TEST(Macros, AParamThatRewritesAHeaderIsNamedInTheReason) {
  TempDir dir;
  const KernelSource source =
      load_kernel_source(dir.write("sum.cu",
                                   "#include <cub/block/block_reduce.cuh>\n"
                                   "extern \"C\" __global__ void sum(float* out) {\n"
                                   "  typedef cub::BlockReduce<float, B> R; __shared__ typename R::TempStorage t;\n"
                                   "  const float s = R(t).Sum(1.0f); if (threadIdx.x == 0) *out = s;\n"
                                   "}\n"));
  const CompileResult result = compile_nvrtc({&source, {"-DB=128"}, "sm_90", "sum"});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error.find("(B is a macro here, -DB, and this header uses the name"), std::string::npos)
      << result.error;
}

}  // namespace
}  // namespace tiletune
