// The name of the temp file a cubin cache entry is written to before it is renamed into place.
// A cache directory may be shared by several hosts (over NFS, a fleet of issue 15) and by
// containers that all run as pid 1 on hosts of the same name: the name carries the host, the
// pid, a random number drawn once per process and a counter, so no two writers share one.
#pragma once

#include <filesystem>

namespace tiletune::compile_detail {

/// "<target>.tmp.<hostname>.<pid>.<random hex>.<counter>", in the target's directory (so that
/// the rename is atomic). Every call returns a new name.
[[nodiscard]] std::filesystem::path unique_temp_path(const std::filesystem::path& target);

}  // namespace tiletune::compile_detail
