// The checks of a space that need the machine (files, libraries, NVRTC) or every problem, made
// once before any GPU work. Each failure is a SpaceError at the YAML position of what is wrong.
// Expressions that use a param are left to make_trial_request (per config); everything that
// depends only on the problem sizes is evaluated here for every problem.
#include "tiletune/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "tiletune/data_file.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/reference.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {
namespace {

constexpr const char* kLibraryHint =
    "build it as a shared library exporting extern \"C\" int FUNCTION(const tiletune_reference_call*) "
    "(see tiletune/reference.h); a relative path is resolved from the YAML's directory";

// True when the expression reads a param (it is then evaluated per config, not here).
bool uses_params(const Space& space, const LocatedExpr& e) {
  for (const std::string& v : e.expr.variables())
    if (space.param_index(v) >= 0) return true;
  return false;
}

// Slots for a param-free expression: the problem's sizes (the params are never read).
std::vector<std::int64_t> problem_slots(const Space& space, const Problem& problem) {
  return slot_values(problem, Config{std::vector<std::int64_t>(space.params.size(), 0)});
}

std::optional<std::int64_t> eval_fixed(const Space& space, const LocatedExpr& e, const Problem& problem,
                                       const std::string& what) {
  if (uses_params(space, e)) return std::nullopt;
  try {
    return eval_located(e, problem_slots(space, problem), what);
  } catch (const EvalError& err) {
    throw SpaceError(
        e.where, fmt::format("{} cannot be evaluated for {}: {}", what, format_problem(space, problem), err.what()));
  }
}

std::optional<double> number_fixed(const Space& space, const NumberSpec& n, const Problem& problem) {
  if (n.real) return *n.real;
  if (n.real_param >= 0) return std::nullopt;
  if (auto v = eval_fixed(space, n.expr, problem, "the value")) return static_cast<double>(*v);
  return std::nullopt;
}

// Every type a buffer, global or argument can have: its type, or those of its text param's labels.
std::vector<ElementType> possible_types(const Space& space, ElementType type, int type_param,
                                        const SourceLocation& where, const std::string& what) {
  if (type_param < 0) return {type};
  const Axis& axis = space.params.at(static_cast<std::size_t>(type_param));
  std::vector<ElementType> types;
  for (const std::string& label : axis.labels) {
    const auto t = element_type_from_name(label);
    if (!t)
      throw SpaceError(where,
                       fmt::format("the type of {} follows param {}, whose value '{}' is not an element type", what,
                                   axis.name, label),
                       "give the param type names: " + element_type_list());
    types.push_back(*t);
  }
  return types;
}

// One buffer or global: what it is called in messages, its types and its count.
struct Filled {
  std::string what;  // "buffer 'x'", "module global 'w'"
  std::vector<ElementType> types;
  const LocatedExpr* count = nullptr;
  const InitSpec* init = nullptr;
  int type_param = -1;
  SourceLocation where;
};

void check_file_init(const Space& space, const Filled& f, const std::vector<Problem>& problems) {
  if (f.types.size() > 1)
    throw SpaceError(f.init->where, fmt::format("{} is read from a file, but its type follows a param", f.what),
                     "a file holds one type: give the buffer a fixed type");
  for (const Problem& problem : problems) {
    const auto path = expand_path(space, f.init->file, f.init->file_dir, problem);
    try {
      const DataFileInfo info = inspect_data_file(path);
      if (auto count = eval_fixed(space, *f.count, problem, "the count of " + f.what))
        check_data_file(info, f.types.front(), static_cast<std::uint64_t>(*count), f.what);
    } catch (const SpaceError&) { throw; } catch (const Error& e) {
      throw SpaceError(f.init->where, fmt::format("{} for {}: {}", f.what, format_problem(space, problem), e.what()),
                       "a relative path is resolved from the YAML's directory; {NAME} stands for problem size NAME");
    }
  }
}

void check_csr(const Space& space, const Filled& f, const std::vector<Problem>& problems) {
  for (const ElementType t : f.types)
    if (!is_index_type(t))
      throw SpaceError(f.init->where, fmt::format("{} holds CSR indices, but it is {}", f.what, element_type_name(t)),
                       "CSR offsets and columns are int, uint, int64 or uint64");
  const InitSpec* shape = f.init;
  if (f.init->kind == BufferInit::csr_columns) {
    const int of = space.buffer_index(f.init->of);
    if (of < 0 || space.buffers[static_cast<std::size_t>(of)].init.kind != BufferInit::csr_offsets)
      throw SpaceError(
          f.init->where,
          fmt::format("{} takes its rows from '{}', which is not a csr_offsets buffer", f.what, f.init->of),
          "name the buffer that holds the row offsets (init: {csr_offsets: ...})");
    shape = &space.buffers[static_cast<std::size_t>(of)].init;
  }
  for (const Problem& problem : problems) {
    const auto rows = eval_fixed(space, shape->rows, problem, "rows");
    const auto columns = eval_fixed(space, shape->columns, problem, "columns");
    std::optional<std::int64_t> nnz;
    if (shape->density) {
      if (rows && columns) nnz = std::llround(*shape->density * double(*rows) * double(*columns));
    } else {
      nnz = eval_fixed(space, shape->nnz, problem, "nnz");
    }
    const auto count = eval_fixed(space, *f.count, problem, "the count of " + f.what);
    const std::string at = format_problem(space, problem);
    if (rows && *rows < 1) throw SpaceError(shape->where, fmt::format("{}: {} rows for {}", f.what, *rows, at));
    if (rows && columns && nnz && (*nnz < 0 || *nnz > *rows * *columns))
      throw SpaceError(
          shape->where,
          fmt::format("{}: {} entries do not fit a {} x {} matrix ({})", f.what, *nnz, *rows, *columns, at),
          "nnz is at most rows x columns (density at most 1)");
    if (f.init->kind == BufferInit::csr_offsets && rows && count && *count != *rows + 1)
      throw SpaceError(
          f.where, fmt::format("{} holds the offsets of {} rows: its count must be rows + 1 = {}, not {} ({})", f.what,
                               *rows, *rows + 1, *count, at));
    if (f.init->kind == BufferInit::csr_columns && nnz && count && *count < *nnz)
      throw SpaceError(f.where, fmt::format("{} holds the columns of {} entries: its count {} is too small ({})",
                                            f.what, *nnz, *count, at));
  }
}

void check_copy(const Space& space, const Filled& f, const std::vector<Problem>& problems) {
  const int of = space.buffer_index(f.init->of);
  if (of < 0)
    throw SpaceError(f.init->where, fmt::format("{} is a copy of '{}', which is no buffer", f.what, f.init->of));
  // Follow the chain of copies: it must end at a buffer that is not a copy.
  std::vector<int> seen;
  for (int at = of; space.buffers[static_cast<std::size_t>(at)].init.kind == BufferInit::copy;) {
    if (std::find(seen.begin(), seen.end(), at) != seen.end())
      throw SpaceError(f.init->where, fmt::format("{} is a copy of a copy of itself", f.what),
                       "one buffer of the chain must be filled some other way");
    seen.push_back(at);
    at = space.buffer_index(space.buffers[static_cast<std::size_t>(at)].init.of);
    if (at < 0) return;  // reported on that buffer
  }
  const BufferSpec& source = space.buffers[static_cast<std::size_t>(of)];
  if (source.type != f.types.front() || source.type_param != f.type_param)
    throw SpaceError(f.init->where, fmt::format("{} is a copy of '{}', which has another type", f.what, source.name),
                     "a copy has the type and count of its source");
  for (const Problem& problem : problems) {
    const auto a = eval_fixed(space, *f.count, problem, "the count of " + f.what);
    const auto b = eval_fixed(space, source.count, problem, "the count of buffer '" + source.name + "'");
    if (a && b && *a != *b)
      throw SpaceError(f.init->where,
                       fmt::format("{} ({} elements) is a copy of '{}' ({} elements) for {}", f.what, *a, source.name,
                                   *b, format_problem(space, problem)),
                       "a copy has the type and count of its source");
  }
}

void check_values(const Space& space, const Filled& f, const std::vector<Problem>& problems) {
  const InitSpec& init = *f.init;
  const bool any_integer = std::any_of(f.types.begin(), f.types.end(), [](ElementType t) { return !is_floating(t); });
  if (init.kind == BufferInit::normal && any_integer)
    throw SpaceError(init.where, fmt::format("{} is an integer buffer: normal draws floats", f.what),
                     "use uniform for integers, or a float type");
  for (const Problem& problem : problems) {
    const auto a = number_fixed(space, init.a, problem);
    const auto b = number_fixed(space, init.b, problem);
    if (any_integer && ((a && *a != std::floor(*a)) || (init.kind == BufferInit::uniform && b && *b != std::floor(*b))))
      throw SpaceError(init.where, fmt::format("{} is an integer buffer: its bounds must be whole numbers", f.what));
    if (init.kind == BufferInit::uniform && a && b && !(*b > *a))
      throw SpaceError(init.where, fmt::format("{}: uniform needs low < high, got [{}, {})", f.what, *a, *b));
    if (init.kind == BufferInit::normal && b && !(*b >= 0))
      throw SpaceError(init.where, fmt::format("{}: normal needs a standard deviation >= 0, got {}", f.what, *b));
    if (init.kind == BufferInit::normal) continue;
    for (const ElementType t : f.types) {
      // A constant and the low bound must fit; integers are drawn up to high - 1, floats below high.
      const bool below = init.kind == BufferInit::uniform && !is_floating(t);
      auto why = a ? value_misfit(t, *a) : std::nullopt;
      if (!why && init.kind == BufferInit::uniform && b) why = value_misfit(t, below ? *b - 1 : *b);
      if (why)
        throw SpaceError(init.where, fmt::format("{} for {}: {}", f.what, format_problem(space, problem), *why),
                         "give values of the type's range, or another type");
    }
  }
}

void check_fill(const Space& space, const Filled& f, const std::vector<Problem>& problems) {
  switch (f.init->kind) {
    case BufferInit::file: check_file_init(space, f, problems); return;
    case BufferInit::csr_offsets:
    case BufferInit::csr_columns: check_csr(space, f, problems); return;
    case BufferInit::copy: check_copy(space, f, problems); return;
    case BufferInit::constant:
    case BufferInit::uniform:
    case BufferInit::normal: check_values(space, f, problems); return;
    default: return;
  }
}

void check_inputs(const Space& space, const std::vector<Problem>& problems) {
  for (const BufferSpec& b : space.buffers) {
    const std::string what = fmt::format("buffer '{}'", b.name);
    check_fill(
        space,
        {what, possible_types(space, b.type, b.type_param, b.where, what), &b.count, &b.init, b.type_param, b.where},
        problems);
  }
  for (const GlobalSpec& g : space.globals) {
    const std::string what = fmt::format("module global '{}'", g.name);
    if (g.init.kind == BufferInit::csr_columns)
      throw SpaceError(g.init.where, what + ": a module global cannot hold CSR columns", "use a buffer");
    check_fill(
        space,
        {what, possible_types(space, g.type, g.type_param, g.where, what), &g.count, &g.init, g.type_param, g.where},
        problems);
  }
}

// A scalar argument whose value needs only the problem sizes must fit its type for every
// problem (a constant was checked by the loader; one that reads a param is checked per config).
void check_args(const Space& space, const std::vector<Problem>& problems) {
  for (std::size_t i = 0; i < space.args.size(); ++i) {
    const ArgSpec& a = space.args[i];
    if (a.kind != ArgSpec::Kind::scalar || !a.value.is_integer()) continue;
    const std::string what = fmt::format("argument {} ('{}')", i + 1, a.value.expr.expr.text());
    const std::vector<ElementType> types = possible_types(space, a.scalar_type, a.type_param, a.where, what);
    for (const Problem& problem : problems) {
      const auto value = eval_fixed(space, a.value.expr, problem, what);
      if (!value) break;  // reads a param
      for (const ElementType t : types)
        if (auto why = value_misfit(t, *value))
          throw SpaceError(a.where, fmt::format("{} for {}: {}", what, format_problem(space, problem), *why),
                           "give the argument a wider type, or values of its range");
    }
  }
}

void check_outputs(const Space& space) {
  for (const OutputCheck& c : space.verify.outputs) {
    const int b = space.buffer_index(c.buffer);
    if (b < 0 || !space.buffers[static_cast<std::size_t>(b)].output)
      throw SpaceError(c.where, fmt::format("the check names '{}', which is not an output buffer", c.buffer),
                       "mark the buffer with 'output: true', or check another");
  }
}

// Every combination of the types the buffers can take: one Config per text-param value
// (beside it, the other params at their first value; only the types are read).
std::vector<Config> type_configs(const Space& space) {
  Config base{std::vector<std::int64_t>(space.params.size(), 0)};
  for (std::size_t i = 0; i < space.params.size(); ++i)
    if (!space.params[i].values.empty()) base.values[i] = space.params[i].values.front();
  std::vector<Config> configs{base};
  for (const int p : type_params(space)) {
    std::vector<Config> next;
    for (const Config& c : configs)
      for (const std::int64_t v : space.params[static_cast<std::size_t>(p)].values) {
        Config d = c;
        d.values[static_cast<std::size_t>(p)] = v;
        next.push_back(std::move(d));
      }
    configs = std::move(next);
  }
  return configs;
}

void check_builtin(const Space& space) {
  const CpuReference* reference = find_cpu_reference(space.verify.builtin);
  if (reference == nullptr) {
    std::string known;
    for (const auto name : cpu_reference_names()) known += fmt::format("{}{}", known.empty() ? "" : ", ", name);
    throw SpaceError(space.verify.where, fmt::format("no built-in reference named '{}'", space.verify.builtin),
                     "built in: " + known + "; or check against a reference kernel, a library or files");
  }
  std::vector<std::string> sizes;
  for (const Axis& a : space.problem) sizes.push_back(a.name);
  for (const Config& config : type_configs(space)) {
    std::vector<ReferenceBufferUse> uses;
    for (const BufferSpec& b : space.buffers) {
      ReferenceBufferUse use{b.name, resolved_type(space, b.type, b.type_param, config), b.output, false};
      for (const OutputCheck& c : space.verify.outputs)
        if (c.buffer == b.name && c.compare != OutputCheck::Compare::none) use.checked = true;
      uses.push_back(std::move(use));
    }
    if (auto misfit = cpu_reference_misfit(*reference, sizes, uses))
      throw SpaceError(space.verify.where, *misfit,
                       fmt::format("'{}' computes {}; or check against a reference kernel, a library or files",
                                   reference->name, reference->description));
  }
}

void check_library(const Space& space) {
  try {
    const LibraryReference library(space.verify.library, space.verify.function);
  } catch (const Error& e) { throw SpaceError(space.verify.where, e.what(), kLibraryHint); }
}

void check_files(const Space& space, const std::vector<Problem>& problems) {
  for (const auto& [buffer, path] : space.verify.files) {
    const int b = space.buffer_index(buffer);
    if (b < 0 || !space.buffers[static_cast<std::size_t>(b)].output)
      throw SpaceError(space.verify.where,
                       fmt::format("an expected file is given for '{}', which is no output buffer", buffer));
  }
  for (const OutputCheck& c : space.verify.outputs) {
    if (c.compare == OutputCheck::Compare::none) continue;
    const auto entry = std::find_if(space.verify.files.begin(), space.verify.files.end(),
                                    [&](const auto& f) { return f.first == c.buffer; });
    if (entry == space.verify.files.end())
      throw SpaceError(c.where,
                       fmt::format("output '{}' is checked, but verify gives no expected file for it", c.buffer),
                       "add it to the files, or set its check to none");
    const BufferSpec& b = space.buffers[static_cast<std::size_t>(space.buffer_index(c.buffer))];
    const std::string what = fmt::format("expected output '{}'", c.buffer);
    const std::vector<ElementType> types = possible_types(space, b.type, b.type_param, b.where, what);
    if (types.size() > 1)
      throw SpaceError(space.verify.where,
                       fmt::format("{} is read from a file, but the buffer's type follows a param", what),
                       "a file holds one type: give the buffer a fixed type");
    for (const Problem& problem : problems) {
      const auto file = expand_path(space, entry->second, space.verify.file_dir, problem);
      try {
        const DataFileInfo info = inspect_data_file(file);
        const LocatedExpr& counted = c.count ? *c.count : b.count;
        if (auto count = eval_fixed(space, counted, problem, "the count of " + what)) {
          if (!c.count) {
            check_data_file(info, types.front(), static_cast<std::uint64_t>(*count), what);
          } else {
            check_data_file(info, types.front(), info.count(types.front()), what);  // the type
            if (info.count(types.front()) < static_cast<std::uint64_t>(*count))
              throw Error(fmt::format("{}: the check compares {} elements, the file holds {}", file.string(), *count,
                                      info.count(types.front())));
          }
        }
      } catch (const SpaceError&) { throw; } catch (const Error& e) {
        throw SpaceError(space.verify.where,
                         fmt::format("{} for {}: {}", what, format_problem(space, problem), e.what()),
                         "a relative path is resolved from the YAML's directory; {NAME} stands for problem size NAME");
      }
    }
  }
}

// The expressions evaluated on the reference kernel's run with the space's slots must not need
// a param the reference leaves undefined (its value would be whichever candidate came first).
void check_reference_params(const Space& space, const ReferenceKernel& k) {
  const std::vector<int> types = type_params(space);
  auto defined = [&](const std::string& name) {
    const int p = space.param_index(name);
    if (p < 0 || std::find(types.begin(), types.end(), p) != types.end()) return true;
    return std::any_of(k.defines.begin(), k.defines.end(), [&](const ReferenceDefine& d) { return d.name == name; });
  };
  auto require = [&](const LocatedExpr& e, const std::string& what) {
    for (const std::string& v : e.expr.variables())
      if (!defined(v))
        throw SpaceError(
            k.where,
            fmt::format("{} uses param {} ('{}'), which the reference kernel does not define", what, v, e.expr.text()),
            fmt::format("give {} in the reference kernel's params (its run needs a value of its own), "
                        "or a reference_count for the check",
                        v));
  };
  // A checked output without a reference_count takes the whole buffer, which must not depend
  // on the candidate; inputs are the same whatever their count (generated element by element).
  for (const OutputCheck& c : space.verify.outputs) {
    if (c.compare == OutputCheck::Compare::none || c.reference_count) continue;
    const BufferSpec& b = space.buffers[static_cast<std::size_t>(space.buffer_index(c.buffer))];
    require(b.count, fmt::format("the count of output '{}' (compared whole: no reference_count)", b.name));
  }
  for (const GlobalSpec& g : space.globals) require(g.count, fmt::format("the count of global '{}'", g.name));
  if (k.args.empty())
    for (const ArgSpec& a : space.args)
      if (a.kind == ArgSpec::Kind::scalar && a.value.is_integer()) require(a.value.expr, "an argument");
}

// A reference config must be a config of the space for every problem: one a constraint
// rejects would be refused by the sweep after the GPU work has started.
void check_reference_config(const Space& space, const std::vector<Problem>& problems) {
  const Config config{space.verify.reference_config};
  for (const Problem& problem : problems) {
    if (auto rejection = Enumerator(space, problem).check(config))
      throw SpaceError(space.verify.where,
                       fmt::format("the reference config {} is not a config of the space for {}: {}",
                                   format_config(space, config), format_problem(space, problem), rejection->reason),
                       "choose a reference config that passes every constraint");
  }
}

void check_reference_kernel(const Space& space, const std::vector<Problem>& problems,
                            const ValidationOptions& options) {
  const ReferenceKernel& k = *space.verify.kernel;
  check_reference_params(space, k);
  // One compile (the first problem, the first value of each type param): a misspelt entry or
  // a source that does not build is found here, not after the first candidate's GPU run.
  const Config first = type_configs(space).front();
  KernelSources sources(k.source);
  CompileRequest request;
  try {
    request = reference_kernel_compile_request(space, problems.empty() ? Problem{} : problems.front(), first, sources,
                                               options.arch);
  } catch (const Error& e) {
    throw SpaceError(k.where, fmt::format("the reference kernel's source cannot be read: {}", e.what()));
  }
  std::vector<std::int64_t> slots;
  for (const Problem& problem : problems) {
    slots = problem.sizes;
    for (const ReferenceDefine& d : k.defines)
      if (d.integer) slots.push_back(*d.integer);
    try {
      for (int d = 0; d < 3; ++d) {
        (void)eval_located(k.launch.grid[d], slots, "grid of the reference kernel");
        (void)eval_located(k.launch.block[d], slots, "block of the reference kernel");
      }
      for (const OutputCheck& c : space.verify.outputs)
        if (c.reference_count && eval_located(*c.reference_count, slots, "reference_count") < 0)
          throw EvalError(fmt::format("{}: the reference_count of '{}' is negative", c.where.str(), c.buffer));
    } catch (const EvalError& e) {
      throw SpaceError(
          k.where, fmt::format("the reference kernel's launch for {}: {}", format_problem(space, problem), e.what()));
    }
  }
  const CompileResult result =
      options.cache != nullptr ? compile_cached(request, *options.cache) : compile_nvrtc(request);
  if (!result.ok()) {
    std::string log = result.log.substr(0, 2000);
    throw SpaceError(k.where,
                     fmt::format("the reference kernel '{}' ({}) does not compile for {}: {}\n{}", k.entry,
                                 k.source.string(), options.arch, result.error, log),
                     "fix the entry (a name or a name expression such as naive<float>) or its params");
  }
}

}  // namespace

void check_device_memory(const Space& space, std::uint64_t memory_bytes, const std::string& device) {
  if (memory_bytes == 0) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  for (const Problem& problem : all_problems(space)) {
    long double total = 0;  // no overflow for counts near 2^63
    const BufferSpec* largest = nullptr;
    long double largest_bytes = -1;
    auto add = [&](const LocatedExpr& count, ElementType type, int type_param, const std::string& what) {
      if (type_param >= 0) return 0.0L;
      const std::optional<std::int64_t> n = eval_fixed(space, count, problem, "the count of " + what);
      if (!n || *n <= 0) return 0.0L;
      const long double bytes = static_cast<long double>(*n) * element_size(type);
      total += bytes;
      return bytes;
    };
    for (const BufferSpec& b : space.buffers) {
      const long double bytes = add(b.count, b.type, b.type_param, fmt::format("buffer '{}'", b.name));
      if (bytes > largest_bytes) largest = &b, largest_bytes = bytes;
    }
    for (const GlobalSpec& g : space.globals)
      (void)add(g.count, g.type, g.type_param, fmt::format("module global '{}'", g.name));
    if (total <= static_cast<long double>(memory_bytes) || largest == nullptr) continue;
    throw SpaceError(largest->count.where,
                     fmt::format("the buffers of {} need {:.2f} GiB ('{}' alone {:.2f} GiB), more than the {:.2f} GiB "
                                 "of {}: every config would fail to allocate them",
                                 format_problem(space, problem), static_cast<double>(total / kGiB), largest->name,
                                 static_cast<double>(largest_bytes / kGiB), memory_bytes / kGiB, device),
                     "make the problem smaller (--size), or tune on a GPU with more memory");
  }
}

void validate_inputs_and_checks(const Space& space, const ValidationOptions& options) {
  const std::vector<Problem> problems = all_problems(space);
  check_inputs(space, problems);
  check_args(space, problems);
  check_outputs(space);
  switch (space.verify.reference) {
    case VerifySpec::Reference::builtin: check_builtin(space); break;
    case VerifySpec::Reference::library: check_library(space); break;
    case VerifySpec::Reference::files: check_files(space, problems); break;
    case VerifySpec::Reference::kernel: check_reference_kernel(space, problems, options); break;
    case VerifySpec::Reference::config: check_reference_config(space, problems); break;
    case VerifySpec::Reference::none: break;
  }
}

}  // namespace tiletune
