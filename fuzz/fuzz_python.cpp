// libFuzzer harness of the Python expression interpreter (tiletune/python_expr.hpp): any text
// through Program::parse, then eval with its free names bound to values of every kind (ints at
// the edges of 64 bits, floats, strings, lists), and through rename() and eval_constant. Syntax
// and evaluation errors (ExprSyntaxError, EvalError) are the interpreter doing its job; anything
// else that escapes, a crash, a sanitizer report or an evaluation past the bounds (steps, list
// and string sizes) is a finding.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/python_expr.hpp"

namespace {

using tiletune::py::Value;

// Value sets for the free names: each name takes the value of its position, cycling.
std::vector<std::vector<Value>> value_sets() {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  return {
      {Value::integer(0), Value::integer(1), Value::integer(-1)},
      {Value::integer(kMax), Value::integer(std::numeric_limits<std::int64_t>::min()), Value::integer(2)},
      {Value::integer(32), Value::real(0.5), Value::text("float"), Value::boolean(true)},
      {Value::real(-0.0), Value::real(1e308), Value::list({Value::integer(1), Value::text("x")}), Value()},
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::vector<std::vector<Value>> sets = value_sets();
  // Small bounds: a finding is work past them, not a slow input within them.
  tiletune::py::Limits limits;
  limits.steps = 200'000;
  limits.list_items = 1 << 16;
  limits.text_bytes = 1 << 16;
  try {
    (void)tiletune::py::rename(
        text, [](std::string_view name, std::optional<std::int64_t> index) -> std::optional<std::string> {
          if (index) return "[" + std::to_string(*index) + "]";
          return name.size() % 2 ? std::optional<std::string>("renamed") : std::nullopt;
        });
  } catch (const tiletune::ExprSyntaxError&) {}
  tiletune::py::Program program;
  try {
    program = tiletune::py::Program::parse(text);
  } catch (const tiletune::ExprSyntaxError&) { return 0; }
  for (const std::vector<Value>& set : sets) {
    std::vector<Value> free;
    for (std::size_t i = 0; i < program.free_names().size(); ++i) free.push_back(set[i % set.size()]);
    try {
      const Value v = program.eval(free, limits);
      (void)v.repr();
      (void)v.truthy();
      (void)tiletune::py::to_integer(v, "the value");
    } catch (const tiletune::EvalError&) {}
  }
  return 0;
}
