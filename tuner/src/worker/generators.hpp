// The host side of the input generators (worker/input_generators.h): a buffer's stream and the
// parameters of its generator, the loop that runs it on the host, and a whole buffer filled on
// the host (what a CPU reference reads, and the tests of the generators). The worker runs the same
// generator on the device (worker/worker_kernels.hpp), so both sides give the same values.
#pragma once

#include <cstdint>
#include <string_view>

#include "worker/input_generators.h"
#include "tiletune/measure.hpp"
#include "tiletune/reference.hpp"

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

/// A buffer filled on the host the way the worker fills it on the device (the generators of
/// worker/input_generators.h, seeded by `seed` and the buffer's name): `random` draws uniform
/// floats in [-1, 1) (f16 too) and small integers (signed ones in [-64, 64), unsigned ones in
/// [0, 128), u8 in [0, 256)); `iota` is 0, 1, 2, ... (converted to the type modulo 2^bits);
/// `constant`, `uniform`, `normal` and the CSR kinds as BufferInit says; `zero` and `none` are
/// zeros; `file` reads the file (type and count checked). `copy` copies `source` and `csr_columns` reads its row
/// offsets from `source`: for those two, `source` must be given (Error otherwise).
[[nodiscard]] HostBuffer make_host_buffer(const BufferPlan& plan, std::uint64_t seed,
                                          const HostBuffer* source = nullptr);

/// IEEE half bits of a float (round to nearest even) and back; for f16 buffers.
[[nodiscard]] std::uint16_t float_to_half_bits(float value) noexcept;
[[nodiscard]] float half_bits_to_float(std::uint16_t bits) noexcept;

}  // namespace tiletune
