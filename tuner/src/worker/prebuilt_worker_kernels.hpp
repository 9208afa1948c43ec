// The worker's kernels as the build compiled them (worker/prebuild_worker_kernels.cpp, for the
// archs of TILETUNE_PREBUILT_ARCHS that the build's NVRTC supports), embedded in tiletune: a
// worker on one of those archs starts without NVRTC.
#pragma once

#include <span>
#include <string_view>

namespace tiletune {

/// One image: a cubin for compute capability `arch` (x10).
struct PrebuiltImage {
  int arch = 0;
  std::string_view cubin;
};

/// Every image the build made, in increasing arch (empty: none were asked for).
[[nodiscard]] std::span<const PrebuiltImage> prebuilt_worker_kernel_images() noexcept;

/// The image for a device of compute capability `arch` (x10): the newest one of the same major
/// at or below its minor, since a cubin runs on the later minors of its major (sm_86's on sm_89,
/// sm_120's on sm_121). nullptr when there is none (a newer major, or none built).
[[nodiscard]] const PrebuiltImage* prebuilt_worker_kernels(int arch) noexcept;

}  // namespace tiletune
