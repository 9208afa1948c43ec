// CPU references: the built-in ones of the shipped kernel families (named explicitly in a
// space: `verify: {reference: {builtin: transpose}}`), a user's in a shared library
// (tiletune/reference.h), and the host buffers they read and write. A reference
// computes the expected outputs of one problem from its inputs and sizes, on the host; the
// worker uploads them once per problem and checks every candidate against them. Adding a
// built-in is one function and one entry in the registry (space/reference.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/space.hpp"

namespace tiletune {

/// Bytes of one element of `type` (f16 is 2).
[[nodiscard]] std::size_t host_element_bytes(ElementType type) noexcept;

/// The element type a C++ type stands for (f16 has none: it is stored as std::uint16_t bits,
/// which HostBuffer::as<std::uint16_t>() reads from a half buffer too).
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
  else if constexpr (std::is_same_v<U, std::int8_t>)
    return ElementType::i8;
  else if constexpr (std::is_same_v<U, std::int16_t>)
    return ElementType::i16;
  else if constexpr (std::is_same_v<U, std::uint16_t>)
    return ElementType::u16;
  else if constexpr (std::is_same_v<U, std::uint64_t>)
    return ElementType::u64;
  else
    static_assert(sizeof(U) == 0, "no ElementType for this C++ type");
}();

/// A buffer on the host: its name and element type as the space declares them, and its bytes.
struct HostBuffer {
  std::string name;
  ElementType type = ElementType::f32;
  std::vector<std::byte> bytes;

  [[nodiscard]] std::size_t count() const noexcept { return bytes.size() / host_element_bytes(type); }

  /// The elements as T; throws Error when T is not the buffer's type (a reference written
  /// for float used on a double buffer would otherwise read garbage). std::uint16_t reads a
  /// uint16 buffer or the bits of a half one.
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
  ReferenceArgs(const ProblemSizes& sizes, const std::vector<HostBuffer>& inputs, std::vector<HostBuffer>& outputs)
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

/// A buffer a built-in reference reads or writes: found by `name`, or as the only input
/// (output) when no buffer has that name; its element type one of `types`.
struct ReferenceBuffer {
  std::string_view name;
  bool output = false;
  std::vector<ElementType> types;
};

/// A registered CPU reference: fills the outputs from the inputs. Throws Error when the
/// buffers do not fit it (a missing size, a wrong type or element count).
struct CpuReference {
  std::string_view name;                 ///< what `builtin:` names ("transpose")
  std::string_view description;          ///< what it computes, for messages
  std::vector<std::string_view> sizes;   ///< problem sizes it needs
  std::vector<ReferenceBuffer> buffers;  ///< what it reads and writes; all of one type when several are listed
  std::function<void(const ReferenceArgs&)> compute;
};

/// The reference registered under a name, or nullptr.
[[nodiscard]] const CpuReference* find_cpu_reference(std::string_view name);
/// Every registered name, sorted.
[[nodiscard]] std::vector<std::string_view> cpu_reference_names();

/// A buffer of a space as a built-in reference would see it.
struct ReferenceBufferUse {
  std::string name;
  ElementType type = ElementType::f32;
  bool output = false;
  bool checked = false;  ///< an output whose check is not `none`
};
/// Why a built-in reference cannot check a space with these problem sizes and buffers (a size
/// it needs is missing, a buffer it reads or writes is missing or of a type it does not take,
/// a checked output it does not write), or nullopt when it fits. Element counts are checked
/// when it runs.
[[nodiscard]] std::optional<std::string> cpu_reference_misfit(const CpuReference& reference,
                                                              const std::vector<std::string>& sizes,
                                                              const std::vector<ReferenceBufferUse>& buffers);

/// A CPU reference in a shared library, with the C ABI of tiletune/reference.h: loaded with
/// dlopen (RTLD_NOW | RTLD_LOCAL) and unloaded on destruction.
class LibraryReference {
 public:
  /// Throws Error naming the library and what dlopen or dlsym said.
  LibraryReference(const std::filesystem::path& library, const std::string& function);
  ~LibraryReference();
  LibraryReference(LibraryReference&& other) noexcept;
  LibraryReference& operator=(LibraryReference&& other) noexcept;
  LibraryReference(const LibraryReference&) = delete;
  LibraryReference& operator=(const LibraryReference&) = delete;

  /// Calls the function on the sizes, inputs and outputs (which it fills). Throws Error with
  /// the function's message when it returns non-zero.
  void compute(const ProblemSizes& sizes, const std::vector<HostBuffer>& inputs,
               std::vector<HostBuffer>& outputs) const;

 private:
  void close() noexcept;
  void* handle_ = nullptr;
  void* function_ = nullptr;
  std::string name_;  ///< "function in library", for messages
};

}  // namespace tiletune
