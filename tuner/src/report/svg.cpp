// SVG plots for the report (see report/svg.hpp).
#include "report/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/text_out.hpp"

namespace tiletune::report_detail {

std::string xml_escape(std::string_view text) { return text_out::xml_text(text); }

namespace {

std::string number_label(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.0e}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 1) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2g}", v);
}

// Ticks at 1, 2 or 5 times a power of ten, about five of them.
std::vector<double> nice_ticks(double lo, double hi) {
  std::vector<double> out;
  const double span = hi - lo;
  if (!(span > 0)) return {lo};
  const double raw = span / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return out;
}

// A range with an end that is not a finite number (a cache edited by hand) keeps its finite end,
// or becomes [0, 1], so that no tick, line or mark is placed at NaN.
void finite_range(double& lo, double& hi) {
  if (!std::isfinite(lo) && !std::isfinite(hi)) lo = 0, hi = 1;
  if (!std::isfinite(lo)) lo = hi;
  if (!std::isfinite(hi)) hi = lo;
}

}  // namespace

Scale Scale::linear(double lo, double hi) {
  Scale s;
  s.kind_ = Kind::linear;
  finite_range(lo, hi);
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  s.lo_ = lo;
  s.hi_ = hi;
  return s;
}

Scale Scale::log(double lo, double hi) {
  Scale s;
  s.kind_ = Kind::log;
  finite_range(lo, hi);
  lo = std::max(lo, 1e-300);
  hi = std::max(hi, lo);
  if (hi / lo < 1.5) {  // a narrow range: widen it so that ticks fall inside
    const double mid = std::sqrt(lo * hi);
    lo = mid / 1.3;
    hi = mid * 1.3;
  }
  s.lo_ = lo;
  s.hi_ = hi;
  return s;
}

Scale Scale::categories(std::vector<std::string> names) {
  Scale s;
  s.kind_ = Kind::categories;
  if (names.empty()) names.push_back("");
  s.names_ = std::move(names);
  return s;
}

double Scale::band() const noexcept { return categorical() ? 1.0 / double(names_.size()) : 0.0; }

double Scale::fraction(double v) const {
  switch (kind_) {
    case Kind::linear: return (v - lo_) / (hi_ - lo_);
    case Kind::log: return (std::log(std::max(v, 1e-300)) - std::log(lo_)) / (std::log(hi_) - std::log(lo_));
    case Kind::categories: return (v + 0.5) / double(names_.size());
  }
  return 0;
}

std::vector<std::pair<double, std::string>> Scale::ticks() const {
  std::vector<std::pair<double, std::string>> out;
  if (kind_ == Kind::categories) {
    // Thin the labels out when there are many categories.
    const std::size_t every = std::max<std::size_t>(1, names_.size() / 16);
    for (std::size_t i = 0; i < names_.size(); i += every) out.emplace_back(double(i), names_[i]);
    return out;
  }
  if (kind_ == Kind::linear) {
    for (const double t : nice_ticks(lo_, hi_)) out.emplace_back(t, number_label(t));
    return out;
  }
  // Log: decades; 2 and 5 in between when there are few decades; more within one decade.
  const int d0 = static_cast<int>(std::floor(std::log10(lo_)));
  const int d1 = static_cast<int>(std::ceil(std::log10(hi_)));
  const double decades = std::log10(hi_ / lo_);
  const std::vector<double> mantissas = decades > 3   ? std::vector<double>{1}
                                        : decades > 1 ? std::vector<double>{1, 2, 5}
                                                      : std::vector<double>{1, 1.5, 2, 3, 4, 5, 6, 8};
  for (int d = d0; d <= d1; ++d)
    for (const double m : mantissas) {
      const double t = m * std::pow(10.0, d);
      if (t >= lo_ * 0.999 && t <= hi_ * 1.001) out.emplace_back(t, number_label(t));
    }
  if (out.size() < 2) {
    out.clear();
    for (const double t : {lo_, std::sqrt(lo_ * hi_), hi_}) out.emplace_back(t, number_label(t));
  }
  return out;
}

std::string ramp_color(double t) {
  // Stops of matplotlib's viridis, interpolated linearly.
  static constexpr double stops[][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  auto mix = [&](int c) { return static_cast<int>(std::lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c]))); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2));
}

Plot::Plot(std::string name, std::string title, int width, int height)
    : name_(std::move(name)), title_(std::move(title)), width_(width), height_(height) {}

void Plot::set_x(Scale scale, std::string label) {
  // Long category labels are drawn slanted and need more room below the axis.
  bool slanted = false;
  for (const auto& [v, text] : scale.ticks())
    slanted = slanted || (scale.categorical() && text_out::char_count(text) > 4);
  bottom_ = slanted ? 86 : 44;
  x_ = std::move(scale);
  x_label_ = std::move(label);
}

void Plot::set_y(Scale scale, std::string label) {
  y_ = std::move(scale);
  y_label_ = std::move(label);
}

namespace {
// A coordinate as written: far outside the plot is clamped (a value of 1e300 on a linear axis);
// NaN stays NaN, for finite() to refuse.
double clamped(double v) { return std::isnan(v) ? v : std::clamp(v, -1e5, 1e5); }
}  // namespace

double Plot::px(double x) const { return clamped(left_ + x_->fraction(x) * double(width_ - left_ - right_)); }
double Plot::py(double y) const {
  return clamped(height_ - bottom_ - y_->fraction(y) * double(height_ - top_ - bottom_));
}

bool Plot::finite(std::initializer_list<double> coordinates) {
  for (const double c : coordinates)
    if (!std::isfinite(c)) {
      ++dropped_;
      return false;
    }
  return true;
}

void Plot::point(double x, double y, std::string_view tip, const char* color, double radius) {
  if (!finite({px(x), py(y)})) return;
  marks_ += fmt::format(
      "<circle class=\"pt\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.75\">"
      "<title>{}</title></circle>\n",
      px(x), py(y), radius, color, xml_escape(tip));
  ++points_;
}

void Plot::cell(double xi, double yi, const std::string& color, std::string_view tip, std::string_view label, bool data,
                bool light_text) {
  const double w = x_->band() * double(width_ - left_ - right_);
  const double h = y_->band() * double(height_ - top_ - bottom_);
  const double x = px(xi) - w / 2, y = py(yi) - h / 2;
  if (!finite({x, y, w, h})) return;
  marks_ += fmt::format(
      "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
      "stroke=\"#fff\"><title>{}</title></rect>\n",
      data ? "pt" : "empty", x, y, w, h, color, xml_escape(tip));
  if (!label.empty() && w > 26 && h > 12)
    marks_ +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
                    px(xi), py(yi) + 3, light_text ? "#fff" : "#111", xml_escape(label));
  if (data) ++points_;
}

void Plot::bar(double xi, double value, std::string_view tip, const char* color) {
  const double w = 0.7 * x_->band() * double(width_ - left_ - right_);
  const double base = height_ - bottom_;
  const double top = std::min(base - 1.0, py(value));
  if (!finite({px(xi), top})) return;
  marks_ += fmt::format(
      "<rect class=\"pt\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
      "<title>{}</title></rect>\n",
      px(xi) - w / 2, top, w, base - top, color, xml_escape(tip));
  ++points_;
}

void Plot::line(const std::vector<std::pair<double, double>>& points, const char* color) {
  if (points.size() < 2) return;
  std::string d;
  for (const auto& [x, y] : points)
    if (!finite({px(x), py(y)})) return;
  for (const auto& [x, y] : points) d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "" : " ", px(x), py(y));
  marks_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n", d, color);
}

std::string Plot::axes() const {
  std::string out;
  const double x0 = left_, x1 = width_ - right_, y0 = height_ - bottom_, y1 = top_;
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#999\"/>\n", x0, y1,
                     x1 - x0, y0 - y1);
  for (const auto& [v, label] : x_->ticks()) {
    const double x = px(v);
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#999\"/>\n", x, y0, y0 + 4);
    const bool slant = x_->categorical() && text_out::char_count(label) > 4;
    out += slant ? fmt::format(
                       "<text x=\"{0:.1f}\" y=\"{1}\" font-size=\"9\" text-anchor=\"end\" "
                       "transform=\"rotate(-30 {0:.1f} {1})\">{2}</text>\n",
                       x, y0 + 13, xml_escape(text_out::cut_chars(label, 28, "")))
                 : fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}</text>\n", x,
                               y0 + 15, xml_escape(label));
  }
  for (const auto& [v, label] : y_->ticks()) {
    const double y = py(v);
    out += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/>\n", x0, x1, y);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{}</text>\n", x0 - 4, y + 3,
                       xml_escape(text_out::cut_chars(label, 12, "")));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", (x0 + x1) / 2,
                     height_ - 10, xml_escape(x_label_));
  out += fmt::format(
      "<text x=\"12\" y=\"{0:.1f}\" font-size=\"11\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 12 {0:.1f})\">{1}</text>\n",
      (y0 + y1) / 2, xml_escape(y_label_));
  return out;
}

std::string Plot::svg() const {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" data-plot=\"{}\" data-points=\"{}\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n",
      xml_escape(name_), points_, width_, height_ + 14 * int(notes_.size() + (dropped_ > 0)), width_,
      height_ + 14 * int(notes_.size() + (dropped_ > 0)));
  out += fmt::format("<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
  out += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", left_,
                     xml_escape(title_));
  if (x_ && y_) out += axes();
  out += marks_;
  int y = height_ + 6;
  std::vector<std::string> notes = notes_;
  if (dropped_ > 0) notes.push_back(fmt::format("{} marks at a value that is not a finite number not drawn", dropped_));
  for (const std::string& n : notes) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\">{}</text>\n", left_, y, xml_escape(n));
    y += 14;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace tiletune::report_detail
