// The host side of the input generators: streams, parameters, the host loop and a buffer filled
// on the host as the worker fills it on the device.
#include "worker/generators.hpp"

#include <fmt/format.h>

#include "tiletune/data_file.hpp"

namespace tiletune {

std::uint64_t generator_stream(std::uint64_t seed, std::string_view name) noexcept {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return seed ^ h;
}

bool is_generated(BufferInit kind) noexcept {
  switch (kind) {
    case BufferInit::random:
    case BufferInit::iota:
    case BufferInit::constant:
    case BufferInit::uniform:
    case BufferInit::normal:
    case BufferInit::csr_offsets:
    case BufferInit::csr_columns: return true;
    default: return false;
  }
}

namespace {

int generator_kind(BufferInit kind) noexcept {
  switch (kind) {
    case BufferInit::random: return tiletune_gen::kind_random;
    case BufferInit::iota: return tiletune_gen::kind_iota;
    case BufferInit::constant: return tiletune_gen::kind_constant;
    case BufferInit::uniform: return tiletune_gen::kind_uniform;
    case BufferInit::normal: return tiletune_gen::kind_normal;
    case BufferInit::csr_offsets: return tiletune_gen::kind_csr_offsets;
    case BufferInit::csr_columns: return tiletune_gen::kind_csr_columns;
    default: return 0;
  }
}

}  // namespace

tiletune_gen::Params generator_params(std::string_view name, ElementType type, std::uint64_t count,
                                      const InitPlan& init, std::uint64_t seed) {
  tiletune_gen::Params p{};
  p.count = count;
  p.stream = generator_stream(seed, name);
  p.rows = init.rows;
  p.columns = init.columns;
  p.nnz = init.nnz;
  p.a = init.a;
  p.b = init.b;
  p.offsets = nullptr;
  p.kind = generator_kind(init.kind);
  p.type = static_cast<int>(type);  // ElementType and tiletune_gen::Type share their order
  p.offsets_type = tiletune_gen::type_i32;
  return p;
}

void generate_on_host(const tiletune_gen::Params& params, void* out) {
  for (std::uint64_t i = 0; i < params.count; ++i) tiletune_gen::generate_element(params, i, out);
}

static_assert(static_cast<int>(ElementType::f32) == tiletune_gen::type_f32 &&
                  static_cast<int>(ElementType::f64) == tiletune_gen::type_f64 &&
                  static_cast<int>(ElementType::i32) == tiletune_gen::type_i32 &&
                  static_cast<int>(ElementType::u32) == tiletune_gen::type_u32 &&
                  static_cast<int>(ElementType::i64) == tiletune_gen::type_i64 &&
                  static_cast<int>(ElementType::u8) == tiletune_gen::type_u8 &&
                  static_cast<int>(ElementType::f16) == tiletune_gen::type_f16 &&
                  static_cast<int>(ElementType::i8) == tiletune_gen::type_i8 &&
                  static_cast<int>(ElementType::i16) == tiletune_gen::type_i16 &&
                  static_cast<int>(ElementType::u16) == tiletune_gen::type_u16 &&
                  static_cast<int>(ElementType::u64) == tiletune_gen::type_u64,
              "the generators number the element types like ElementType");

HostBuffer make_host_buffer(const BufferPlan& plan, std::uint64_t seed, const HostBuffer* source) {
  HostBuffer b;
  b.name = plan.name;
  b.type = plan.type;
  const InitPlan& init = plan.init;
  const bool needs_source = init.kind == BufferInit::copy || init.kind == BufferInit::csr_columns;
  if (needs_source && source == nullptr)
    throw Error(fmt::format("buffer '{}': filling it on the host needs the buffer it derives from", plan.name));
  if (init.kind == BufferInit::file) {
    b.bytes = read_data_file(init.file, plan.type, plan.count, fmt::format("buffer '{}'", plan.name));
    return b;
  }
  if (init.kind == BufferInit::copy) {
    if (source->type != plan.type || source->count() != plan.count)
      throw Error(fmt::format("buffer '{}' ({} x {}) cannot be a copy of '{}' ({} x {})", plan.name, plan.count,
                              element_type_name(plan.type), source->name, source->count(),
                              element_type_name(source->type)));
    b.bytes = source->bytes;
    return b;
  }
  b.bytes.assign(plan.count * host_element_bytes(plan.type), std::byte{0});
  if (!is_generated(init.kind)) return b;
  tiletune_gen::Params params = generator_params(plan.name, plan.type, plan.count, init, seed);
  if (init.kind == BufferInit::csr_columns) {
    if (source->count() < init.rows + 1)
      throw Error(fmt::format("buffer '{}': the row offsets '{}' hold {} elements, {} rows need {}", plan.name,
                              source->name, source->count(), init.rows, init.rows + 1));
    params.offsets = source->bytes.data();
    params.offsets_type = static_cast<int>(source->type);
  }
  generate_on_host(params, b.bytes.data());
  return b;
}

std::uint16_t float_to_half_bits(float value) noexcept { return tiletune_gen::half_bits(value); }

float half_bits_to_float(std::uint16_t bits) noexcept { return tiletune_gen::half_value(bits); }

}  // namespace tiletune
