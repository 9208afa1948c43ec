// Reading a search space file: for load_space and for `upgrade-space`, which reads a space it
// does not load.
#pragma once

#include <filesystem>
#include <string>

namespace tiletune {

/// The text of a search space file: a regular file of at most 4 MiB, checked before it is read
/// (a FIFO or a device is refused at once). Throws Error "<path>: <reason>", one line.
[[nodiscard]] std::string read_space_file(const std::filesystem::path& yaml_path);

}  // namespace tiletune
