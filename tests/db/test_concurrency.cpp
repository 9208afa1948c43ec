// Many processes writing one cache at once, as parallel sweeps on one machine do: every row
// arrives, best is the true minimum, and no process sees "database is locked".
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "db_test_util.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

constexpr int processes = 8;
constexpr int trials_per_process = 200;
constexpr const char* problem = "N=4096";

// Distinct times; every 10th trial of a process fails (and so must never be best).
double time_of(int child, int i) { return 1.0 + ((child * trials_per_process + i) * 7919 % 1601) / 100.0; }
bool fails(int i) { return i % 10 == 9; }

// What each child does: open (maybe creating the file), register the shared device and kernel,
// then record its trials one transaction each. Returns a process exit status.
int child_main(const fs::path& path, int child) {
  try {
    auto db = CacheDb::open(path);
    auto device = db.upsert_device(sample_device());
    auto kernel = db.upsert_kernel(sample_kernel());
    for (int i = 0; i < trials_per_process; ++i) {
      std::string params = "CHILD=" + std::to_string(child) + ";I=" + std::to_string(i);
      if (fails(i)) {
        auto t = failed_trial(device, kernel, problem, params, TrialStatus::timeout, "deadline");
        t.time_ms = 0.001;
        (void)db.record_trial(t);
      } else {
        (void)db.record_trial(ok_trial(device, kernel, problem, params, time_of(child, i)));
      }
      // Readers in between, as a progress display would do.
      if (i % 50 == 0) (void)db.best();
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", child, e.what());
    return 1;
  }
}

void run_writers(const fs::path& path) {
  // The children block on the pipe until the parent closes it, so they start together.
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> pids;
  for (int c = 0; c < processes; ++c) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork";
    if (pid == 0) {
      ::close(gate[1]);
      char b;
      (void)!::read(gate[0], &b, 1);
      ::_exit(child_main(path, c));  // _exit: no gtest teardown in the child
    }
    pids.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (int c = 0; c < processes; ++c) {
    int status = 0;
    ASSERT_EQ(::waitpid(pids[c], &status, 0), pids[c]);
    EXPECT_TRUE(WIFEXITED(status)) << "child " << c << " was killed";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << c << " failed (its error is on stderr)";
  }

  auto db = CacheDb::open(path, CacheDb::Mode::read_only);
  auto rows = db.trials();
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(processes * trials_per_process));
  EXPECT_EQ(db.devices().size(), 1u);
  EXPECT_EQ(db.trials(TrialFilter{.status = TrialStatus::timeout}).size(),
            static_cast<std::size_t>(processes * trials_per_process / 10));
  double expected = INFINITY;
  for (int c = 0; c < processes; ++c)
    for (int i = 0; i < trials_per_process; ++i)
      if (!fails(i)) expected = std::min(expected, time_of(c, i));
  auto best = db.best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].trial.status, TrialStatus::ok);
  // The best table keeps the minimum whatever the order of the writes; the answer is a config
  // tied with it (which one depends on the writers' order: each is a run with its own standing
  // answer, answers.hpp).
  EXPECT_DOUBLE_EQ(best[0].fastest_ms, expected);
  EXPECT_NE(std::find(best[0].tie_params.begin(), best[0].tie_params.end(), best[0].trial.key.params),
            best[0].tie_params.end());
}

TEST(Concurrency, EightProcessesWriteOneExistingCache) {
  TempDir tmp;
  auto path = tmp.path() / "shared.db";
  { auto db = CacheDb::open(path); }  // closed again before fork: children open their own
  run_writers(path);
}

TEST(Concurrency, EightProcessesCreateAndWriteOneNewCache) {
  TempDir tmp;
  run_writers(tmp.path() / "sub" / "new.db");  // all race to create the directory and the schema
}

}  // namespace
}  // namespace tiletune::testing
