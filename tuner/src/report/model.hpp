// Private to the report stage: the cache's trials grouped the way the report shows them, one
// group per (kernel, device, problem), with each trial's params parsed and its objective score.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/svg.hpp"
#include "tiletune/report.hpp"

namespace tiletune::report_detail {

struct Trial {
  const TrialRow* row = nullptr;
  std::vector<std::pair<std::string, std::int64_t>> params;
  std::optional<double> score;  ///< ok trials with what the objective needs

  [[nodiscard]] std::optional<std::int64_t> param(const std::string& name) const;
  [[nodiscard]] const TrialRecord& record() const { return row->trial; }
};

/// The bound on a report's size (issue 22): per group, at most this many trials are drawn in the
/// plots (the best by the objective), the others are counted in a note; so a 300,000-trial
/// cache makes a page of bounded size.
inline constexpr std::size_t kMaxDrawnTrials = 2000;

struct Group {
  std::string kernel, device, device_uuid, problem;
  std::vector<Trial> trials;                                ///< in the order they were stored (measured)
  std::vector<std::string> param_names;                     ///< in the space's order
  std::map<std::string, std::vector<std::int64_t>> values;  ///< per param, sorted, distinct
  const Trial* best = nullptr;                              ///< lowest score
  const Trial* default_trial = nullptr;                     ///< the baseline config, when measured
  /// What the cache answers for this key (CacheDb::best: the pin, else the tie set's pick, and
  /// the history); unset for a group of an earlier kernel version or with no ok trial.
  std::optional<BestEntry> answer;
  bool has_energy = false;
  /// The scored trials the plots draw: the best kMaxDrawnTrials, in the order measured.
  std::vector<const Trial*> drawn;
  std::size_t scored = 0;  ///< trials with a score (drawn or not)
  /// ok trials whose score is not a finite positive number (an infinite or NaN time in a
  /// hand-edited cache): never drawn nor ranked, counted in a note.
  std::size_t unplottable = 0;

  [[nodiscard]] std::string label() const;  ///< "NVIDIA H200 · N=8192"
  [[nodiscard]] std::string id() const;     ///< an HTML id
};

struct Model {
  Objective objective = Objective::time;
  std::vector<TrialRow> rows;                         ///< owns what the groups point at
  std::vector<Group> groups;                          ///< by kernel, device, problem
  std::map<std::string, std::string> default_config;  ///< per kernel, canonical params
  [[nodiscard]] std::vector<const Group*> of_kernel(const std::string& kernel) const;
  [[nodiscard]] std::vector<std::string> kernels() const;
};

/// Reads and groups the trials the filters select. Throws Error when there are none.
[[nodiscard]] Model load_model(const CacheDb& db, const ReportOptions& options);

/// "TILE=32 BLOCK_ROWS=8" from the stored "TILE=32;BLOCK_ROWS=8".
[[nodiscard]] std::string spaced(std::string params);
/// "0.1234 ms", "12.3 mJ", ... for the objective's unit.
[[nodiscard]] std::string format_score(Objective objective, double value);
/// "time (ms)", "energy per run (mJ)", "energy × time (mJ·ms)".
[[nodiscard]] std::string score_axis(Objective objective);

// The plots (report/plots.cpp). Each returns a plot with no points when there is nothing to draw.
[[nodiscard]] Plot status_plot(const Group& g);
[[nodiscard]] Plot param_plot(const Model& m, const Group& g, const std::string& param);
[[nodiscard]] Plot heatmap_plot(const Model& m, const Group& g, const std::string& a, const std::string& b);
[[nodiscard]] Plot resource_plot(const Model& m, const Group& g, bool registers);
[[nodiscard]] Plot progress_plot(const Model& m, const Group& g);
[[nodiscard]] Plot energy_plot(const Group& g);
[[nodiscard]] Plot devices_plot(const Model& m, const std::string& kernel);
[[nodiscard]] Plot speedup_plot(const Model& m, const std::string& kernel);

/// The heatmap pairs of a group: the ones asked for, else every pair up to the limit.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> heatmap_pairs(const Group& g,
                                                                             const ReportOptions& options);

}  // namespace tiletune::report_detail
