// plan_space: the configs (from the space's lazy domain) → launch geometry → NVRTC (in a pool, through the cubin cache)
// → occupancy. Geometry that can never launch is pruned before compiling, so a plan never pays NVRTC for a config that
// the device would refuse anyway.
#include "tiletune/plan.hpp"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <future>
#include <map>
#include <unordered_set>

#include "common/random_words.hpp"
#include "tiletune/replay.hpp"

namespace tiletune {

std::int64_t eval_located(const LocatedExpr& e, std::span<const std::int64_t> slots, std::string_view what) {
  try {
    return e.expr.eval(slots);
  } catch (const EvalError& err) {
    throw EvalError(fmt::format("{}: {} '{}': {}", e.where.str(), what, e.expr.text(), err.what()));
  }
}

KernelFootprint kernel_footprint(const LaunchGeometry& g, const Resources* r) {
  KernelFootprint fp;
  fp.block_x = static_cast<int>(std::min<long long>(g.block[0], INT32_MAX));
  fp.block_y = static_cast<int>(std::min<long long>(g.block[1], INT32_MAX));
  fp.block_z = static_cast<int>(std::min<long long>(g.block[2], INT32_MAX));
  fp.grid_x = g.grid[0];
  fp.grid_y = g.grid[1];
  fp.grid_z = g.grid[2];
  fp.dynamic_shared_bytes = static_cast<std::size_t>(std::max<long long>(g.shared_bytes, 0));
  if (r) {
    fp.registers_per_thread = r->registers;
    fp.static_shared_bytes = static_cast<std::size_t>(r->static_shared_bytes);
    fp.barriers = std::max(1, r->barriers);
  }
  return fp;
}

std::optional<std::string> unlaunchable_geometry(const DeviceLimits& device, const LaunchGeometry& launch) {
  if (launch.shared_bytes < 0) return fmt::format("negative dynamic shared memory ({} B)", launch.shared_bytes);
  Occupancy geometry_only = compute_occupancy(device, kernel_footprint(launch));
  if (!geometry_only.launchable) return geometry_only.pruned_reason;
  return std::nullopt;
}

LaunchGeometry evaluate_launch(const Space& space, const Problem& problem, const Config& config) {
  const std::vector<std::int64_t> slots = slot_values(problem, config);
  LaunchGeometry g;
  for (int d = 0; d < 3; ++d) {
    g.grid[d] = eval_located(space.launch.grid[d], slots, "grid");
    g.block[d] = eval_located(space.launch.block[d], slots, "block");
  }
  g.shared_bytes = eval_located(space.launch.shared_bytes, slots, "shared_bytes");
  return g;
}

std::vector<std::string> space_options(const Space& space) {
  std::vector<std::string> texts;
  for (const OptionTemplate& o : space.compile_options) texts.push_back(o.text);  // ${} as written
  return resolve_include_dirs(texts, space.yaml_path.parent_path());
}

const KernelSource& space_source(KernelSources& sources, const Space& space) {
  try {
    return sources.for_options(space_options(space));
  } catch (const SpaceError&) {
    throw;
  } catch (const Error& e) {
    throw SpaceError(space.source_where, e.what(), "the source must stay a readable file while tiletune runs");
  }
}

std::vector<std::string> compile_options(const Space& space, const Problem& problem, const Config& config) {
  std::vector<std::string> options;
  options.reserve(space.params.size() + space.problem.size() + space.compile_options.size());
  for (std::size_t i = 0; i < space.params.size(); ++i)
    options.push_back(fmt::format("-D{}={}", space.params[i].name, space.params[i].text_of(config.values.at(i))));
  if (space.problem_defines)
    for (std::size_t i = 0; i < space.problem.size(); ++i)
      options.push_back(fmt::format("-D{}={}", space.problem[i].name, problem.sizes.at(i)));
  const std::vector<std::int64_t> slots = slot_values(problem, config);
  for (const OptionTemplate& o : space.compile_options) options.push_back(expand_option(o, slots));
  return resolve_include_dirs(options, space.yaml_path.parent_path());
}

CompileRequest config_compile_request(const Space& space, const Problem& problem, const Config& config,
                                      KernelSources& sources, std::string arch) {
  return sources.request(compile_options(space, problem, config), std::move(arch), space.entry);
}

Problem select_problem(const Space& space, const std::vector<std::string>& overrides) {
  Problem p;
  for (const Axis& a : space.problem) p.sizes.push_back(a.values.empty() ? 0 : a.values.front());
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format("--size '{}': expected NAME=VALUE, e.g. N=8192", o));
    const std::string name = o.substr(0, eq);
    const std::string value = o.substr(eq + 1);
    const int index = space.problem_index(name);
    if (index < 0) {
      std::string known;
      for (const Axis& a : space.problem) known += (known.empty() ? "" : ", ") + a.name;
      throw Error(fmt::format("--size '{}': '{}' is not a problem size of {} (problem sizes: {})", o, name,
                              space.kernel, known.empty() ? "none" : known));
    }
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 0)
      throw Error(fmt::format("--size '{}': '{}' is not a non-negative integer", o, value));
    p.sizes[static_cast<std::size_t>(index)] = v;
  }
  return p;
}

std::string format_problem(const Space& space, const Problem& problem) {
  std::string s;
  for (std::size_t i = 0; i < space.problem.size() && i < problem.sizes.size(); ++i) {
    if (i) s += ' ';
    s += space.problem[i].name + '=' + std::to_string(problem.sizes[i]);
  }
  return s;
}

std::optional<FailureSummary> most_common_failure(const Plan& plan) {
  // Grouped by the reason with each run of digits as one '#'; a group keeps its first reason.
  std::map<std::string, FailureSummary> groups;
  std::vector<std::string> order;
  for (const PlanRow& row : plan.rows) {
    if (row.status != TrialStatus::compile_failed) continue;
    std::string shape;
    for (char c : row.detail) {
      const bool digit = c >= '0' && c <= '9';
      if (!digit)
        shape += c;
      else if (shape.empty() || shape.back() != '#')
        shape += '#';
    }
    auto [it, inserted] = groups.try_emplace(shape, FailureSummary{row.detail, 0});
    if (inserted) order.push_back(shape);
    ++it->second.configs;
  }
  std::optional<FailureSummary> best;
  for (const std::string& shape : order)  // the first of equally common reasons wins
    if (!best || groups[shape].configs > best->configs) best = groups[shape];
  return best;
}

namespace {

/// The most configs a sampled plan walks to take every k-th; past it (or with an estimated
/// count) it draws a uniform sample instead: walking 10^7 configs would take seconds.
constexpr std::uint64_t max_walked_configs = std::uint64_t{1} << 20;

struct PlannedConfigs {
  std::uint64_t points = 0;
  DomainSize valid;
  DomainSize in_shard;
  bool uniform = false;
  bool by_default = false;      ///< past max_configs without a sample: a uniform sample
  std::vector<Config> configs;  ///< in enumeration order
};

// How many configs a plan compiles: ceil(count / every), or past the limit the default sample;
// an explicit sample that leaves more than the limit is refused before any work.
std::uint64_t configs_to_plan(const DomainSize& in_shard, std::uint64_t every, const PlanOptions& options,
                              bool& by_default) {
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); };
  const std::uint64_t wanted = ceil_div(in_shard.count, every);
  by_default = false;
  if (options.max_configs == 0 || wanted <= options.max_configs) return wanted;
  if (every > 1) {
    const std::uint64_t enough = ceil_div(in_shard.count, options.max_configs);
    throw PlanTooLarge(fmt::format(
        "--sample {} plans {}{} configs, more than the {} a plan compiles (--max-configs): pass --sample {} or more, "
        "or raise --max-configs",
        every, in_shard.exact ? "" : "~", wanted, options.max_configs, enough));
  }
  by_default = true;
  return std::min({wanted, std::max<std::uint64_t>(1, options.default_sample), options.max_configs});
}

/// The configs a plan compiles, and the counts, from the space's lazy domain: every config (or
/// every k-th) in enumeration order, or a uniform sample of ceil(count / k) of a space too large
/// to walk, or past max_configs a uniform sample of default_sample (deterministic: drawn from a
/// fixed seed). Holds only the configs it returns.
PlannedConfigs planned_configs(const Space& space, const PlanOptions& options) {
  const SpaceDomain domain = space_domain(space, options.problem, options.shard);
  PlannedConfigs out;
  out.points = space.allowed ? space.allowed->size() : domain.domain.grid_size();
  if (space.params.empty()) out.points = 1;
  out.valid = domain.valid;
  out.in_shard = domain.domain.size_info();
  const std::uint64_t every = std::max<std::uint64_t>(1, options.sample_every);
  const std::uint64_t wanted = configs_to_plan(out.in_shard, every, options, out.by_default);
  out.uniform = out.by_default || (every > 1 && (!out.in_shard.exact || out.in_shard.count > max_walked_configs));
  if (!out.uniform) {
    std::uint64_t index = 0;
    for (auto point = domain.domain.next(); point; point = domain.domain.next(point))
      if (index++ % every == 0) out.configs.push_back(domain.config(*point));
    return out;
  }
  std::vector<std::size_t> points;
  std::unordered_set<std::size_t> taken;
  std::uint64_t state = 0x91a7;
  // Distinct points: a draw that repeats is drawn again, within a bound (wanted <= count / 2).
  for (std::uint64_t draw = 0; points.size() < wanted && draw < 8 * wanted + 1000; ++draw) {
    const auto point = domain.domain.sample(random_words::splitmix64(state));  // the strategies' words
    if (point && taken.insert(*point).second) points.push_back(*point);
  }
  std::sort(points.begin(), points.end());  // ids are in enumeration order
  for (const std::size_t point : points) out.configs.push_back(domain.config(point));
  return out;
}

}  // namespace

void check_plan_size(const Space& space, const PlanOptions& options) {
  const SpaceDomain domain = space_domain(space, options.problem, options.shard);
  bool by_default = false;
  (void)configs_to_plan(domain.domain.size_info(), std::max<std::uint64_t>(1, options.sample_every), options,
                        by_default);
}

Plan plan_space(const Space& space, const PlanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Plan plan;
  plan.device = options.device;
  plan.problem = options.problem;

  KernelSources sources(space.source);
  (void)space_source(sources, space);  // an unreadable source fails the plan at once, located
  const std::string arch = fmt::format("sm_{}", options.device.arch());
  CubinCache no_cache{std::filesystem::path{}};
  const CubinCache& cache = options.cache ? *options.cache : no_cache;
  CompilePool pool(options.threads, cache, options.compiler);
  plan.summary.threads = pool.threads();

  // First pass: choose the configs, evaluate geometry, prune what cannot launch, submit the rest.
  const PlannedConfigs planned = planned_configs(space, options);
  plan.summary.points = planned.points;
  plan.summary.valid = planned.valid.count;
  plan.summary.valid_exact = planned.valid.exact;
  plan.summary.valid_relative_error = planned.valid.relative_error;
  plan.summary.in_shard = planned.in_shard.count;
  plan.summary.in_shard_exact = planned.in_shard.exact;
  plan.summary.in_shard_relative_error = planned.in_shard.relative_error;
  plan.summary.sample_every = std::max<std::uint64_t>(1, options.sample_every);
  plan.summary.sampled_uniformly = planned.uniform;
  plan.summary.sampled_by_default = planned.by_default;
  if (options.on_start)
    options.on_start({planned.in_shard.count, planned.in_shard.exact, planned.configs.size(), planned.by_default,
                      pool.threads()});
  plan.summary.shard = options.shard;
  std::vector<std::future<CompileResult>> pending;
  std::vector<std::size_t> pending_row;
  for (const Config& config : planned.configs) {
    if (options.select && !options.select(config)) continue;
    PlanRow row;
    row.config = config;
    try {
      row.launch = evaluate_launch(space, options.problem, row.config);
    } catch (const EvalError& e) {
      row.status = TrialStatus::pruned;
      row.detail = e.what();
      plan.rows.push_back(std::move(row));
      continue;
    }
    // Geometry alone (no registers, no static shared memory yet) already rules some out, and
    // so do buffers that cannot be allocated.
    auto reason = unlaunchable_geometry(options.device, *row.launch);
    if (!reason) reason = buffer_size_problem(space, options.problem, row.config);
    if (reason) {
      row.status = TrialStatus::pruned;
      row.detail = std::move(*reason);
      plan.rows.push_back(std::move(row));
      continue;
    }
    CompileRequest request;
    try {
      request = config_compile_request(space, options.problem, row.config, sources, arch);
    } catch (const EvalError& e) {  // an ${} of `options:` that fails for this config
      row.status = TrialStatus::pruned;
      row.detail = e.what();
      plan.rows.push_back(std::move(row));
      continue;
    }
    pending.push_back(pool.submit(std::move(request)));
    pending_row.push_back(plan.rows.size());
    plan.rows.push_back(std::move(row));
  }

  // Second pass: collect compiles in submission order, then occupancy with real resources.
  std::size_t done = plan.rows.size() - pending.size();
  const std::size_t total = plan.rows.size();
  if (options.progress) options.progress(done, total);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    PlanRow& row = plan.rows[pending_row[i]];
    CompileResult result = pending[i].get();
    row.compile_seconds = result.seconds;
    row.cache_hit = result.cache_hit;
    row.cubin_key = result.cache_key;
    row.warnings = std::move(result.warnings);
    plan.summary.compile_seconds += result.seconds;
    if (result.cache_hit) {
      ++plan.summary.cache_hits;
    } else {
      ++plan.summary.compiled;
    }
    if (!result.ok()) {
      row.status = TrialStatus::compile_failed;
      row.detail = result.error;
      row.compile_log = result.log;
    } else {
      ++plan.summary.compiled_ok;
      row.resources = result.kernel->resources;
      row.occupancy = compute_occupancy(options.device, kernel_footprint(*row.launch, &*row.resources));
      if (!row.occupancy.launchable) {
        row.status = TrialStatus::pruned;
        row.detail = row.occupancy.pruned_reason;
      }
    }
    if (options.progress) options.progress(++done, total);
  }
  for (const PlanRow& row : plan.rows) {
    if (row.status == TrialStatus::ok) ++plan.summary.ok;
    if (row.status == TrialStatus::pruned) ++plan.summary.pruned;
    if (row.status == TrialStatus::compile_failed) ++plan.summary.compile_failed;
    if (!row.warnings.empty()) ++plan.summary.with_warnings;
  }
  plan.summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace tiletune
