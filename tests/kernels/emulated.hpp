// The registry of kernels compiled for the CPU (emulate_config.cpp): name -> entry point.
#pragma once

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

}  // namespace tt_emu
