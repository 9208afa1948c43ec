// The simple built-in references computed on the device (transpose, vector_add, stencil_1d,
// histogram, reduction), so that a large problem's expected outputs cost a kernel instead of a
// host loop over a downloaded copy (a transpose of 8192^2 took about a second on the host). The
// CPU versions (reference.cpp) stay the definition: the tests check each device version against
// its CPU version, and a problem the device version does not fit exactly runs the CPU one.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "worker/worker_kernels.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {

/// A buffer on the device, as a reference sees it.
struct DeviceBufferView {
  std::string_view name;
  ElementType type = ElementType::f32;
  CUdeviceptr ptr = 0;
  std::uint64_t count = 0;
};

/// Computes the built-in reference `name` on the device: reads `inputs`, writes `outputs`
/// (which hold the outputs' initial contents, as the CPU version's do), on `stream`. Buffers are
/// found as the CPU version finds them (by name, or the only input or output). False, with
/// nothing written, when `name` has no device version or the sizes, types or counts are not
/// exactly what it takes: then the CPU version runs (and names what does not fit).
[[nodiscard]] bool compute_reference_on_device(std::string_view name, const ProblemSizes& sizes,
                                               const std::vector<DeviceBufferView>& inputs,
                                               const std::vector<DeviceBufferView>& outputs, WorkerKernels& kernels,
                                               CUstream stream);

}  // namespace tiletune
