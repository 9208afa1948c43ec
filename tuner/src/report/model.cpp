// Reading the cache for the report (see report/model.hpp): one CacheDb::trials query, grouped by
// kernel, device and problem, each trial's params parsed and scored by the objective.
#include "report/model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "tiletune/error.hpp"
#include "tiletune/message.hpp"

namespace tiletune::report_detail {

std::optional<std::int64_t> Trial::param(const std::string& name) const {
  for (const auto& [n, v] : params)
    if (n == name) return v;
  return std::nullopt;
}

std::string Group::label() const { return problem.empty() ? device : fmt::format("{} · {}", device, problem); }

std::string Group::id() const {
  std::string s = "g-" + kernel + "-" + device_uuid + "-" + problem;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  return s;
}

std::vector<const Group*> Model::of_kernel(const std::string& kernel) const {
  std::vector<const Group*> out;
  for (const Group& g : groups)
    if (g.kernel == kernel) out.push_back(&g);
  return out;
}

std::vector<std::string> Model::kernels() const {
  std::vector<std::string> out;
  for (const Group& g : groups)
    if (out.empty() || out.back() != g.kernel) out.push_back(g.kernel);
  return out;
}

std::string spaced(std::string params) {
  std::replace(params.begin(), params.end(), ';', ' ');
  return params;
}

std::string format_score(Objective objective, double value) {
  return fmt::format("{:.4g} {}", value, objective_unit(objective));
}

std::string score_axis(Objective objective) {
  switch (objective) {
    case Objective::time: return "time per run (ms, log)";
    case Objective::energy: return "energy per run (mJ, log)";
    case Objective::edp: return "energy × time (mJ·ms, log)";
  }
  return "";
}

namespace {

// "TILE=32;BLOCK_ROWS=8" → pairs; a part that is not NAME=INTEGER is skipped (the report shows
// what it can of a hand-edited cache).
std::vector<std::pair<std::string, std::int64_t>> parse_params(const std::string& text) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(';', pos), text.size());
    const std::string part = text.substr(pos, end - pos);
    pos = end + 1;
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::int64_t v = 0;
    const char* first = part.data() + eq + 1;
    const char* last = part.data() + part.size();
    if (auto [p, ec] = std::from_chars(first, last, v); ec == std::errc() && p == last)
      out.emplace_back(part.substr(0, eq), v);
  }
  return out;
}

void finish_group(Group& g, const std::optional<std::string>& default_params) {
  std::sort(g.trials.begin(), g.trials.end(), [](const Trial& a, const Trial& b) { return a.row->id < b.row->id; });
  std::map<std::string, std::set<std::int64_t>> values;
  for (const Trial& t : g.trials) {
    for (const auto& [name, v] : t.params) {
      if (std::find(g.param_names.begin(), g.param_names.end(), name) == g.param_names.end())
        g.param_names.push_back(name);
      values[name].insert(v);
    }
    if (t.score && (!g.best || *t.score < *g.best->score)) g.best = &t;
    if (default_params && t.record().key.params == *default_params) g.default_trial = &t;
    g.has_energy = g.has_energy || (t.record().energy_mj && *t.record().energy_mj > 0);
  }
  for (auto& [name, set] : values) g.values[name] = std::vector<std::int64_t>(set.begin(), set.end());
  for (const Trial& t : g.trials)
    if (t.score) g.drawn.push_back(&t);
  g.scored = g.drawn.size();
  if (g.drawn.size() > kMaxDrawnTrials) {
    std::nth_element(g.drawn.begin(), g.drawn.begin() + kMaxDrawnTrials - 1, g.drawn.end(),
                     [](const Trial* a, const Trial* b) { return *a->score < *b->score; });
    g.drawn.resize(kMaxDrawnTrials);
    std::sort(g.drawn.begin(), g.drawn.end(), [](const Trial* a, const Trial* b) { return a->row->id < b->row->id; });
  }
}

// Each group's answer (the current kernel version's, by the objective), as `best` lists it.
void attach_answers(const CacheDb& db, const ReportOptions& options, Model& m) {
  BestFilter filter;
  filter.kernel = options.kernel;
  filter.device = options.device;
  filter.problem = options.problem;
  filter.objective = m.objective;
  std::map<std::tuple<std::string, std::string, std::string>, BestEntry> answers;
  for (BestEntry& e : db.best(filter))
    answers.emplace(std::make_tuple(e.kernel.name, e.device.device.uuid, e.trial.key.problem), std::move(e));
  for (Group& g : m.groups)
    if (const auto it = answers.find({g.kernel, g.device_uuid, g.problem}); it != answers.end()) g.answer = it->second;
}

}  // namespace

Model load_model(const CacheDb& db, const ReportOptions& options) {
  Model m;
  m.objective = options.objective;
  TrialFilter filter;
  filter.kernel = options.kernel;
  filter.device = options.device;
  filter.problem = options.problem;
  filter.current_only = !options.all_versions;
  m.rows = db.trials(filter);
  if (m.rows.empty())
    throw Error(fmt::format("report: no trials in {}{}{}{}", db.path().string(),
                            options.kernel ? " for kernel " + quote(*options.kernel) : "",
                            options.device ? " on device " + quote(*options.device) : "",
                            options.problem ? " at problem " + quote(*options.problem) : ""));
  for (const TrialRow& r : m.rows) {
    if (m.default_config.count(r.kernel.name)) continue;
    if (options.default_config)
      m.default_config[r.kernel.name] = *options.default_config;
    else if (auto d = db.meta("default_config/" + r.kernel.name))
      m.default_config[r.kernel.name] = *d;
  }
  // trials() orders by kernel, device UUID and problem: each group is one run of rows.
  for (const TrialRow& r : m.rows) {
    if (m.groups.empty() || m.groups.back().kernel != r.kernel.name || m.groups.back().device_uuid != r.device_uuid ||
        m.groups.back().problem != r.trial.key.problem) {
      Group g;
      g.kernel = r.kernel.name;
      g.device = r.device_name;
      g.device_uuid = r.device_uuid;
      g.problem = r.trial.key.problem;
      m.groups.push_back(std::move(g));
    }
    Trial t;
    t.row = &r;
    t.params = parse_params(r.trial.key.params);
    if (r.trial.status == TrialStatus::ok) t.score = objective_score(m.objective, r.trial.time_ms, r.trial.energy_mj);
    // Only a finite positive score can be placed on the plots' log axes and ranked.
    if (t.score && !(std::isfinite(*t.score) && *t.score > 0)) {
      t.score.reset();
      ++m.groups.back().unplottable;
    }
    m.groups.back().trials.push_back(std::move(t));
  }
  for (Group& g : m.groups) {
    auto d = m.default_config.find(g.kernel);
    finish_group(g, d == m.default_config.end() ? std::nullopt : std::optional<std::string>(d->second));
  }
  attach_answers(db, options, m);
  return m;
}

std::vector<std::pair<std::string, std::string>> heatmap_pairs(const Group& g, const ReportOptions& options) {
  std::vector<std::pair<std::string, std::string>> out;
  auto known = [&](const std::string& p) { return g.values.count(p) > 0; };
  if (!options.heatmaps.empty()) {
    for (const auto& [a, b] : options.heatmaps)
      if (known(a) && known(b) && a != b) out.emplace_back(a, b);
    return out;
  }
  // Params with one value make no heatmap.
  std::vector<std::string> varying;
  for (const std::string& p : g.param_names)
    if (g.values.at(p).size() > 1) varying.push_back(p);
  for (std::size_t i = 0; i < varying.size(); ++i)
    for (std::size_t j = i + 1; j < varying.size() && out.size() < options.max_heatmaps; ++j)
      out.emplace_back(varying[i], varying[j]);
  return out;
}

}  // namespace tiletune::report_detail
