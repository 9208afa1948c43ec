// Exit statuses of `tune` on a real GPU (label gpu; skips without one): a sweep in which no config
// runs ok exits 4 and `best` then finds nothing for it (4 again); a device ordinal the machine
// (or that --devices names) does not have and a malformed budget are usage errors (2), exactly as
// without a GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

CommandResult tiletune(const TempDir& dir, const std::string& args) {
  return run_command("TILETUNE_CUBIN_CACHE=" + quote(dir.path() / "cubin") + " TILETUNE_DB=" +
                     quote(dir.path() / "cache.db") + " timeout 600 " + quote(cli_path()) + " " + args);
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "planted.yaml no longer has '" << from << "'";
  text.replace(at, from.size(), to);
}

// The planted space with only its failing modes: 3 (__trap) and 6 (a compile error).
fs::path failing_space(const TempDir& dir) {
  const fs::path planted = test_data_dir() / "spaces" / "planted";
  std::string text = read_file(planted / "planted.yaml");
  replace_once(text, "source: planted.cu", "source: " + (planted / "planted.cu").string());
  replace_once(text, "MODE: [0, 1, 2, 3, 4, 5, 6]", "MODE: [3, 6]");
  replace_once(text, "verify: {reference: {config: {MODE: 0, BLOCK: 256}}, rtol: 0, atol: 0}",
               "verify: {reference: none}");
  replace_once(text, "default: {MODE: 0, BLOCK: 128}", "default: {MODE: 3, BLOCK: 128}");
  return dir.write("failing.yaml", text);
}

TEST(CliGpu, ASweepWithNoOkTrialExitsFour) {
  TempDir dir;
  const fs::path space = failing_space(dir);
  const CommandResult r = tiletune(dir, "tune -q " + quote(space));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("tiletune: tune: no config of any problem ran ok"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("runtime_fault"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("compile_failed"), std::string::npos) << r.output;
  const CommandResult best = tiletune(dir, "best --kernel planted --size N=1000003");
  EXPECT_EQ(best.exit_code, 4) << best.output;
}

TEST(CliGpu, UsageErrorsAreTheSameWithAGpu) {
  TempDir dir;
  const std::string space = quote(source_dir() / "configs" / "transpose.yaml");
  CommandResult r = tiletune(dir, "tune --device 1023 " + space);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--device 1023: this machine has"), std::string::npos) << r.output;
  r = tiletune(dir, "tune --devices 0,1023 " + space);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--devices '0,1023': device 1023 does not exist"), std::string::npos) << r.output;
  r = tiletune(dir, "tune --devices 0,0 " + space);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = tiletune(dir, "tune --budget abc " + space);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--budget: 'abc'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "cache.db")) << "a usage error opened the cache";
}

}  // namespace
}  // namespace tiletune::testing
