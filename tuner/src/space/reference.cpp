// The CPU references of the shipped kernel families and the loader of a user's reference
// library: host-only knowledge that validating a space needs (whether a named reference fits its
// buffers) as much as the worker does (computing the expected outputs). References are
// plain loops, written for obviousness rather than speed: they run once per problem, and a
// reference that is wrong makes every candidate wrong, so it must be easy to check by eye.
#include "tiletune/reference.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "tiletune/reference.h"

namespace tiletune {
namespace {

const HostBuffer* find_buffer(const std::vector<HostBuffer>& buffers, std::string_view name) {
  for (const auto& b : buffers) {
    if (b.name == name) return &b;
  }
  return buffers.size() == 1 ? &buffers.front() : nullptr;
}

std::string buffer_names(const std::vector<HostBuffer>& buffers) {
  std::string names;
  for (const auto& b : buffers) names += (names.empty() ? "" : ", ") + b.name;
  return names.empty() ? "none" : names;
}

void require_count(const HostBuffer& b, std::uint64_t count, std::string_view reference) {
  if (b.count() < count) {
    throw Error(fmt::format("CPU reference '{}': buffer '{}' has {} elements, the problem needs {}", reference, b.name,
                            b.count(), count));
  }
}

std::uint64_t positive_size(const ReferenceArgs& args, std::string_view name, std::string_view reference) {
  const std::int64_t n = args.size(name);
  if (n <= 0) throw Error(fmt::format("CPU reference '{}': size {} = {} must be positive", reference, name, n));
  return static_cast<std::uint64_t>(n);
}

// --- the references --------------------------------------------------------------------

// out[x][y] = in[y][x] for an N x N row-major matrix of floats.
void transpose_reference(const ReferenceArgs& args) {
  const std::uint64_t n = positive_size(args, "N", "transpose");
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  require_count(in_buffer, n * n, "transpose");
  require_count(out_buffer, n * n, "transpose");
  const auto in = in_buffer.as<const float>();
  const auto out = out_buffer.as<float>();
  for (std::uint64_t y = 0; y < n; ++y) {
    for (std::uint64_t x = 0; x < n; ++x) out[x * n + y] = in[y * n + x];
  }
}

// c[i] = a[i] + b[i] for i < N (N from the sizes, else the length of c).
template <class T>
void vector_add_typed(const HostBuffer& a_buffer, const HostBuffer& b_buffer, HostBuffer& c_buffer, std::uint64_t n) {
  const auto a = a_buffer.as<const T>();
  const auto b = b_buffer.as<const T>();
  const auto c = c_buffer.as<T>();
  for (std::uint64_t i = 0; i < n; ++i) c[i] = static_cast<T>(a[i] + b[i]);
}

void vector_add_reference(const ReferenceArgs& args) {
  const HostBuffer& a = args.input("a");
  const HostBuffer& b = args.input("b");
  HostBuffer& c = args.output("c");
  const std::uint64_t n = args.sizes().contains("N") ? positive_size(args, "N", "vector_add") : c.count();
  for (const HostBuffer* buffer : {&a, &b, static_cast<const HostBuffer*>(&c)}) {
    require_count(*buffer, n, "vector_add");
  }
  switch (c.type) {
    case ElementType::f32: vector_add_typed<float>(a, b, c, n); break;
    case ElementType::f64: vector_add_typed<double>(a, b, c, n); break;
    case ElementType::i32: vector_add_typed<std::int32_t>(a, b, c, n); break;
    case ElementType::i64: vector_add_typed<std::int64_t>(a, b, c, n); break;
    default:
      throw Error(fmt::format("CPU reference 'vector_add': element type {} of '{}' is not supported",
                              static_cast<int>(c.type), c.name));
  }
}

// out[0] = the sum of in[0, N) (floats), accumulated in double and rounded once.
void reduction_reference(const ReferenceArgs& args) {
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  const std::uint64_t n = args.sizes().contains("N") ? positive_size(args, "N", "reduction") : in_buffer.count();
  require_count(in_buffer, n, "reduction");
  require_count(out_buffer, 1, "reduction");
  const auto in = in_buffer.as<const float>();
  double sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += static_cast<double>(in[i]);
  out_buffer.as<float>()[0] = static_cast<float>(sum);
}

// out[i] = sum_{j=-R..R} in[i+j] / (2R+1) for i < N, in[] read as 0 outside [0, N); in double.
void stencil_1d_reference(const ReferenceArgs& args) {
  const std::uint64_t n = positive_size(args, "N", "stencil_1d");
  const std::int64_t r = args.size("R");
  if (r < 0) throw Error(fmt::format("CPU reference 'stencil_1d': radius R = {} must not be negative", r));
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  require_count(in_buffer, n, "stencil_1d");
  require_count(out_buffer, n, "stencil_1d");
  const auto in = in_buffer.as<const float>();
  const auto out = out_buffer.as<float>();
  const auto size = static_cast<std::int64_t>(n);
  const double w = 1.0 / static_cast<double>(2 * r + 1);
  for (std::int64_t i = 0; i < size; ++i) {
    double sum = 0;
    for (std::int64_t g = std::max<std::int64_t>(i - r, 0); g <= std::min(i + r, size - 1); ++g)
      sum += static_cast<double>(in[static_cast<std::size_t>(g)]);
    out[static_cast<std::size_t>(i)] = static_cast<float>(sum * w);
  }
}

// out[b] = the number of bytes equal to b in in[0, N), b < 256 (uint8 in, uint32 counts).
void histogram_reference(const ReferenceArgs& args) {
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  const std::uint64_t n = args.sizes().contains("N") ? positive_size(args, "N", "histogram") : in_buffer.count();
  require_count(in_buffer, n, "histogram");
  require_count(out_buffer, 256, "histogram");
  const auto in = in_buffer.as<const std::uint8_t>();
  const auto out = out_buffer.as<std::uint32_t>();
  std::fill(out.begin(), out.end(), 0u);
  for (std::uint64_t i = 0; i < n; ++i) ++out[in[i]];
}

// C = A * B for row-major float matrices (M x K times K x N), summed over k in order in
// double. For small sizes (tests): the shipped space checks matmul against a reference config.
void matmul_reference(const ReferenceArgs& args) {
  const std::uint64_t m = positive_size(args, "M", "matmul");
  const std::uint64_t n = positive_size(args, "N", "matmul");
  const std::uint64_t k = positive_size(args, "K", "matmul");
  const HostBuffer& a_buffer = args.input("A");
  const HostBuffer& b_buffer = args.input("B");
  HostBuffer& c_buffer = args.output("C");
  require_count(a_buffer, m * k, "matmul");
  require_count(b_buffer, k * n, "matmul");
  require_count(c_buffer, m * n, "matmul");
  const auto a = a_buffer.as<const float>();
  const auto b = b_buffer.as<const float>();
  const auto c = c_buffer.as<float>();
  std::vector<double> row(n);
  for (std::uint64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::uint64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      for (std::uint64_t j = 0; j < n; ++j) row[j] += x * static_cast<double>(b[p * n + j]);
    }
    for (std::uint64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<float>(row[j]);
  }
}

// The registry: one entry per family, sorted by name, with the sizes and buffers it needs.
const std::vector<CpuReference>& registry() {
  using T = ElementType;
  static const std::vector<CpuReference> references = {
      {"histogram",
       "out[b] = count of bytes b in in[0, N) (256 uint32 bins)",
       {},
       {{"in", false, {T::u8}}, {"out", true, {T::u32}}},
       histogram_reference},
      {"matmul",
       "C = A * B (row-major floats, M x K times K x N; small sizes)",
       {"M", "N", "K"},
       {{"A", false, {T::f32}}, {"B", false, {T::f32}}, {"C", true, {T::f32}}},
       matmul_reference},
      {"reduction",
       "out[0] = sum of in[0, N) (double accumulation)",
       {},
       {{"in", false, {T::f32}}, {"out", true, {T::f32}}},
       reduction_reference},
      {"stencil_1d",
       "out[i] = sum_{|j|<=R} in[i+j] / (2R+1), zero outside [0, N)",
       {"N", "R"},
       {{"in", false, {T::f32}}, {"out", true, {T::f32}}},
       stencil_1d_reference},
      {"transpose",
       "out[x*N+y] = in[y*N+x] (N x N floats)",
       {"N"},
       {{"in", false, {T::f32}}, {"out", true, {T::f32}}},
       transpose_reference},
      {"vector_add",
       "c[i] = a[i] + b[i] (a, b and c of one type)",
       {},
       {{"a", false, {T::f32, T::f64, T::i32, T::i64}},
        {"b", false, {T::f32, T::f64, T::i32, T::i64}},
        {"c", true, {T::f32, T::f64, T::i32, T::i64}}},
       vector_add_reference},
  };
  return references;
}

std::string type_list(const std::vector<ElementType>& types) {
  std::string s;
  for (const ElementType t : types) s += fmt::format("{}{}", s.empty() ? "" : " or ", element_type_name(t));
  return s;
}

// The buffer a reference's `name` finds among the space's inputs (outputs), by the rule of
// ReferenceArgs: that name, else the only one.
const ReferenceBufferUse* find_use(const std::vector<ReferenceBufferUse>& buffers, std::string_view name, bool output) {
  const ReferenceBufferUse* only = nullptr;
  std::size_t count = 0;
  for (const ReferenceBufferUse& b : buffers) {
    if (b.output != output) continue;
    if (b.name == name) return &b;
    only = &b;
    ++count;
  }
  return count == 1 ? only : nullptr;
}

static_assert(
    TILETUNE_FLOAT == static_cast<int>(ElementType::f32) && TILETUNE_DOUBLE == static_cast<int>(ElementType::f64) &&
        TILETUNE_INT == static_cast<int>(ElementType::i32) && TILETUNE_UINT == static_cast<int>(ElementType::u32) &&
        TILETUNE_INT64 == static_cast<int>(ElementType::i64) && TILETUNE_UINT8 == static_cast<int>(ElementType::u8) &&
        TILETUNE_HALF == static_cast<int>(ElementType::f16) && TILETUNE_INT8 == static_cast<int>(ElementType::i8) &&
        TILETUNE_INT16 == static_cast<int>(ElementType::i16) && TILETUNE_UINT16 == static_cast<int>(ElementType::u16) &&
        TILETUNE_UINT64 == static_cast<int>(ElementType::u64) &&
        static_cast<std::size_t>(TILETUNE_UINT64) + 1 == kElementTypeCount,
    "tiletune/reference.h numbers the element types like ElementType");

void call_library(void* function, const std::string& name, const ProblemSizes& sizes,
                  const std::vector<HostBuffer>& inputs, std::vector<HostBuffer>& outputs) {
  std::vector<tiletune_size> c_sizes;
  for (const auto& [size_name, value] : sizes) c_sizes.push_back({size_name.c_str(), value});
  auto c_buffer = [](const HostBuffer& b) {
    return tiletune_buffer{b.name.c_str(), static_cast<int>(b.type), b.count(), const_cast<std::byte*>(b.bytes.data())};
  };
  std::vector<tiletune_buffer> c_inputs;
  for (const HostBuffer& b : inputs) c_inputs.push_back(c_buffer(b));
  std::vector<tiletune_buffer> c_outputs;
  for (HostBuffer& b : outputs) c_outputs.push_back(c_buffer(b));
  char error[1024] = {};
  tiletune_reference_call call{};
  call.abi = TILETUNE_REFERENCE_ABI;
  call.sizes = c_sizes.data();
  call.size_count = static_cast<int>(c_sizes.size());
  call.inputs = c_inputs.data();
  call.input_count = static_cast<int>(c_inputs.size());
  call.outputs = c_outputs.data();
  call.output_count = static_cast<int>(c_outputs.size());
  call.error = error;
  call.error_size = sizeof error;
  const int status = reinterpret_cast<tiletune_reference_fn>(function)(&call);
  if (status != 0) {
    error[sizeof error - 1] = '\0';
    throw Error(fmt::format("the reference {} failed (returned {}): {}", name, status,
                            error[0] != '\0' ? error : "it gave no message"));
  }
}

}  // namespace

std::size_t host_element_bytes(ElementType type) noexcept { return element_size(type); }

void HostBuffer::check_type(ElementType wanted) const {
  const bool half_bits = wanted == ElementType::u16 && type == ElementType::f16;  // as<std::uint16_t>() on half
  if (wanted != type && !half_bits) {
    throw Error(
        fmt::format("buffer '{}' holds {}, read as {}", name, element_type_name(type), element_type_name(wanted)));
  }
}

std::int64_t ReferenceArgs::size(std::string_view name) const {
  const auto it = sizes_.find(std::string(name));
  if (it == sizes_.end()) {
    std::string known;
    for (const auto& [key, value] : sizes_) known += (known.empty() ? "" : ", ") + key;
    throw Error(fmt::format("the CPU reference needs problem size '{}' (the problem has: {})", name,
                            known.empty() ? "none" : known));
  }
  return it->second;
}

const HostBuffer& ReferenceArgs::input(std::string_view name) const {
  if (const HostBuffer* b = find_buffer(inputs_, name)) return *b;
  throw Error(fmt::format("the CPU reference needs an input buffer '{}' (inputs: {})", name, buffer_names(inputs_)));
}

HostBuffer& ReferenceArgs::output(std::string_view name) const {
  if (const HostBuffer* b = find_buffer(outputs_, name)) return const_cast<HostBuffer&>(*b);
  throw Error(fmt::format("the CPU reference needs an output buffer '{}' (outputs: {})", name, buffer_names(outputs_)));
}

const CpuReference* find_cpu_reference(std::string_view name) {
  for (const auto& reference : registry()) {
    if (reference.name == name) return &reference;
  }
  return nullptr;
}

std::vector<std::string_view> cpu_reference_names() {
  std::vector<std::string_view> names;
  for (const auto& reference : registry()) names.push_back(reference.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> cpu_reference_misfit(const CpuReference& reference, const std::vector<std::string>& sizes,
                                                const std::vector<ReferenceBufferUse>& buffers) {
  for (const std::string_view size : reference.sizes) {
    if (std::find(sizes.begin(), sizes.end(), size) == sizes.end())
      return fmt::format("the built-in reference '{}' needs problem size {}", reference.name, size);
  }
  std::optional<ElementType> common;
  std::vector<const ReferenceBufferUse*> used;
  for (const ReferenceBuffer& want : reference.buffers) {
    const ReferenceBufferUse* b = find_use(buffers, want.name, want.output);
    if (b == nullptr)
      return fmt::format("the built-in reference '{}' needs an {} buffer named '{}'", reference.name,
                         want.output ? "output" : "input", want.name);
    if (std::find(want.types.begin(), want.types.end(), b->type) == want.types.end())
      return fmt::format("the built-in reference '{}' takes {} '{}' as {}, not {}", reference.name,
                         want.output ? "output" : "input", b->name, type_list(want.types), element_type_name(b->type));
    if (want.types.size() > 1) {
      if (common && *common != b->type)
        return fmt::format("the built-in reference '{}' needs its buffers of one type ('{}' is {})", reference.name,
                           b->name, element_type_name(b->type));
      common = b->type;
    }
    used.push_back(b);
  }
  for (const ReferenceBufferUse& b : buffers) {
    if (b.output && b.checked && std::find(used.begin(), used.end(), &b) == used.end())
      return fmt::format("the built-in reference '{}' does not write output '{}': set its check to none",
                         reference.name, b.name);
  }
  return std::nullopt;
}

LibraryReference::LibraryReference(const std::filesystem::path& library, const std::string& function)
    : name_(fmt::format("'{}' in {}", function, library.string())) {
  ::dlerror();
  handle_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* said = ::dlerror();
    std::string why = said != nullptr ? said : "dlopen failed";
    const std::string prefix = library.string() + ": ";  // dlerror names the file: say it once
    if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    throw Error(fmt::format("cannot load the reference library {}: {}", library.string(), why));
  }
  function_ = ::dlsym(handle_, function.c_str());
  if (function_ == nullptr) {
    close();
    throw Error(
        fmt::format("the reference library {} has no function '{}' (an extern \"C\" "
                    "int {}(const tiletune_reference_call*), see tiletune/reference.h)",
                    library.string(), function, function));
  }
}

LibraryReference::~LibraryReference() { close(); }

LibraryReference::LibraryReference(LibraryReference&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      function_(std::exchange(other.function_, nullptr)),
      name_(std::move(other.name_)) {}

LibraryReference& LibraryReference::operator=(LibraryReference&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    function_ = std::exchange(other.function_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

void LibraryReference::close() noexcept {
  if (handle_ != nullptr) ::dlclose(handle_);
  handle_ = nullptr;
  function_ = nullptr;
}

void LibraryReference::compute(const ProblemSizes& sizes, const std::vector<HostBuffer>& inputs,
                               std::vector<HostBuffer>& outputs) const {
  call_library(function_, name_, sizes, inputs, outputs);
}

}  // namespace tiletune
