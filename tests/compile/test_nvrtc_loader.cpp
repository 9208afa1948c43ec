// The NVRTC loader (compile/nvrtc_api.hpp): which libraries it tries, and what it says when a
// library is not there or is not NVRTC. The compiles themselves are test_nvrtc.cpp's.
#include <gtest/gtest.h>

#include "compile/nvrtc_api.hpp"
#include "scoped_env.hpp"

namespace tiletune {
namespace {

using tiletune::testing::ScopedEnv;

TEST(NvrtcLoader, TriesTheToolkitsSonameThenItsLibraryDirectory) {
  ScopedEnv unset("TILETUNE_NVRTC_LIBRARY", nullptr);
  const std::vector<std::string> candidates = nvrtc::library_candidates();
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].rfind("libnvrtc.so.", 0), 0u) << candidates[0];
  EXPECT_EQ(candidates[1].front(), '/') << candidates[1];
  EXPECT_NE(candidates[1].find(candidates[0]), std::string::npos) << candidates[1];
}

TEST(NvrtcLoader, TheEnvironmentNamesTheOnlyCandidate) {
  ScopedEnv set("TILETUNE_NVRTC_LIBRARY", "/opt/cuda/lib64/libnvrtc.so.12");
  EXPECT_EQ(nvrtc::library_candidates(), std::vector<std::string>{"/opt/cuda/lib64/libnvrtc.so.12"});
}

TEST(NvrtcLoader, AMissingLibraryIsAReasonThatNamesIt) {
  std::string reason;
  EXPECT_FALSE(nvrtc::load_api("/nonexistent/libnvrtc.so.13", reason).has_value());
  EXPECT_NE(reason.find("/nonexistent/libnvrtc.so.13"), std::string::npos) << reason;
}

TEST(NvrtcLoader, ALibraryThatIsNotNvrtcNamesWhatItLacks) {
  std::string reason;
  EXPECT_FALSE(nvrtc::load_api("libm.so.6", reason).has_value());
  EXPECT_NE(reason.find("libm.so.6 lacks NVRTC functions tiletune needs: nvrtcGetErrorString"), std::string::npos)
      << reason;
}

TEST(NvrtcLoader, TheToolkitsNvrtcLoads) {
  ScopedEnv unset("TILETUNE_NVRTC_LIBRARY", nullptr);
  std::string reason;
  const auto api = nvrtc::load_api(nvrtc::library_candidates().back(), reason);
  ASSERT_TRUE(api.has_value()) << reason;
  int major = 0, minor = 0;
  EXPECT_EQ(api->nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_GE(major, 12);
}

}  // namespace
}  // namespace tiletune
