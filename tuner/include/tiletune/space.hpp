// A search space: what to compile, which tunables to sweep, how to launch and check a
// kernel. Loaded from YAML (configs/*.yaml) and validated before anything is compiled.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/expr.hpp"

namespace tiletune {

/// An expression together with where it was written.
struct LocatedExpr {
  Expr expr;
  SourceLocation where;
};

/// A named axis: a problem size or a tunable parameter, with its values in YAML order.
struct Axis {
  std::string name;
  std::vector<std::int64_t> values;
  SourceLocation where;
};

/// Element types a buffer may hold.
enum class ElementType { f32, f64, i32, u32, i64, u8, f16 };
/// Bytes of one element (half is 2).
[[nodiscard]] constexpr std::size_t element_size(ElementType t) noexcept {
  switch (t) {
    case ElementType::f32: return 4;
    case ElementType::f64: return 8;
    case ElementType::i32: return 4;
    case ElementType::u32: return 4;
    case ElementType::i64: return 8;
    case ElementType::u8: return 1;
    case ElementType::f16: return 2;
  }
  return 0;
}
[[nodiscard]] const char* element_type_name(ElementType t);

/// How a buffer is filled before a launch.
enum class BufferInit { zero, random, iota, none };

struct BufferSpec {
  std::string name;
  ElementType type = ElementType::f32;
  LocatedExpr count;        ///< number of elements, an expression over sizes and params
  BufferInit init = BufferInit::zero;
  bool output = false;      ///< compared against the reference after each run
  SourceLocation where;
};

/// One kernel argument: a buffer (passed as a device pointer) or a scalar expression.
struct ArgSpec {
  enum class Kind { buffer, scalar };
  Kind kind = Kind::scalar;
  std::string buffer;       ///< for Kind::buffer
  LocatedExpr value;        ///< for Kind::scalar
  ElementType scalar_type = ElementType::i32;  ///< i32, u32, i64, f32 or f64
  SourceLocation where;
};

struct LaunchSpec {
  LocatedExpr grid[3];      ///< missing dimensions are the constant 1
  LocatedExpr block[3];
  LocatedExpr shared_bytes; ///< dynamic shared memory per block
};

struct VerifySpec {
  enum class Reference { cpu, config, none };
  Reference reference = Reference::cpu;
  std::map<std::string, std::int64_t> reference_config;  ///< for Reference::config
  double rtol = 0.0;
  double atol = 0.0;
  SourceLocation where;
};

struct Constraint {
  LocatedExpr condition;    ///< a config is kept when this is non-zero
};

/// A validated search space. Every expression is bound to variable_names().
struct Space {
  std::filesystem::path yaml_path;   ///< the file it was loaded from (absolute)
  std::string kernel;                ///< family name, e.g. "transpose"
  std::filesystem::path source;      ///< kernel source, resolved relative to the YAML
  std::string entry;                 ///< extern "C" symbol or a template instantiation
  std::vector<Axis> problem;         ///< problem sizes: runtime values, keys of the cache
  std::vector<Axis> params;          ///< tunables: each is passed as -DNAME=value
  std::vector<Constraint> constraints;
  LaunchSpec launch;
  std::vector<BufferSpec> buffers;
  std::vector<ArgSpec> args;
  VerifySpec verify;
  std::optional<LocatedExpr> metric_bytes;
  std::optional<LocatedExpr> metric_flops;
  std::vector<std::string> compile_options;         ///< extra NVRTC options (`options:`)
  std::optional<std::vector<std::int64_t>> default_config;  ///< param values, in params order
  SourceLocation default_where;

  /// Problem-size names then param names: the slots every expression is bound to.
  [[nodiscard]] std::vector<std::string> variable_names() const;
  /// Index of a param by name, or -1.
  [[nodiscard]] int param_index(std::string_view name) const;
  /// Index of a problem size by name, or -1.
  [[nodiscard]] int problem_index(std::string_view name) const;
};

/// Loads and validates a YAML search space. Throws SpaceError (file:line:column + remedy).
[[nodiscard]] Space load_space(const std::filesystem::path& yaml_path);

/// Same, from text; `yaml_path` names the file in messages and anchors relative paths.
[[nodiscard]] Space parse_space(const std::string& yaml_text,
                                const std::filesystem::path& yaml_path);

}  // namespace tiletune
