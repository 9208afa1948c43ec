// NVRTC loaded at run time with dlopen (never linked, like the CUDA driver in device/driver.hpp), so
// that the commands that compile nothing (best, show, export, merge, report, ...) start on a
// machine with the driver alone. Only the compile stage calls it (compile/nvrtc.cpp).
#pragma once

#include <nvrtc.h>

#include <optional>
#include <string>
#include <vector>

namespace tiletune::nvrtc {

/// Pointers to the NVRTC entry points tiletune uses.
struct Api {
#define TILETUNE_NVRTC_FN(name) decltype(&::name) name = nullptr;
#include "compile/nvrtc_functions.inc"
#undef TILETUNE_NVRTC_FN
};

/// The libraries tried, in order: $TILETUNE_NVRTC_LIBRARY alone when it is set; else
/// libnvrtc.so.MAJOR (the toolkit's major version at build time) through the loader's search
/// path, then the same file in the toolkit's library directory found at build time.
[[nodiscard]] std::vector<std::string> library_candidates();

/// Loads NVRTC from `library` (a name for dlopen or a path) and resolves every function; on
/// failure nullopt, with the reason in `reason`. The library stays loaded when this succeeds.
[[nodiscard]] std::optional<Api> load_api(const std::string& library, std::string& reason);

/// The loaded NVRTC (loaded once per process, thread-safe), or throws Error with one line that
/// names libnvrtc, why it did not load and how to point tiletune at it.
[[nodiscard]] const Api& require();

}  // namespace tiletune::nvrtc
