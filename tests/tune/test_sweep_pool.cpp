// A sweep over several GPUs of one host (SweepOptions::devices) against fake GPUs: one
// tests/process/fake_worker per fake device. Configs are spread over the devices of a model and
// each is measured once (plus the finalists confirmed on every device), never two trials at once on one
// device while the devices do run at the same time, a device whose worker cannot start or
// breaks mid-sweep leaves the pool without stopping the others, and each model searches alone.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "test_support.hpp"
#include "toy_sweep.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {
namespace {

DeviceInfo fake_gpu(int ordinal, const std::string& name = "Fake H200") {
  DeviceInfo d = fake_h200();
  d.ordinal = ordinal;
  d.name = name;
  d.uuid = fmt::format("GPU-00000000-0000-0000-0000-0000000015{:02}", ordinal);
  return d;
}

/// The toy sweep over fake GPUs: modes[i] is the fake worker's mode (and flags) on device i.
struct PoolToy : ToySweep {
  std::vector<DeviceInfo> devices;
  std::map<int, std::vector<std::string>> modes;

  SweepOptions pool_options() const {
    SweepOptions o = options();
    o.devices = devices;
    o.device_worker_argv = [this](int ordinal) {
      std::vector<std::string> argv = {TILETUNE_FAKE_WORKER};
      const auto mode = modes.find(ordinal);
      if (mode == modes.end())
        argv.push_back("ok");
      else
        argv.insert(argv.end(), mode->second.begin(), mode->second.end());
      for (const std::string& flag : {std::string("--recording"), recording.string(), std::string("--delay-ms"),
                                      std::string("20"), std::string("--timeline"), timeline(ordinal).string()})
        argv.push_back(flag);
      return argv;
    };
    return o;
  }
  [[nodiscard]] std::filesystem::path timeline(int ordinal) const {
    return dir.path() / fmt::format("timeline{}.txt", ordinal);
  }
  [[nodiscard]] std::vector<TrialRow> device_rows(const DeviceInfo& d) const {
    std::vector<TrialRow> mine;
    for (TrialRow& row : rows())
      if (row.device_uuid == d.uuid) mine.push_back(std::move(row));
    return mine;
  }
};

/// Non-finalist trials of this run per config.
std::map<std::string, std::size_t> searched(const Space& space, const SweepReport& r) {
  std::map<std::string, std::size_t> m;
  for (const SweepTrial& t : r.trials)
    if (!t.finalist) ++m[canonical_config(space, t.config)];
  return m;
}

struct Interval {
  std::int64_t start = 0, end = 0;
};

std::vector<Interval> read_timeline(const std::filesystem::path& path) {
  std::vector<Interval> v;
  std::ifstream in(path);
  for (Interval i; in >> i.start >> i.end;) {
    std::int64_t id = 0;
    in >> id;
    v.push_back(i);
  }
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  return v;
}

TEST(PoolSweep, TwoGpusOfOneModelMeasureEachConfigOnceAndConfirmTheFinalistsOnBoth) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  SweepOptions o = toy.pool_options();
  o.confirm_finalists = 3;
  o.confirm_rounds = 3;
  const SweepReport r = run_sweep(toy.space, o);
  ASSERT_EQ(r.pool.size(), 2u);
  EXPECT_TRUE(r.pool_errors.empty());
  const std::map<std::string, std::size_t> once = searched(toy.space, r);
  EXPECT_EQ(once.size(), kConfigs);
  for (const auto& [config, count] : once) EXPECT_EQ(count, 1u) << config << " was searched more than once";
  for (const DeviceOutcome& d : r.pool) {
    EXPECT_GT(d.trials, d.finalists) << d.device.uuid << " got no trial of the search";
    EXPECT_TRUE(d.left.empty()) << d.left;
    EXPECT_GT(d.busy_seconds, 0);
    EXPECT_GT(d.copy.gbps, 0);
  }
  // The three best configs are confirmed on both devices, in 3 rounds each (the fake's times do
  // not drift: one pass), and recorded once per device: the search's row of a config measured
  // there is replaced by its median round.
  EXPECT_EQ(r.pool[0].finalists, 3u);
  EXPECT_EQ(r.pool[1].finalists, 3u);
  EXPECT_EQ(r.confirmation_trials, 2u * 3 * 3);
  EXPECT_EQ(r.problems[0].confirmed, 3u);
  const std::vector<TrialRow> rows0 = toy.device_rows(toy.devices[0]), rows1 = toy.device_rows(toy.devices[1]);
  EXPECT_EQ(rows0.size() + rows1.size(), kConfigs + 3) << "each of the top 3 was searched on one device only";
  EXPECT_EQ(rows0.size() + rows1.size() + 3, r.pool[0].trials + r.pool[1].trials)
      << "3 of the 6 finalists' trials replace a row of the search";
  for (const std::string& top : {"A=6;B=2;C=1", "A=6;B=2;C=0", "A=6;B=2;C=2"})
    for (const auto* rows : {&rows0, &rows1})
      EXPECT_EQ(std::count_if(rows->begin(), rows->end(), [&](const TrialRow& x) { return x.trial.key.params == top; }),
                1)
          << top << " is not measured once on each device";
  // Each device's best is its own trial.
  for (std::size_t d = 0; d < 2; ++d) {
    ASSERT_EQ(r.pool[d].problems.size(), 1u);
    const std::vector<TrialRow>& ranked = r.pool[d].problems[0].ranked;
    ASSERT_FALSE(ranked.empty());
    EXPECT_EQ(ranked.front().trial.key.params, "A=6;B=2;C=1");
    for (const TrialRow& row : ranked) EXPECT_EQ(row.device_uuid, toy.devices[d].uuid);
  }
  // A rerun finds everything in the cache: nothing is measured again, finalists included.
  const SweepReport again = run_sweep(toy.space, o);
  EXPECT_TRUE(again.trials.empty()) << again.trials.size() << " trials measured again";
  EXPECT_EQ(again.problems[0].resumed, kConfigs);
}

TEST(PoolSweep, NeverTwoTrialsAtOnceOnOneGpuButTheGpusRunAtTheSameTime) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  SweepOptions o = toy.pool_options();
  o.budget.evaluations = 60;
  const SweepReport r = run_sweep(toy.space, o);
  ASSERT_GE(r.trials.size(), 60u);
  const std::vector<Interval> a = read_timeline(toy.timeline(0)), b = read_timeline(toy.timeline(1));
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  for (const auto* timeline : {&a, &b})
    for (std::size_t i = 1; i < timeline->size(); ++i)
      EXPECT_GE((*timeline)[i].start, (*timeline)[i - 1].end) << "two trials overlapped on one device";
  std::int64_t overlap_ns = 0;
  for (const Interval& x : a)
    for (const Interval& y : b)
      overlap_ns += std::max<std::int64_t>(0, std::min(x.end, y.end) - std::max(x.start, y.start));
  // 20 ms per trial: about half of the 60 run beside one of the other device's.
  EXPECT_GT(overlap_ns, 200'000'000) << "the two devices hardly ran at the same time";
}

TEST(PoolSweep, AGpuWhoseWorkerCannotStartLeavesAndTheOtherMeasuresEverything) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  toy.modes[1] = {"dead"};
  const SweepReport r = run_sweep(toy.space, toy.pool_options());
  ASSERT_EQ(r.pool.size(), 2u);
  EXPECT_TRUE(r.pool_errors.empty());
  EXPECT_NE(r.pool[1].left.find("failed 3 starts in a row"), std::string::npos) << r.pool[1].left;
  EXPECT_TRUE(r.pool[0].left.empty());
  EXPECT_EQ(r.pool[1].trials, 0u);
  EXPECT_EQ(r.pool[0].trials, kConfigs);
  EXPECT_EQ(toy.device_rows(toy.devices[0]).size(), kConfigs);
  EXPECT_TRUE(toy.device_rows(toy.devices[1]).empty());
  EXPECT_EQ(r.pool[0].problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
}

TEST(PoolSweep, AGpuThatBreaksMidSweepHandsItsTrialToAnother) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  // Device 1 measures two trials, crashes in the third and no worker starts on it after that.
  toy.modes[1] = {"crash", "--at", "3", "--poison", (toy.dir.path() / "gpu1.broken").string()};
  const SweepReport r = run_sweep(toy.space, toy.pool_options());
  EXPECT_TRUE(r.pool_errors.empty());
  EXPECT_NE(r.pool[1].left.find("after runtime_fault"), std::string::npos) << r.pool[1].left;
  EXPECT_EQ(r.pool[1].trials, 2u);
  const std::map<std::string, std::size_t> once = searched(toy.space, r);
  EXPECT_EQ(once.size(), kConfigs) << "the trial in flight on the broken device was not measured elsewhere";
  for (const auto& [config, count] : once) EXPECT_EQ(count, 1u) << config;
  EXPECT_EQ(r.counts[static_cast<std::size_t>(TrialStatus::runtime_fault)], 0u);
  EXPECT_EQ(toy.device_rows(toy.devices[0]).size() + toy.device_rows(toy.devices[1]).size(), kConfigs);
}

TEST(PoolSweep, AGpuWhoseWorkerDiesInEveryTrialLeavesAndTheOtherMeasuresThem) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  toy.modes[1] = {"ok", "--crash-on", "*"};  // starts and copies fine, dies in every trial
  const SweepReport r = run_sweep(toy.space, toy.pool_options());
  EXPECT_TRUE(r.pool_errors.empty());
  EXPECT_NE(r.pool[1].left.find("3 trials in a row"), std::string::npos) << r.pool[1].left;
  EXPECT_EQ(r.pool[1].trials, 0u);
  EXPECT_EQ(r.counts[static_cast<std::size_t>(TrialStatus::runtime_fault)], 0u)
      << "a trial that lost device 1's worker was recorded instead of measured on device 0";
  EXPECT_EQ(r.pool[0].trials, kConfigs);
  EXPECT_EQ(toy.device_rows(toy.devices[0]).size(), kConfigs);
}

TEST(PoolSweep, AConfigThatCrashesEveryGpuIsRecordedOnceAndNoGpuLeaves) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  toy.modes[0] = toy.modes[1] = {"ok", "--crash-on", "A=3 B=3 C=0"};
  const SweepReport r = run_sweep(toy.space, toy.pool_options());
  EXPECT_TRUE(r.pool[0].left.empty()) << r.pool[0].left;
  EXPECT_TRUE(r.pool[1].left.empty()) << r.pool[1].left;
  const std::map<std::string, std::size_t> once = searched(toy.space, r);
  EXPECT_EQ(once.size(), kConfigs);
  for (const auto& [config, count] : once) EXPECT_EQ(count, 1u) << config;
  std::size_t faults = 0;
  for (const DeviceInfo& d : toy.devices)
    for (const TrialRow& row : toy.device_rows(d)) {
      if (row.trial.status != TrialStatus::runtime_fault) continue;
      ++faults;
      EXPECT_EQ(row.trial.key.params, "A=3;B=3;C=0");
    }
  EXPECT_EQ(faults, 1u) << "the config that crashes everywhere is one runtime_fault, measured on both GPUs";
}

TEST(PoolSweep, EachModelSearchesEveryConfigAndAModelThatLosesEveryGpuEndsWithAnError) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1, "Fake GH200"), fake_gpu(2, "Fake H100")};
  toy.modes[2] = {"dead"};
  const SweepReport r = run_sweep(toy.space, toy.pool_options());
  ASSERT_EQ(r.pool.size(), 3u);
  for (std::size_t d = 0; d < 2; ++d) {
    EXPECT_EQ(r.pool[d].trials, kConfigs) << r.pool[d].device.name;
    EXPECT_EQ(r.pool[d].finalists, 0u) << "a model of one device has no finalists to measure";
    EXPECT_EQ(toy.device_rows(toy.devices[d]).size(), kConfigs) << r.pool[d].device.name;
    EXPECT_EQ(r.pool[d].problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
  }
  EXPECT_EQ(r.pool[2].trials, 0u);
  ASSERT_EQ(r.pool_errors.size(), 1u);
  EXPECT_NE(r.pool_errors[0].find("Fake H100"), std::string::npos) << r.pool_errors[0];
  EXPECT_NE(r.pool_errors[0].find("N=1024"), std::string::npos) << r.pool_errors[0];
  EXPECT_NE(r.pool_errors[0].find("failed 3 starts"), std::string::npos) << r.pool_errors[0];
}

TEST(PoolSweep, ATimeBudgetStopsThePoolAndDropsWhatIsQueued) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  SweepOptions o = toy.pool_options();
  o.device_worker_argv = [base = o.device_worker_argv](int ordinal) {
    std::vector<std::string> argv = base(ordinal);
    argv.insert(argv.end(), {"--delay-ms", "100"});  // after the fixture's 20: the last one counts
    return argv;
  };
  o.budget.seconds = 1.5;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_LT(r.trials.size(), kConfigs);
  EXPECT_GE(r.pool[0].trials, 2u);
  EXPECT_GE(r.pool[1].trials, 2u);
  // The search's trials: at 0.1 s each on two devices, 1.5 s holds about 30 (plus the 3 finalists).
  EXPECT_LT(r.problems[0].evaluations, 60u);
  // The sweep's own wall time (the compiles queued ahead drain after it, as on one GPU).
  EXPECT_LT(r.wall_seconds, 1.5 + 3.0)
      << "the budget overran by more than setup, the trials in flight and the finalists";
  EXPECT_EQ(toy.device_rows(toy.devices[0]).size() + toy.device_rows(toy.devices[1]).size(), r.trials.size());
}

TEST(PoolSweep, EachWorkerRunsTheReferenceBeforeItsFirstTrial) {
  PoolToy toy;
  ToySweep with_reference("{reference: {config: {A: 2, B: 3, C: 0}}}");
  toy.space = with_reference.space;
  toy.devices = {fake_gpu(0), fake_gpu(1)};
  SweepOptions o = toy.pool_options();
  o.device_worker_argv = [&toy, base = o.device_worker_argv](int ordinal) {
    std::vector<std::string> argv = base(ordinal);
    argv.insert(argv.end(), {"--log", (toy.dir.path() / fmt::format("worker{}.log", ordinal)).string()});
    return argv;
  };
  o.budget.evaluations = 30;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_GE(r.trials.size(), 30u);
  for (const int ordinal : {0, 1}) {
    std::ifstream in(toy.dir.path() / fmt::format("worker{}.log", ordinal));
    std::vector<std::string> kinds;
    for (std::string id, kind, rest; in >> id >> kind && std::getline(in, rest);) kinds.push_back(kind);
    ASSERT_GE(kinds.size(), 2u) << "device " << ordinal;
    EXPECT_EQ(kinds[0], "reference") << "device " << ordinal;
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "reference"), 1) << "device " << ordinal;
  }
}

TEST(PoolSweep, TheDevicesMustBeDistinct) {
  PoolToy toy;
  toy.devices = {fake_gpu(0), fake_gpu(0)};
  EXPECT_THROW((void)run_sweep(toy.space, toy.pool_options()), Error);
}

TEST(PoolSweep, TheWorkerArgvNamesTheOrdinal) {
  PoolToy toy;
  toy.devices = {fake_gpu(3), fake_gpu(5)};
  // Each trial takes 20 ms, so both devices get some (the log is written per trial; without a
  // delay one device could measure all 20 before the other's worker started).
  SweepOptions o = toy.options("ok", {"--log", (toy.dir.path() / "worker{ordinal}.log").string(), "--delay-ms", "20"});
  o.devices = toy.devices;
  o.budget.evaluations = 20;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_GE(r.trials.size(), 20u);
  EXPECT_TRUE(std::filesystem::exists(toy.dir.path() / "worker3.log"));
  EXPECT_TRUE(std::filesystem::exists(toy.dir.path() / "worker5.log"));
}

}  // namespace
}  // namespace tiletune
