// merge_cache: the caches of several machines into one, keeping the better trial per key, the
// newer pin per pin key and every source's answer history (as runs of the target, in the order the
// sources are given).
// Every source is read whole and checked before the target is opened for writing, and all that a
// merge writes is one transaction (a CacheDb::Batch) in the rollback journal, switched to WAL
// only after it commits, so a merge that fails leaves the target as it was, byte for byte.
// Written against CacheDb's public API, so every write keeps best up to date.
#include <fmt/format.h>
#include <sys/stat.h>

#include <map>
#include <tuple>

#include "db/records.hpp"
#include "tiletune/cache_db.hpp"

namespace tiletune {

namespace fs = std::filesystem;

namespace {

using KernelKey = std::tuple<std::string, std::string, std::string, std::string>;
using TrialKeyText = std::tuple<std::string, KernelKey, std::string, std::string>;

KernelKey kernel_key(const KernelRecord& k) { return {k.name, k.source_hash, k.options, k.nvrtc_version}; }

/// True when `candidate` should replace `stored`.
bool better(const TrialRecord& candidate, const TrialRecord& stored) {
  const bool c_ok = candidate.status == TrialStatus::ok && candidate.time_ms;
  const bool s_ok = stored.status == TrialStatus::ok && stored.time_ms;
  if (c_ok != s_ok) return c_ok;
  if (c_ok) return *candidate.time_ms < *stored.time_ms;
  return false;
}

/// Everything of a source a merge copies, read (and so checked) before anything is written.
struct Snapshot {
  std::vector<DeviceRow> devices;
  std::vector<TrialRow> trials;
  std::vector<PinRecord> pins;
  std::vector<AnswerRecord> answers;
};

using PinKey = std::tuple<PinScope, std::string, std::string, std::string>;
PinKey pin_key(const PinRecord& p) { return {p.scope, p.target, p.kernel, p.problem}; }

/// Copies the source's pins the target lacks, and those newer than the target's of the same key.
std::uint64_t merge_pins(CacheDb& into, const std::vector<PinRecord>& pins) {
  std::map<PinKey, std::string> existing;
  for (const PinRecord& p : into.pins()) existing.emplace(pin_key(p), p.created_at);
  std::uint64_t copied = 0;
  for (const PinRecord& p : pins) {
    const auto it = existing.find(pin_key(p));
    if (it != existing.end() && it->second >= p.created_at) continue;
    into.pin(p);
    existing[pin_key(p)] = p.created_at;
    ++copied;
  }
  return copied;
}

/// Copies the source's answer history, a run of the target per run of the source (older kernel
/// versions first, as the trials below), so that `best` counts the source's runs and changes and
/// the merge's own run keeps the source's latest answer while it is still held (answers.hpp).
void merge_answer_history(CacheDb& into, const std::vector<AnswerRecord>& answers) {
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<AnswerRecord> run;
    auto flush = [&] {
      if (run.empty()) return;
      std::optional<std::int64_t> id = into.find_kernel(run.front().kernel);
      if (!id) id = into.upsert_kernel(run.front().kernel);
      into.append_answer_run(*id, run);
      run.clear();
    };
    for (const AnswerRecord& a : answers) {
      if (a.current != (pass == 1)) continue;
      if (!run.empty() && (kernel_key(a.kernel) != kernel_key(run.front().kernel) || a.run_seq != run.front().run_seq))
        flush();
      run.push_back(a);
    }
    flush();
  }
}

Snapshot read_source(const CacheDb& from) {
  Snapshot s;
  TrialFilter all;
  all.current_only = false;
  s.trials = from.trials(all);
  s.devices = from.devices();
  s.pins = from.pins();
  s.answers = from.answer_history();
  auto bad = [&from](const std::string& defect) {
    return DbError(fmt::format("merge: {}: {}; nothing was merged", from.path().string(), defect), "merge", {},
                   from.path());
  };
  for (const DeviceRow& d : s.devices)
    if (const std::string defect = db_detail::device_defect(d.device); !defect.empty()) throw bad(defect);
  for (const TrialRow& r : s.trials) {
    if (const std::string defect = db_detail::kernel_defect(r.kernel); !defect.empty()) throw bad(defect);
    if (const std::string defect = db_detail::trial_defect(r.trial); !defect.empty()) throw bad(defect);
  }
  return s;
}

MergeStats merge_snapshot(CacheDb& into, const Snapshot& from) {
  MergeStats stats;
  stats.trials_read = from.trials.size();
  TrialFilter all;
  all.current_only = false;

  std::map<std::string, std::int64_t> device_ids;
  for (const DeviceRow& d : from.devices) device_ids[d.device.uuid] = into.upsert_device(d.device);
  merge_answer_history(into, from.answers);

  // Older versions first, so that the source's current versions end up current in the target.
  std::map<KernelKey, std::int64_t> kernel_ids;
  for (int pass = 0; pass < 2; ++pass)
    for (const TrialRow& r : from.trials)
      if (r.current == (pass == 1) && !kernel_ids.contains(kernel_key(r.kernel)))
        kernel_ids[kernel_key(r.kernel)] = into.upsert_kernel(r.kernel);

  std::map<TrialKeyText, TrialRecord> existing;
  for (TrialRow& r : into.trials(all))
    existing.emplace(TrialKeyText{r.device_uuid, kernel_key(r.kernel), r.trial.key.problem, r.trial.key.params},
                     std::move(r.trial));

  for (const TrialRow& r : from.trials) {
    TrialRecord t = r.trial;
    t.key.device_id = device_ids.at(r.device_uuid);
    t.key.kernel_id = kernel_ids.at(kernel_key(r.kernel));
    auto it = existing.find({r.device_uuid, kernel_key(r.kernel), t.key.problem, t.key.params});
    if (it == existing.end()) {
      ++stats.added;
    } else if (better(t, it->second)) {
      ++stats.replaced;
    } else {
      ++stats.kept;
      continue;
    }
    (void)into.record_trial(t);
  }
  stats.pins_copied = merge_pins(into, from.pins);
  return stats;
}

[[noreturn]] void refuse_self_merge(const fs::path& into, const fs::path& source) {
  throw DbError(fmt::format("merge: {} is the target {} itself (the same file): nothing was merged", source.string(),
                            into.string()),
                "merge", {}, into);
}

/// After a merge that succeeded: the journal every writer of a cache uses (WAL where the disk
/// allows it), as CacheDb::open sets it. The merge is committed already, so a target that cannot
/// switch now (busy) keeps its rollback journal, which works as well; the next writer switches it.
void use_wal(const fs::path& into) {
  try {
    (void)CacheDb::open(into);
  } catch (const Error&) {}
}

}  // namespace

bool same_file(const fs::path& a, const fs::path& b) {
  struct stat sa {};
  struct stat sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

MergeStats merge_cache(CacheDb& into, const CacheDb& from) {
  if (same_file(into.path(), from.path())) refuse_self_merge(into.path(), from.path());
  const Snapshot source = read_source(from);
  CacheDb::Batch batch = into.batch();
  MergeStats stats = merge_snapshot(into, source);
  batch.commit();
  return stats;
}

std::vector<MergeStats> merge_cache_files(const fs::path& into, const std::vector<fs::path>& sources) {
  for (const fs::path& source : sources)
    if (same_file(into, source)) refuse_self_merge(into, source);
  std::vector<Snapshot> snapshots;
  for (const fs::path& source : sources)
    snapshots.push_back(read_source(CacheDb::open(source, CacheDb::Mode::read_only)));

  std::error_code ec;
  const bool existed = fs::exists(fs::symlink_status(into, ec));
  std::vector<MergeStats> stats;
  try {
    CacheDb::Options options;
    options.create_directories = false;  // a failed merge leaves no directory behind either
    options.wal = false;                 // a failed merge must not switch the target's journal either
    CacheDb target = CacheDb::open(into, options);
    CacheDb::Batch batch = target.batch();
    for (const Snapshot& s : snapshots) stats.push_back(merge_snapshot(target, s));
    batch.commit();
  } catch (...) {
    // A target this merge created holds nothing of value: remove it, as if it had not run.
    if (!existed)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(into.string() + suffix, ec);
    throw;
  }
  use_wal(into);
  return stats;
}

}  // namespace tiletune
