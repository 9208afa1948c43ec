// The host side of the input generators (gpu/input_generators.h): a buffer's stream and the
// parameters of its generator, and the loop that runs it on the host. The worker runs the same
// generator on the device (gpu/worker_kernels.hpp), so both sides give the same values.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpu/input_generators.h"
#include "tiletune/measure.hpp"

namespace tiletune {

/// The stream of a buffer: the run's seed and the buffer's name (FNV-1a), so that the same
/// request always sees the same data and no two buffers share a stream.
[[nodiscard]] std::uint64_t generator_stream(std::uint64_t seed, std::string_view name) noexcept;

/// True for the kinds a generator fills (random iota constant uniform normal csr_offsets csr_columns).
[[nodiscard]] bool is_generated(BufferInit kind) noexcept;

/// The generator of `count` elements of `type` for a buffer or global named `name`. For
/// csr_columns the caller sets `offsets` and `offsets_type` (the row offsets, where the
/// generator runs: host or device memory).
[[nodiscard]] tiletune_gen::Params generator_params(std::string_view name, ElementType type, std::uint64_t count,
                                                    const InitPlan& init, std::uint64_t seed);

/// Runs a generator on the host: params.count elements into `out`.
void generate_on_host(const tiletune_gen::Params& params, void* out);

}  // namespace tiletune
