// What a search minimizes and a lookup ranks by: the kernel's time, its energy per run, or their
// product (the energy-delay product). Declared once for the engine, the query library, the CLI
// and the report; this header needs nothing but the C++ standard library.
#pragma once

#include <optional>
#include <string_view>

namespace tiletune {

enum class Objective {
  time,    ///< median time per run (ms)
  energy,  ///< energy per run (mJ), measured through NVML
  edp,     ///< energy-delay product: energy per run x median time (mJ x ms)
};

[[nodiscard]] constexpr std::string_view objective_name(Objective o) noexcept {
  switch (o) {
    case Objective::time: return "time";
    case Objective::energy: return "energy";
    case Objective::edp: return "edp";
  }
  return "time";
}

[[nodiscard]] constexpr std::optional<Objective> parse_objective(std::string_view s) noexcept {
  for (Objective o : {Objective::time, Objective::energy, Objective::edp})
    if (objective_name(o) == s) return o;
  return std::nullopt;
}

/// The unit of objective_score's value, for tables and plots.
[[nodiscard]] constexpr std::string_view objective_unit(Objective o) noexcept {
  switch (o) {
    case Objective::time: return "ms";
    case Objective::energy: return "mJ";
    case Objective::edp: return "mJ·ms";
  }
  return "";
}

/// The value to minimize for a measurement, or nullopt when the measurement lacks what the
/// objective needs (no time, or no energy for energy and edp) or holds a value that is not a
/// positive number.
[[nodiscard]] constexpr std::optional<double> objective_score(Objective o, std::optional<double> time_ms,
                                                              std::optional<double> energy_mj) noexcept {
  auto positive = [](std::optional<double> v) { return v && *v > 0 && *v < 1e300; };
  switch (o) {
    case Objective::time:
      if (positive(time_ms)) return *time_ms;
      return std::nullopt;
    case Objective::energy:
      if (positive(energy_mj)) return *energy_mj;
      return std::nullopt;
    case Objective::edp:
      if (positive(time_ms) && positive(energy_mj)) return *energy_mj * *time_ms;
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace tiletune
