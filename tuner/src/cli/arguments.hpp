// Command-line values checked where they are parsed, before a command does any work: a value that
// is malformed or out of range is a usage error (exit status 2, see exit_codes.hpp), on every
// path, with or without a GPU, and never clamped or wrapped into range.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"
#include "tiletune/shard.hpp"

namespace tiletune {
struct Problem;
struct Space;
}  // namespace tiletune

namespace tiletune::cli {

/// A bad argument found after parsing (e.g. a --size name the space does not have): exit status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// Compile threads at most (`--threads`): far more than NVRTC can use on any machine, and few
/// enough that the pool can always start them.
inline constexpr std::uint64_t max_compile_threads = 256;

/// A whole number in [lo, hi], decimal digits only (no sign, no exponent).
[[nodiscard]] CLI::Validator whole_number_in(std::uint64_t lo, std::uint64_t hi);
/// A finite number in [lo, hi] (in (lo, hi] when lo_open).
[[nodiscard]] CLI::Validator finite_in(double lo, double hi, bool lo_open = false);
/// NAME=VALUE with an identifier name and a whole number value >= min_value (`--size`).
[[nodiscard]] CLI::Validator size_assignment(std::int64_t min_value);
/// A name as spaces give kernels: letters, digits and '_', at most max_length (`--kernel`).
[[nodiscard]] CLI::Validator identifier(std::size_t max_length = 256);
/// Text without control characters, at most max_length (`--device`, `--problem`).
[[nodiscard]] CLI::Validator plain_text(std::size_t max_length);
/// A GPU architecture with a built-in table of limits (`--arch sm_90`).
[[nodiscard]] CLI::Validator known_arch();
/// A budget that parse_budget accepts (`--budget 200|25%|90s`).
[[nodiscard]] CLI::Validator budget_text();

/// A percentage in (0, 100], "90%" or "90" (`--good-enough`); parse_percent returns it (90).
/// Throws UsageError for anything else.
[[nodiscard]] double parse_percent(const std::string& text);
[[nodiscard]] CLI::Validator percent_text();

/// I/N with 0 <= I < N (parse_shard), or auto (`--shard`).
[[nodiscard]] CLI::Validator shard_text();
/// The shard `--shard` names: the whole space when empty, the launcher's for auto (a UsageError
/// when no launcher variable is set), else I/N.
[[nodiscard]] Shard resolve_shard(const std::string& text);

/// The compilers of `plan` and `tune`: one compile worker process per compile thread, started
/// from this executable (`__worker --compile-only`), because NVRTC serializes much of its work
/// within one process (see CompilePool).
[[nodiscard]] CompilerFactory compile_workers();

/// select_problem, with a --size the space does not have (or a bad value) as a UsageError.
[[nodiscard]] Problem checked_problem(const Space& space, const std::vector<std::string>& sizes);

}  // namespace tiletune::cli
