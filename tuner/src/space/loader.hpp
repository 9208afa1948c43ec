// The search-space loader's state, shared by the files that read each part of a space
// (space.cpp: the top level, sizes and params; load_data.cpp: buffers, globals, arguments;
// load_verify.cpp: the checks; load_checks.cpp: what is checked across parts). Private to
// the space stage.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "space/yaml_reader.hpp"
#include "tiletune/space.hpp"

namespace tiletune::detail {

/// Bounds on what a space may ask for, so that no space makes tiletune walk or allocate without
/// limit (docs/reference/space.md, "Limits").
inline constexpr std::uint64_t kMaxAxisValues = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxPoints = 1'000'000'000'000'000'000;  ///< product of the params: a 64-bit point id
inline constexpr std::uint64_t kMaxProblems = 10'000;                   ///< product of the problem sizes
inline constexpr std::size_t kMaxSourceBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxTextValue = max_param_value_chars;

/// The expression functions, reserved as names.
inline constexpr std::string_view kFunctions[] = {"min", "max", "ceil_div", "round_up", "log2", "is_pow2"};

class SpaceLoader {
 public:
  SpaceLoader(const std::string& text, const std::filesystem::path& yaml_path)
      : yaml_(text, yaml_path.string()), yaml_path_(yaml_path) {}

  [[nodiscard]] Space load();

 private:
  using Entries = std::vector<YamlEntry>;

  // space.cpp
  [[nodiscard]] const YamlEntry* find(const Entries& entries, std::string_view key) const;
  [[nodiscard]] const YamlEntry& require(const Entries& entries, const YamlValue& map, std::string_view key,
                                         std::string_view example) const;
  void read_kernel(const Entries& top, const YamlValue& root);
  [[nodiscard]] std::filesystem::path read_path(const YamlValue& v, std::string_view what,
                                                std::string_view example) const;
  void read_options(const YamlValue& v);
  [[nodiscard]] OptionTemplate read_option(const YamlValue& v) const;
  [[nodiscard]] std::vector<Axis> read_axes(const YamlValue& v, bool params);
  void read_values(const YamlValue& v, Axis& axis) const;
  [[nodiscard]] std::vector<std::int64_t> read_range(const YamlValue& v) const;
  /// The product of the params (unless `listed`: an allowed list bounds the work) and of the
  /// problem sizes against the limits.
  void check_counts(const YamlEntry& problem, const YamlEntry& params, bool listed) const;
  [[nodiscard]] LocatedExpr read_expr(const YamlValue& v, bool allow_bool = false) const;
  [[nodiscard]] LocatedExpr read_expr_in(const YamlValue& v, std::span<const std::string> slots,
                                         bool allow_bool = false) const;
  /// The text of `{python: "TEXT"}` (space.cpp).
  [[nodiscard]] YamlValue python_text(const YamlValue& v) const;
  /// The hint of a message about a Python expression: what it may use.
  [[nodiscard]] std::string python_hint() const;
  /// `{python: "[...]"}` as an axis' values: ints, numbers or words (space.cpp).
  void read_python_values(const YamlValue& v, Axis& axis) const;
  /// How Python expressions see each slot of names_: real and text params through their labels.
  void make_slot_decodings();
  /// `allowed: {file: allowed.csv}` (load_allowed.cpp).
  void read_allowed(const YamlValue& v);
  [[nodiscard]] std::optional<std::int64_t> constant(const LocatedExpr& e, const YamlValue& v) const;
  void read_dims(const YamlValue& v, LocatedExpr (&dims)[3], std::span<const std::string> slots) const;
  [[nodiscard]] LaunchSpec read_launch(const YamlValue& v, std::span<const std::string> slots) const;
  void read_metrics(const YamlValue& v);
  [[nodiscard]] std::vector<std::int64_t> read_config(const YamlValue& v, std::string_view what) const;

  // load_data.cpp
  /// A type name, or a text param's name (type_param); with `lanes`, also a vector type such
  /// as float2 (its element type, and *lanes = 2).
  [[nodiscard]] ElementType read_type(const YamlValue& v, int& type_param, bool scalar, int* lanes = nullptr) const;
  [[nodiscard]] NumberSpec read_number(const YamlValue& v, std::span<const std::string> slots) const;
  [[nodiscard]] InitSpec read_init(const YamlValue& v, ElementType type, int type_param) const;
  /// Fails at `v` when `n` is a constant that does not fit one of `types` (`excluded`: an
  /// excluded high bound, whose integers end at n - 1).
  void check_fits(const NumberSpec& n, const YamlValue& v, std::span<const ElementType> types,
                  bool excluded = false) const;
  void read_buffers(const YamlValue& v);
  void read_globals(const YamlValue& v);
  [[nodiscard]] std::vector<ArgSpec> read_args(const YamlValue& v, std::span<const std::string> slots) const;
  void check_inits() const;

  // load_verify.cpp
  void read_verify(const YamlEntry* verify, const YamlValue& root);
  void read_reference(const YamlValue& v);
  [[nodiscard]] ReferenceKernel read_reference_kernel(const YamlValue& v) const;
  void read_files_reference(const YamlValue& v);
  void read_outputs(const YamlValue* outputs, double rtol, double atol);
  void read_command(const YamlEntry& command);
  void read_command_buffers(const YamlEntry& entry);

  // load_checks.cpp
  void check_name(const YamlEntry& e, std::string_view kind, bool passed_to_compiler) const;
  void check_buffers_used() const;
  void check_family() const;
  void check_kernel_parameters() const;
  void check_config_in_space(const std::vector<std::int64_t>& config, const YAML::Mark& mark,
                             std::string_view what) const;

  YamlReader yaml_;
  std::filesystem::path yaml_path_;
  Space space_;
  std::vector<std::string> names_;                  // variable slots, once problem and params are read
  std::vector<std::string> non_integer_names_;      // real and text params: not usable in expressions
  std::vector<Expr::SlotDecoding> slot_decodings_;  // per slot of names_, for Python expressions
  std::vector<YAML::Mark> buffer_marks_;            // where each buffer was declared
  std::vector<YAML::Mark> param_marks_;             // where each param was declared
  std::vector<YAML::Mark> problem_marks_;
  YAML::Mark kernel_mark_;
  YAML::Mark default_mark_;
  YAML::Mark reference_config_mark_;
};

/// The shipped kernel families and the text of their sources (embedded at build time).
struct ShippedFamily {
  std::string_view name;
  std::string_view source_text;
};
[[nodiscard]] std::span<const ShippedFamily> shipped_families();

}  // namespace tiletune::detail
