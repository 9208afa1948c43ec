// Evaluation of a space's buffers, arguments and metrics for one config.
#include "tiletune/trial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace tiletune {

std::string canonical_problem(const Space& space, const Problem& problem) {
  std::string s;
  for (std::size_t i = 0; i < space.problem.size(); ++i)
    s += fmt::format("{}{}={}", i ? ";" : "", space.problem[i].name, problem.sizes.at(i));
  return s;
}

std::string canonical_config(const Space& space, const Config& config) {
  std::string s;
  for (std::size_t i = 0; i < space.params.size(); ++i)
    s += fmt::format("{}{}={}", i ? ";" : "", space.params[i].name, space.params[i].text_of(config.values.at(i)));
  return s;
}

std::optional<Config> parse_canonical_config(const Space& space, const std::string& text) {
  Config config;
  config.values.assign(space.params.size(), 0);
  std::vector<bool> seen(space.params.size(), false);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    const auto eq = item.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const int index = space.param_index(item.substr(0, eq));
    if (index < 0 || seen[static_cast<std::size_t>(index)]) return std::nullopt;
    std::int64_t v = 0;
    const Axis& axis = space.params[static_cast<std::size_t>(index)];
    if (axis.kind == AxisKind::integer) {
      const char* first = item.data() + eq + 1;
      const char* last = item.data() + item.size();
      auto [p, ec] = std::from_chars(first, last, v);
      if (ec != std::errc() || p != last) return std::nullopt;
    } else {
      const auto label = std::find(axis.labels.begin(), axis.labels.end(), item.substr(eq + 1));
      if (label == axis.labels.end()) return std::nullopt;
      v = label - axis.labels.begin();
    }
    config.values[static_cast<std::size_t>(index)] = v;
    seen[static_cast<std::size_t>(index)] = true;
    pos = end + 1;
  }
  for (bool b : seen)
    if (!b) return std::nullopt;
  return config;
}


TrialRequest make_trial_request(const Space& space, const Problem& problem, const Config& config,
                                const LaunchGeometry& launch, const CompiledKernel& kernel) {
  const std::vector<std::int64_t> slots = slot_values(problem, config);
  TrialRequest r;
  r.kernel = space.kernel;
  r.config_text = format_config(space, config);
  r.problem_key = space.kernel + '|' + canonical_problem(space, problem);
  for (std::size_t i = 0; i < space.problem.size(); ++i) r.sizes[space.problem[i].name] = problem.sizes[i];
  r.cubin = kernel.cubin;
  r.function = kernel.lowered_name;
  for (int d = 0; d < 3; ++d) {
    r.grid[d] = launch.grid[d];
    r.block[d] = launch.block[d];
  }
  r.shared_bytes = launch.shared_bytes;
  for (const BufferSpec& b : space.buffers) {
    BufferPlan plan;
    plan.name = b.name;
    plan.type = b.type;
    const std::int64_t count = eval_located(b.count, slots, "count of buffer " + b.name);
    if (count < 0) throw EvalError(fmt::format("{}: buffer {} has a negative count ({})", b.where.str(), b.name, count));
    plan.count = static_cast<std::uint64_t>(count);
    plan.init = b.init.kind;
    plan.output = b.output;
    // Buffer sizes that depend on a param change with the config: key the reuse on them too.
    if (!b.count.expr.is_constant()) r.problem_key += fmt::format("|{}={}", b.name, plan.count);
    r.buffers.push_back(std::move(plan));
  }
  for (const ArgSpec& a : space.args) {
    ArgPlan arg;
    if (a.kind == ArgSpec::Kind::buffer) {
      arg.is_buffer = true;
      for (std::size_t i = 0; i < space.buffers.size(); ++i)
        if (space.buffers[i].name == a.buffer) arg.buffer = static_cast<int>(i);
    } else {
      arg.type = a.scalar_type;
      arg.float_value = eval_number(space, a.value, slots);
      arg.int_value = a.value.is_integer() ? eval_located(a.value.expr, slots, "argument")
                                           : static_cast<std::int64_t>(arg.float_value);
    }
    r.args.push_back(arg);
  }
  switch (space.verify.reference) {
    case VerifySpec::Reference::builtin:
      r.verify.mode = VerifySettings::Mode::cpu;
      r.verify.cpu_reference = space.verify.builtin;
      break;
    case VerifySpec::Reference::config: r.verify.mode = VerifySettings::Mode::reference_run; break;
    case VerifySpec::Reference::none: r.verify.mode = VerifySettings::Mode::none; break;
    default:
      throw Error(fmt::format("{}: this kind of reference is not supported yet", space.verify.where.str()));
  }
  // One tolerance for every output until the runner checks outputs one by one.
  if (!space.verify.outputs.empty()) {
    r.verify.rtol = space.verify.outputs.front().rtol;
    r.verify.atol = space.verify.outputs.front().atol;
  }
  return r;
}

RunMetrics evaluate_metrics(const Space& space, const Problem& problem, const Config& config) {
  const std::vector<std::int64_t> slots = slot_values(problem, config);
  RunMetrics m;
  if (space.metric_bytes) m.bytes = static_cast<double>(eval_located(*space.metric_bytes, slots, "metrics.bytes"));
  if (space.metric_flops) m.flops = static_cast<double>(eval_located(*space.metric_flops, slots, "metrics.flops"));
  return m;
}

}  // namespace tiletune
