// Python expressions, evaluated safely: what Kernel Tuner scripts and T1 files write their
// restrictions, value lists, problem sizes and grid divisors in ("32 <= a*b <= 1024",
// "[2**i for i in range(6)]", "ceil(N / (bx * tx))"). A small interpreter of a subset of Python 3
// expressions, not Python itself: no attributes, no imports, no lambdas, no assignments; names are
// the variables given to it, comprehension targets and a whitelist of functions; every evaluation
// is bounded in steps, in list and string sizes, and in nesting. Integers are 64-bit: where
// Python would grow a bigint the evaluation fails instead.
//
// A space uses it wherever an expression goes, written `{python: "..."}` (tiletune/expr.hpp:
// Expr::parse_python); `import-t1` and `tiletune.kernel_tuner` hand their Python to it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tiletune::py {

/// A value: None, bool, int, float, str or list (a tuple is a list).
class Value {
 public:
  enum class Kind { none, boolean, integer, real, text, list };
  using List = std::vector<Value>;

  Value() = default;  // None
  [[nodiscard]] static Value boolean(bool b) { return Value(Storage(std::in_place_index<1>, b)); }
  [[nodiscard]] static Value integer(std::int64_t i) { return Value(Storage(std::in_place_index<2>, i)); }
  [[nodiscard]] static Value real(double d) { return Value(Storage(std::in_place_index<3>, d)); }
  [[nodiscard]] static Value text(std::string s) { return Value(Storage(std::in_place_index<4>, std::move(s))); }
  [[nodiscard]] static Value list(List items) {
    return Value(Storage(std::in_place_index<5>, std::make_shared<const List>(std::move(items))));
  }

  [[nodiscard]] Kind kind() const noexcept { return static_cast<Kind>(v_.index()); }
  [[nodiscard]] bool is_number() const noexcept {
    return kind() == Kind::boolean || kind() == Kind::integer || kind() == Kind::real;
  }
  /// bool or int (Python's bool is an int).
  [[nodiscard]] bool is_integral() const noexcept { return kind() == Kind::boolean || kind() == Kind::integer; }
  [[nodiscard]] bool as_bool() const noexcept { return std::get<1>(v_); }
  /// The integer of a bool or int.
  [[nodiscard]] std::int64_t as_int() const noexcept {
    return kind() == Kind::boolean ? (std::get<1>(v_) ? 1 : 0) : std::get<2>(v_);
  }
  /// The number of a bool, int or float as a double.
  [[nodiscard]] double as_real() const noexcept {
    return kind() == Kind::real ? std::get<3>(v_) : static_cast<double>(as_int());
  }
  [[nodiscard]] const std::string& as_text() const noexcept { return std::get<4>(v_); }
  [[nodiscard]] const List& as_list() const noexcept { return *std::get<5>(v_); }

  /// Python's truth value.
  [[nodiscard]] bool truthy() const noexcept;
  /// Python's repr(): 3, 0.5, 1e-05, 'a', [1, 2], True, None.
  [[nodiscard]] std::string repr() const;
  /// Python's str(): as repr() except that a str is itself.
  [[nodiscard]] std::string str() const;
  /// Python's ==.
  friend bool operator==(const Value& a, const Value& b);

 private:
  using Storage = std::variant<std::monostate, bool, std::int64_t, double, std::string, std::shared_ptr<const List>>;
  explicit Value(Storage v) : v_(std::move(v)) {}
  Storage v_;
};

/// What an evaluation may use at most.
struct Limits {
  std::uint64_t steps = 10'000'000;  ///< nodes evaluated (list items built count too)
  std::size_t list_items = std::size_t{1} << 20;
  std::size_t text_bytes = std::size_t{1} << 20;
};

/// A parsed expression. Names it reads that are neither comprehension targets nor functions are
/// its free names: the caller binds them to values by position (free_names() order).
class Program {
 public:
  /// Parses text (at most 1 MiB, nesting at most 200 deep). Throws ExprSyntaxError with the
  /// offset of the problem: a syntax error, or Python that is not in the subset (an attribute,
  /// a lambda, an unknown function, ...), said as such.
  [[nodiscard]] static Program parse(std::string_view text);

  [[nodiscard]] const std::string& text() const noexcept;
  /// The variables it reads, in order of first appearance.
  [[nodiscard]] const std::vector<std::string>& free_names() const noexcept;
  /// The 0-based offset of the first appearance of free name i (for messages).
  [[nodiscard]] std::size_t free_name_offset(std::size_t i) const noexcept;

  /// Evaluates with free name i bound to free_values[i]. Throws EvalError ("ZeroDivisionError:
  /// integer division by zero in 'a // b'", "TypeError: ...", "the evaluation took more than
  /// 10000000 steps").
  [[nodiscard]] Value eval(std::span<const Value> free_values, const Limits& limits = {}) const;

  struct Impl;  // the tree (python_expr.cpp)

 private:
  std::shared_ptr<const Impl> impl_;
};

/// The functions a Python expression may call (abs, ceil, int, len, max, min, range, ...).
[[nodiscard]] std::span<const std::string_view> function_names();

/// Evaluates text that uses no variables (a value list, a constant). Throws ExprSyntaxError for
/// the text and EvalError for the evaluation; a free name is an ExprSyntaxError at its offset.
[[nodiscard]] Value eval_constant(std::string_view text, const Limits& limits = {});

/// Called by rename() for each name the text reads (not a called function, not an attribute):
/// with the subscript for NAME[INT], else nullopt; returns the replacement text, or nullopt to
/// keep the name (for NAME[INT]: nullopt asks again without the subscript).
using Renamer = std::function<std::optional<std::string>(std::string_view name, std::optional<std::int64_t> index)>;
/// The text with names replaced, everything else as written: how a T1 file's
/// "ProblemSize[0] * max(filter_width)" becomes an expression over a space's names. Throws
/// ExprSyntaxError for text that does not tokenize.
[[nodiscard]] std::string rename(std::string_view text, const Renamer& replace);

/// A Python value as a 64-bit integer where it is one: a bool, an int, or a float that is whole
/// and in range. Throws EvalError otherwise ("0.5 is not a whole number", "'a' is a str").
[[nodiscard]] std::int64_t to_integer(const Value& v, std::string_view what);

}  // namespace tiletune::py
