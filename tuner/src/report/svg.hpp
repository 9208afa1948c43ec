// Private to the report stage: plots drawn as SVG text by tiletune itself (no chart library, no
// script): axes that are linear, logarithmic or categorical, with nice ticks, and the marks the
// report needs (points, cells, bars, lines). Every data mark carries class "pt" and a <title>
// (the browser's tooltip), and the root element counts them in data-points, which is what the
// browser test checks. The same text is a standalone .svg file and inline HTML.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tiletune::report_detail {

/// Text for XML content and attributes: text_out::xml_text (valid UTF-8, escaped).
[[nodiscard]] std::string xml_escape(std::string_view text);

/// One axis: a value range (linear or log) or a list of categories.
class Scale {
 public:
  static Scale linear(double lo, double hi);
  static Scale log(double lo, double hi);  ///< lo, hi > 0
  static Scale categories(std::vector<std::string> names);

  /// Maps a value (for categories: an index) to [0, 1] along the axis.
  [[nodiscard]] double fraction(double value) const;
  /// Tick positions (values or indices) with their labels.
  [[nodiscard]] std::vector<std::pair<double, std::string>> ticks() const;
  [[nodiscard]] bool categorical() const noexcept { return !names_.empty(); }
  /// Width of one category as a fraction of the axis (0 for value axes).
  [[nodiscard]] double band() const noexcept;

 private:
  enum class Kind { linear, log, categories } kind_ = Kind::linear;
  double lo_ = 0, hi_ = 1;
  std::vector<std::string> names_;
};

/// Colors along a perceptually ordered ramp (viridis-like), t in [0, 1].
[[nodiscard]] std::string ramp_color(double t);

inline constexpr const char* kPointColor = "#3366aa";
inline constexpr const char* kBestColor = "#d62728";
inline constexpr const char* kSecondColor = "#e8850c";

class Plot {
 public:
  /// name: what `report --plot` calls it ("param:TILE"); title: shown above the plot.
  Plot(std::string name, std::string title, int width = 440, int height = 290);

  void set_x(Scale scale, std::string label);
  void set_y(Scale scale, std::string label);

  /// A point at (x, y) in axis values (category index for a categorical axis).
  void point(double x, double y, std::string_view tip, const char* color = kPointColor, double radius = 3.0);
  /// A cell of a heatmap over two categorical axes; data = false draws a cell that holds no
  /// measurement (not counted in points()).
  void cell(double xi, double yi, const std::string& color, std::string_view tip, std::string_view label = {},
            bool data = true, bool light_text = true);
  /// A bar from the axis minimum (log: the axis minimum) to value, on a categorical x axis.
  void bar(double xi, double value, std::string_view tip, const char* color = kPointColor);
  /// A polyline through points (not counted as data).
  void line(const std::vector<std::pair<double, double>>& points, const char* color = kBestColor);
  /// A note under the plot ("3 failed trials not shown").
  void note(std::string text) { notes_.push_back(std::move(text)); }

  [[nodiscard]] std::size_t points() const noexcept { return points_; }
  /// The SVG element (with xmlns, so that it is also a file of its own).
  [[nodiscard]] std::string svg() const;

 private:
  [[nodiscard]] double px(double x) const;
  [[nodiscard]] double py(double y) const;
  [[nodiscard]] std::string axes() const;
  /// Whether every coordinate of a mark is finite; a mark that is not is dropped and counted
  /// (SVG has no NaN), and the plot says how many under it.
  bool finite(std::initializer_list<double> coordinates);

  std::string name_, title_;
  int width_, height_;
  int left_ = 64, right_ = 14, top_ = 30, bottom_ = 44;
  std::optional<Scale> x_, y_;
  std::string x_label_, y_label_;
  std::string marks_;
  std::vector<std::string> notes_;
  std::size_t points_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace tiletune::report_detail
