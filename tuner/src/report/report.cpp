// The HTML report and the single-plot outputs (see tiletune/report.hpp). The page is one file:
// inline CSS, inline SVG, no script, and a Content-Security-Policy that forbids loading anything.
#include "tiletune/report.hpp"
#include "tiletune/message.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>

#include <fmt/format.h>

#include "common/input_file.hpp"
#include "common/output_file.hpp"
#include "common/scratch_dir.hpp"
#include "common/text_out.hpp"
#include "report/model.hpp"
#include "tiletune/error.hpp"
#include "tiletune/physics.hpp"

extern char** environ;

namespace tiletune {

using namespace report_detail;

namespace {

constexpr const char* kStyle = R"(
body { font-family: DejaVu Sans, Arial, sans-serif; margin: 24px; color: #222; max-width: 1500px; }
h1 { font-size: 22px; } h2 { font-size: 19px; border-bottom: 2px solid #3366aa; padding-bottom: 4px; margin-top: 36px; }
h3 { font-size: 16px; margin-top: 26px; } .meta { color: #555; font-size: 13px; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0 14px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; } th { background: #eef2f8; }
td.l, th.l { text-align: left; } tr.best td { background: #fdecea; }
.plots { display: flex; flex-wrap: wrap; gap: 10px; } .plots svg { border: 1px solid #e0e0e0; }
nav ul { columns: 2; font-size: 13px; }
)";

// Every byte of the cache goes into the page through here: valid UTF-8 (the page declares it),
// escaped (report/svg.hpp, common/text_out.hpp).
std::string esc(std::string_view s) { return xml_escape(s); }

// The bound on the page (issue 22; the plots' is kMaxDrawnTrials): sections of at most this many
// groups (kernel, device, problem), failure tables of at most this many causes; the rest counted.
constexpr std::size_t kMaxGroups = 100;
constexpr std::size_t kMaxFailureRows = 40;

// A number of the cache as the tables show it; one that is not finite is shown as missing.
std::string opt(const std::optional<double>& v, const char* f = "{:.4g}") {
  return v && std::isfinite(*v) ? fmt::format(fmt::runtime(f), *v) : std::string("–");
}

// "; headroom 3.7 % (96.3 % of its bandwidth ceiling)" for a best trial with recorded ceilings.
std::string headroom_text(const TrialRecord& r) {
  const auto share = ceiling_share(r.gbps, r.gflops, r.ceiling_gbps, r.ceiling_gflops);
  if (!share) return {};
  return fmt::format("; headroom {:.1f} % ({:.1f} % of its {} ceiling)", share->headroom_percent(),
                     100 * share->fraction, share->compute_bound ? "arithmetic" : "bandwidth");
}

std::string top_table(const Model& m, const Group& g, std::size_t top) {
  std::vector<const Trial*> ranked;
  for (const Trial& t : g.trials)
    if (t.score) ranked.push_back(&t);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Trial* a, const Trial* b) { return *a->score < *b->score; });
  // The default's score, 0 where there is none (a score is a positive time or energy).
  const double baseline = g.default_trial && g.default_trial->score ? *g.default_trial->score : 0.0;
  std::string out =
      "<table class=\"top\"><tr><th>#</th><th class=\"l\">config</th><th>time ms</th><th>±%</th>"
      "<th>GB/s</th><th>GFLOP/s</th><th>occupancy</th><th>regs</th>";
  if (g.has_energy) out += "<th>energy mJ</th><th>power W</th>";
  out += fmt::format("<th>speedup vs default</th></tr>\n");
  const std::size_t shown = std::min({ranked.size(), top, kMaxDrawnTrials});
  for (std::size_t i = 0; i < shown; ++i) {
    const TrialRecord& r = ranked[i]->record();
    const auto occupancy = r.occupancy_driver ? r.occupancy_driver : r.occupancy_offline;
    out += fmt::format(
        "<tr{}><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td>",
        i == 0 ? " class=\"best\"" : "", i + 1, esc(spaced(r.key.params)), opt(r.time_ms),
        opt(r.stddev_ms && r.time_ms ? std::optional<double>(100 * *r.stddev_ms / *r.time_ms) : std::nullopt, "{:.1f}"),
        opt(r.gbps, "{:.1f}"), opt(r.gflops, "{:.1f}"),
        opt(occupancy ? std::optional<double>(100 * *occupancy) : std::nullopt, "{:.0f} %"),
        r.registers ? std::to_string(*r.registers) : "–");
    if (g.has_energy) out += fmt::format("<td>{}</td><td>{}</td>", opt(r.energy_mj), opt(r.power_w, "{:.0f}"));
    out += fmt::format("<td>{}</td></tr>\n", baseline > 0 ? fmt::format("{:.2f}x", baseline / *ranked[i]->score) : "–");
  }
  out += "</table>\n";
  if (ranked.size() > shown && shown == kMaxDrawnTrials)
    out += fmt::format("<p class=\"meta\">and {} more trials (see <code>tiletune show</code>)</p>\n",
                       ranked.size() - shown);
  if (g.default_trial)
    out +=
        fmt::format("<p class=\"meta\">default config {}: {}</p>\n", esc(spaced(g.default_trial->record().key.params)),
                    g.default_trial->score ? esc(format_score(m.objective, *g.default_trial->score))
                                           : esc(std::string(status_name(g.default_trial->record().status))));
  return out;
}

// Failures grouped by status and the first line of their reason, digits folded ("max error N at
// index N") so that one cause is one row.
std::string failure_table(const Group& g) {
  struct Row {
    std::size_t count = 0;
    std::string example_reason, example_config;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  for (const Trial& t : g.trials) {
    const TrialRecord& r = t.record();
    if (r.status == TrialStatus::ok) continue;
    const std::string first = text_out::cut_chars(std::string_view(r.detail).substr(0, r.detail.find('\n')), 160, "");
    std::string key;
    for (const char c : first)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        key += c;
      else if (key.empty() || key.back() != '#')
        key += '#';
    Row& row = rows[{std::string(status_name(r.status)), key}];
    if (row.count++ == 0) {
      row.example_reason = first;
      row.example_config = spaced(r.key.params);
    }
  }
  if (rows.empty()) return "<p class=\"meta\">every trial is ok</p>\n";
  std::string out =
      "<table class=\"failures\"><tr><th class=\"l\">status</th><th>trials</th><th class=\"l\">reason "
      "(first of them)</th><th class=\"l\">for example</th></tr>\n";
  std::size_t shown = 0, rest_trials = 0;
  for (const auto& [key, row] : rows) {
    if (++shown > kMaxFailureRows) {
      rest_trials += row.count;
      continue;
    }
    out += fmt::format("<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
                       esc(key.first), row.count, esc(row.example_reason), esc(row.example_config));
  }
  out += "</table>\n";
  if (rows.size() > kMaxFailureRows)
    out += fmt::format("<p class=\"meta\">and {} more causes of {} trials (see <code>tiletune show</code>)</p>\n",
                       rows.size() - kMaxFailureRows, rest_trials);
  return out;
}

std::string plots_div(const std::vector<Plot>& plots) {
  std::string out = "<div class=\"plots\">\n";
  for (const Plot& p : plots)
    if (p.points() > 0) out += p.svg();
  return out + "</div>\n";
}

std::vector<Plot> group_plots(const Model& m, const Group& g, const ReportOptions& o) {
  std::vector<Plot> plots;
  plots.push_back(status_plot(g));
  for (const std::string& p : g.param_names) plots.push_back(param_plot(m, g, p));
  for (const auto& [a, b] : heatmap_pairs(g, o)) plots.push_back(heatmap_plot(m, g, a, b));
  plots.push_back(resource_plot(m, g, false));
  plots.push_back(resource_plot(m, g, true));
  plots.push_back(progress_plot(m, g));
  if (g.has_energy) plots.push_back(energy_plot(g));
  return plots;
}

// What the cache answers for the group: a pin, else the pick of the tie set, and how often the
// answer changed over the runs (sweeps, merges) that wrote trials of it.
std::string answer_line(const Group& g) {
  if (!g.answer) return "";
  const BestEntry& a = *g.answer;
  std::string how;
  if (a.pin)
    how = fmt::format("pinned for {} {}{}", pin_scope_name(a.pin->scope), esc(a.pin->target),
                      a.pin->reason.empty() ? "" : " (" + esc(a.pin->reason) + ")");
  else if (a.tie_params.size() > 1)
    how = fmt::format(
        "the pick of {} configs tied within {:.2f} % (highest occupancy, then fewest registers, then "
        "config order; fastest {})",
        a.tie_params.size(), 100.0 * a.tie_spread, esc(spaced(a.fastest_params)));
  else if (a.tie_params.size() == 1)
    how = "no other config within the noise";
  std::string history;
  if (a.runs > 0)
    history = fmt::format("; the answer changed {} time{} over {} run{}", a.winner_changes,
                          a.winner_changes == 1 ? "" : "s", a.runs, a.runs == 1 ? "" : "s");
  return fmt::format("<p class=\"meta answer\">answer: {}{}{}</p>\n", esc(spaced(a.answer_params())),
                     how.empty() ? "" : " — " + how, history);
}

std::string group_section(const Model& m, const Group& g, const ReportOptions& o) {
  std::size_t ok = 0;
  for (const Trial& t : g.trials) ok += t.record().status == TrialStatus::ok;
  std::string out =
      fmt::format("<section class=\"group\" id=\"{}\"><h3>{} — {}</h3>\n", esc(g.id()), esc(g.kernel), esc(g.label()));
  std::size_t suspect = 0;
  for (const Trial& t : g.trials) suspect += t.record().status == TrialStatus::suspect;
  out += fmt::format("<p class=\"meta\">{} trials, {} ok{}{}{}</p>\n", g.trials.size(), ok,
                     suspect ? fmt::format(", {} suspect (faster than the GPU can: never best)", suspect) : "",
                     g.best ? fmt::format("; best {} ({})", esc(format_score(m.objective, *g.best->score)),
                                          esc(spaced(g.best->record().key.params)))
                            : "",
                     g.best ? headroom_text(g.best->record()) : "");
  out += answer_line(g);
  out += top_table(m, g, o.top);
  out += failure_table(g);
  out += plots_div(group_plots(m, g, o));
  return out + "</section>\n";
}

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string filters_text(const ReportOptions& o) {
  std::string s;
  if (o.kernel) s += " kernel " + *o.kernel;
  if (o.device) s += " device " + *o.device;
  if (o.problem) s += " problem " + *o.problem;
  return s.empty() ? "every trial" : s.substr(1);
}

}  // namespace

std::string render_report(const CacheDb& db, const ReportOptions& options) {
  Model m = load_model(db, options);
  const std::size_t all_groups = m.groups.size();
  if (all_groups > kMaxGroups) m.groups.resize(kMaxGroups);  // the first ones, by kernel, device, problem
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n<title>tiletune report</title>\n<style>";
  out += kStyle;
  out += "</style></head><body>\n<h1>tiletune report</h1>\n";
  out += fmt::format("<p class=\"meta\">{} · {} · {} trials · objective {} · generated {}</p>\n",
                     esc(options.source_name.empty() ? db.path().string() : options.source_name),
                     esc(filters_text(options)), m.rows.size(), objective_name(m.objective), now_utc());
  out += "<nav><ul>\n";
  for (const Group& g : m.groups)
    out += fmt::format("<li><a href=\"#{}\">{} — {}</a></li>\n", esc(g.id()), esc(g.kernel), esc(g.label()));
  out += "</ul></nav>\n";
  for (const std::string& kernel : m.kernels()) {
    out += fmt::format("<section class=\"kernel\"><h2>{}</h2>\n", esc(kernel));
    out += plots_div({devices_plot(m, kernel), speedup_plot(m, kernel)});
    for (const Group* g : m.of_kernel(kernel)) out += group_section(m, *g, options);
    out += "</section>\n";
  }
  if (all_groups > m.groups.size())
    out += fmt::format(
        "<p class=\"meta\">and {} more kernel, device and problem groups not shown (narrow the report "
        "with --kernel, --device or --problem, or see <code>tiletune show</code>)</p>\n",
        all_groups - m.groups.size());
  return out + "</body></html>\n";
}

namespace {

std::vector<std::string> group_plot_names(const Group& g, const ReportOptions& o) {
  std::vector<std::string> names = {"status"};
  for (const std::string& p : g.param_names) names.push_back("param:" + p);
  for (const auto& [a, b] : heatmap_pairs(g, o)) names.push_back(fmt::format("heatmap:{},{}", a, b));
  for (const char* n : {"occupancy", "registers", "progress"}) names.emplace_back(n);
  if (g.has_energy) names.emplace_back("energy");
  return names;
}

const Group& one_group(const Model& m) {
  if (m.groups.size() == 1) return m.groups.front();
  // One line: the first three groups (the cache's text quoted, escaped), then how many more.
  constexpr std::size_t kListed = 3;
  std::string choices;
  for (std::size_t i = 0; i < m.groups.size() && i < kListed; ++i) {
    const Group& g = m.groups[i];
    choices += fmt::format("{}--kernel {} --device {} --problem {}", i ? "; " : "", quote(g.kernel, 24),
                           quote(g.device_uuid, 40), quote(g.problem, 24));
  }
  if (m.groups.size() > kListed) choices += fmt::format("; and {} more", m.groups.size() - kListed);
  throw Error(fmt::format("this plot is of one kernel on one device and problem, and {} match; name one: {}",
                          m.groups.size(), choices));
}

}  // namespace

std::vector<std::string> plot_names(const CacheDb& db, const ReportOptions& options) {
  const Model m = load_model(db, options);
  std::vector<std::string> names = {"devices", "speedup"};
  if (m.groups.size() == 1)
    for (std::string& n : group_plot_names(m.groups.front(), options)) names.push_back(std::move(n));
  return names;
}

std::string render_plot(const CacheDb& db, const ReportOptions& options, std::string_view plot) {
  const Model m = load_model(db, options);
  const std::string name(plot);
  if (name == "devices" || name == "speedup") {
    const std::vector<std::string> kernels = m.kernels();
    if (kernels.size() != 1)
      throw Error(
          fmt::format("plot {} is of one kernel and {} match: name one with --kernel", quote(name), kernels.size()));
    return (name == "devices" ? devices_plot(m, kernels.front()) : speedup_plot(m, kernels.front())).svg();
  }
  const Group& g = one_group(m);
  std::optional<Plot> p;
  if (name == "status")
    p = status_plot(g);
  else if (name == "occupancy" || name == "registers")
    p = resource_plot(m, g, name == "registers");
  else if (name == "progress")
    p = progress_plot(m, g);
  else if (name == "energy")
    p = energy_plot(g);
  else if (name.rfind("param:", 0) == 0 && g.values.count(name.substr(6)))
    p = param_plot(m, g, name.substr(6));
  else if (name.rfind("heatmap:", 0) == 0) {
    const std::string pair = name.substr(8);
    const auto comma = pair.find(',');
    const std::string a = pair.substr(0, comma), b = comma == std::string::npos ? "" : pair.substr(comma + 1);
    if (g.values.count(a) && g.values.count(b) && a != b) p = heatmap_plot(m, g, a, b);
  }
  if (!p) {
    std::string known;
    for (const std::string& n : group_plot_names(g, options)) known += " " + n;
    throw Error(fmt::format("unknown plot {}; this group has: devices speedup{}", quote(name), one_line(known, 160)));
  }
  if (p->points() == 0)
    throw Error(fmt::format("plot {} has nothing to draw for {}", quote(name), one_line(g.label(), 120)));
  return p->svg();
}

namespace {

/// The most PNG bytes read back from rsvg-convert: far more than any plot (a few MB).
constexpr std::size_t kMaxPngBytes = std::size_t{256} << 20;

}  // namespace

std::string render_png(const std::string& svg, double zoom) {
  const ScratchDir scratch("tiletune-png");
  const std::filesystem::path svg_file = scratch.path() / "plot.svg", png_file = scratch.path() / "plot.png";
  write_output(svg_file, svg);
  const std::string zoom_text = fmt::format("{}", zoom);
  const std::string svg_text = svg_file.string(), png_text = png_file.string();
  const char* argv[] = {"rsvg-convert",    "--format",           "png",   "--zoom",
                        zoom_text.c_str(), "--background-color", "white", "--output",
                        png_text.c_str(),  svg_text.c_str(),     nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, const_cast<char**>(argv), environ);
  int status = 0;
  if (spawned == 0) ::waitpid(pid, &status, 0);
  if (spawned != 0) {
    throw Error(
        "--format png needs rsvg-convert (Debian/Ubuntu package librsvg2-bin), which was not found on PATH; "
        "or write --format svg");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error(fmt::format("rsvg-convert failed to convert the plot to PNG (exit status {})",
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  try {
    InputFile png(png_file, "a PNG");
    return png.read_all(kMaxPngBytes);
  } catch (const Error& e) { throw Error(fmt::format("rsvg-convert's PNG {}: {}", png_text, e.what())); }
}

}  // namespace tiletune
