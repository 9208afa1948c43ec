// `tiletune report`: one self-contained HTML file of a result cache (no network, no script, no
// external file: plots are inline SVG that tiletune draws itself), and single plots as SVG or PNG
// for papers and READMEs. Reads the cache through CacheDb only.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/objective.hpp"

namespace tiletune {

struct ReportOptions {
  std::optional<std::string> kernel;   ///< only this kernel
  std::optional<std::string> device;   ///< only this device (UUID or name)
  std::optional<std::string> problem;  ///< only this problem, as stored ("N=8192")
  bool all_versions = false;           ///< include trials of earlier kernel versions
  Objective objective = Objective::time;
  std::size_t top = 10;  ///< configs in each top table
  /// Heatmaps of these param pairs; empty: every pair, at most max_heatmaps of them.
  std::vector<std::pair<std::string, std::string>> heatmaps;
  std::size_t max_heatmaps = 15;
  /// The baseline of the speedups, canonical params ("TILE=32;BLOCK_ROWS=8"); unset: what the
  /// last sweep of the kernel recorded in the cache (the space's `default:`).
  std::optional<std::string> default_config;
  std::string source_name;  ///< shown in the header: the cache's path
};

/// The whole report as HTML. Throws Error when no trial matches the filters.
[[nodiscard]] std::string render_report(const CacheDb& db, const ReportOptions& options);

/// The plots render_plot knows for these filters: "devices", "speedup" (per kernel) and, per
/// (device, problem): "status", "param:NAME", "heatmap:A,B", "occupancy", "registers",
/// "progress", "energy" (when energy was measured).
[[nodiscard]] std::vector<std::string> plot_names(const CacheDb& db, const ReportOptions& options);

/// One plot as a standalone SVG document. The filters must leave one kernel (and, for the
/// per-problem plots, one device and problem); otherwise Error lists the choices.
[[nodiscard]] std::string render_plot(const CacheDb& db, const ReportOptions& options, std::string_view plot);

/// Converts SVG text to PNG bytes with rsvg-convert (librsvg's command-line tool, Debian
/// package librsvg2-bin), in a private temporary directory that is removed after. Throws Error
/// when it is missing or fails. The caller writes the bytes (write_output).
[[nodiscard]] std::string render_png(const std::string& svg, double zoom = 2.0);

}  // namespace tiletune
