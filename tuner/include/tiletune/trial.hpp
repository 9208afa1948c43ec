// From a planned config to what a worker runs: buffers, inputs, module globals, arguments and
// checks evaluated for one problem; the run of a reference kernel; the metrics (bytes, flops)
// that turn a time into GB/s and GFLOP/s.
#pragma once

#include <optional>
#include <string>

#include "tiletune/measure.hpp"
#include "tiletune/plan.hpp"

namespace tiletune {

/// A canonical text of a problem or config for cache keys: "N=8192;R=3", "TILE=32;PAD=1".
[[nodiscard]] std::string canonical_problem(const Space& space, const Problem& problem);
[[nodiscard]] std::string canonical_config(const Space& space, const Config& config);
/// Parses canonical_config's text back; nullopt when it names other params.
[[nodiscard]] std::optional<Config> parse_canonical_config(const Space& space, const std::string& text);

/// Builds the request for one compiled config. Throws EvalError naming the buffer, global,
/// argument or check whose expression failed for this config (or an input that cannot be
/// generated: CSR offsets whose count is not rows + 1, nnz over rows x columns, ...).
[[nodiscard]] TrialRequest make_trial_request(const Space& space, const Problem& problem, const Config& config,
                                              const LaunchGeometry& launch, const CompiledKernel& kernel);

/// The params a buffer's, global's or argument's type follows (text params), in params order.
[[nodiscard]] std::vector<int> type_params(const Space& space);
/// "|T=float" for the type params' values in `config` ("" when there are none): part of the
/// problem key, since the inputs and the reference outputs depend on the types.
[[nodiscard]] std::string type_key(const Space& space, const Config& config);

/// The symbol cuModuleGetGlobal finds for a module global written as in the source: "weights"
/// as it is, "conv::weights" mangled as a namespace member ("_ZN4conv7weightsE").
[[nodiscard]] std::string global_symbol(const std::string& name);

/// The reference config of `verify: {config: ...}` for a candidate: the space's reference config
/// with the candidate's values of the type params (the reference runs with the candidate's types).
[[nodiscard]] Config reference_config_for(const Space& space, const Config& candidate);

/// The NVRTC options of the reference kernel (`verify: {kernel: ...}`) for a candidate: its
/// params as -DNAME=text (the type params with the candidate's values), the problem sizes when
/// problem_defines is set, then its own options (-I made absolute against the YAML's directory).
[[nodiscard]] std::vector<std::string> reference_kernel_options(const Space& space, const Problem& problem,
                                                                const Config& candidate);
/// The compile of the reference kernel for a candidate: reference_kernel_options, the source
/// loaded for them (`sources` of the reference kernel's file), the arch and its entry. Validation
/// and the sweep build theirs here. The request points into `sources`.
[[nodiscard]] CompileRequest reference_kernel_compile_request(const Space& space, const Problem& problem,
                                                              const Config& candidate, KernelSources& sources,
                                                              std::string arch);

/// The request that runs the reference kernel first on a problem (is_reference set): its
/// launch and arguments from its own params; the space's buffers and globals with its params
/// where it defines them (the candidate's elsewhere: only the types may come from the candidate,
/// validation makes sure the checked outputs do not); each check takes reference_count
/// elements (its own slots) or the whole buffer. Throws EvalError.
[[nodiscard]] TrialRequest make_reference_kernel_request(const Space& space, const Problem& problem,
                                                         const Config& candidate, const CompiledKernel& kernel);

/// Bytes and flops per run from the space's metrics (nullopt where none is given).
struct RunMetrics {
  std::optional<double> bytes;
  std::optional<double> flops;
};
[[nodiscard]] RunMetrics evaluate_metrics(const Space& space, const Problem& problem, const Config& config);

}  // namespace tiletune
