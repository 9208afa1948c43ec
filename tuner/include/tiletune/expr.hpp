// Integer expressions for constraints and launch geometry ("TILE % BLOCK_ROWS == 0",
// "ceil_div(N, TILE)"). Parsed once, with variable names resolved to slots, then evaluated
// for millions of configs without allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/python_expr.hpp"

namespace tiletune {

/// A parsed expression over 64-bit signed integers with C semantics:
/// `+ - * / %` (truncating division, remainder takes the sign of the dividend),
/// `< <= > >= == !=`, `&& || !` (0 is false, results are 0/1), `?:`, unary `-`,
/// parentheses, and the functions min(a,b,...), max(a,b,...), ceil_div(a,b), round_up(a,b),
/// log2(a) (floor, a > 0), is_pow2(a). Literals are decimal or 0x hex.
/// Division or remainder by zero, overflow and bad function arguments throw EvalError.
///
/// An expression may instead be Python (parse_python: tiletune/python_expr.hpp's subset, with
/// Python's semantics: `/` is true division, `//` floors, `**`, strings, comprehensions); its
/// value must be a bool, an int or a whole float. Its variables may then stand for real and text
/// params too, decoded from their index by the tables given to bind().
class Expr {
 public:
  Expr();  // the constant 0
  ~Expr();
  Expr(const Expr&);
  Expr& operator=(const Expr&);
  Expr(Expr&&) noexcept;
  Expr& operator=(Expr&&) noexcept;

  /// Parses text; throws ExprSyntaxError with the offset of the problem.
  [[nodiscard]] static Expr parse(std::string_view text);
  /// An expression that is the constant v.
  [[nodiscard]] static Expr constant(std::int64_t v);
  /// Parses Python text (tiletune/python_expr.hpp); throws ExprSyntaxError with the offset.
  [[nodiscard]] static Expr parse_python(std::string_view text);
  /// True for an expression of parse_python.
  [[nodiscard]] bool is_python() const noexcept;

  /// The source text this expression was parsed from.
  [[nodiscard]] const std::string& text() const noexcept;
  /// Every distinct variable name used, in order of first appearance.
  [[nodiscard]] std::vector<std::string> variables() const;
  /// True when the expression uses no variables.
  [[nodiscard]] bool is_constant() const;

  /// How a Python expression sees slot i: as the integer itself when decodings[i] is null (or
  /// decodings is short), else as (*decodings[i])[value]: a real or text param's labels.
  using SlotDecoding = std::shared_ptr<const std::vector<py::Value>>;

  /// Resolves variable names to indexes into `slots`. Throws ExprSyntaxError (offset of the
  /// name) for a name not in slots. Must be called before eval() when variables are used.
  /// `decodings` matters to Python expressions only (see SlotDecoding).
  void bind(std::span<const std::string> slots, std::span<const SlotDecoding> decodings = {});

  /// Evaluates with values[i] the value of slots[i] given to bind(). Throws EvalError.
  [[nodiscard]] std::int64_t eval(std::span<const std::int64_t> values) const;

 private:
  struct Impl;
  [[nodiscard]] static std::int64_t eval_python(const Impl& m, std::span<const std::int64_t> values);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune
