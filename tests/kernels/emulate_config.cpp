// One kernel under one config, compiled for the CPU through cuda_shim.hpp. CMake compiles
// this file once per config with TT_KERNEL_FILE (the kernel with its extern "C" removed, so
// that configs do not clash), TT_ENTRY, TT_CONFIG_NAME and the params as -D definitions; with
// TT_GLOBAL, a module global of the file is registered beside the entry.
#include "cuda_shim.hpp"
#include "emulated.hpp"

namespace TT_CONFIG_NS {
#include TT_KERNEL_FILE
}  // namespace TT_CONFIG_NS

namespace {
const bool registered = tt_emu::register_kernel(TT_CONFIG_NAME, reinterpret_cast<void (*)()>(&TT_CONFIG_NS::TT_ENTRY));
#ifdef TT_GLOBAL
const bool global_registered =
    tt_emu::register_global(TT_CONFIG_NAME, &TT_CONFIG_NS::TT_GLOBAL, sizeof(TT_CONFIG_NS::TT_GLOBAL));
#endif
}  // namespace
