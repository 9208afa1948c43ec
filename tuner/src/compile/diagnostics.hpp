// Internal to the compile stage: reading NVRTC's log. NVRTC 13 writes the front end's messages,
// then a NUL byte, then ptxas' report and errors, then another NUL; a failure's reason is the
// first error in either part, in one line, naming the kernel where ptxas does.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tiletune::compile_detail {

/// The log with its NUL bytes turned into line breaks (and none at the end).
[[nodiscard]] std::string clean_log(std::string log);

/// An error ptxas reports: "ptxas error   : Entry function 'k' uses too much shared data ...".
struct PtxasError {
  std::string function;  ///< as ptxas names it (mangled for C++ linkage); empty when none
  std::string reason;    ///< "k: static shared memory 81920 B > 48 KB max"
};
[[nodiscard]] std::optional<PtxasError> first_ptxas_error(const std::string& log);

/// The reason of a failed compile in one line: the first error of the front end
/// ("k.cu(3): error: ..."), of NVRTC itself ("nvrtc: error: ...") or of ptxas (see
/// PtxasError); empty when the log has none.
[[nodiscard]] std::string first_error(const std::string& log);

/// The first of `macros` that stands as a whole word in the source excerpt NVRTC prints under
/// the first front-end error, when that error is in a header (not in `main_name`): a param
/// named like an identifier of a header (-DT=float before `template <typename T>`).
[[nodiscard]] std::optional<std::string> macro_in_first_error(const std::string& log, const std::string& main_name,
                                                              const std::vector<std::string>& macros);

/// The first line of each warning in the log (front end, NVRTC, ptxas), in order, each once.
[[nodiscard]] std::vector<std::string> log_warnings(const std::string& log);

/// A kernel's name for people: "scale" for "_Z5scaleIfLi4EEvPT_S0_i", "ns::k" for
/// "_ZN2ns1kEPf"; the symbol itself when it is not mangled.
[[nodiscard]] std::string kernel_display_name(const std::string& symbol);

}  // namespace tiletune::compile_detail
