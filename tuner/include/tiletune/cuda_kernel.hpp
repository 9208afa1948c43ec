// The device stage's narrow public face for code after it (the application-side launcher, the
// CLI): whether a CUDA driver is there, and one cubin's kernel loaded on a device's primary
// context and launched. The driver itself (device/driver.hpp: dlopen, checked calls, every RAII
// owner) stays private to the stage and to the worker, which drives the GPU through it; this
// header needs no toolkit header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

// As cuda.h declares them, so that this header does not need the toolkit's headers.
struct CUstream_st;
typedef struct CUstream_st* CUstream;  // NOLINT(modernize-use-using): identical to cuda.h

namespace tiletune {

/// CUDA devices the driver sees: 0 without a driver (see cuda_unavailable_reason()).
[[nodiscard]] int cuda_device_count();
/// Why the driver could not be used ("libcuda.so.1: cannot open shared object file"), or empty.
[[nodiscard]] std::string cuda_unavailable_reason();

/// Waits for `stream` (nullptr: the legacy default stream) in the primary context of device
/// `ordinal`, then copies `bytes` from the device address `src` to host memory `dst`: how the
/// launcher's capture reads a launch's buffers. Throws Error naming the driver call.
void copy_from_device_after(int ordinal, CUstream stream, std::uint64_t src, void* dst, std::size_t bytes);

/// What the launcher's online trials do on a device beside an application's launch, ordered on
/// its stream in the primary context of device `ordinal`: scratch memory (freed with the
/// workbench), copies and fills, reads to the host and event timing. Throws Error naming the
/// driver call.
class DeviceWorkbench {
 public:
  DeviceWorkbench(int ordinal, CUstream stream);
  ~DeviceWorkbench();
  DeviceWorkbench(const DeviceWorkbench&) = delete;
  DeviceWorkbench& operator=(const DeviceWorkbench&) = delete;

  /// A new block of `bytes` (at least 1); its device address.
  [[nodiscard]] std::uint64_t allocate(std::size_t bytes);
  /// Enqueued on the stream.
  void copy(std::uint64_t dst, std::uint64_t src, std::size_t bytes);
  void fill(std::uint64_t dst, unsigned char value, std::size_t bytes);
  /// Waits for the stream, then copies to the host.
  void download(std::uint64_t src, void* dst, std::size_t bytes);
  /// Milliseconds between events recorded before and after what `enqueue` puts on the stream
  /// (waits for the second).
  [[nodiscard]] double time_ms(const std::function<void()>& enqueue);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A kernel of a cubin, loaded into the primary context of a device and unloaded on
/// destruction (the context is retained while it lives). Thread-safe: launch may be called
/// from any thread.
class CudaKernel {
 public:
  /// Retains the primary context of device `ordinal`, loads `cubin` and finds `entry` (its
  /// lowered name). `what` names the kernel in every error ("transpose TILE=32 ... (sm_90)").
  /// Throws Error naming the driver call when any of it fails.
  CudaKernel(int ordinal, const std::string& cubin, const std::string& entry, std::string what);
  ~CudaKernel();
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;

  /// Launches on `stream` (the context is made current on the calling thread first), raising
  /// the kernel's dynamic shared memory limit the first time a launch needs more than 48 KiB.
  /// `args` is cuLaunchKernel's kernelParams; `context` is added to an error's message.
  void launch(const std::array<long long, 3>& grid, const std::array<long long, 3>& block, long long shared_bytes,
              CUstream stream, void** args, const std::string& context);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune
