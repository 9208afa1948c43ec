// The registry of kernels compiled for the CPU (emulate_config.cpp): name -> entry point, and
// name -> module global for the configs that have one.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace tt_emu {

using AnyKernel = void (*)();

inline std::map<std::string, AnyKernel>& kernels() {
  static std::map<std::string, AnyKernel> registry;
  return registry;
}

inline bool register_kernel(const char* name, AnyKernel entry) {
  kernels()[name] = entry;
  return true;
}

/// A module global of a config (TT_GLOBAL: a __constant__ or __device__ variable), by config name.
struct Global {
  void* data = nullptr;
  std::size_t bytes = 0;
};
inline std::map<std::string, Global>& globals() {
  static std::map<std::string, Global> registry;
  return registry;
}
inline bool register_global(const char* name, void* data, std::size_t bytes) {
  globals()[name] = {data, bytes};
  return true;
}

}  // namespace tt_emu
