// CPU references for the shipped kernel families, and the deterministic host-side inputs
// they (and the GPU worker) start from. A reference computes the expected outputs of one
// problem from its inputs and sizes, on the host; the worker uploads them once per problem
// and checks every candidate against them. Adding a family is one function and one line in
// the registry (reference.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/measure.hpp"
#include "tiletune/space.hpp"

namespace tiletune {

/// Bytes of one element of `type` (f16 is 2).
[[nodiscard]] std::size_t host_element_bytes(ElementType type) noexcept;

/// The element type a C++ type stands for (f16 has none: it is stored as std::uint16_t bits).
template <class T>
inline constexpr ElementType element_type_of = [] {
  using U = std::remove_const_t<T>;
  if constexpr (std::is_same_v<U, float>)
    return ElementType::f32;
  else if constexpr (std::is_same_v<U, double>)
    return ElementType::f64;
  else if constexpr (std::is_same_v<U, std::int32_t>)
    return ElementType::i32;
  else if constexpr (std::is_same_v<U, std::uint32_t>)
    return ElementType::u32;
  else if constexpr (std::is_same_v<U, std::int64_t>)
    return ElementType::i64;
  else if constexpr (std::is_same_v<U, std::uint8_t>)
    return ElementType::u8;
  else if constexpr (std::is_same_v<U, std::uint16_t>)
    return ElementType::f16;  // raw half bits
  else
    static_assert(sizeof(U) == 0, "no ElementType for this C++ type");
}();

/// A buffer on the host: its name and element type as the space declares them, and its bytes.
struct HostBuffer {
  std::string name;
  ElementType type = ElementType::f32;
  std::vector<std::byte> bytes;

  [[nodiscard]] std::size_t count() const noexcept {
    return bytes.size() / host_element_bytes(type);
  }

  /// The elements as T; throws Error when T is not the buffer's type (a reference written
  /// for float used on a double buffer would otherwise read garbage).
  template <class T>
  [[nodiscard]] std::span<T> as() {
    check_type(element_type_of<T>);
    return {reinterpret_cast<T*>(bytes.data()), count()};
  }
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    check_type(element_type_of<T>);
    return {reinterpret_cast<const T*>(bytes.data()), count()};
  }

 private:
  void check_type(ElementType wanted) const;
};

/// Problem sizes by name ("N" -> 1000).
using ProblemSizes = std::map<std::string, std::int64_t>;

/// What a reference sees: the problem sizes, the input buffers (read only) and the output
/// buffers, already sized and holding their initial contents (zeros for a plain output).
/// Buffers are found by the name the shipped space gives them; when no buffer has that name
/// and there is exactly one input (or output), that one is taken, so a space may rename it.
class ReferenceArgs {
 public:
  ReferenceArgs(const ProblemSizes& sizes, const std::vector<HostBuffer>& inputs,
                std::vector<HostBuffer>& outputs)
      : sizes_(sizes), inputs_(inputs), outputs_(outputs) {}

  /// sizes[name]; throws Error naming the reference's missing size.
  [[nodiscard]] std::int64_t size(std::string_view name) const;
  [[nodiscard]] const HostBuffer& input(std::string_view name) const;
  [[nodiscard]] HostBuffer& output(std::string_view name) const;
  [[nodiscard]] const ProblemSizes& sizes() const noexcept { return sizes_; }

 private:
  const ProblemSizes& sizes_;
  const std::vector<HostBuffer>& inputs_;
  std::vector<HostBuffer>& outputs_;
};

/// A registered CPU reference: fills the outputs from the inputs. Throws Error when the
/// buffers do not fit it (a missing size, a wrong type or element count).
struct CpuReference {
  std::string_view name;         ///< the kernel family ("transpose")
  std::string_view description;  ///< what it computes, for messages
  std::function<void(const ReferenceArgs&)> compute;
};

/// The reference registered for a kernel family, or nullptr.
[[nodiscard]] const CpuReference* find_cpu_reference(std::string_view name);
/// Every registered name, sorted.
[[nodiscard]] std::vector<std::string_view> cpu_reference_names();

/// A buffer filled the way the worker fills it on the device: `random` draws uniform floats
/// in [-1, 1) (f16 too) and small integers (i32/i64 in [-64, 64), u32 in [0, 128), u8 in
/// [0, 256)) from a PRNG seeded by `seed` and the buffer's name, so that the same request
/// always sees the same data and two buffers never share a stream; `iota` is 0, 1, 2, ...
/// (converted to the type; u8 wraps); `zero` and `none` are zeros.
[[nodiscard]] HostBuffer make_host_buffer(const BufferPlan& plan, std::uint64_t seed);

/// IEEE half bits of a float (round to nearest even) and back; for f16 buffers.
[[nodiscard]] std::uint16_t float_to_half_bits(float value) noexcept;
[[nodiscard]] float half_bits_to_float(std::uint16_t bits) noexcept;

}  // namespace tiletune
