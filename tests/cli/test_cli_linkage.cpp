// What the `tiletune` executable needs to start (issue 13): NVRTC is loaded with dlopen and
// yaml-cpp linked from its archive, so its NEEDED entries name neither, and the commands that
// compile nothing run with LD_LIBRARY_PATH pointing nowhere and no NVRTC to be found; a command
// that compiles says in one line that libnvrtc is missing and how to point tiletune at it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli_fixture.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

std::string quote(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

constexpr const char* kUuid = "GPU-11111111-0000-0000-0000-000000000000";

// No library search path and an NVRTC that cannot load: what a machine with the driver alone has.
CommandResult tiletune_without_toolkit(const TempDir& dir, const std::string& args) {
  return run_command("cd " + quote(dir.path()) + " && LD_LIBRARY_PATH=/nonexistent TILETUNE_NVRTC_LIBRARY=" +
                     quote(dir.path() / "no-libnvrtc.so.13") + " TILETUNE_CUBIN_CACHE=" + quote(dir.path() / "cubin") +
                     " TILETUNE_DB=" + quote(dir.path() / "cache.db") + " " + quote(cli_path()) + " " + args);
}

std::vector<std::string> needed_entries(const std::filesystem::path& binary) {
  const CommandResult r = run_command("readelf -d " + quote(binary));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> needed;
  const std::regex entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  std::istringstream lines(r.output);
  std::smatch m;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, m, entry)) needed.push_back(m[1]);
  return needed;
}

TEST(CliLinkage, NeedsNeitherNvrtcNorYamlCpp) {
  const std::vector<std::string> needed = needed_entries(cli_path());
  std::string all;
  for (const std::string& n : needed) all += n + " ";
  ASSERT_FALSE(needed.empty()) << "readelf found no NEEDED entry: is the parse right?";
  EXPECT_NE(all.find("libc.so"), std::string::npos) << all;  // the parse sees a real entry
  for (const std::string& n : needed) {
    EXPECT_EQ(n.find("nvrtc"), std::string::npos) << all;
    EXPECT_EQ(n.find("libcuda"), std::string::npos) << all;
#if TILETUNE_TEST_EXPECT_NO_YAML
    EXPECT_EQ(n.find("yaml"), std::string::npos) << all;
#endif
  }
}

TEST(CliLinkage, CommandsThatCompileNothingRunWithoutTheToolkit) {
  TempDir dir;
  write_cache(dir.path() / "cache.db", kUuid, 0.15);
  write_cache(dir.path() / "other.db", "GPU-22222222-0000-0000-0000-000000000000", 0.2);

  const CommandResult best = tiletune_without_toolkit(dir, "best --format json");
  ASSERT_EQ(best.exit_code, 0) << best.output;
  const auto b = nlohmann::json::parse(best.output);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0]["params"], "TILE=64;BLOCK_ROWS=2;PAD=1");

  const CommandResult lookup = tiletune_without_toolkit(
      dir, std::string("best --kernel transpose --size N=8192 --device ") + kUuid + " --format env");
  EXPECT_EQ(lookup.exit_code, 0) << lookup.output;
  EXPECT_NE(lookup.output.find("TILE=64"), std::string::npos) << lookup.output;

  const CommandResult show = tiletune_without_toolkit(dir, "show");
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("2 trials"), std::string::npos) << show.output;

  const CommandResult csv = tiletune_without_toolkit(dir, "export --format csv");
  EXPECT_EQ(csv.exit_code, 0) << csv.output;

  const CommandResult merge = tiletune_without_toolkit(dir, "merge merged.db cache.db other.db");
  EXPECT_EQ(merge.exit_code, 0) << merge.output;

  const CommandResult report = tiletune_without_toolkit(dir, "report -o report.html");
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "report.html"));
}

TEST(CliLinkage, ACompileWithoutNvrtcSaysSoInOneLine) {
  TempDir dir;
  const CommandResult plan =
      tiletune_without_toolkit(dir, "plan --arch sm_90 " + quote(source_dir() / "configs/transpose.yaml"));
  EXPECT_EQ(plan.exit_code, 1) << plan.output;
  EXPECT_NE(plan.output.find("libnvrtc"), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find("no-libnvrtc.so.13"), std::string::npos) << plan.output;       // what was tried
  EXPECT_NE(plan.output.find("TILETUNE_NVRTC_LIBRARY"), std::string::npos) << plan.output;  // the remedy
  EXPECT_NE(plan.output.find("LD_LIBRARY_PATH"), std::string::npos) << plan.output;
  EXPECT_EQ(std::count(plan.output.begin(), plan.output.end(), '\n'), 1) << plan.output;
  // Nothing was recorded as a compile failure of a config: a later plan with NVRTC compiles.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "cubin") && !std::filesystem::is_empty(dir.path() / "cubin"))
      << "a failed NVRTC load left entries in the cubin cache";
}

}  // namespace
}  // namespace tiletune::testing
