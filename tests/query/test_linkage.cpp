// What a program that uses the query library links: neither NVRTC nor the CUDA driver (the
// live device is read through dlopen), checked with ldd on the example consumers and on the
// shared library itself. And the examples answer from a fixture cache.
#include <gtest/gtest.h>

#include "query_fixture.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

void expect_no_gpu_libraries(const std::string& binary) {
  auto r = run_command("ldd '" + binary + "' 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("libc.so"), std::string::npos) << "ldd printed no libraries:\n" << r.output;
  EXPECT_EQ(r.output.find("libnvrtc"), std::string::npos) << binary << " needs NVRTC:\n" << r.output;
  EXPECT_EQ(r.output.find("libcuda"), std::string::npos) << binary << " needs the CUDA driver:\n" << r.output;
  EXPECT_EQ(r.output.find("libyaml-cpp"), std::string::npos) << r.output;
  // The direct dependencies (DT_NEEDED) too, in case ldd resolved something through another path.
  auto d = run_command("readelf -d '" + binary + "' 2>&1 | grep NEEDED");
  EXPECT_EQ(d.output.find("nvrtc"), std::string::npos) << d.output;
  EXPECT_EQ(d.output.find("libcuda"), std::string::npos) << d.output;
}

TEST(QueryLinkage, LibraryNeedsNoGpuLibraries) {
#if TILETUNE_QUERY_SHARED
  expect_no_gpu_libraries(TILETUNE_QUERY_LIBRARY);
  auto r = run_command("ldd '" TILETUNE_QUERY_LIBRARY "' 2>&1");
  EXPECT_NE(r.output.find("libsqlite3"), std::string::npos) << r.output;
#else
  GTEST_SKIP() << "tiletune::query is static here; its consumers are checked below";
#endif
}

#ifdef TILETUNE_EXAMPLE_C
TEST(QueryLinkage, ExamplesNeedNoGpuLibrariesAndAnswer) {
  expect_no_gpu_libraries(TILETUNE_EXAMPLE_C);
  expect_no_gpu_libraries(TILETUNE_EXAMPLE_CPP);

  TempDir dir;
  auto db = write_fixture(dir.path() / "cache.db").string();
  for (const char* example : {TILETUNE_EXAMPLE_C, TILETUNE_EXAMPLE_CPP}) {
    auto r = run_command(std::string(example) + " '" + db + "' transpose N=8192 " + h200_a);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("TILE=32\nBLOCK_ROWS=8\nPAD=1\n# match: exact"), std::string::npos) << r.output;
    auto arch = run_command(std::string(example) + " '" + db + "' transpose N=4096 sm_80");
    EXPECT_EQ(arch.exit_code, 0) << arch.output;
    EXPECT_NE(arch.output.find("# match: same_architecture"), std::string::npos) << arch.output;
    auto none = run_command(std::string(example) + " '" + db + "' reduce N=4096 sm_90");
    EXPECT_EQ(none.exit_code, 2) << none.output;
    auto bad = run_command(std::string(example) + " '" + db + "' transpose N=abc sm_90");
    EXPECT_EQ(bad.exit_code, 1) << bad.output;
    auto foreign =
        run_command(std::string(example) + " '" + dir.write("notes.txt", "hello\n").string() + "' transpose N=1 sm_90");
    EXPECT_EQ(foreign.exit_code, 1) << foreign.output;
    EXPECT_NE(foreign.output.find("not a tiletune cache"), std::string::npos) << foreign.output;
  }
}
#endif

}  // namespace
}  // namespace tiletune::testing
