// How every file a command writes for the user is written (issue 22). What is at the path decides:
//  - nothing: a new regular file, mode 0666 less the umask (as any program's);
//  - a regular file: replaced atomically (a temporary file in its directory, written, fsync'd,
//    given the old file's mode and, where permitted, its owner, renamed over it), so a failure
//    leaves it as it was and never leaves the temporary file behind. So a file in a directory
//    this process cannot write is not written ("cannot write: Permission denied"), never
//    rewritten in place, and a file with other hard links is replaced under this name only;
//  - a character device (/dev/null, /dev/stdout, a terminal) or a FIFO: written through, never
//    replaced; a FIFO is opened without blocking first, so one with no reader is refused at once;
//  - a symbolic link: what it points to, by the same rules (the link is kept); a dangling link is
//    refused, since creating a file wherever a link points is not what `-o` promises;
//  - a directory, a socket or a block device: refused.
// An output that is one of the command's inputs (the same st_dev and st_ino: another name, a hard
// or symbolic link) is refused before anything is done. Every write, the fsync and the close are
// checked: "<path>: cannot write: No space left on device".
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "tiletune/error.hpp"

namespace tiletune {

/// An output path that names one of the command's inputs: nothing was done (the CLI exits 2).
class OutputIsInputError : public Error {
 public:
  using Error::Error;
};

/// What a path is, as an output.
enum class OutputTarget {
  absent,   ///< nothing there: a new file is created
  regular,  ///< a regular file (or a link to one): replaced atomically, its mode kept
  stream,   ///< a character device or a FIFO (or a link to one): written through
};

struct OutputRules {
  /// The command's inputs: an output that is one of them is refused (OutputIsInputError).
  std::vector<std::filesystem::path> inputs;
  /// Only an existing regular file may be written (a file rewritten in place: upgrade-space --write).
  bool regular_only = false;
};

/// Checks path as an output without opening or changing anything, so that a command can refuse
/// it before doing any work. Throws OutputIsInputError "<path> is <input>, an input of this
/// command (the same file)", or Error "<path>: <reason>" for a directory, a socket, a block
/// device, a dangling symbolic link, anything but a regular file when rules.regular_only, or a
/// path that cannot be examined.
[[nodiscard]] OutputTarget check_output(const std::filesystem::path& path, const OutputRules& rules = {});

/// Writes bytes as the whole content of path, by the rules at the top of this file (check_output
/// first). Throws as check_output does, and Error "<path>: cannot write: <reason>" (the target as
/// it was, no temporary file left) or "<path>: a FIFO with no reader".
void write_output(const std::filesystem::path& path, std::string_view bytes, const OutputRules& rules = {});

}  // namespace tiletune
