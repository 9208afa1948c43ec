// Loading of NVRTC with dlopen: the candidates, the resolution of each function, and the one
// message a user gets when a compile is needed and NVRTC is not there.
#include "compile/nvrtc_api.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

#include "common/dynamic_library.hpp"
#include "tiletune/error.hpp"

namespace tiletune::nvrtc {
namespace {

constexpr const char* kLibraryVariable = "TILETUNE_NVRTC_LIBRARY";

// What require() found, fixed after the first call.
using Loaded = detail::LoadedLibrary<Api>;

const Loaded& loaded() {
  static const Loaded state = [] {
    Loaded l;
    std::string reasons;
    for (const std::string& library : library_candidates()) {
      std::string reason;
      l.api = load_api(library, reason);
      if (l.api) return l;
      reasons += reasons.empty() ? reason : "; " + reason;
    }
    l.reason = fmt::format(
        "NVRTC (libnvrtc) is needed to compile and could not be loaded ({}): install the CUDA "
        "toolkit's NVRTC, add its lib64 directory to LD_LIBRARY_PATH, or set {} to the path of "
        "libnvrtc.so",
        reasons, kLibraryVariable);
    return l;
  }();
  return state;
}

}  // namespace

std::vector<std::string> library_candidates() {
  if (const char* env = std::getenv(kLibraryVariable); env && *env) return {env};
  return {TILETUNE_NVRTC_SONAME, std::string(TILETUNE_CUDA_LIBRARY_DIR) + "/" + TILETUNE_NVRTC_SONAME};
}

std::optional<Api> load_api(const std::string& library, std::string& reason) {
  ::dlerror();  // clear a stale error
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    reason = why != nullptr ? std::string(why) : fmt::format("{}: unknown dlopen error", library);
    return std::nullopt;
  }
  Api api;
  std::string missing;
#define TILETUNE_NVRTC_FN(name) detail::resolve_symbol(handle, #name, api.name, missing);
#include "compile/nvrtc_functions.inc"
#undef TILETUNE_NVRTC_FN
  if (!missing.empty()) {
    reason = fmt::format("{} lacks NVRTC functions tiletune needs: {}", library, missing);
    ::dlclose(handle);
    return std::nullopt;
  }
  return api;
}

const Api& require() {
  const Loaded& l = loaded();
  if (!l.api) throw Error(l.reason);
  return *l.api;
}

}  // namespace tiletune::nvrtc
