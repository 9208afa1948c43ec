// libFuzzer harness of the expression engine: any text through Expr::parse, bind to the names the
// shipped spaces use, and eval at values that reach the edges of 64-bit arithmetic. Syntax and
// evaluation errors (ExprSyntaxError, EvalError) are the engine doing its job; anything else that
// escapes, a crash, a sanitizer report (overflow is undefined behaviour: UBSan aborts) or a hang
// is a finding.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/expr.hpp"

namespace {

using i64 = std::int64_t;
constexpr i64 kMin = std::numeric_limits<i64>::min();
constexpr i64 kMax = std::numeric_limits<i64>::max();

const std::vector<std::string> kSlots = {"N",      "M",     "K",        "R",      "TILE",    "BLOCK_ROWS",  "PAD",
                                         "VEC",    "BLOCK", "ITEMS",    "GRID",   "BM",      "BN",          "BK",
                                         "TM",     "TN",    "PREFETCH", "SHARED", "VARIANT", "GRID_STRIDE", "PRIVATE",
                                         "COPIES", "a",     "b",        "x"};

// Value sets for the slots: each one cycles through its pattern.
std::vector<std::vector<i64>> value_sets() {
  const std::vector<std::vector<i64>> patterns = {
      {0},
      {1},
      {-1},
      {kMax},
      {kMin},
      {1 << 20},
      {8192, 4096, 4096, 3, 32, 8, 1, 4, 256, 4, 264, 128, 128, 8, 8, 8, 1, 1, 3, 1, 1, 2, 7, -7, 2},
      {1, kMax, kMin, 0, -1, 2, 3, 1 << 30, kMax / 2, kMin / 2, 63, 64, -64, 1000000007, -2},
  };
  std::vector<std::vector<i64>> sets;
  for (const auto& pattern : patterns) {
    std::vector<i64> values(kSlots.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern[i % pattern.size()];
    sets.push_back(std::move(values));
  }
  return sets;
}
const std::vector<std::vector<i64>> kValues = value_sets();

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tiletune::Expr e;
  try {
    e = tiletune::Expr::parse(text);
  } catch (const tiletune::ExprSyntaxError&) { return 0; }
  (void)e.text();
  (void)e.is_constant();
  (void)e.variables();
  tiletune::Expr copy = e;  // the copy must be as usable as the original
  try {
    copy.bind(kSlots);
  } catch (const tiletune::ExprSyntaxError&) { return 0; }
  for (const std::vector<i64>& values : kValues) {
    try {
      (void)copy.eval(values);
    } catch (const tiletune::EvalError&) {}
    if (copy.is_constant()) break;  // the same value at every set: once is enough
  }
  return 0;
}
