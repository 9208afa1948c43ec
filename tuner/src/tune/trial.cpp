// Evaluation of a space's buffers, inputs, globals, arguments, checks and metrics for one
// config, and of the run of a reference kernel.
#include "tiletune/trial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

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

namespace {

std::uint64_t non_negative(std::int64_t v, const SourceLocation& where, const std::string& what) {
  if (v < 0) throw EvalError(fmt::format("{}: {} is negative ({})", where.str(), what, v));
  return static_cast<std::uint64_t>(v);
}

// The CSR shape of a csr_offsets InitSpec: rows, columns and nnz (from nnz: or density:).
void csr_shape(const InitSpec& init, std::span<const std::int64_t> slots, const std::string& what, InitPlan& plan) {
  plan.rows = non_negative(eval_located(init.rows, slots, "rows of " + what), init.where, "rows of " + what);
  plan.columns =
      non_negative(eval_located(init.columns, slots, "columns of " + what), init.where, "columns of " + what);
  if (init.density) {
    plan.nnz = static_cast<std::uint64_t>(std::llround(*init.density * double(plan.rows) * double(plan.columns)));
  } else {
    plan.nnz = non_negative(eval_located(init.nnz, slots, "nnz of " + what), init.where, "nnz of " + what);
  }
  if (plan.rows > 0 && plan.nnz > plan.rows * plan.columns)
    throw EvalError(fmt::format("{}: {} has {} entries, more than its {} x {} matrix holds", init.where.str(), what,
                                plan.nnz, plan.rows, plan.columns));
}

InitPlan init_plan(const Space& space, const InitSpec& init, std::uint64_t count, std::span<const std::int64_t> slots,
                   const Problem& problem, const std::string& what) {
  InitPlan plan;
  plan.kind = init.kind;
  switch (init.kind) {
    case BufferInit::constant: plan.a = eval_number(space, init.a, slots); break;
    case BufferInit::uniform:
    case BufferInit::normal:
      plan.a = eval_number(space, init.a, slots);
      plan.b = eval_number(space, init.b, slots);
      break;
    case BufferInit::file: plan.file = expand_path(space, init.file, init.file_dir, problem).string(); break;
    case BufferInit::copy: plan.source = space.buffer_index(init.of); break;
    case BufferInit::csr_offsets:
      csr_shape(init, slots, what, plan);
      if (count != plan.rows + 1)
        throw EvalError(fmt::format("{}: {} holds CSR offsets of {} rows: its count must be rows + 1 = {}, not {}",
                                    init.where.str(), what, plan.rows, plan.rows + 1, count));
      break;
    case BufferInit::csr_columns: {
      plan.source = space.buffer_index(init.of);
      if (plan.source < 0 || space.buffers[static_cast<std::size_t>(plan.source)].init.kind != BufferInit::csr_offsets)
        throw EvalError(fmt::format("{}: {} takes its rows from '{}', which is not a csr_offsets buffer",
                                    init.where.str(), what, init.of));
      const BufferSpec& offsets = space.buffers[static_cast<std::size_t>(plan.source)];
      csr_shape(offsets.init, slots, "buffer " + offsets.name, plan);
      if (count < plan.nnz)
        throw EvalError(fmt::format("{}: {} holds the columns of {} entries: its count {} is too small",
                                    init.where.str(), what, plan.nnz, count));
      break;
    }
    default: break;
  }
  return plan;
}

std::uint64_t evaluated_count(const LocatedExpr& count, std::span<const std::int64_t> slots,
                              const SourceLocation& where, const std::string& what) {
  return non_negative(eval_located(count, slots, "count of " + what), where, "the count of " + what);
}

// The buffers, globals and checks of one run: counts from `slots`, types from `types`.
void plan_data(const Space& space, const Problem& problem, const Config& types, std::span<const std::int64_t> slots,
               TrialRequest& r) {
  for (const BufferSpec& b : space.buffers) {
    BufferPlan plan;
    plan.name = b.name;
    plan.type = resolved_type(space, b.type, b.type_param, types);
    plan.count = evaluated_count(b.count, slots, b.where, "buffer " + b.name);
    plan.init = init_plan(space, b.init, plan.count, slots, problem, "buffer " + b.name);
    plan.output = b.output;
    r.buffers.push_back(std::move(plan));
  }
  for (const GlobalSpec& g : space.globals) {
    GlobalPlan plan;
    plan.name = g.name;
    plan.symbol = global_symbol(g.name);
    plan.type = resolved_type(space, g.type, g.type_param, types);
    plan.count = evaluated_count(g.count, slots, g.where, "global " + g.name);
    plan.init = init_plan(space, g.init, plan.count, slots, problem, "global " + g.name);
    r.globals.push_back(std::move(plan));
  }
  for (const OutputCheck& c : space.verify.outputs) {
    CheckPlan check;
    check.buffer = space.buffer_index(c.buffer);
    if (check.buffer < 0) throw EvalError(fmt::format("{}: the check names no buffer '{}'", c.where.str(), c.buffer));
    check.compare = c.compare;
    const std::uint64_t whole = r.buffers[static_cast<std::size_t>(check.buffer)].count;
    check.count = c.count ? evaluated_count(*c.count, slots, c.where, "the check of " + c.buffer) : whole;
    check.rtol = c.rtol;
    check.atol = c.atol;
    for (const auto& [buffer, path] : space.verify.files)
      if (buffer == c.buffer) check.expected_file = expand_path(space, path, space.verify.file_dir, problem).string();
    r.verify.checks.push_back(std::move(check));
  }
}

void set_verify_mode(const Space& space, VerifySettings& v) {
  v.command = space.verify.command;
  switch (space.verify.reference) {
    case VerifySpec::Reference::none: v.mode = VerifySettings::Mode::none; return;
    case VerifySpec::Reference::builtin:
      v.mode = VerifySettings::Mode::cpu;
      v.cpu_reference = space.verify.builtin;
      return;
    case VerifySpec::Reference::config:
    case VerifySpec::Reference::kernel: v.mode = VerifySettings::Mode::reference_run; return;
    case VerifySpec::Reference::library:
      v.mode = VerifySettings::Mode::library;
      v.library = space.verify.library.string();
      v.function = space.verify.function;
      return;
    case VerifySpec::Reference::files: v.mode = VerifySettings::Mode::files; return;
  }
}

// One scalar or buffer argument: an integer NumberSpec through `integer` (exact in 64 bits),
// a decimal or a real param through `real`.
template <class Integer, class Real>
ArgPlan plan_arg(const Space& space, const ArgSpec& a, const Config& types, Integer integer, Real real) {
  ArgPlan arg;
  if (a.kind == ArgSpec::Kind::buffer) {
    arg.is_buffer = true;
    arg.buffer = space.buffer_index(a.buffer);
    return arg;
  }
  arg.type = resolved_type(space, a.scalar_type, a.type_param, types);
  std::optional<std::string> misfit;
  if (a.value.is_integer()) {
    arg.int_value = integer(a.value.expr);
    arg.float_value = static_cast<double>(arg.int_value);
    misfit = value_misfit(arg.type, arg.int_value);
  } else {
    arg.float_value = real(a.value);
    arg.int_value = static_cast<std::int64_t>(arg.float_value);
    misfit = value_misfit(arg.type, arg.float_value);
  }
  if (misfit) throw EvalError(fmt::format("{}: the argument's value {}", a.where.str(), *misfit));
  return arg;
}

void common_fields(const Space& space, const Problem& problem, const Config& config, const CompiledKernel& kernel,
                   TrialRequest& r) {
  r.kernel = space.kernel;
  r.problem_key = space.kernel + '|' + canonical_problem(space, problem) + type_key(space, config);
  for (std::size_t i = 0; i < space.problem.size(); ++i) r.sizes[space.problem[i].name] = problem.sizes[i];
  r.cubin = kernel.cubin;
  r.function = kernel.lowered_name;
}

}  // namespace

TrialRequest make_trial_request(const Space& space, const Problem& problem, const Config& config,
                                const LaunchGeometry& launch, const CompiledKernel& kernel) {
  const std::vector<std::int64_t> slots = slot_values(problem, config);
  TrialRequest r;
  common_fields(space, problem, config, kernel, r);
  r.config_text = format_config(space, config);
  for (std::size_t i = 0; i < space.params.size(); ++i) {
    const Axis& axis = space.params[i];
    r.params.push_back({axis.name, axis.kind, axis.text_of(config.values.at(i))});
  }
  for (int d = 0; d < 3; ++d) {
    r.grid[d] = launch.grid[d];
    r.block[d] = launch.block[d];
  }
  r.shared_bytes = launch.shared_bytes;
  plan_data(space, problem, config, slots, r);
  for (const ArgSpec& a : space.args) {
    r.args.push_back(plan_arg(
        space, a, config, [&](const LocatedExpr& e) { return eval_located(e, slots, "argument"); },
        [&](const NumberSpec& n) { return eval_number(space, n, slots); }));
  }
  set_verify_mode(space, r.verify);
  return r;
}

std::vector<int> type_params(const Space& space) {
  std::vector<int> params;
  auto add = [&](int p) {
    if (p >= 0 && std::find(params.begin(), params.end(), p) == params.end()) params.push_back(p);
  };
  for (const BufferSpec& b : space.buffers) add(b.type_param);
  for (const GlobalSpec& g : space.globals) add(g.type_param);
  for (const ArgSpec& a : space.args) add(a.type_param);
  if (space.verify.kernel)
    for (const ArgSpec& a : space.verify.kernel->args) add(a.type_param);
  std::sort(params.begin(), params.end());
  return params;
}

std::string type_key(const Space& space, const Config& config) {
  std::string key;
  for (const int p : type_params(space)) {
    const Axis& axis = space.params[static_cast<std::size_t>(p)];
    key += fmt::format("|{}={}", axis.name, axis.text_of(config.values.at(static_cast<std::size_t>(p))));
  }
  return key;
}

std::string global_symbol(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t pos = name.rfind("::", 0) == 0 ? 2 : 0;  // "::weights" is the global namespace's
  while (true) {
    const std::size_t next = name.find("::", pos);
    parts.push_back(name.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) break;
    pos = next + 2;
  }
  if (parts.size() == 1) return parts.front();  // a variable at namespace scope keeps its name
  std::string mangled = "_ZN";                  // Itanium C++ ABI: a nested name, each part as <length><name>
  for (const std::string& part : parts) mangled += std::to_string(part.size()) + part;
  return mangled + "E";
}

Config reference_config_for(const Space& space, const Config& candidate) {
  Config c{space.verify.reference_config};
  for (const int p : type_params(space))
    c.values.at(static_cast<std::size_t>(p)) = candidate.values.at(static_cast<std::size_t>(p));
  return c;
}

namespace {

const ReferenceDefine* find_define(const ReferenceKernel& k, const std::string& name) {
  for (const ReferenceDefine& d : k.defines)
    if (d.name == name) return &d;
  return nullptr;
}

// The candidate's config with the values the reference kernel defines for its params (what
// the space's buffer counts, checks and args are evaluated with on the reference run).
Config reference_view(const Space& space, const ReferenceKernel& k, const Config& candidate) {
  Config c = candidate;
  const std::vector<int> types = type_params(space);
  for (std::size_t i = 0; i < space.params.size(); ++i) {
    if (std::find(types.begin(), types.end(), static_cast<int>(i)) != types.end()) continue;
    const Axis& axis = space.params[i];
    const ReferenceDefine* d = find_define(k, axis.name);
    if (d == nullptr) continue;
    if (axis.kind == AxisKind::integer && d->integer) {
      c.values[i] = *d->integer;
    } else if (const auto at = std::find(axis.labels.begin(), axis.labels.end(), d->text); at != axis.labels.end()) {
      c.values[i] = at - axis.labels.begin();
    }
  }
  return c;
}

}  // namespace

std::vector<std::string> reference_kernel_options(const Space& space, const Problem& problem, const Config& candidate) {
  const ReferenceKernel& k = *space.verify.kernel;
  const std::vector<int> types = type_params(space);
  std::vector<std::string> options;
  for (const ReferenceDefine& d : k.defines) {
    const int p = space.param_index(d.name);
    if (p < 0 || std::find(types.begin(), types.end(), p) == types.end())
      options.push_back(fmt::format("-D{}={}", d.name, d.text));
  }
  for (const int p : types) {
    const Axis& axis = space.params[static_cast<std::size_t>(p)];
    options.push_back(
        fmt::format("-D{}={}", axis.name, axis.text_of(candidate.values.at(static_cast<std::size_t>(p)))));
  }
  if (space.problem_defines)
    for (std::size_t i = 0; i < space.problem.size(); ++i)
      options.push_back(fmt::format("-D{}={}", space.problem[i].name, problem.sizes.at(i)));
  // Its -I are relative to the YAML, like the space's.
  const std::vector<std::string> own = resolve_include_dirs(k.options, space.yaml_path.parent_path());
  options.insert(options.end(), own.begin(), own.end());
  return options;
}

CompileRequest reference_kernel_compile_request(const Space& space, const Problem& problem, const Config& candidate,
                                                KernelSources& sources, std::string arch) {
  return sources.request(reference_kernel_options(space, problem, candidate), std::move(arch),
                         space.verify.kernel->entry);
}

TrialRequest make_reference_kernel_request(const Space& space, const Problem& problem, const Config& candidate,
                                           const CompiledKernel& kernel) {
  const ReferenceKernel& k = *space.verify.kernel;
  const Config view = reference_view(space, k, candidate);
  const std::vector<std::int64_t> space_slots = slot_values(problem, view);
  std::vector<std::int64_t> own_slots = problem.sizes;  // reference_slot_names(): sizes, then integer defines
  for (const ReferenceDefine& d : k.defines)
    if (d.integer) own_slots.push_back(*d.integer);

  TrialRequest r;
  common_fields(space, problem, candidate, kernel, r);
  r.config_text = "reference kernel " + k.entry;
  for (int d = 0; d < 3; ++d) {
    r.grid[d] = eval_located(k.launch.grid[d], own_slots, "grid of the reference kernel");
    r.block[d] = eval_located(k.launch.block[d], own_slots, "block of the reference kernel");
  }
  r.shared_bytes = eval_located(k.launch.shared_bytes, own_slots, "shared_bytes of the reference kernel");
  plan_data(space, problem, candidate, space_slots, r);
  // A check takes reference_count elements of the reference kernel's output (its own slots).
  for (std::size_t i = 0; i < space.verify.outputs.size(); ++i) {
    const OutputCheck& c = space.verify.outputs[i];
    CheckPlan& check = r.verify.checks[i];
    check.count = c.reference_count
                      ? evaluated_count(*c.reference_count, own_slots, c.where, "the reference's check of " + c.buffer)
                      : r.buffers[static_cast<std::size_t>(check.buffer)].count;
  }
  // Its arguments are evaluated with its own slots: rebound to them, since the loader may hand
  // it the space's arguments (bound to the space's slots) when it gives none of its own.
  const std::vector<std::string> own_names = reference_slot_names(space, k);
  for (const ArgSpec& a : k.args.empty() ? space.args : k.args) {
    r.args.push_back(plan_arg(
        space, a, candidate,
        [&](const LocatedExpr& e) {
          LocatedExpr rebound = e;
          rebound.expr.bind(own_names);
          return eval_located(rebound, own_slots, "argument of the reference kernel");
        },
        [&](const NumberSpec& n) {
          if (n.real) return *n.real;
          const Axis& axis = space.params.at(static_cast<std::size_t>(n.real_param));
          if (const ReferenceDefine* d = find_define(k, axis.name)) return std::stod(d->text);
          return axis.real_of(candidate.values.at(static_cast<std::size_t>(n.real_param)));
        }));
  }
  r.verify.mode = VerifySettings::Mode::reference_run;
  r.is_reference = true;
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
