// Reads and writes of the cache: devices, kernel versions, trials, best (the minimum of the ok
// trials, recomputed when a trial is replaced), resume lookups, invalidation by kernel version,
// cubins, and errors that name the call, the SQL and the file.
#include <gtest/gtest.h>

#include <algorithm>

#include "db_test_util.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* problem = "N=8192";

class CacheDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.emplace(CacheDb::open(tmp_.path() / "cache.db"));
    device_ = db_->upsert_device(sample_device());
    kernel_ = db_->upsert_kernel(sample_kernel());
  }
  CacheDb& db() { return *db_; }

  TempDir tmp_;
  std::optional<CacheDb> db_;
  std::int64_t device_ = 0;
  std::int64_t kernel_ = 0;
};

TEST_F(CacheDbTest, DeviceUpsertRefreshesAndKeepsTheMeasuredCopyBandwidth) {
  auto d = sample_device();
  d.name = "NVIDIA H200 (renamed)";
  d.driver_version = 12050;
  d.copy_gbps = std::nullopt;  // not measured this time: keep the stored one
  EXPECT_EQ(db().upsert_device(d), device_);
  auto row = db().device(d.uuid);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->device.name, "NVIDIA H200 (renamed)");
  EXPECT_EQ(row->device.driver_version, 12050);
  EXPECT_EQ(row->device.cc_major, 9);
  EXPECT_EQ(row->device.sm_count, 132);
  EXPECT_EQ(row->device.memory_bytes, 150'000'000'000);
  EXPECT_DOUBLE_EQ(*row->device.copy_gbps, 3900.0);
  EXPECT_FALSE(row->last_seen.empty());
  EXPECT_NE(db().upsert_device(sample_device("GPU-second")), device_);
  EXPECT_EQ(db().devices().size(), 2u);
  EXPECT_FALSE(db().device("GPU-none").has_value());
}

// A device's fields are declared once (device_columns): they are the devices table's columns, in
// its order, and each maps a field of its own, so every field is stored and read back as it was.
TEST_F(CacheDbTest, DeviceColumnsAreTheDevicesTableAndRoundTripEveryField) {
  std::vector<std::string> table;
  {
    auto conn = raw_connection(db().path());
    auto q = conn.cached("SELECT name FROM pragma_table_info('devices') ORDER BY cid");
    while (q->step()) table.push_back(q->text(0));
  }
  std::vector<std::string> declared{"id"};
  for (const DeviceColumn& c : device_columns) declared.emplace_back(c.name);
  declared.emplace_back("last_seen");
  std::sort(table.begin(), table.end());
  std::sort(declared.begin(), declared.end());
  EXPECT_EQ(declared, table) << "a column of devices that device_columns does not declare, or the reverse";

  // A distinct value per column, set through the table: two columns of one field would lose one.
  DeviceRecord d;
  std::int64_t n = 0;
  for (const DeviceColumn& c : device_columns) {
    ++n;
    if (c.type == DeviceColumn::Type::text)
      c.set(d, TrialValue("GPU-field-" + std::to_string(n)));
    else if (c.type == DeviceColumn::Type::real)
      c.set(d, TrialValue(n + 0.5));
    else
      c.set(d, TrialValue(n * 1000));
  }
  n = 0;
  for (const DeviceColumn& c : device_columns) {
    SCOPED_TRACE(std::string(c.name));
    ++n;
    const TrialValue expected = c.type == DeviceColumn::Type::text   ? TrialValue("GPU-field-" + std::to_string(n))
                                : c.type == DeviceColumn::Type::real ? TrialValue(n + 0.5)
                                                                     : TrialValue(n * 1000);
    EXPECT_EQ(c.get(d), expected);
  }
  const std::int64_t id = db().upsert_device(d);
  auto row = db().device(d.uuid);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->id, id);
  EXPECT_EQ(row->device, d);
  ASSERT_EQ(db().devices().size(), 2u);
  EXPECT_EQ(db().devices()[1].device, d);

  // Unknown now (as online tuning upserts a device: its identity only): every description keeps
  // its value, the identity is what the record says.
  DeviceRecord unknown;
  unknown.uuid = d.uuid;
  EXPECT_EQ(db().upsert_device(unknown), id);
  row = db().device(d.uuid);
  ASSERT_TRUE(row.has_value());
  for (const DeviceColumn& c : device_columns) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_EQ(c.get(row->device), c.description ? c.get(d) : c.get(unknown));
  }
}

TEST_F(CacheDbTest, KernelVersionsAreDistinctRows) {
  EXPECT_EQ(db().upsert_kernel(sample_kernel()), kernel_);
  auto edited = db().upsert_kernel(sample_kernel("def456"));
  EXPECT_NE(edited, kernel_);
  auto other_opts = sample_kernel();
  other_opts.options += " -lineinfo";
  EXPECT_NE(db().upsert_kernel(other_opts), kernel_);
  auto other_nvrtc = sample_kernel();
  other_nvrtc.nvrtc_version = "12.6";
  EXPECT_NE(db().upsert_kernel(other_nvrtc), kernel_);
  EXPECT_EQ(db().find_kernel(sample_kernel()), kernel_);
  EXPECT_FALSE(db().find_kernel(sample_kernel("nope")).has_value());
}

TEST_F(CacheDbTest, TrialRoundTripsEveryField) {
  auto t = ok_trial(device_, kernel_, problem, "TILE=32;BLOCK_ROWS=8;PAD=1", 0.123);
  t.gflops = 0.0;
  auto r = db().record_trial(t);
  EXPECT_TRUE(r.is_best);
  EXPECT_FALSE(r.replaced);
  auto rows = db().trials();
  ASSERT_EQ(rows.size(), 1u);
  const auto& got = rows[0];
  EXPECT_EQ(got.id, r.trial_id);
  EXPECT_EQ(got.trial.key.device_id, device_);
  EXPECT_EQ(got.trial.key.kernel_id, kernel_);
  EXPECT_EQ(got.trial.key.problem, problem);
  EXPECT_EQ(got.trial.key.params, "TILE=32;BLOCK_ROWS=8;PAD=1");
  EXPECT_EQ(got.trial.status, TrialStatus::ok);
  EXPECT_EQ(got.trial.time_ms, t.time_ms);
  EXPECT_EQ(got.trial.mean_ms, t.mean_ms);
  EXPECT_EQ(got.trial.min_ms, t.min_ms);
  EXPECT_EQ(got.trial.stddev_ms, t.stddev_ms);
  EXPECT_EQ(got.trial.samples, t.samples);
  EXPECT_EQ(got.trial.gbps, t.gbps);
  EXPECT_EQ(got.trial.gflops, t.gflops);
  EXPECT_EQ(got.trial.registers, t.registers);
  EXPECT_EQ(got.trial.shared_bytes, t.shared_bytes);
  EXPECT_EQ(got.trial.spill_bytes, t.spill_bytes);
  EXPECT_EQ(got.trial.occupancy_offline, t.occupancy_offline);
  EXPECT_EQ(got.trial.occupancy_driver, t.occupancy_driver);
  EXPECT_EQ(got.trial.compile_ms, t.compile_ms);
  EXPECT_EQ(got.trial.measure_ms, t.measure_ms);
  EXPECT_EQ(got.device_uuid, sample_device().uuid);
  EXPECT_EQ(got.device_name, "NVIDIA H200");
  EXPECT_EQ(got.kernel.name, "transpose");
  EXPECT_EQ(got.kernel.source_hash, "abc123");
  EXPECT_TRUE(got.is_best);
  EXPECT_TRUE(got.current);
  EXPECT_FALSE(got.created_at.empty());
}

TEST_F(CacheDbTest, BestKeepsTheMinimum) {
  EXPECT_TRUE(db().record_trial(ok_trial(device_, kernel_, problem, "TILE=16", 5.0)).is_best);
  EXPECT_TRUE(db().record_trial(ok_trial(device_, kernel_, problem, "TILE=32", 3.0)).is_best);
  EXPECT_FALSE(db().record_trial(ok_trial(device_, kernel_, problem, "TILE=64", 4.0)).is_best);
  EXPECT_FALSE(db().record_trial(ok_trial(device_, kernel_, problem, "TILE=8", 3.0)).is_best)
      << "a tie keeps the first";
  auto best = db().best();
  ASSERT_EQ(best.size(), 1u);
  // The best table kept the first of the two at 3.0 ms; the answer is the pick of the tie set
  // (equal occupancy and registers: the first in config order, TILE=8 before TILE=32).
  EXPECT_EQ(best[0].trial.key.params, "TILE=8");
  EXPECT_EQ(best[0].tie_params, (std::vector<std::string>{"TILE=8", "TILE=32"}));
  EXPECT_DOUBLE_EQ(*best[0].trial.time_ms, 3.0);
  EXPECT_EQ(best[0].kernel.name, "transpose");
  EXPECT_EQ(best[0].device.device.uuid, sample_device().uuid);
  EXPECT_DOUBLE_EQ(*best[0].device.device.copy_gbps, 3900.0);
  EXPECT_TRUE(best[0].current);
  // Other problems and devices have their own best.
  db().record_trial(ok_trial(device_, kernel_, "N=1024", "TILE=64", 0.01));
  auto other = db().upsert_device(sample_device("GPU-other", "NVIDIA A100"));
  db().record_trial(ok_trial(other, kernel_, problem, "TILE=16", 9.0));
  EXPECT_EQ(db().best().size(), 3u);
  EXPECT_EQ(db().best(BestFilter{.device = "NVIDIA A100"}).size(), 1u);
  EXPECT_EQ(db().best(BestFilter{.problem = "N=1024"}).size(), 1u);
  auto mine = db().best_for(sample_kernel(), sample_device().uuid, problem);
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(mine->trial.key.params, "TILE=32");
}

TEST_F(CacheDbTest, ANonOkTrialNeverBecomesBest) {
  const TrialStatus failures[] = {TrialStatus::pruned,        TrialStatus::compile_failed, TrialStatus::launch_failed,
                                  TrialStatus::runtime_fault, TrialStatus::timeout,        TrialStatus::wrong_result};
  int i = 0;
  for (auto s : failures) {
    auto t = failed_trial(device_, kernel_, problem, "P=" + std::to_string(i++), s, "why");
    t.time_ms = 0.001;  // even with a (bogus) time faster than anything
    EXPECT_FALSE(db().record_trial(t).is_best);
  }
  EXPECT_TRUE(db().best().empty());
  db().record_trial(ok_trial(device_, kernel_, problem, "TILE=32", 2.0));
  auto t = failed_trial(device_, kernel_, problem, "P=fast", TrialStatus::wrong_result, "max error 3");
  t.time_ms = 0.0001;
  db().record_trial(t);
  auto best = db().best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].trial.key.params, "TILE=32");
  EXPECT_EQ(db().trials(TrialFilter{.status = TrialStatus::wrong_result}).size(), 2u);
  EXPECT_EQ(db().trials(TrialFilter{.status = TrialStatus::ok}).size(), 1u);
}

TEST_F(CacheDbTest, AnOkTrialWithoutATimeIsRejectedAndNothingIsWritten) {
  TrialRecord t;
  t.key = TrialKey{device_, kernel_, problem, "TILE=32"};
  t.status = TrialStatus::ok;
  EXPECT_THROW((void)db().record_trial(t), DbError);
  t.time_ms = 0.0;
  EXPECT_THROW((void)db().record_trial(t), DbError);
  EXPECT_TRUE(db().trials().empty());
}

TEST_F(CacheDbTest, ReplacingTheBestTrialRecomputesBest) {
  db().record_trial(ok_trial(device_, kernel_, problem, "A", 1.0));
  db().record_trial(ok_trial(device_, kernel_, problem, "B", 2.0));
  db().record_trial(ok_trial(device_, kernel_, problem, "C", 3.0));
  // Re-measured (--force): A now times out, so B is best.
  auto r = db().record_trial(failed_trial(device_, kernel_, problem, "A", TrialStatus::timeout, "5 s"));
  EXPECT_TRUE(r.replaced);
  EXPECT_EQ(db().best_for(sample_kernel(), sample_device().uuid, problem)->trial.key.params, "B");
  // B re-measured slower than C: C is best.
  db().record_trial(ok_trial(device_, kernel_, problem, "B", 4.0));
  EXPECT_EQ(db().best_for(sample_kernel(), sample_device().uuid, problem)->trial.key.params, "C");
  // A re-measured fastest: A is best again, with the same row id.
  auto first_id = db().trials(TrialFilter{.status = TrialStatus::timeout})[0].id;
  auto again = db().record_trial(ok_trial(device_, kernel_, problem, "A", 0.5));
  EXPECT_TRUE(again.is_best);
  EXPECT_EQ(again.trial_id, first_id);
  EXPECT_EQ(db().trials().size(), 3u);
  // Every trial failed: no best at all.
  for (const char* p : {"A", "B", "C"})
    db().record_trial(failed_trial(device_, kernel_, problem, p, TrialStatus::runtime_fault, "x"));
  EXPECT_TRUE(db().best().empty());
}

TEST_F(CacheDbTest, ResumeLookups) {
  db().record_trial(ok_trial(device_, kernel_, problem, "TILE=16", 1.0));
  db().record_trial(failed_trial(device_, kernel_, problem, "TILE=128", TrialStatus::pruned, "smem"));
  db().record_trial(ok_trial(device_, kernel_, "N=1024", "TILE=32", 1.0));
  auto done = db().existing_trials(device_, kernel_, problem);
  EXPECT_EQ(done, (std::unordered_set<std::string>{"TILE=16", "TILE=128"}));
  EXPECT_TRUE(db().has_trial(TrialKey{device_, kernel_, problem, "TILE=16"}));
  EXPECT_TRUE(db().has_trial(TrialKey{device_, kernel_, problem, "TILE=128"}));
  EXPECT_FALSE(db().has_trial(TrialKey{device_, kernel_, problem, "TILE=32"}));
  // Another kernel version (edited source) has nothing to resume from.
  auto edited = db().upsert_kernel(sample_kernel("edited"));
  EXPECT_TRUE(db().existing_trials(device_, edited, problem).empty());
  EXPECT_FALSE(db().has_trial(TrialKey{device_, edited, problem, "TILE=16"}));
}

TEST_F(CacheDbTest, AnEditedKernelMakesOldResultsIneligible) {
  db().record_trial(ok_trial(device_, kernel_, problem, "TILE=32", 1.0));
  auto v2 = db().upsert_kernel(sample_kernel("edited"));
  // The old best is kept but no longer current, and is not served for the new source.
  EXPECT_TRUE(db().best().empty());
  auto all = db().best(BestFilter{.current_only = false});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_FALSE(all[0].current);
  EXPECT_FALSE(db().best_for(sample_kernel("edited"), sample_device().uuid, problem).has_value());
  EXPECT_TRUE(db().best_for(sample_kernel(), sample_device().uuid, problem).has_value());
  EXPECT_EQ(db().trials(TrialFilter{.current_only = true}).size(), 0u);
  EXPECT_FALSE(db().trials()[0].current);
  // Other options or another NVRTC are other versions too.
  auto opts = sample_kernel();
  opts.options = "-O0";
  EXPECT_FALSE(db().best_for(opts, sample_device().uuid, problem).has_value());
  // The new version's results are current.
  db().record_trial(ok_trial(device_, v2, problem, "TILE=64", 2.0));
  auto best = db().best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].kernel_id, v2);
  EXPECT_EQ(best[0].trial.key.params, "TILE=64");
  // Going back to the old source (e.g. git revert) makes its results current again.
  EXPECT_EQ(db().upsert_kernel(sample_kernel()), kernel_);
  best = db().best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].kernel_id, kernel_);
  EXPECT_EQ(db().problems("transpose"), std::vector<std::string>{problem});
}

TEST_F(CacheDbTest, TrialFilters) {
  auto other = db().upsert_device(sample_device("GPU-2", "NVIDIA A100"));
  auto gemm = db().upsert_kernel(sample_kernel("g", "gemm"));
  db().record_trial(ok_trial(device_, kernel_, problem, "TILE=32", 3.0));
  db().record_trial(ok_trial(device_, kernel_, problem, "TILE=16", 1.0));
  db().record_trial(failed_trial(device_, kernel_, problem, "TILE=99", TrialStatus::compile_failed, "log"));
  db().record_trial(ok_trial(other, kernel_, problem, "TILE=32", 2.0));
  db().record_trial(ok_trial(device_, gemm, "M=1;N=2;K=3", "BM=64", 2.0));
  EXPECT_EQ(db().trials().size(), 5u);
  EXPECT_EQ(db().trials(TrialFilter{.kernel = "gemm"}).size(), 1u);
  EXPECT_EQ(db().trials(TrialFilter{.device = "GPU-2"}).size(), 1u);
  EXPECT_EQ(db().trials(TrialFilter{.device = "NVIDIA H200"}).size(), 4u);
  EXPECT_EQ(db().trials(TrialFilter{.problem = problem}).size(), 4u);
  EXPECT_EQ(db().trials(TrialFilter{.status = TrialStatus::compile_failed})[0].trial.detail, "log");
  auto sorted = db().trials(TrialFilter{.kernel = "transpose", .device = sample_device().uuid});
  ASSERT_EQ(sorted.size(), 3u);
  EXPECT_EQ(sorted[0].trial.key.params, "TILE=16");  // ok trials fastest first, failures last
  EXPECT_EQ(sorted[1].trial.key.params, "TILE=32");
  EXPECT_EQ(sorted[2].trial.key.params, "TILE=99");
  EXPECT_EQ(db().trials(TrialFilter{.limit = 2}).size(), 2u);
  auto conn = raw_connection(db().path());
  EXPECT_EQ(conn.query_text("SELECT sizes_json FROM problems WHERE sizes = 'M=1;N=2;K=3'"), R"({"M":1,"N":2,"K":3})");
}

TEST_F(CacheDbTest, CubinsRoundTrip) {
  std::string elf(
      "\x7f"
      "ELF\0\0\1\2",
      8);
  elf += std::string(100000, '\0');
  db().put_cubin(CubinRecord{"key1", "sm_90", elf, "_Z9transposePfS_i"});
  auto got = db().get_cubin("key1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->arch, "sm_90");
  EXPECT_EQ(got->cubin, elf);
  EXPECT_EQ(got->lowered_name, "_Z9transposePfS_i");
  db().put_cubin(CubinRecord{"key1", "sm_90a", "x", ""});
  EXPECT_EQ(db().get_cubin("key1")->cubin, "x");
  EXPECT_FALSE(db().get_cubin("missing").has_value());
}

TEST_F(CacheDbTest, ErrorsNameTheOperationAndTheFileInOneLine) {
  auto t = ok_trial(device_ + 1000, kernel_, problem, "TILE=32", 1.0);  // no such device
  try {
    (void)db().record_trial(t);
    FAIL() << "expected a DbError";
  } catch (const DbError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("sqlite3_step"), std::string::npos) << what;
    EXPECT_NE(what.find("FOREIGN KEY constraint failed"), std::string::npos) << what;
    EXPECT_NE(what.find((tmp_.path() / "cache.db").string()), std::string::npos) << what;
    EXPECT_EQ(what.find("INSERT INTO trials (sqlite3_step) failed on"), 0u) << what;
    // The operation, not the statement: no column list, no VALUES, one line.
    EXPECT_EQ(what.find("VALUES"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(e.sql().find("VALUES"), std::string::npos) << "the SQL stays available to a program";
    EXPECT_EQ(e.call(), "sqlite3_step");
    EXPECT_EQ(e.path(), tmp_.path() / "cache.db");
  }
  // The failed transaction was rolled back and the connection still works.
  EXPECT_TRUE(db().trials().empty());
  EXPECT_TRUE(db().record_trial(ok_trial(device_, kernel_, problem, "TILE=32", 1.0)).is_best);
}

TEST_F(CacheDbTest, ReadOnlyServesReadsAndRefusesWrites) {
  db().record_trial(ok_trial(device_, kernel_, problem, "TILE=32", 1.0));
  db().set_meta("note", "hello");
  auto ro = CacheDb::open(db().path(), CacheDb::Mode::read_only);
  EXPECT_EQ(ro.best().size(), 1u);
  EXPECT_EQ(ro.meta("note"), "hello");
  try {
    (void)ro.record_trial(ok_trial(device_, kernel_, problem, "TILE=64", 1.0));
    FAIL() << "expected a DbError";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the cache opened read-write"), std::string::npos);
  }
  // A reader sees what a writer commits afterwards.
  db().record_trial(ok_trial(device_, kernel_, problem, "TILE=64", 0.5));
  EXPECT_EQ(ro.best()[0].trial.key.params, "TILE=64");
}

}  // namespace
}  // namespace tiletune::testing
