// Enumeration of a space's configs: the cartesian product of the params, filtered by the
// constraints, for one fixed problem (values of the problem sizes). Lazy: nothing is
// materialized, so a product of 10^9 points costs no memory.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tiletune/space.hpp"

namespace tiletune {

/// Values of the problem sizes, in Space::problem order.
struct Problem {
  std::vector<std::int64_t> sizes;
};

/// One point of the space: param values in Space::params order.
struct Config {
  std::vector<std::int64_t> values;
  friend bool operator==(const Config&, const Config&) = default;
  friend auto operator<=>(const Config&, const Config&) = default;
};

/// "TILE=32 BLOCK_ROWS=8 PAD=1" (real and text params by their labels: "T=half ALPHA=0.5")
[[nodiscard]] std::string format_config(const Space& space, const Config& config);

/// The element type of a buffer, global or scalar argument for one config: `type`, or the
/// label of text param `type_param` when that is >= 0. Throws Error when the label is no type.
[[nodiscard]] ElementType resolved_type(const Space& space, ElementType type, int type_param, const Config& config);
/// A NumberSpec's value for one problem and config (slot_values()). Throws EvalError naming
/// where it is written.
[[nodiscard]] double eval_number(const Space& space, const NumberSpec& number, std::span<const std::int64_t> slots);
/// A path template with each `{NAME}` replaced by the problem size NAME, resolved from `dir`
/// when relative: "expected/out_{N}.npy" -> "/abs/expected/out_8192.npy".
[[nodiscard]] std::filesystem::path expand_path(const Space& space, const std::string& path_template,
                                                const std::filesystem::path& dir, const Problem& problem);
/// An option template evaluated for one problem and config (slot_values()): "-DWIDTH=8192".
/// Throws EvalError naming where it is written.
[[nodiscard]] std::string expand_option(const OptionTemplate& option, std::span<const std::int64_t> slots);

/// Every problem of the space (cartesian product of the problem axes), in YAML order.
[[nodiscard]] std::vector<Problem> all_problems(const Space& space);

/// Slot values (problem sizes then params) for evaluating a space's expressions.
[[nodiscard]] std::vector<std::int64_t> slot_values(const Problem& problem, const Config& config);

/// Why a config was dropped by the constraints.
struct Rejection {
  std::size_t constraint_index;  ///< which constraint failed or errored
  std::string reason;            ///< "BLOCK_ROWS <= TILE is false" or the EvalError text
};

/// Walks the product in a deterministic order (the last param varies fastest); with an
/// `allowed:` list, walks its configs in that same order instead.
class Enumerator {
 public:
  Enumerator(const Space& space, Problem problem);

  /// Size of the product before constraints (saturates at UINT64_MAX); with an allowed list,
  /// the number of configs it lists.
  [[nodiscard]] std::uint64_t product_size() const noexcept { return product_size_; }

  /// The next config that passes every constraint, or nullopt at the end.
  [[nodiscard]] std::optional<Config> next();

  /// Points visited so far (before constraints) and kept so far.
  [[nodiscard]] std::uint64_t visited() const noexcept { return visited_; }
  [[nodiscard]] std::uint64_t kept() const noexcept { return kept_; }
  /// Points whose constraint evaluation raised an error (counted as not kept).
  [[nodiscard]] std::uint64_t errored() const noexcept { return errored_; }

  /// Checks one config against the allowed list and the constraints; nullopt when it passes.
  /// A config an allowed list lacks has constraint_index == constraints.size().
  [[nodiscard]] std::optional<Rejection> check(const Config& config) const;

 private:
  const Space* space_;
  Problem problem_;
  std::vector<std::size_t> odometer_;
  std::size_t allowed_next_ = 0;  // with an allowed list: the next of its configs
  std::vector<std::int64_t> slots_;
  std::uint64_t product_size_ = 0;
  std::uint64_t visited_ = 0;
  std::uint64_t kept_ = 0;
  std::uint64_t errored_ = 0;
  bool done_ = false;
};

/// The most bytes the buffers and globals of one config may take together (1 TiB): a count
/// that asks for more is a mistake, and is refused before anything is allocated.
inline constexpr std::uint64_t max_buffer_bytes = std::uint64_t{1} << 40;
/// Why the buffers and globals of a config cannot be allocated (a count that is below 1 or
/// cannot be evaluated, more than max_buffer_bytes in one or in all), or nullopt when they fit.
[[nodiscard]] std::optional<std::string> buffer_size_problem(const Space& space, const Problem& problem,
                                                             const Config& config);

/// Counts before and after constraints for one problem.
struct SpaceCounts {
  std::uint64_t points = 0;
  std::uint64_t valid = 0;
};
[[nodiscard]] SpaceCounts count_configs(const Space& space, const Problem& problem);

}  // namespace tiletune
