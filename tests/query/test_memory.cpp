// The memory of a QueryCache: a repeated request is answered without SQLite (and faster), a
// commit by another connection is noticed through PRAGMA data_version (at once with a zero
// recheck interval, or on refresh()), many threads may share one cache, and a reader keeps
// answering while another process records trials into the same file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "query_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/query.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

QueryRequest l4_request(std::int64_t n) { return QueryRequest{"transpose", QueryDevice{l4, "", 0, 0}, {{"N", n}}}; }

double median_ns(const QueryCache& cache, const QueryRequest& r, int n) {
  std::vector<double> ns;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    auto res = cache.lookup(r);
    auto t1 = Clock::now();
    EXPECT_TRUE(res.found());
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::nth_element(ns.begin(), ns.begin() + n / 2, ns.end());
  return ns[n / 2];
}

TEST(QueryMemory, RepeatedLookupIsServedFromMemoryAndFaster) {
  TempDir dir;
  auto path = write_fixture(dir.path() / "cache.db");
  auto cache = QueryCache::open(path);
  QueryRequest r{"transpose", QueryDevice{h200_a, "", 0, 0}, {{"N", 8192}}};
  auto first = cache.lookup(r);
  auto second = cache.lookup(r);
  EXPECT_FALSE(first.from_memory);
  EXPECT_TRUE(second.from_memory);
  EXPECT_EQ(second.params, first.params);
  EXPECT_EQ(second.match, first.match);
  EXPECT_EQ(second.time_ms, first.time_ms);

  QueryOptions no_memory;
  no_memory.memory_cache = false;
  auto direct = QueryCache::open(path, no_memory);
  EXPECT_FALSE(direct.lookup(r).from_memory);
  EXPECT_FALSE(direct.lookup(r).from_memory);
  double warm = median_ns(cache, r, 501);
  double through_sqlite = median_ns(direct, r, 501);
  EXPECT_LT(warm, through_sqlite) << "memory " << warm << " ns, SQLite " << through_sqlite << " ns";
  std::printf("median lookup: memory %.0f ns, SQLite %.0f ns\n", warm, through_sqlite);
}

TEST(QueryMemory, ACommitByAnotherConnectionIsPickedUp) {
  TempDir dir;
  auto path = write_fixture(dir.path() / "cache.db");
  QueryOptions every;
  every.recheck_interval = std::chrono::nanoseconds(0);
  auto eager = QueryCache::open(path, every);
  QueryOptions hour;
  hour.recheck_interval = std::chrono::hours(1);
  auto lazy = QueryCache::open(path, hour);

  EXPECT_EQ(eager.lookup(l4_request(4096)).match, MatchLevel::nearest_problem);
  EXPECT_EQ(lazy.lookup(l4_request(4096)).match, MatchLevel::nearest_problem);
  EXPECT_TRUE(lazy.lookup(l4_request(4096)).from_memory);
  EXPECT_FALSE(lazy.refresh()) << "nothing changed yet";

  {
    auto db = CacheDb::open(path);
    auto dev = db.upsert_device(fixture_device(l4));
    auto k = db.find_kernel(transpose_version("new"));
    ASSERT_TRUE(k);
    TrialRecord t;
    t.key = TrialKey{dev, *k, "N=4096", c1};
    t.time_ms = 0.7;
    (void)db.record_trial(t);
  }

  auto now_exact = eager.lookup(l4_request(4096));
  EXPECT_EQ(now_exact.match, MatchLevel::exact);
  EXPECT_EQ(now_exact.params_text, c1);
  EXPECT_FALSE(now_exact.from_memory);
  // The lazy cache trusts its memory until the interval passes or refresh() is called.
  EXPECT_EQ(lazy.lookup(l4_request(4096)).match, MatchLevel::nearest_problem);
  EXPECT_TRUE(lazy.refresh());
  auto after = lazy.lookup(l4_request(4096));
  EXPECT_EQ(after.match, MatchLevel::exact);
  EXPECT_FALSE(after.from_memory);
}

TEST(QueryMemory, RetuningAnOlderVersionMakesItCurrent) {
  TempDir dir;
  auto path = write_fixture(dir.path() / "cache.db");
  QueryOptions every;
  every.recheck_interval = std::chrono::nanoseconds(0);
  auto cache = QueryCache::open(path, every);
  QueryRequest r{"transpose", QueryDevice{h200_a, "", 0, 0}, {{"N", 8192}}};
  EXPECT_EQ(cache.lookup(r).params_text, c2);
  {
    auto db = CacheDb::open(path);
    (void)db.upsert_kernel(transpose_version("old"));  // the old source is tuned again: current
  }
  auto r2 = cache.lookup(r);
  EXPECT_EQ(r2.match, MatchLevel::exact);
  EXPECT_EQ(r2.params_text, old_winner);
}

TEST(QueryMemory, ManyThreadsShareOneCache) {
  TempDir dir;
  auto path = write_fixture(dir.path() / "cache.db");
  QueryOptions every;
  every.recheck_interval = std::chrono::nanoseconds(0);
  auto cache = QueryCache::open(path, every);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        std::int64_t n = std::int64_t{512} << ((i + t) % 8);
        auto res = cache.lookup(QueryRequest{"transpose", QueryDevice{t % 2 ? h200_a : "", "", 8, 9}, {{"N", n}}});
        if (!res.found()) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// A sweep in another process records trials one transaction each while this process looks up.
void reader_while_writer(bool wal) {
  TempDir dir;
  auto path = write_fixture(dir.path() / "cache.db", wal);
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(gate[0]);
    int code = 0;
    try {
      CacheDb::Options o;
      o.wal = wal;
      auto db = CacheDb::open(path, o);
      auto dev = db.upsert_device(fixture_device(h200_b));
      auto k = db.upsert_kernel(transpose_version("new"));
      (void)!::write(gate[1], "x", 1);
      // As a sweep does, one trial per measurement: a short pause between commits. (A writer that
      // commits back to back starves rollback-journal readers until their busy_timeout.)
      for (int i = 0; i < 100; ++i) {
        if (i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        TrialRecord t;
        t.key =
            TrialKey{dev, k, "N=" + std::to_string(100 + i % 40), "TILE=" + std::to_string(i) + ";BLOCK_ROWS=8;PAD=1"};
        t.time_ms = 0.5 + (i % 13) * 0.01;
        (void)db.record_trial(t);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "writer: %s\n", e.what());
      code = 1;
    }
    ::_exit(code);
  }
  ::close(gate[1]);
  char b;
  ASSERT_EQ(::read(gate[0], &b, 1), 1) << "the writer did not start";
  ::close(gate[0]);

  QueryOptions every;
  every.recheck_interval = std::chrono::nanoseconds(0);
  auto cache = QueryCache::open(path, every);
  int lookups = 0;
  int during = 0;  // lookups started while the writer was still running
  int errors = 0;
  int status = 0;
  std::string first_error;
  while (true) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    for (std::int64_t n : {100, 120, 4096, 8192}) {
      auto r = cache.lookup(QueryRequest{"transpose", QueryDevice{h200_b, "", 0, 0}, {{"N", n}}});
      ++lookups;
      if (done == 0) ++during;
      if (!r.found()) {
        if (errors++ == 0) first_error = std::string(query_status_name(r.status)) + ": " + r.message;
      }
    }
    if (done == pid) break;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writer failed";
  EXPECT_EQ(errors, 0) << "of " << lookups << " lookups; first: " << first_error;
  // With a rollback journal a reader may wait out most of a busy writer (busy_timeout), so only
  // overlap is required, not a rate.
  EXPECT_GT(during, 0) << "no lookup overlapped the writer";
  auto last = cache.lookup(QueryRequest{"transpose", QueryDevice{h200_b, "", 0, 0}, {{"N", 139}}});
  EXPECT_EQ(last.match, MatchLevel::exact) << "the writer's last rows are seen";
}

TEST(QueryConcurrency, ReaderWhileAnotherProcessWritesWal) { reader_while_writer(true); }
TEST(QueryConcurrency, ReaderWhileAnotherProcessWritesRollbackJournal) { reader_while_writer(false); }

}  // namespace
}  // namespace tiletune::testing
