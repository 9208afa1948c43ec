// Planning a space without a GPU: enumerate the configs of one problem, evaluate their
// launch geometry, compile them in parallel with NVRTC, and compute each one's occupancy
// for a target device. What `tiletune plan` prints, and the first stage of a sweep.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/compile.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/occupancy.hpp"
#include "tiletune/shard.hpp"
#include "tiletune/space.hpp"
#include "tiletune/status.hpp"

namespace tiletune {

/// Grid, block and dynamic shared memory of one config, evaluated from the space's launch.
struct LaunchGeometry {
  long long grid[3] = {1, 1, 1};
  long long block[3] = {1, 1, 1};
  long long shared_bytes = 0;
  [[nodiscard]] long long threads_per_block() const noexcept { return block[0] * block[1] * block[2]; }
};

/// Evaluates the launch expressions. Throws EvalError naming the expression and its place.
[[nodiscard]] LaunchGeometry evaluate_launch(const Space& space, const Problem& problem, const Config& config);

/// What a config asks of an SM: its launch geometry and, once compiled, its resources
/// (registers, static shared memory, barriers; none before compiling).
[[nodiscard]] KernelFootprint kernel_footprint(const LaunchGeometry& launch, const Resources* resources = nullptr);

/// Why a launch can never run on the device, judged on its geometry alone (before compiling:
/// too many threads, a dimension over its limit, too much or negative dynamic shared memory);
/// nullopt when it may run.
[[nodiscard]] std::optional<std::string> unlaunchable_geometry(const DeviceLimits& device,
                                                               const LaunchGeometry& launch);

/// The value of a space's expression for one config, or EvalError naming where it is written
/// and `what` it is ("grid", "count of buffer in", ...).
[[nodiscard]] std::int64_t eval_located(const LocatedExpr& e, std::span<const std::int64_t> slots,
                                        std::string_view what);

/// The options NVRTC gets for one config of one problem: -DNAME=value for each param, then for
/// each problem size with `problem_defines`, then the space's `options:` with their ${EXPR}
/// evaluated; each relative -I made absolute against the YAML's directory. Throws EvalError
/// naming the option whose expression fails for this config.
[[nodiscard]] std::vector<std::string> compile_options(const Space& space, const Problem& problem,
                                                       const Config& config);

/// The compile of one config of one problem: compile_options, the source loaded for them, the
/// arch ("sm_90") and the space's entry. `plan`, the sweep's compiles and the Launcher all build
/// theirs here, so that a config has one cubin key whoever compiles it. Throws EvalError like
/// compile_options. The request points into `sources`.
[[nodiscard]] CompileRequest config_compile_request(const Space& space, const Problem& problem, const Config& config,
                                                    KernelSources& sources, std::string arch);

/// The space's own options as written (`options:` with ${EXPR} unevaluated, -I made absolute
/// like compile_options): what the kernel version records besides NVRTC's defaults.
[[nodiscard]] std::vector<std::string> space_options(const Space& space);

/// The space's kernel source and its headers, read through `sources` with the space's options;
/// a source or header that cannot be read (gone since the space was loaded, unreadable, too large)
/// is a SpaceError at the `source:` key.
[[nodiscard]] const KernelSource& space_source(KernelSources& sources, const Space& space);

/// The problem named by `NAME=value` overrides, other sizes taking their first YAML value.
/// Throws Error for a name that is not a problem size or a value that is not an integer.
[[nodiscard]] Problem select_problem(const Space& space, const std::vector<std::string>& overrides);

/// "N=8192 R=3"
[[nodiscard]] std::string format_problem(const Space& space, const Problem& problem);

struct PlanRow {
  Config config;
  TrialStatus status = TrialStatus::ok;  ///< ok, pruned or compile_failed
  std::string detail;                    ///< prune reason or the first line of the compile error
  std::string compile_log;               ///< full NVRTC log on a compile failure
  std::vector<std::string> warnings;     ///< the compiler's warnings (also when it compiled)
  std::optional<LaunchGeometry> launch;
  std::optional<Resources> resources;
  Occupancy occupancy;
  double compile_seconds = 0;
  bool cache_hit = false;
  std::string cubin_key;
};

struct PlanSummary {
  std::uint64_t points = 0;  ///< product of the params (with an `allowed:` list, its length)
  /// After constraints: exact, or estimated with a 95 % relative error (space_domain,
  /// tiletune/replay.hpp), counted without walking the product.
  std::uint64_t valid = 0;
  bool valid_exact = true;
  double valid_relative_error = 0;
  std::uint64_t sample_every = 1;  ///< rows hold every k-th config after constraints
  /// With sample_every > 1 on a space too large to walk (more than 2^20 configs, or a count
  /// that is estimated): the rows are a uniform sample of ceil(in_shard / sample_every) configs
  /// (deterministic, in enumeration order) instead of every k-th.
  bool sampled_uniformly = false;
  /// The space held more configs than PlanOptions::max_configs and no sample was asked for: the
  /// rows are a uniform sample of PlanOptions::default_sample configs (sampled_uniformly too).
  bool sampled_by_default = false;
  Shard shard;                 ///< rows hold only this shard's configs
  std::uint64_t in_shard = 0;  ///< configs after constraints in the shard (valid when whole)
  bool in_shard_exact = true;
  double in_shard_relative_error = 0;
  std::uint64_t ok = 0;
  std::uint64_t pruned = 0;  ///< by a resource limit (constraints are not counted here)
  std::uint64_t compile_failed = 0;
  std::uint64_t compiled_ok = 0;    ///< configs that compiled (ok, or pruned on their resources)
  std::uint64_t with_warnings = 0;  ///< configs whose compile gave warnings
  std::uint64_t compiled = 0;       ///< NVRTC calls made
  std::uint64_t cache_hits = 0;     ///< compiles answered by the cubin cache (failures too)
  double compile_seconds = 0;       ///< sum over NVRTC calls
  double wall_seconds = 0;
  unsigned threads = 0;
};

struct Plan {
  DeviceLimits device;
  Problem problem;
  std::vector<PlanRow> rows;  ///< in enumeration order
  PlanSummary summary;
};

/// The most configs a plan compiles unless told otherwise (`plan --max-configs`): past it, a plan
/// without a sample compiles a uniform sample of plan_default_sample configs, and one whose
/// --sample still leaves more is refused (PlanTooLarge), so that no space makes a plan run for hours.
inline constexpr std::uint64_t plan_default_max_configs = 10'000;
/// The configs of the uniform sample a plan compiles past its limit when no sample was asked for.
inline constexpr std::uint64_t plan_default_sample = 1'000;

/// What a plan is about to compile, told before it starts (PlanOptions::on_start).
struct PlanStart {
  std::uint64_t in_shard = 0;  ///< configs after constraints (in the shard)
  bool in_shard_exact = true;
  std::uint64_t to_compile = 0;  ///< configs chosen (before the geometry prunes some)
  bool sampled_by_default = false;
  unsigned threads = 0;
};

/// --sample K still leaves more configs than PlanOptions::max_configs: refused before any work.
class PlanTooLarge : public Error {
 public:
  using Error::Error;
};

struct PlanOptions {
  DeviceLimits device;  ///< the target (built-in table or live device)
  Problem problem;
  unsigned threads = 0;               ///< compile threads; 0 = hardware concurrency
  const CubinCache* cache = nullptr;  ///< nullptr: no cache
  /// One compiler per compile thread (make_worker_compiler: a worker process each, which is
  /// what `tiletune plan` uses); empty: NVRTC in the pool's threads.
  CompilerFactory compiler;
  /// Plan only every k-th config after constraints (1: all). For spaces too large to
  /// compile whole, e.g. in CI; the counts of the summary still cover the whole space. On a
  /// space too large to walk, a uniform sample of as many (PlanSummary::sampled_uniformly).
  std::uint64_t sample_every = 1;
  /// Plan only this shard's configs (tiletune/shard.hpp), before sampling; default: all.
  Shard shard;
  /// Plan only the configs it accepts (after constraints, shard and sampling); empty: all.
  /// For a subset the caller chose, e.g. test_shipped_spaces' covering sample of an architecture.
  std::function<bool(const Config&)> select;
  /// Called after each config completes (done, total); may be empty.
  std::function<void(std::size_t, std::size_t)> progress;
  /// The most configs to compile (see plan_default_max_configs); 0 means no limit.
  std::uint64_t max_configs = plan_default_max_configs;
  /// Past max_configs without a sample: a uniform sample of this many configs.
  std::uint64_t default_sample = plan_default_sample;
  /// Called once the configs are chosen, before any compile; may be empty.
  std::function<void(const PlanStart&)> on_start;
};

/// The failure reason most failed configs share, with how many give it: reasons that differ only
/// in their numbers ("81920 B" and "98304 B") count as one, and the first is shown.
struct FailureSummary {
  std::string reason;
  std::uint64_t configs = 0;
};
/// nullopt when no config failed to compile.
[[nodiscard]] std::optional<FailureSummary> most_common_failure(const Plan& plan);

/// Throws PlanTooLarge when the options' --sample leaves more configs than max_configs: what
/// plan_space would refuse, asked before anything is set up (counted, never walked).
void check_plan_size(const Space& space, const PlanOptions& options);

/// Plans every config that passes the constraints (or the sample the options ask for, or, past
/// max_configs, a uniform sample of default_sample configs). Throws for problems with the space
/// itself (e.g. an unreadable source), and PlanTooLarge when --sample leaves more than
/// max_configs; each config's failure is recorded in its row. Holds at most the configs it
/// compiles, whatever the space's size.
[[nodiscard]] Plan plan_space(const Space& space, const PlanOptions& options);

}  // namespace tiletune
