// The corpus on a GPU (label gpu): every space tunes its first problem with a small budget and
// gets ok trials whose check ran (verify time spent, a reference that is not none), and the same
// space with -DCORPUS_PLANT_BUG=1 gets wrong_result for every config it measures: the check
// would catch a broken kernel. Prints a table of each kernel's best config and its check; with
// TILETUNE_CORPUS_RESULTS=FILE it also writes the table there (for bench/results/).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "corpus.hpp"
#include "test_support.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {
namespace {

const char* check_name(const Space& space) {
  switch (space.verify.reference) {
    case VerifySpec::Reference::none: return "none";
    case VerifySpec::Reference::builtin: return "built-in";
    case VerifySpec::Reference::config: return "reference config";
    case VerifySpec::Reference::kernel: return "reference kernel";
    case VerifySpec::Reference::library: return "library";
    case VerifySpec::Reference::files: return "expected files";
  }
  return "?";
}

std::string compares(const Space& space) {
  std::string s;
  for (const OutputCheck& c : space.verify.outputs) {
    const char* how = c.compare == OutputCheck::Compare::sum ? "sum" : c.compare == OutputCheck::Compare::none ? "none"
                                                                                                               : "elements";
    s += (s.empty() ? "" : ", ") + c.buffer + ": " + how;
  }
  return s;
}

SweepReport sweep(const Space& space, const testing::TempDir& dir, std::uint64_t budget) {
  SweepOptions o;
  o.device = list_devices().at(0);
  o.problems = {all_problems(space).front()};
  o.db_path = dir.path() / "corpus.db";
  o.budget.evaluations = budget;
  o.strategy = "exhaustive";
  o.worker_argv = {testing::cli_path().string(), "__worker", "--device", "0"};
  o.copy_bytes = 16 << 20;
  o.timing.max_seconds = 0.05;
  o.compile_threads = 4;
  return run_sweep(space, o);
}

// The same space with -DCORPUS_PLANT_BUG=1, under a family name of its own.
Space with_planted_bug(Space space) {
  space.kernel += "_planted";
  OptionTemplate bug;
  bug.text = "-DCORPUS_PLANT_BUG=1";
  bug.pieces = {bug.text};
  space.compile_options.push_back(std::move(bug));
  return space;
}

std::string& table() {
  static std::string t = "| kernel | check | outputs | best config | median ms | ok trials |\n|---|---|---|---|---|---|\n";
  return t;
}

class CorpusGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusGpu, TunesWithItsCheckAndCatchesThePlantedBug) {
  testing::TempDir dir;
  const Space space = load_space(testing::corpus_dir() / (GetParam() + ".yaml"));
  ASSERT_NE(space.verify.reference, VerifySpec::Reference::none);
  const SweepReport good = sweep(space, dir, 6);
  std::uint64_t ok = 0;
  for (const SweepTrial& t : good.trials) {
    EXPECT_TRUE(t.status == TrialStatus::ok || t.status == TrialStatus::pruned)
        << format_config(space, t.config) << ": " << status_name(t.status) << ": " << t.detail;
    if (t.status != TrialStatus::ok) continue;
    ++ok;
    ASSERT_TRUE(t.result.has_value());
    EXPECT_GT(t.result->verify_ms, 0) << "the check ran";
  }
  EXPECT_GT(ok, 0u);
  ASSERT_FALSE(good.problems.front().ranked.empty());
  const TrialRow& best = good.problems.front().ranked.front();
  table() += fmt::format("| {} | {} | {} | {} | {:.4f} | {} |\n", space.kernel, check_name(space), compares(space),
                         best.trial.key.params, *best.trial.time_ms, ok);

  const SweepReport bad = sweep(with_planted_bug(space), dir, 4);
  std::uint64_t wrong = 0;
  for (const SweepTrial& t : bad.trials) {
    if (t.status == TrialStatus::pruned) continue;
    EXPECT_EQ(t.status, TrialStatus::wrong_result) << format_config(space, t.config) << ": " << t.detail;
    wrong += t.status == TrialStatus::wrong_result ? 1 : 0;
    if (wrong == 1) std::printf("%s planted bug: %s\n", space.kernel.c_str(), t.detail.c_str());
  }
  EXPECT_GT(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusGpu, ::testing::ValuesIn(testing::corpus_spaces()),
                         [](const auto& info) { return info.param; });

// The corpus's axpy checked against a user's reference library (tests/worker/reference_library.c,
// the C ABI of tiletune/reference.h) through the whole sweep: ok, and its planted bug wrong_result.
TEST(CorpusGpuLibrary, AxpyAgainstAReferenceLibrary) {
  testing::TempDir dir;
  const auto yaml = dir.write("axpy_library.yaml", fmt::format(R"yaml(kernel: corpus_axpy_library
source: {}
entry: axpy
problem: {{N: [1000003]}}
params: {{BLOCK: [128, 256], ITEMS: [1, 4]}}
launch: {{grid: ["ceil_div(N, BLOCK * ITEMS)"], block: [BLOCK]}}
buffers:
  x: {{type: float, count: N, init: {{uniform: [-1, 1]}}}}
  y: {{type: float, count: N, init: {{normal: {{mean: 0, stddev: 1}}}}, output: true}}
args: [{{value: 0.5, type: float}}, x, y, N]
verify: {{reference: {{library: {}, function: saxpy_reference}}, rtol: 1e-6}}
)yaml",
                                                           (testing::corpus_dir() / "axpy.cu").string(),
                                                           TILETUNE_TEST_REFERENCE_LIBRARY));
  const Space space = load_space(yaml);
  const SweepReport good = sweep(space, dir, 4);
  std::uint64_t ok = 0;
  for (const SweepTrial& t : good.trials) {
    EXPECT_EQ(t.status, TrialStatus::ok) << format_config(space, t.config) << ": " << t.detail;
    ok += t.status == TrialStatus::ok && !t.finalist ? 1 : 0;
  }
  EXPECT_EQ(ok, 4u);  // each config once; the finalists' confirmations (ok too) come on top
  for (const SweepTrial& t : sweep(with_planted_bug(space), dir, 4).trials)
    EXPECT_EQ(t.status, TrialStatus::wrong_result) << format_config(space, t.config) << ": " << t.detail;
}

class TablePrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("\n%s", table().c_str());
    if (const char* path = std::getenv("TILETUNE_CORPUS_RESULTS")) std::ofstream(path) << table();
  }
};
const auto* const kPrinter = ::testing::AddGlobalTestEnvironment(new TablePrinter);

}  // namespace
}  // namespace tiletune
