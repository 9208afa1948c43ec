// main() for tests that need a CUDA device: without one (no driver, or no device) the
// executable prints why and exits 77, which ctest reports as skipped, not passed. ctest runs each
// case in its own process (gtest_discover_tests), so each case is skipped so; listing the cases
// (--gtest_list_tests, how ctest finds them) needs no device.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "device/driver.hpp"

int main(int argc, char** argv) {
  // As in tiletune's main: NVRTC hits in the driver's compute cache carry no ptxas report.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  ::testing::InitGoogleTest(&argc, argv);
  if (!GTEST_FLAG_GET(list_tests) && tiletune::cu::device_count() == 0) {
    std::printf("SKIPPED: no CUDA device present (%s)\n", tiletune::cu::driver_unavailable_reason().c_str());
    return 77;
  }
  return RUN_ALL_TESTS();
}
