// The report's plots (see report/model.hpp), each from one group or from every group of a kernel.
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "report/model.hpp"

namespace tiletune::report_detail {
namespace {

std::pair<double, double> score_range(const std::vector<const Trial*>& trials) {
  double lo = INFINITY, hi = 0;
  for (const Trial* t : trials) {
    lo = std::min(lo, *t->score);
    hi = std::max(hi, *t->score);
  }
  return {lo / 1.15, hi * 1.15};
}

// The trials a plot draws: the best kMaxDrawnTrials scored ones (report/model.hpp).
const std::vector<const Trial*>& scored(const Group& g) { return g.drawn; }

// The values of a param among the drawn trials, sorted: a plot's categories, bounded as they are.
std::vector<std::int64_t> drawn_values(const Group& g, const std::string& param) {
  std::vector<std::int64_t> out;
  for (const Trial* t : g.drawn)
    if (const auto v = t->param(param)) out.push_back(*v);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// A heatmap of more cells than this is left out of the page (a param of thousands of values).
constexpr std::size_t kMaxHeatmapCells = 4096;

// A stable offset in [-0.3, 0.3] of a category's width, so that equal values do not hide
// each other and a report looks the same every time.
double jitter(const std::string& params) {
  return (double(std::hash<std::string>{}(params) % 1000) / 999.0 - 0.5) * 0.6;
}

std::string tip(const Model& m, const Trial& t) {
  return fmt::format("{}: {}", spaced(t.record().key.params), format_score(m.objective, *t.score));
}

// Axis labels of groups: the problem alone when every group is on one device.
std::vector<std::string> labels(const std::vector<const Group*>& groups) {
  const bool one_device = std::all_of(groups.begin(), groups.end(),
                                      [&](const Group* g) { return g->device_uuid == groups.front()->device_uuid; });
  std::vector<std::string> out;
  for (const Group* g : groups) out.push_back(one_device && !g->problem.empty() ? g->problem : g->label());
  return out;
}

// drawn: of g.drawn, the trials this plot could draw (some lack its measurement).
void note_unscored(Plot& p, const Group& g, std::size_t drawn) {
  if (g.scored > g.drawn.size())
    p.note(fmt::format("only the best {} of {} trials drawn (see `tiletune show`)", g.drawn.size(), g.scored));
  if (g.unplottable > 0)
    p.note(fmt::format("{} ok trials whose value is not a finite positive number not drawn", g.unplottable));
  const std::size_t rest = g.trials.size() - g.scored - g.unplottable + (g.drawn.size() - drawn);
  if (rest > 0) p.note(fmt::format("{} of {} trials not drawn (failed, or no measurement)", rest, g.trials.size()));
}

}  // namespace

Plot status_plot(const Group& g) {
  Plot p("status", "Trials by status");
  std::vector<std::string> names;
  std::vector<std::size_t> counts;
  for (const TrialStatus s : all_trial_statuses) {
    const auto n = static_cast<std::size_t>(
        std::count_if(g.trials.begin(), g.trials.end(), [&](const Trial& t) { return t.record().status == s; }));
    if (n == 0) continue;
    names.emplace_back(status_name(s));
    counts.push_back(n);
  }
  const double most = counts.empty() ? 1.0 : double(*std::max_element(counts.begin(), counts.end()));
  p.set_x(Scale::categories(names), "status");
  p.set_y(Scale::linear(0, most * 1.1), "trials");
  for (std::size_t i = 0; i < names.size(); ++i)
    p.bar(double(i), double(counts[i]), fmt::format("{}: {}", names[i], counts[i]),
          names[i] == "ok" ? kPointColor : kBestColor);
  return p;
}

Plot param_plot(const Model& m, const Group& g, const std::string& param) {
  Plot p("param:" + param, fmt::format("{} against {}", objective_name(m.objective), param));
  const std::vector<std::int64_t> values = drawn_values(g, param);
  std::vector<std::string> names;
  for (const std::int64_t v : values) names.push_back(std::to_string(v));
  const std::vector<const Trial*>& trials = scored(g);
  p.set_x(Scale::categories(names), param);
  if (trials.empty()) return p;
  const auto [lo, hi] = score_range(trials);
  p.set_y(Scale::log(lo, hi), score_axis(m.objective));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::vector<double> here;
    for (const Trial* t : trials) {
      if (t->param(param) != values[i]) continue;
      here.push_back(*t->score);
      const bool best = t == g.best;
      p.point(double(i) + jitter(t->record().key.params), *t->score, tip(m, *t), best ? kBestColor : kPointColor,
              best ? 4.5 : 2.5);
    }
    if (here.empty()) continue;
    std::sort(here.begin(), here.end());
    const double median = here[here.size() / 2];
    p.line({{double(i) - 0.35, median}, {double(i) + 0.35, median}}, "#222");
  }
  note_unscored(p, g, trials.size());
  p.note("bars: medians; red: the best config");
  return p;
}

Plot heatmap_plot(const Model& m, const Group& g, const std::string& a, const std::string& b) {
  Plot p(fmt::format("heatmap:{},{}", a, b), fmt::format("best {} per {} × {}", objective_name(m.objective), a, b));
  const auto xs = drawn_values(g, a);
  const auto ys = drawn_values(g, b);
  if (xs.size() * ys.size() > kMaxHeatmapCells) {
    p.note(fmt::format("{} × {} cells: too many to draw", xs.size(), ys.size()));
    return p;
  }
  std::vector<std::string> xn, yn;
  for (const auto v : xs) xn.push_back(std::to_string(v));
  for (const auto v : ys) yn.push_back(std::to_string(v));
  p.set_x(Scale::categories(xn), a);
  p.set_y(Scale::categories(yn), b);
  // The best trial of each cell (the other params at their best).
  std::vector<const Trial*> cells(xs.size() * ys.size(), nullptr);
  double lo = INFINITY, hi = 0;
  for (const Trial* t : scored(g)) {
    const auto x = std::find(xs.begin(), xs.end(), t->param(a).value_or(0)) - xs.begin();
    const auto y = std::find(ys.begin(), ys.end(), t->param(b).value_or(0)) - ys.begin();
    if (!t->param(a) || !t->param(b)) continue;
    const Trial*& c = cells[std::size_t(y) * xs.size() + std::size_t(x)];
    if (!c || *t->score < *c->score) c = t;
    lo = std::min(lo, *t->score);
    hi = std::max(hi, *t->score);
  }
  for (std::size_t y = 0; y < ys.size(); ++y)
    for (std::size_t x = 0; x < xs.size(); ++x) {
      const Trial* c = cells[y * xs.size() + x];
      if (!c) {
        p.cell(double(x), double(y), "#dddddd", fmt::format("{}={} {}={}: no ok trial", a, xs[x], b, ys[y]), {}, false);
        continue;
      }
      // Best (lowest) is bright; the ramp is logarithmic like the other plots' axes.
      const double t = hi > lo ? 1.0 - std::log(*c->score / lo) / std::log(hi / lo) : 1.0;
      p.cell(double(x), double(y), ramp_color(t), tip(m, *c), fmt::format("{:.3g}", *c->score), true, t < 0.6);
    }
  p.note("each cell: the best over the other params");
  p.note("bright is better; grey: no ok trial");
  return p;
}

Plot resource_plot(const Model& m, const Group& g, bool registers) {
  Plot p(registers ? "registers" : "occupancy",
         fmt::format("{} against {}", objective_name(m.objective), registers ? "registers per thread" : "occupancy"));
  std::vector<std::pair<const Trial*, double>> points;
  for (const Trial* t : scored(g)) {
    const TrialRecord& r = t->record();
    std::optional<double> x;
    if (registers && r.registers) x = double(*r.registers);
    if (!registers) x = r.occupancy_driver ? r.occupancy_driver : r.occupancy_offline;
    if (x && std::isfinite(*x)) points.emplace_back(t, *x);
  }
  if (points.empty()) return p;
  double xlo = INFINITY, xhi = -INFINITY;
  std::vector<const Trial*> trials;
  for (const auto& [t, x] : points) {
    xlo = std::min(xlo, x);
    xhi = std::max(xhi, x);
    trials.push_back(t);
  }
  const auto [lo, hi] = score_range(trials);
  p.set_x(registers ? Scale::linear(std::max(0.0, xlo - 4), xhi + 4) : Scale::linear(0, 1.05),
          registers ? "registers per thread" : "occupancy (driver, else the offline model)");
  p.set_y(Scale::log(lo, hi), score_axis(m.objective));
  for (const auto& [t, x] : points)
    p.point(x, *t->score, fmt::format("{} ({} {})", tip(m, *t), registers ? "registers" : "occupancy", x),
            t == g.best ? kBestColor : kPointColor, t == g.best ? 4.5 : 2.5);
  note_unscored(p, g, points.size());
  return p;
}

Plot progress_plot(const Model& m, const Group& g) {
  Plot p("progress", "Search progress, in the order measured");
  const std::vector<const Trial*>& trials = scored(g);
  if (trials.empty()) return p;
  const auto [lo, hi] = score_range(trials);
  p.set_x(Scale::linear(0, double(g.trials.size()) + 1), "evaluation");
  const std::vector<const Trial*>& drawn = scored(g);
  std::size_t next = 0;  // drawn is in the order measured, a subsequence of g.trials
  p.set_y(Scale::log(lo, hi), score_axis(m.objective));
  std::vector<std::pair<double, double>> best_so_far;
  double best = INFINITY;
  for (std::size_t i = 0; i < g.trials.size(); ++i) {
    const Trial& t = g.trials[i];
    if (next == drawn.size() || drawn[next] != &t) continue;
    ++next;
    p.point(double(i + 1), *t.score, fmt::format("#{} {}", i + 1, tip(m, t)), kPointColor, 2.0);
    if (*t.score < best) {
      if (!best_so_far.empty()) best_so_far.emplace_back(double(i + 1), best);
      best = *t.score;
      best_so_far.emplace_back(double(i + 1), best);
    }
  }
  best_so_far.emplace_back(double(g.trials.size()), best);
  p.line(best_so_far);
  p.note(g.scored > drawn.size() ? "red: the best so far of the drawn; failed ones count, not drawn"
                                 : "red: the best so far; failed ones count, not drawn");
  if (g.scored > drawn.size() || g.unplottable > 0) note_unscored(p, g, drawn.size());
  return p;
}

Plot energy_plot(const Group& g) {
  Plot p("energy", "Energy per run against time");
  std::vector<const Trial*> trials;
  const auto positive = [](const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0; };
  for (const Trial* t : g.drawn)
    if (positive(t->record().time_ms) && positive(t->record().energy_mj)) trials.push_back(t);
  if (trials.empty()) return p;
  double tlo = INFINITY, thi = 0, elo = INFINITY, ehi = 0;
  const Trial* fastest = nullptr;
  const Trial* frugal = nullptr;
  for (const Trial* t : trials) {
    const double time = *t->record().time_ms, e = *t->record().energy_mj;
    tlo = std::min(tlo, time), thi = std::max(thi, time), elo = std::min(elo, e), ehi = std::max(ehi, e);
    if (!fastest || time < *fastest->record().time_ms) fastest = t;
    if (!frugal || e < *frugal->record().energy_mj) frugal = t;
  }
  p.set_x(Scale::log(tlo / 1.1, thi * 1.1), "time per run (ms, log)");
  p.set_y(Scale::log(elo / 1.1, ehi * 1.1), "energy per run (mJ, log)");
  for (const Trial* t : trials) {
    const TrialRecord& r = t->record();
    const char* color = t == frugal ? kSecondColor : t == fastest ? kBestColor : kPointColor;
    p.point(*r.time_ms, *r.energy_mj,
            fmt::format("{}: {:.4g} ms, {:.4g} mJ, {:.0f} W", spaced(r.key.params), *r.time_ms, *r.energy_mj,
                        r.power_w.value_or(0)),
            color, t == frugal || t == fastest ? 4.5 : 2.5);
  }
  const TrialRecord& f = fastest->record();
  const TrialRecord& e = frugal->record();
  p.note(fmt::format("red, fastest: {:.4g} ms, {:.4g} mJ", *f.time_ms, *f.energy_mj));
  p.note(fmt::format("  {}", spaced(f.key.params)));
  p.note(fmt::format("orange, least energy: {:.4g} ms, {:.4g} mJ", *e.time_ms, *e.energy_mj));
  p.note(fmt::format("  {}", spaced(e.key.params)));
  return p;
}

Plot devices_plot(const Model& m, const std::string& kernel) {
  Plot p("devices", fmt::format("{}: the best config on each device and problem", kernel), 520, 300);
  std::vector<const Group*> groups;
  for (const Group* g : m.of_kernel(kernel))
    if (g->best) groups.push_back(g);
  const std::vector<std::string> names = labels(groups);
  p.set_x(Scale::categories(names),
          groups.empty() || names.front() == groups.front()->problem ? "problem" : "device · problem");
  if (groups.empty()) return p;
  double lo = INFINITY, hi = 0;
  for (const Group* g : groups) lo = std::min(lo, *g->best->score), hi = std::max(hi, *g->best->score);
  p.set_y(Scale::log(lo / 3, hi * 1.2), score_axis(m.objective));
  for (std::size_t i = 0; i < groups.size(); ++i)
    p.bar(double(i), *groups[i]->best->score,
          fmt::format("{}: {} ({})", groups[i]->label(), format_score(m.objective, *groups[i]->best->score),
                      spaced(groups[i]->best->record().key.params)));
  return p;
}

Plot speedup_plot(const Model& m, const std::string& kernel) {
  Plot p("speedup", fmt::format("{}: speedup of the best config over the default", kernel), 520, 300);
  std::vector<const Group*> groups;
  for (const Group* g : m.of_kernel(kernel))
    if (g->best && g->default_trial && g->default_trial->score) groups.push_back(g);
  const std::vector<std::string> names = labels(groups);
  p.set_x(Scale::categories(names), "device · problem");
  double most = 1;
  for (const Group* g : groups) most = std::max(most, *g->default_trial->score / *g->best->score);
  p.set_y(Scale::linear(0, most * 1.15), fmt::format("default / best {}", objective_name(m.objective)));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const double s = *groups[i]->default_trial->score / *groups[i]->best->score;
    p.bar(double(i), s,
          fmt::format("{}: {:.2f}x ({} against the default {})", groups[i]->label(), s,
                      spaced(groups[i]->best->record().key.params),
                      spaced(groups[i]->default_trial->record().key.params)));
  }
  auto d = m.default_config.find(kernel);
  if (d == m.default_config.end())
    p.note("no default config known: tune with a space that has `default:`, or pass --default");
  else if (groups.empty())
    p.note(fmt::format("the default config {} has no ok trial here", spaced(d->second)));
  return p;
}

}  // namespace tiletune::report_detail
