// The outcome of one trial (one config of one kernel on one problem and device).
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

namespace tiletune {

/// Only `ok` trials can become best. The others keep what went wrong in their detail.
enum class TrialStatus {
  ok,              ///< compiled, launched, verified and timed
  pruned,          ///< dropped before running: a constraint or a resource limit (reason in detail)
  compile_failed,  ///< NVRTC rejected it (the log in detail)
  launch_failed,   ///< the launch returned an error (the CUresult name)
  runtime_fault,   ///< the kernel faulted or the worker died
  timeout,         ///< the trial overran its deadline
  wrong_result,    ///< verification failed (max error and first bad index)
  suspect,         ///< passed its check yet ran faster than the GPU can (physics guard; reason and hint in detail)
};

/// Every status, in the enum's order: the one list (counts, filters, the schema's CHECK).
inline constexpr TrialStatus all_trial_statuses[] = {TrialStatus::ok,
                                                     TrialStatus::pruned,
                                                     TrialStatus::compile_failed,
                                                     TrialStatus::launch_failed,
                                                     TrialStatus::runtime_fault,
                                                     TrialStatus::timeout,
                                                     TrialStatus::wrong_result,
                                                     TrialStatus::suspect};
inline constexpr std::size_t trial_status_count = std::size(all_trial_statuses);

[[nodiscard]] constexpr std::string_view status_name(TrialStatus s) noexcept {
  switch (s) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::pruned: return "pruned";
    case TrialStatus::compile_failed: return "compile_failed";
    case TrialStatus::launch_failed: return "launch_failed";
    case TrialStatus::runtime_fault: return "runtime_fault";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::wrong_result: return "wrong_result";
    case TrialStatus::suspect: return "suspect";
  }
  return "unknown";
}

[[nodiscard]] constexpr std::optional<TrialStatus> parse_status(std::string_view s) noexcept {
  for (TrialStatus t : all_trial_statuses)
    if (status_name(t) == s) return t;
  return std::nullopt;
}

}  // namespace tiletune
