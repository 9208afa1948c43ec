// Capture (issue 25, part 1): the Launcher writes a real launch of a kernel to disk as a space
// that `tiletune tune` takes as it is: the space's YAML with the problem of the launch, its input
// buffers and scalars as gzip'd .npy files (.npy.gz) and its outputs (read after the launch) as
// the expected outputs of the check. Tuning that space fills the cache rows the application's Launcher reads
// at its next start (same kernel name and kernel version: the capture names the application's
// source and options, it does not copy them).
//
// What is captured is chosen by CaptureOptions (from TILETUNE_CAPTURE* in the environment, or
// given in Launcher::Options). Reading the launch's memory goes through CaptureMemory: the GPU in
// the Launcher, host memory in tests. A capture never throws into the launch it watches: every
// failure is one line on the diagnostics stream and a CaptureOutcome.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/enumerate.hpp"
#include "tiletune/space.hpp"

namespace tiletune {

/// The default size cap of one capture (inputs and outputs together): 1 GiB.
inline constexpr std::uint64_t kDefaultCaptureMaxBytes = std::uint64_t{1} << 30;
/// The default capture folder, relative to the working directory.
inline constexpr const char* kDefaultCaptureDir = "tiletune-captures";

/// What to capture and where.
struct CaptureOptions {
  /// Kernel names (the space's `kernel:`) or shell globs (`*`, `?`, `[...]`); empty: capture off.
  std::vector<std::string> patterns;
  /// Where capture folders go; empty: kDefaultCaptureDir in the working directory.
  std::filesystem::path directory;
  /// Capture every launch whose inputs differ from the captures already there (by content hash),
  /// not only the first of each kernel and problem.
  bool force = false;
  /// A capture whose buffers (inputs and outputs) would exceed this many bytes is not written:
  /// their sizes in memory, not those of the compressed files.
  std::uint64_t max_bytes = kDefaultCaptureMaxBytes;
  /// Launches of each matching kernel to let pass before the first capture.
  std::uint64_t skip = 0;

  /// From TILETUNE_CAPTURE (comma-separated names or globs), TILETUNE_CAPTURE_DIR,
  /// TILETUNE_CAPTURE_FORCE (1), TILETUNE_CAPTURE_MAX_BYTES (bytes, or with a K, M or G suffix)
  /// and TILETUNE_CAPTURE_SKIP (a count). A malformed value is said in one line on
  /// `diagnostics` and capture is off.
  [[nodiscard]] static CaptureOptions from_environment(std::ostream& diagnostics);
  /// True when `kernel` matches one of the patterns.
  [[nodiscard]] bool matches(std::string_view kernel) const;
  [[nodiscard]] bool enabled() const noexcept { return !patterns.empty(); }
};

/// "transpose, app_*" as its items (trimmed, empty ones dropped): TILETUNE_CAPTURE's and
/// TILETUNE_ONLINE's lists.
[[nodiscard]] std::vector<std::string> kernel_patterns(std::string_view text);
/// True when `kernel` is one of `patterns` or matches one as a shell glob.
[[nodiscard]] bool kernel_matches(const std::vector<std::string>& patterns, std::string_view kernel);

/// "512", "64K", "3M", "1G" (powers of 1024) as bytes, or nullopt.
[[nodiscard]] std::optional<std::uint64_t> parse_byte_size(std::string_view text);

/// Reads the memory a launch's arguments point to.
class CaptureMemory {
 public:
  virtual ~CaptureMemory() = default;
  /// Waits until the work that writes the launch's buffers is done (the launch's stream).
  virtual void synchronize() = 0;
  /// Copies `into.size()` bytes from `address` (a buffer argument's device pointer).
  virtual void read(std::uint64_t address, std::span<std::byte> into) = 0;
};

/// Reads host memory: a buffer argument's "device pointer" is a host address. For tests and
/// for programs whose buffers are host-visible.
class HostCaptureMemory final : public CaptureMemory {
 public:
  void synchronize() override {}
  void read(std::uint64_t address, std::span<std::byte> into) override;
};

/// What became of one launch.
enum class CaptureOutcome {
  off,        ///< the kernel does not match (or capture is off or disabled by an earlier failure)
  skipped,    ///< one of the first `skip` launches
  done,       ///< this kernel and problem were captured already (without force)
  written,    ///< a new capture folder
  duplicate,  ///< force, but a capture with the same inputs is there
  too_large,  ///< over max_bytes: nothing written
  refused,    ///< the space cannot be captured (said once)
  failed,     ///< the capture folder or a file could not be written (said once; capture stops)
};
[[nodiscard]] const char* capture_outcome_name(CaptureOutcome outcome) noexcept;

/// One launch, as the Launcher hands it to the capture.
struct CaptureLaunch {
  Problem problem;
  Config config;
  /// The address of each kernel argument, in the order of the space's `args:` (as launch()).
  std::span<void* const> args;
};

/// Captures the launches of one space (one per Launcher). Thread-safe.
class CaptureWriter {
 public:
  /// `diagnostics` (std::cerr in the Launcher) receives the one-line messages; it must outlive
  /// the writer.
  CaptureWriter(const Space& space, CaptureOptions options, std::ostream& diagnostics);
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  /// A capture in progress: the inputs read before the launch.
  struct Pending;
  struct PendingDeleter {
    void operator()(Pending* p) const noexcept;
  };
  using PendingCapture = std::unique_ptr<Pending, PendingDeleter>;

  /// Before the launch: decides whether to capture it and, if so, reads its inputs (after
  /// memory.synchronize()). Returns the pending capture, or nullptr with the outcome. Never throws.
  [[nodiscard]] PendingCapture before(const CaptureLaunch& launch, CaptureMemory& memory,
                                      CaptureOutcome& outcome) noexcept;
  /// After the launch: reads its outputs (after memory.synchronize()) and writes the capture
  /// folder atomically. Never throws.
  CaptureOutcome after(PendingCapture pending, CaptureMemory& memory) noexcept;

  /// The folder of the last capture written (empty before the first).
  [[nodiscard]] std::filesystem::path last_written() const;
  [[nodiscard]] const CaptureOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The capture's space (the text of space.yaml) for one launch of `space`: its source, entry and
/// options as absolute paths (the kernel version of the application's space), the launch's
/// problem, the launched config as `default:`, the inputs from `inputs/NAME.npy.gz`, scalars that
/// do not depend on params as the values passed, and the outputs checked against
/// `expected/NAME.npy.gz` with the space's tolerances. `scalars` holds the captured value text of
/// each argument (empty for a buffer or a scalar kept as an expression). Throws Error when the
/// space cannot be captured (see capture_refusal).
[[nodiscard]] std::string capture_space_yaml(const Space& space, const Problem& problem, const Config& config,
                                             const std::vector<std::string>& scalars);

/// Why a space cannot be captured, or nullopt: module `globals:` (the Launcher does not fill
/// them) or a buffer whose count depends on a param (a capture holds one size per buffer).
[[nodiscard]] std::optional<std::string> capture_refusal(const Space& space);

}  // namespace tiletune
