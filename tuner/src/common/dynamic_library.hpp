// What the libraries tiletune loads at run time with dlopen (the CUDA driver, NVRTC, NVML) share:
// the resolution of one symbol into a typed pointer, listing what is missing, and the outcome of
// a load that is done once per process.
#pragma once

#include <dlfcn.h>

#include <optional>
#include <string>

namespace tiletune::detail {

/// Sets `out` to `symbol` of `handle`; when it is not there, appends its name to `missing`
/// ("a, b") and returns false.
template <class Fn>
bool resolve_symbol(void* handle, const char* symbol, Fn& out, std::string& missing) {
  void* address = ::dlsym(handle, symbol);
  if (address == nullptr) {
    if (!missing.empty()) missing += ", ";
    missing += symbol;
    return false;
  }
  out = reinterpret_cast<Fn>(address);
  return true;
}

/// A library's functions once loaded, or why it could not be: kept in a function-local static
/// (initialized once, thread-safe, never written again; the handle is never closed, since the
/// functions point into it).
template <class Api>
struct LoadedLibrary {
  std::optional<Api> api;
  std::string reason;
};

}  // namespace tiletune::detail
