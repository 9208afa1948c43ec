// Private to the interchange stage: T1 writes its expressions (conditions, launch sizes, value
// lists) in Python. These translate the part of Python that means the same thing in tiletune's
// integer expressions and refuse the rest with a reason, never guessing a meaning.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune::interchange_detail {

/// Why a Python expression does not translate (the caller adds file and field).
class Untranslatable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A Python expression over `names` as tiletune expression text: `//` is `/` (the same for the
/// non-negative sizes of a space), `and or not` are `&& || !`, True and False are 1 and 0, and
/// min and max are kept. Refused: true division `/`, `**`, bit operators, chained comparisons,
/// conditional expressions, floats, strings, subscripts, other functions, unknown names.
[[nodiscard]] std::string translate_python(std::string_view python, const std::vector<std::string>& names);

/// A value list: "[1, 2, 4]", "range(1, 9)", "list(range(32, 1024 + 1, 32))", "[True, False]".
[[nodiscard]] std::vector<std::int64_t> python_values(std::string_view python);

}  // namespace tiletune::interchange_detail
