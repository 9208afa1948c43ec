// What a loaded space can only be asked on the machine it runs on, before any GPU work: that
// its inputs can be generated (files exist and hold the right type and count, CSR shapes fit,
// copies match) and that its check can run (the built-in reference exists and fits the
// buffers, the library loads and has the function, the expected files exist, the reference
// kernel compiles). `tiletune plan` and `tiletune tune` call it after load_space, and so does
// run_sweep before it starts a worker: an impossible check is a load-time error with the
// file:line:column of the space, never a GPU fault.
#pragma once

#include <cstdint>
#include <string>

#include "tiletune/compile.hpp"
#include "tiletune/space.hpp"

namespace tiletune {

struct ValidationOptions {
  std::string arch = "sm_90";         ///< a reference kernel is compiled for it
  const CubinCache* cache = nullptr;  ///< for that compile (nullptr: none)
};

/// Throws SpaceError at the place in the YAML that is wrong (the buffer, the init, the check,
/// the verify entry), with what is wrong and a remedy. Expressions that depend on a param are
/// checked per config when the request is built (make_trial_request) instead.
void validate_inputs_and_checks(const Space& space, const ValidationOptions& options = {});

/// Throws SpaceError, at the `count:` of the largest buffer, when the buffers and globals of a
/// problem need more than `memory_bytes` (a device's memory; `device` names it in the message):
/// every config of that problem would fail to allocate them. Counts that read a param (a scratch
/// sized by the tile) are left to each config, as are buffers whose type follows a param.
void check_device_memory(const Space& space, std::uint64_t memory_bytes, const std::string& device);

}  // namespace tiletune
