// Test helper of the gpu-labelled runner tests: device 0's primary context, a stream and the
// worker's kernels compiled for it, made once per test program; and a millisecond clock.
#pragma once

#include <chrono>

#include "device/driver.hpp"
#include "worker/worker_kernels.hpp"

namespace tiletune::testing {

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

inline int device_attribute(CUdevice d, CUdevice_attribute a) {
  int v = 0;
  TILETUNE_CU(cuDeviceGetAttribute(&v, a, d));
  return v;
}

struct WorkerDevice {
  cu::PrimaryContext context{0};
  cu::Stream stream;
  int arch = 10 * device_attribute(context.device(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
             device_attribute(context.device(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  WorkerKernels kernels{arch, device_attribute(context.device(), CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), 0};
};

inline WorkerDevice& worker_device() {
  static WorkerDevice d;
  return d;
}

}  // namespace tiletune::testing
