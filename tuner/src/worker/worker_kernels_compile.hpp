// The worker's own kernels as NVRTC compiles them: the text, the options and the compile, in one
// place for the two that compile them: the build (worker/prebuild_worker_kernels.cpp, an image for
// each common arch, embedded in tiletune) and a worker at start, for an arch the build did not
// cover (worker/worker_kernels.cpp). An object library of its own: the build's tool links it
// before the worker stage exists.
#pragma once

#include <string>
#include <vector>

#include "tiletune/compile.hpp"

namespace tiletune {

/// The text NVRTC compiles: the generators (worker/input_generators.h), the comparison and sum
/// kernels (worker/compare_kernel.cu.inc) and the device references (worker/reference_kernels.cu.inc).
[[nodiscard]] std::string worker_kernels_source();

/// The options the worker's kernels compile with: no contraction into FMAs, so that a generated
/// value is the same bits as on the host.
[[nodiscard]] std::vector<std::string> worker_kernels_options();

/// Compiles the worker's kernels for compute capability `arch` (x10) of device `ordinal`
/// (named in errors; -1 for the build), through `cache` when one is given. No CUDA context is
/// needed. Throws Error when the compile fails.
[[nodiscard]] CompiledKernel compile_worker_kernels(int arch, int ordinal, const CubinCache* cache);

}  // namespace tiletune
