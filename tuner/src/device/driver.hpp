// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so that tiletune runs
// on machines without a GPU driver, plus checked calls and move-only RAII owners of every
// driver handle (context, module, device memory, event, stream).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tiletune/error.hpp"

namespace tiletune::cu {

/// Pointers to the driver entry points tiletune uses (names as cuda.h maps them, e.g.
/// cuMemAlloc is cuMemAlloc_v2).
struct Api {
#define TILETUNE_CU_FN(name) decltype(&::name) name = nullptr;
#include "device/driver_functions.inc"
#undef TILETUNE_CU_FN
};

/// The loaded driver, or nullptr when libcuda.so.1 cannot be loaded or cuInit fails.
/// Loaded once per process (thread-safe); why it failed is in driver_unavailable_reason().
[[nodiscard]] const Api* api();
[[nodiscard]] std::string driver_unavailable_reason();
/// Number of CUDA devices (0 without a driver).
[[nodiscard]] int device_count();

/// "CUDA_ERROR_ILLEGAL_ADDRESS"
[[nodiscard]] std::string result_name(CUresult r);
/// "an illegal memory access was encountered" (empty without a driver).
[[nodiscard]] std::string result_description(CUresult r);

/// A failed driver call: carries the CUresult and names the call, file and line.
class DriverError : public Error {
 public:
  DriverError(CUresult result, std::string message) : Error(std::move(message)), result_(result) {}
  [[nodiscard]] CUresult result() const noexcept { return result_; }

 private:
  CUresult result_;
};

/// Throws DriverError("cuXxx(...) failed: CUDA_ERROR_... (description) at file:line [context]").
void check(CUresult r, const char* call, const char* file, int line, std::string_view context = {});

/// The message check() throws with, for a result that is not CUDA_SUCCESS.
[[nodiscard]] std::string format_failure(CUresult r, const char* call, const char* file, int line,
                                         std::string_view context = {});

}  // namespace tiletune::cu

/// Calls a driver function through the loaded Api and throws DriverError on failure:
/// TILETUNE_CU(cuMemAlloc(&p, n)). Throws when the driver is not available.
#define TILETUNE_CU(call) ::tiletune::cu::check(::tiletune::cu::detail::require().call, #call, __FILE__, __LINE__)
#define TILETUNE_CU_CTX(call, context) \
  ::tiletune::cu::check(::tiletune::cu::detail::require().call, #call, __FILE__, __LINE__, context)
/// For destructors: never throws; a failure (other than a driver already shut down at
/// process exit) is reported on stderr.
#define TILETUNE_CU_NOTHROW(call)                                                            \
  do {                                                                                       \
    if (const ::tiletune::cu::Api* tiletune_api_ = ::tiletune::cu::api()) {                  \
      ::tiletune::cu::detail::check_nothrow(tiletune_api_->call, #call, __FILE__, __LINE__); \
    }                                                                                        \
  } while (false)

namespace tiletune::cu::detail {
/// The Api, or throws Error("CUDA driver not available: ...").
const Api& require();
/// Reports a failure on stderr instead of throwing.
void check_nothrow(CUresult r, const char* call, const char* file, int line) noexcept;

/// Loads the driver from `library` (a name for dlopen or a path) and calls cuInit(0); on
/// failure returns nullopt and sets `reason`. api() is load_api("libcuda.so.1") done once;
/// this entry exists so that tests can resolve every symbol against the toolkit's stub.
/// The library stays loaded when this succeeds (the Api points into it).
[[nodiscard]] std::optional<Api> load_api(const char* library, std::string& reason);
}  // namespace tiletune::cu::detail

namespace tiletune::cu {

/// The primary context of one device, retained for the owner's lifetime and made current
/// on the constructing thread (every other owner below needs a current context).
class PrimaryContext {
 public:
  explicit PrimaryContext(int ordinal);
  ~PrimaryContext();
  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  /// Makes this context current on the calling thread.
  void make_current() const;
  /// Waits for all work in the context (cuCtxSynchronize).
  void synchronize() const;
  [[nodiscard]] CUcontext get() const noexcept { return context_; }
  [[nodiscard]] CUdevice device() const noexcept { return device_; }
  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }

 private:
  void release() noexcept;
  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  int ordinal_ = -1;
};

/// A loaded module (cuModuleLoadData of a cubin image), unloaded on destruction.
class Module {
 public:
  /// `image` is a cubin (ELF) or fatbin; `context` names it in errors ("transpose TILE=32 ...").
  explicit Module(std::string_view image, std::string_view context = {});
  ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The kernel `name` (a lowered/mangled or extern "C" name); the error names it.
  [[nodiscard]] CUfunction get_function(const std::string& name) const;
  [[nodiscard]] CUmodule get() const noexcept { return module_; }

 private:
  void unload() noexcept;
  CUmodule module_ = nullptr;
  std::string context_;
};

/// Copies host memory to the device and returns once it is there. cuMemcpyHtoD from pageable
/// memory may return before its DMA reaches the device, and our kernels run on non-blocking
/// streams, which do not wait for it: on the H200 a vector_add reference read zeros from the
/// end of an 800 KB input uploaded so (test_device_reference_gpu). So the context is
/// synchronized after the copy.
void copy_to_device(CUdeviceptr dst, const void* src, std::size_t bytes, const std::string& what);

/// Device memory (cuMemAlloc/cuMemFree). A zero-byte buffer holds no allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] CUdeviceptr ptr() const noexcept { return ptr_; }

  /// Synchronous copies of the first `bytes` bytes (throws when bytes > size()); an upload
  /// has landed when it returns (copy_to_device).
  void upload(const void* src, std::size_t bytes);
  void download(void* dst, std::size_t bytes) const;
  /// Sets every byte to `value`, ordered on `stream` (nullptr: the default stream).
  void fill_async(unsigned char value, CUstream stream = nullptr);

 private:
  void free() noexcept;
  CUdeviceptr ptr_ = 0;
  std::size_t size_ = 0;
};

/// Two ints of pinned host memory that the device reads and writes where they are
/// (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP): the host's signal to a kernel that waits
/// for it, and the kernel's answer. The context must be current.
class MappedFlags {
 public:
  MappedFlags();
  ~MappedFlags();
  MappedFlags(const MappedFlags&) = delete;
  MappedFlags& operator=(const MappedFlags&) = delete;

  /// Flag i (0 or 1), as the host sees it.
  [[nodiscard]] int load(int i) const noexcept;
  /// Sets flag i, visible to the device once it returns (a release store).
  void store(int i, int value) noexcept;
  /// Where the device sees the two flags.
  [[nodiscard]] CUdeviceptr device() const noexcept { return device_; }

 private:
  int* host_ = nullptr;
  CUdeviceptr device_ = 0;
};

/// A CUDA event; timing is on unless CU_EVENT_DISABLE_TIMING is given.
class Event {
 public:
  explicit Event(unsigned flags = CU_EVENT_DEFAULT);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(CUstream stream = nullptr);
  void synchronize() const;
  /// Whether the work before the last record has finished (cuEventQuery), without waiting.
  [[nodiscard]] bool done() const;
  /// Milliseconds between two recorded (and completed) events.
  [[nodiscard]] static float elapsed_ms(const Event& start, const Event& end);
  [[nodiscard]] CUevent get() const noexcept { return event_; }

 private:
  void destroy() noexcept;
  CUevent event_ = nullptr;
};

/// A CUDA stream; non-blocking with respect to the legacy default stream by default.
class Stream {
 public:
  explicit Stream(unsigned flags = CU_STREAM_NON_BLOCKING);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void synchronize() const;
  [[nodiscard]] CUstream get() const noexcept { return stream_; }

 private:
  void destroy() noexcept;
  CUstream stream_ = nullptr;
};

/// cuFuncGetAttribute, checked.
[[nodiscard]] int function_attribute(CUfunction f, CUfunction_attribute attribute);
/// Raises the dynamic shared memory a kernel may ask for (needed above 48 KiB).
void set_max_dynamic_shared_bytes(CUfunction f, int bytes);
/// The driver's occupancy: cuOccupancyMaxActiveBlocksPerMultiprocessor, checked.
[[nodiscard]] int max_active_blocks_per_sm(CUfunction f, int block_threads, std::size_t dynamic_shared_bytes);

}  // namespace tiletune::cu
