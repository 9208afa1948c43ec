// The installed package: `cmake --install` of this build into a temporary prefix, then the C
// example built as a project of its own with find_package(tiletune) against that prefix, and
// run against a fixture cache. Also pkg-config's view of the query library.
#include <gtest/gtest.h>

#include "query_fixture.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

TEST(InstalledPackage, AConsumerBuildsWithFindPackageAndAnswersFromACache) {
  TempDir dir;
  const auto prefix = dir.path() / "prefix";
  const std::string cmake = TILETUNE_CMAKE_COMMAND;
  CommandResult install = run_command(q(cmake) + " --install " + q(TILETUNE_BINARY_DIR) + " --prefix " + q(prefix));
  ASSERT_EQ(install.exit_code, 0) << install.output;
  for (const char* file : {"include/tiletune/query.hpp", "include/tiletune/tiletune.h", "bin/tiletune",
                           "lib/cmake/tiletune/tiletuneConfig.cmake", "lib/pkgconfig/tiletune-query.pc",
                           "lib/pkgconfig/tiletune-engine.pc", "share/tiletune/configs/transpose.yaml"}) {
    EXPECT_TRUE(std::filesystem::exists(prefix / file)) << file;
  }

  const auto build = dir.path() / "consumer";
  CommandResult configure = run_command(q(cmake) + " -S " + q(source_dir() / "examples" / "c_lookup") + " -B " +
                                        q(build) + " -DCMAKE_PREFIX_PATH=" + q(prefix));
  ASSERT_EQ(configure.exit_code, 0) << configure.output;
  CommandResult compiled = run_command(q(cmake) + " --build " + q(build));
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;

  const auto db = write_fixture(dir.path() / "cache.db");
  CommandResult r = run_command(q(build / "example_c_lookup") + " " + q(db) + " transpose N=8192 " + h200_a);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("# match: exact"), std::string::npos) << r.output;

  // The installed CLI finds the shipped spaces next to itself.
  CommandResult plan = run_command("cd " + q(dir.path()) + " && TILETUNE_CUBIN_CACHE=" + q(dir.path() / "cubin") + " " +
                                   q(prefix / "bin" / "tiletune") + " tune --arch sm_90 -q");
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find((prefix / "share" / "tiletune" / "configs" / "transpose.yaml").string()),
            std::string::npos)
      << plan.output;

  CommandResult pc =
      run_command("PKG_CONFIG_PATH=" + q(prefix / "lib" / "pkgconfig") + " pkg-config --cflags --libs tiletune-query");
  if (pc.exit_code == 127) GTEST_SKIP() << "pkg-config is not installed";
  EXPECT_EQ(pc.exit_code, 0) << pc.output;
  EXPECT_NE(pc.output.find("-ltiletune-query"), std::string::npos) << pc.output;
}

}  // namespace
}  // namespace tiletune::testing
