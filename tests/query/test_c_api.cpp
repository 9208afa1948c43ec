// The C API: status codes for bad arguments (null pointers, empty and unknown kernels, sizes
// that are not numbers or not NAME=VALUE), the accessors of a result, NOT_FOUND for a miss, and
// the thread-local last error.
#include <gtest/gtest.h>

#include <thread>

#include "query_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/tiletune.h"

namespace tiletune::testing {
namespace {

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = write_fixture(dir_.path() / "cache.db");
    ASSERT_EQ(tiletune_open(path_.c_str(), &cache_), TILETUNE_OK) << tiletune_last_error();
    ASSERT_NE(cache_, nullptr);
  }
  void TearDown() override { tiletune_close(cache_); }

  // Expects status and checks that *out was cleared and a message was left.
  void expect_lookup(tiletune_status want, const char* kernel, const char* device, const char* sizes) {
    tiletune_result* out = reinterpret_cast<tiletune_result*>(0x1);
    EXPECT_EQ(tiletune_lookup(cache_, kernel, device, sizes, &out), want)
        << (kernel ? kernel : "(null)") << " " << (sizes ? sizes : "(null)") << ": " << tiletune_last_error();
    EXPECT_EQ(out, nullptr);
    EXPECT_STRNE(tiletune_last_error(), "");
  }

  TempDir dir_;
  std::filesystem::path path_;
  tiletune_cache* cache_ = nullptr;
};

TEST_F(CApi, LookupAndAccessors) {
  tiletune_result* r = nullptr;
  ASSERT_EQ(tiletune_lookup(cache_, "transpose", h200_a.c_str(), "N=8192", &r), TILETUNE_OK) << tiletune_last_error();
  EXPECT_STREQ(tiletune_last_error(), "");
  ASSERT_EQ(tiletune_result_param_count(r), 3U);
  EXPECT_STREQ(tiletune_result_param_name(r, 0), "TILE");
  EXPECT_EQ(tiletune_result_param_value(r, 0), 32);
  EXPECT_STREQ(tiletune_result_param_name(r, 1), "BLOCK_ROWS");
  EXPECT_EQ(tiletune_result_param_value(r, 1), 8);
  EXPECT_STREQ(tiletune_result_param_name(r, 2), "PAD");
  EXPECT_EQ(tiletune_result_param_value(r, 2), 1);
  EXPECT_EQ(tiletune_result_param_name(r, 3), nullptr);
  EXPECT_EQ(tiletune_result_param_value(r, 3), 0);
  long v = 0;
  EXPECT_EQ(tiletune_result_param(r, "BLOCK_ROWS", &v), TILETUNE_OK);
  EXPECT_EQ(v, 8);
  EXPECT_EQ(tiletune_result_param(r, "NOPE", &v), TILETUNE_NOT_FOUND);
  EXPECT_EQ(tiletune_result_param(r, nullptr, &v), TILETUNE_INVALID_ARGUMENT);
  EXPECT_EQ(tiletune_result_match_level(r), TILETUNE_MATCH_EXACT);
  EXPECT_DOUBLE_EQ(tiletune_result_time_ms(r), 0.30);
  EXPECT_STREQ(tiletune_result_problem(r), "N=8192");
  EXPECT_STREQ(tiletune_result_device_name(r), "NVIDIA H200");
  EXPECT_STREQ(tiletune_result_params_text(r), c2.c_str());
  tiletune_result_free(r);

  // Other device specs and separators.
  struct Case {
    const char* device;
    const char* sizes;
    tiletune_match_level level;
  };
  for (const Case& c :
       {Case{"sm_80", "N=8192", TILETUNE_MATCH_SAME_ARCHITECTURE},
        Case{"8.9", " N = 8192 ", TILETUNE_MATCH_SAME_ARCHITECTURE}, Case{"NVIDIA L4", "N=8192;", TILETUNE_MATCH_EXACT},
        Case{h200_a.c_str(), "N=2000", TILETUNE_MATCH_NEAREST_PROBLEM},
        Case{"sm_75", "N=8192", TILETUNE_MATCH_PORTABLE_DEFAULT}}) {
    tiletune_result* x = nullptr;
    ASSERT_EQ(tiletune_lookup(cache_, "transpose", c.device, c.sizes, &x), TILETUNE_OK) << c.device;
    EXPECT_EQ(tiletune_result_match_level(x), c.level) << c.device << " " << c.sizes;
    EXPECT_GT(tiletune_result_param_count(x), 0U);
    tiletune_result_free(x);
  }
  tiletune_result* p = nullptr;
  ASSERT_EQ(tiletune_lookup(cache_, "matmul", h200_a.c_str(), "K=64,N=1024,M=1024", &p), TILETUNE_OK);
  EXPECT_EQ(tiletune_result_match_level(p), TILETUNE_MATCH_EXACT);
  tiletune_result_free(p);
}

TEST_F(CApi, NullResultAccessorsAreSafe) {
  EXPECT_EQ(tiletune_result_param_count(nullptr), 0U);
  EXPECT_EQ(tiletune_result_param_name(nullptr, 0), nullptr);
  EXPECT_EQ(tiletune_result_param_value(nullptr, 0), 0);
  EXPECT_EQ(tiletune_result_match_level(nullptr), TILETUNE_MATCH_NONE);
  EXPECT_LT(tiletune_result_time_ms(nullptr), 0.0);
  EXPECT_STREQ(tiletune_result_problem(nullptr), "");
  tiletune_result_free(nullptr);
  tiletune_close(nullptr);
}

TEST_F(CApi, BadArgumentsReturnStatusCodes) {
  tiletune_result* out = nullptr;
  EXPECT_EQ(tiletune_lookup(nullptr, "transpose", "sm_90", "N=1", &out), TILETUNE_INVALID_ARGUMENT);
  EXPECT_EQ(tiletune_lookup(cache_, "transpose", "sm_90", "N=1", nullptr), TILETUNE_INVALID_ARGUMENT);
  expect_lookup(TILETUNE_INVALID_ARGUMENT, nullptr, "sm_90", "N=1");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "", "sm_90", "N=1");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", nullptr);
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "no_such_kernel", "sm_90", "N=1");
  EXPECT_NE(std::string(tiletune_last_error()).find("no_such_kernel"), std::string::npos) << tiletune_last_error();
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "N=abc");
  EXPECT_NE(std::string(tiletune_last_error()).find("abc"), std::string::npos) << tiletune_last_error();
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "N8192");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "N=12x");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "N=");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "=5");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "N=1,N=2");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "N=0");
  expect_lookup(TILETUNE_INVALID_ARGUMENT, "transpose", "sm_90", "N=99999999999999999999999");
  expect_lookup(TILETUNE_NOT_FOUND, "reduce", "sm_90", "N=1024");

  tiletune_cache* c = reinterpret_cast<tiletune_cache*>(0x1);
  EXPECT_EQ(tiletune_open(nullptr, &c), TILETUNE_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(tiletune_open(path_.c_str(), nullptr), TILETUNE_INVALID_ARGUMENT);
  EXPECT_EQ(tiletune_open((dir_.path() / "missing.db").c_str(), &c), TILETUNE_IO_ERROR);
  EXPECT_NE(std::string(tiletune_last_error()).find("missing.db"), std::string::npos) << tiletune_last_error();
  auto text = dir_.write("x.txt", "hello");
  EXPECT_EQ(tiletune_open(text.c_str(), &c), TILETUNE_NOT_A_CACHE);
  EXPECT_EQ(c, nullptr);
}

TEST_F(CApi, LiveDeviceWithoutOrWithADriver) {
  tiletune_result* out = nullptr;
  tiletune_status s = tiletune_lookup(cache_, "transpose", nullptr, "N=8192", &out);
  // No GPU here: NO_DEVICE with the reason; on a GPU machine, an answer (this fixture's devices
  // are fictional, so at best the architecture or the portable default).
  EXPECT_TRUE(s == TILETUNE_NO_DEVICE || s == TILETUNE_OK)
      << tiletune_status_string(s) << ": " << tiletune_last_error();
  if (s == TILETUNE_NO_DEVICE) EXPECT_STRNE(tiletune_last_error(), "");
  tiletune_result_free(out);
}

TEST_F(CApi, LastErrorIsPerThread) {
  tiletune_result* out = nullptr;
  ASSERT_EQ(tiletune_lookup(cache_, "transpose", "sm_90", "N=abc", &out), TILETUNE_INVALID_ARGUMENT);
  std::string other;
  std::thread([&] { other = tiletune_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_STRNE(tiletune_last_error(), "");
}

TEST(CApiStatic, StatusAndLevelStrings) {
  for (int s = TILETUNE_OK; s <= TILETUNE_INTERNAL_ERROR; ++s) {
    const char* text = tiletune_status_string(static_cast<tiletune_status>(s));
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "unknown status") << s;
  }
  EXPECT_STREQ(tiletune_status_string(TILETUNE_NOT_A_CACHE), "not a tiletune cache");
  EXPECT_STREQ(tiletune_match_level_string(TILETUNE_MATCH_NEAREST_PROBLEM), "nearest_problem");
}

TEST(CApiStatic, DefaultCachePath) {
  const char* saved = std::getenv("TILETUNE_DB");
  std::string keep = saved ? saved : "";
  ::setenv("TILETUNE_DB", "/some/where/t.db", 1);
  char small[4];
  size_t needed = 0;
  EXPECT_EQ(tiletune_default_cache_path(small, sizeof small, &needed), TILETUNE_INVALID_ARGUMENT);
  EXPECT_EQ(needed, std::string("/some/where/t.db").size() + 1);
  char buf[64];
  EXPECT_EQ(tiletune_default_cache_path(buf, sizeof buf, nullptr), TILETUNE_OK);
  EXPECT_STREQ(buf, "/some/where/t.db");
  tiletune_cache* c = nullptr;
  EXPECT_EQ(tiletune_open_default(&c), TILETUNE_IO_ERROR);  // nothing there
  if (saved)
    ::setenv("TILETUNE_DB", keep.c_str(), 1);
  else
    ::unsetenv("TILETUNE_DB");
}

}  // namespace
}  // namespace tiletune::testing
