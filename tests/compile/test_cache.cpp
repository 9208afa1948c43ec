// The cubin cache: keys, hits and misses, corrupt entries, unwritable directories, and the
// default directory from the environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <mutex>

#include "compile/temp_name.hpp"
#include "scoped_env.hpp"
#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using tiletune::testing::TempDir;

class CacheTest : public ::testing::Test {
 protected:
  KernelSource source_ = load_kernel_source(tiletune::testing::source_dir() / "kernels" / "transpose.cu");
  CompileRequest request_{&source_, {"-DTILE=32", "-DBLOCK_ROWS=8", "-DPAD=1"}, "sm_90", "transpose"};
  TempDir dir_;
};

fs::path cubin_file(const CubinCache& cache, const std::string& key) {
  return cache.directory() / key.substr(0, 2) / (key + ".cubin");
}
fs::path meta_file(const CubinCache& cache, const std::string& key) {
  return cache.directory() / key.substr(0, 2) / (key + ".meta");
}

TEST_F(CacheTest, MissThenHit) {
  const CubinCache cache(dir_.path() / "cubin");
  const CompileResult first = compile_cached(request_, cache);
  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_GT(first.seconds, 0.0);
  ASSERT_EQ(first.cache_key.size(), 32u);
  EXPECT_EQ(first.cache_key, cache.key(request_));
  EXPECT_TRUE(fs::exists(cubin_file(cache, first.cache_key)));
  EXPECT_TRUE(fs::exists(meta_file(cache, first.cache_key)));

  const CompileResult second = compile_cached(request_, cache);
  ASSERT_TRUE(second.ok()) << second.error;
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.seconds, 0.0);
  EXPECT_EQ(second.cache_key, first.cache_key);
  EXPECT_EQ(second.kernel->cubin, first.kernel->cubin);
  EXPECT_EQ(second.kernel->resources, first.kernel->resources);
  EXPECT_EQ(second.kernel->lowered_name, first.kernel->lowered_name);
  EXPECT_EQ(second.kernel->log, first.kernel->log);
  EXPECT_EQ(second.options, first.options);

  // No temp files left behind.
  for (const auto& entry : fs::recursive_directory_iterator(cache.directory())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(CacheTest, KeyCoversOptionsArchEntryAndSource) {
  const CubinCache cache(dir_.path());
  const std::string key = cache.key(request_);
  EXPECT_EQ(key, cache.key(request_));
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);

  CompileRequest other = request_;
  other.options[2] = "-DPAD=0";
  EXPECT_NE(cache.key(other), key);
  other = request_;
  other.options.push_back("-lineinfo");
  EXPECT_NE(cache.key(other), key);
  other = request_;
  std::swap(other.options[0], other.options[1]);  // order is part of the key
  EXPECT_NE(cache.key(other), key);
  other = request_;
  other.arch = "sm_80";
  EXPECT_NE(cache.key(other), key);
  other.arch = "9.0";  // the same arch spelt differently
  EXPECT_EQ(cache.key(other), key);
  other = request_;
  other.entry = "transpose2";
  EXPECT_NE(cache.key(other), key);
  KernelSource edited = source_;
  edited.hash = "0123456789abcdef0123456789abcdef";
  other = request_;
  other.source = &edited;
  EXPECT_NE(cache.key(other), key);
}

TEST_F(CacheTest, DifferentOptionIsADifferentEntry) {
  const CubinCache cache(dir_.path());
  const CompileResult padded = compile_cached(request_, cache);
  CompileRequest unpadded = request_;
  unpadded.options[2] = "-DPAD=0";
  const CompileResult other = compile_cached(unpadded, cache);
  ASSERT_TRUE(padded.ok() && other.ok());
  EXPECT_FALSE(other.cache_hit);
  EXPECT_NE(other.cache_key, padded.cache_key);
  EXPECT_EQ(other.kernel->resources.static_shared_bytes, 32 * 32 * 4);
}

TEST_F(CacheTest, CorruptEntriesAreMissesAndGetRecompiled) {
  const CubinCache cache(dir_.path());
  const CompileResult first = compile_cached(request_, cache);
  ASSERT_TRUE(first.ok());
  const std::string key = first.cache_key;
  const std::string good_meta = tiletune::testing::read_file(meta_file(cache, key));
  const std::string good_cubin = tiletune::testing::read_file(cubin_file(cache, key));

  auto overwrite = [](const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  };
  auto expect_recompiled = [&](const char* what) {
    EXPECT_FALSE(cache.get(key).has_value()) << what;
    const CompileResult again = compile_cached(request_, cache);
    ASSERT_TRUE(again.ok()) << what;
    EXPECT_FALSE(again.cache_hit) << what;
    EXPECT_EQ(again.kernel->cubin, good_cubin) << what;
    EXPECT_TRUE(compile_cached(request_, cache).cache_hit) << what << ": rewritten";
  };

  overwrite(cubin_file(cache, key), good_cubin.substr(0, good_cubin.size() / 2));
  expect_recompiled("truncated cubin");
  std::string flipped = good_cubin;
  flipped[flipped.size() / 2] ^= 0x5a;
  overwrite(cubin_file(cache, key), flipped);
  expect_recompiled("flipped byte in cubin");
  overwrite(meta_file(cache, key), good_meta.substr(0, good_meta.size() / 3));
  expect_recompiled("truncated meta");
  overwrite(meta_file(cache, key), "");
  expect_recompiled("empty meta");
  std::string bad_number = good_meta;
  bad_number.replace(bad_number.find("registers "), 11, "registers x");
  overwrite(meta_file(cache, key), bad_number);
  expect_recompiled("garbage field");
  overwrite(meta_file(cache, key), good_meta + "trailing");
  expect_recompiled("log size mismatch");
  fs::remove(cubin_file(cache, key));
  expect_recompiled("missing cubin");
  fs::remove(meta_file(cache, key));
  expect_recompiled("missing meta");
  overwrite(meta_file(cache, key), std::string(1 << 16, '\xff'));
  expect_recompiled("binary garbage meta");

  EXPECT_FALSE(cache.get("../../etc/passwd").has_value());
  EXPECT_FALSE(cache.get("").has_value());
}

TEST_F(CacheTest, ConcurrentWritersOfOneKey) {
  // Many threads miss together and all write the same entry; rename() keeps it whole.
  const CubinCache cache(dir_.path() / "cubin");
  std::vector<CompileResult> results(6);
  {
    std::vector<std::jthread> threads;
    for (auto& result : results) {
      threads.emplace_back([&] { result = compile_cached(request_, cache); });
    }
  }
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.error;
    EXPECT_EQ(result.kernel->cubin, results[0].kernel->cubin);
  }
  const auto hit = cache.get(results[0].cache_key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->cubin, results[0].kernel->cubin);
  for (const auto& entry : fs::recursive_directory_iterator(cache.directory())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(CacheTempName, CarriesHostPidAndIsNewForEveryWriterOnEveryHost) {
  // A cache directory shared over NFS by several hosts: hostname + pid + a per-process random
  // number + a counter, in the target's directory (so the rename stays atomic).
  const fs::path target = "/cache/ab/abcdef.cubin";
  const std::string name = compile_detail::unique_temp_path(target).string();
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(name.rfind(target.string() + ".tmp." + host + "." + std::to_string(::getpid()) + ".", 0), 0u) << name;
  EXPECT_EQ(fs::path(name).parent_path(), target.parent_path());
  std::set<std::string> names;
  std::mutex m;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 250; ++i) {
          const std::string n = compile_detail::unique_temp_path(target).string();
          const std::lock_guard lock(m);
          names.insert(n);
        }
      });
  }
  EXPECT_EQ(names.size(), 1000u) << "two writers of one process got the same temp name";
  // Another process (another pid, on this host) gets another name.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string n = compile_detail::unique_temp_path(target).string();
    const bool written = ::write(fds[1], n.data(), n.size()) == static_cast<ssize_t>(n.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(fds[1]);
  std::string from_child;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
    from_child.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(names.contains(from_child)) << from_child;
  EXPECT_NE(from_child.find("." + std::to_string(child) + "."), std::string::npos) << from_child;
}

TEST_F(CacheTest, UnwritableDirectoryDoesNotFailTheCompile) {
  // A path below a regular file cannot be created, whoever runs the test (even root).
  const fs::path blocker = dir_.write("not_a_dir", "x");
  const CubinCache cache(blocker / "cubin");
  for (int i = 0; i < 2; ++i) {
    const CompileResult result = compile_cached(request_, cache);
    ASSERT_TRUE(result.ok()) << result.error;
    EXPECT_FALSE(result.cache_hit);
  }
}

TEST_F(CacheTest, EmptyPathDisablesTheCache) {
  const CubinCache cache{fs::path{}};
  const CompileResult first = compile_cached(request_, cache);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(compile_cached(request_, cache).cache_hit);
  EXPECT_EQ(first.cache_key.size(), 32u);
}

// A failed compile is kept under its key with its reason, log and warnings: the next one is
// answered without NVRTC. A corrupt failure entry is a miss.
TEST_F(CacheTest, FailuresAreCachedWithTheirLog) {
  const KernelSource bad = load_kernel_source(
      dir_.write("bad.cu", "#define V 1\n#define V 2\nextern \"C\" __global__ void bad() { nope(); }\n"));
  const CubinCache cache(dir_.path() / "cubin");
  const CompileRequest request{&bad, {}, "sm_90", "bad"};
  const CompileResult first = compile_cached(request, cache);
  ASSERT_FALSE(first.ok());
  EXPECT_FALSE(first.cache_hit);
  EXPECT_FALSE(first.transient);
  EXPECT_GT(first.seconds, 0.0);
  ASSERT_EQ(first.warnings.size(), 1u);  // the macro redefinition
  EXPECT_NE(first.error.find("bad.cu(3): error"), std::string::npos) << first.error;
  const fs::path fail_file = cache.directory() / first.cache_key.substr(0, 2) / (first.cache_key + ".fail");
  ASSERT_TRUE(fs::exists(fail_file));

  const CompileResult again = compile_cached(request, cache);
  EXPECT_FALSE(again.ok());
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.seconds, 0.0);
  EXPECT_EQ(again.error, first.error);
  EXPECT_EQ(again.log, first.log);
  EXPECT_EQ(again.warnings, first.warnings);
  EXPECT_EQ(again.options, first.options);

  const std::string good = tiletune::testing::read_file(fail_file);
  std::ofstream(fail_file, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() - 3);
  EXPECT_FALSE(cache.get_failure(first.cache_key).has_value());
  EXPECT_FALSE(compile_cached(request, cache).cache_hit);  // compiled again, and stored again
  EXPECT_TRUE(compile_cached(request, cache).cache_hit);
}

TEST_F(CacheTest, WarningsAreKeptWithTheCubin) {
  const KernelSource source =
      load_kernel_source(dir_.write("warn.cu",
                                    "extern \"C\" __global__ void w(float* p) {\n#pragma unroll 0\n"
                                    "  for (int i = 0; i < 4; ++i) p[i] = i;\n}\n"));
  const CubinCache cache(dir_.path() / "cubin");
  const CompileRequest request{&source, {}, "sm_90", "w"};
  const CompileResult first = compile_cached(request, cache);
  ASSERT_TRUE(first.ok()) << first.error;
  ASSERT_EQ(first.warnings.size(), 1u);
  EXPECT_NE(first.warnings[0].find("warn.cu(2): warning"), std::string::npos) << first.warnings[0];
  const CompileResult hit = compile_cached(request, cache);
  ASSERT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.warnings, first.warnings);
  EXPECT_EQ(hit.kernel->warnings, first.warnings);
}

using tiletune::testing::ScopedEnv;

TEST(CubinCacheDefault, FollowsTheEnvironment) {
  {
    ScopedEnv a("TILETUNE_CUBIN_CACHE", "/tmp/tt-cache");
    ScopedEnv b("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(CubinCache::default_directory(), fs::path("/tmp/tt-cache"));
  }
  {
    ScopedEnv a("TILETUNE_CUBIN_CACHE", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(CubinCache::default_directory(), fs::path("/tmp/xdg/tiletune/cubin"));
  }
  {
    ScopedEnv a("TILETUNE_CUBIN_CACHE", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", "/home/someone");
    EXPECT_EQ(CubinCache::default_directory(), fs::path("/home/someone/.cache/tiletune/cubin"));
  }
}

}  // namespace
}  // namespace tiletune
