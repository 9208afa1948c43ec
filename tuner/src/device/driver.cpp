// Loading of the CUDA driver with dlopen, checked calls, and the RAII owners of driver
// handles. Nothing here links against libcuda: a machine without a driver gets a null Api
// and a reason, and everything that needs no GPU keeps working.
#include "device/driver.hpp"

#include <atomic>

#include <dlfcn.h>

#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "common/dynamic_library.hpp"

namespace tiletune::cu {
namespace {

// Two steps so that the argument is macro-expanded first: cuMemAlloc -> "cuMemAlloc_v2".
#define TILETUNE_CU_STRINGIZE_(x) #x
#define TILETUNE_CU_STRINGIZE(x) TILETUNE_CU_STRINGIZE_(x)

// Names of the results most often seen, for when the driver cannot name them itself
// (not loaded, or the toolkit's stub). Only codes that exist in every CUDA 12 header.
const char* builtin_result_name(CUresult r) {
  switch (r) {
#define TILETUNE_CU_NAME(code) \
  case code: return #code;
    TILETUNE_CU_NAME(CUDA_SUCCESS)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_VALUE)
    TILETUNE_CU_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    TILETUNE_CU_NAME(CUDA_ERROR_NOT_INITIALIZED)
    TILETUNE_CU_NAME(CUDA_ERROR_DEINITIALIZED)
    TILETUNE_CU_NAME(CUDA_ERROR_STUB_LIBRARY)
    TILETUNE_CU_NAME(CUDA_ERROR_NO_DEVICE)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_DEVICE)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_IMAGE)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_CONTEXT)
    TILETUNE_CU_NAME(CUDA_ERROR_NO_BINARY_FOR_GPU)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_PTX)
    TILETUNE_CU_NAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_HANDLE)
    TILETUNE_CU_NAME(CUDA_ERROR_NOT_FOUND)
    TILETUNE_CU_NAME(CUDA_ERROR_NOT_READY)
    TILETUNE_CU_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    TILETUNE_CU_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    TILETUNE_CU_NAME(CUDA_ERROR_LAUNCH_TIMEOUT)
    TILETUNE_CU_NAME(CUDA_ERROR_ASSERT)
    TILETUNE_CU_NAME(CUDA_ERROR_HARDWARE_STACK_ERROR)
    TILETUNE_CU_NAME(CUDA_ERROR_ILLEGAL_INSTRUCTION)
    TILETUNE_CU_NAME(CUDA_ERROR_MISALIGNED_ADDRESS)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_ADDRESS_SPACE)
    TILETUNE_CU_NAME(CUDA_ERROR_INVALID_PC)
    TILETUNE_CU_NAME(CUDA_ERROR_LAUNCH_FAILED)
    TILETUNE_CU_NAME(CUDA_ERROR_NOT_SUPPORTED)
    TILETUNE_CU_NAME(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
    TILETUNE_CU_NAME(CUDA_ERROR_UNKNOWN)
#undef TILETUNE_CU_NAME
    default: return nullptr;
  }
}

std::string name_with(const Api* loaded, CUresult r) {
  const char* text = nullptr;
  if (loaded != nullptr && loaded->cuGetErrorName(r, &text) == CUDA_SUCCESS && text != nullptr) { return text; }
  if (const char* builtin = builtin_result_name(r)) return builtin;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

std::string description_with(const Api* loaded, CUresult r) {
  const char* text = nullptr;
  if (loaded != nullptr && loaded->cuGetErrorString(r, &text) == CUDA_SUCCESS && text != nullptr) { return text; }
  return {};
}

// What api() found, fixed after the first call.
using Loaded = ::tiletune::detail::LoadedLibrary<Api>;

const Loaded& loaded() {
  static const Loaded state = [] {
    Loaded l;
    l.api = detail::load_api("libcuda.so.1", l.reason);
    return l;
  }();
  return state;
}

}  // namespace

namespace detail {

std::optional<Api> load_api(const char* library, std::string& reason) {
  ::dlerror();  // clear a stale error
  void* handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    reason = fmt::format("cannot load {}: {}", library, why != nullptr ? why : "unknown dlopen error");
    return std::nullopt;
  }
  Api loaded_api;
  std::string missing;
#define TILETUNE_CU_FN(name) \
  ::tiletune::detail::resolve_symbol(handle, TILETUNE_CU_STRINGIZE(name), loaded_api.name, missing);
#include "device/driver_functions.inc"
#undef TILETUNE_CU_FN
  if (!missing.empty()) {
    reason = fmt::format("{} lacks driver functions tiletune needs (driver too old?): {}", library, missing);
    ::dlclose(handle);
    return std::nullopt;
  }
  if (const CUresult r = loaded_api.cuInit(0); r != CUDA_SUCCESS) {
    const std::string description = description_with(&loaded_api, r);
    reason = fmt::format("cuInit(0) failed: {}{}", name_with(&loaded_api, r),
                         description.empty() ? std::string() : " (" + description + ")");
    ::dlclose(handle);
    return std::nullopt;
  }
  return loaded_api;
}

const Api& require() {
  const Api* a = api();
  if (a == nullptr) throw Error("CUDA driver not available: " + driver_unavailable_reason());
  return *a;
}

void check_nothrow(CUresult r, const char* call, const char* file, int line) noexcept {
  // At process exit the driver may already be torn down; that is not worth a warning.
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_DEINITIALIZED) return;
  try {
    std::fprintf(stderr, "tiletune: warning: %s\n", format_failure(r, call, file, line).c_str());
  } catch (...) { std::fprintf(stderr, "tiletune: warning: %s failed\n", call); }
}

}  // namespace detail

const Api* api() {
  const Loaded& l = loaded();
  return l.api ? &*l.api : nullptr;
}

std::string driver_unavailable_reason() { return loaded().reason; }

int device_count() {
  const Api* a = api();
  if (a == nullptr) return 0;
  int count = 0;
  if (a->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

std::string result_name(CUresult r) { return name_with(api(), r); }

std::string result_description(CUresult r) { return description_with(api(), r); }

std::string format_failure(CUresult r, const char* call, const char* file, int line, std::string_view context) {
  std::string message = fmt::format("{} failed: {}", call, result_name(r));
  if (const std::string description = result_description(r); !description.empty()) {
    message += fmt::format(" ({})", description);
  }
  message += fmt::format(" at {}:{}", file, line);
  if (!context.empty()) message += fmt::format(" [{}]", context);
  return message;
}

void check(CUresult r, const char* call, const char* file, int line, std::string_view context) {
  if (r == CUDA_SUCCESS) return;
  throw DriverError(r, format_failure(r, call, file, line, context));
}

// --- PrimaryContext ------------------------------------------------------------------------

PrimaryContext::PrimaryContext(int ordinal) : ordinal_(ordinal) {
  const std::string where = fmt::format("device {}", ordinal);
  TILETUNE_CU_CTX(cuDeviceGet(&device_, ordinal), where);
  TILETUNE_CU_CTX(cuDevicePrimaryCtxRetain(&context_, device_), where);
  try {
    make_current();
  } catch (...) {
    release();
    throw;
  }
}

PrimaryContext::~PrimaryContext() { release(); }

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      device_(other.device_),
      ordinal_(std::exchange(other.ordinal_, -1)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    release();
    context_ = std::exchange(other.context_, nullptr);
    device_ = other.device_;
    ordinal_ = std::exchange(other.ordinal_, -1);
  }
  return *this;
}

void PrimaryContext::make_current() const {
  TILETUNE_CU_CTX(cuCtxSetCurrent(context_), fmt::format("device {}", ordinal_));
}

void PrimaryContext::synchronize() const { TILETUNE_CU_CTX(cuCtxSynchronize(), fmt::format("device {}", ordinal_)); }

void PrimaryContext::release() noexcept {
  if (context_ == nullptr) return;
  TILETUNE_CU_NOTHROW(cuDevicePrimaryCtxRelease(device_));
  context_ = nullptr;
}

// --- Module --------------------------------------------------------------------------------

Module::Module(std::string_view image, std::string_view context) : context_(context) {
  // cuModuleLoadData reads the image's own size from its ELF/fatbin header; a cubin
  // produced by NVRTC is self-describing, so a pointer is all it takes.
  if (image.empty()) throw Error(fmt::format("cannot load an empty module image [{}]", context_));
  TILETUNE_CU_CTX(cuModuleLoadData(&module_, image.data()), context_);
}

Module::~Module() { unload(); }

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), context_(std::move(other.context_)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    unload();
    module_ = std::exchange(other.module_, nullptr);
    context_ = std::move(other.context_);
  }
  return *this;
}

CUfunction Module::get_function(const std::string& name) const {
  CUfunction f = nullptr;
  const std::string where =
      context_.empty() ? fmt::format("function '{}'", name) : fmt::format("function '{}', {}", name, context_);
  TILETUNE_CU_CTX(cuModuleGetFunction(&f, module_, name.c_str()), where);
  return f;
}

void Module::unload() noexcept {
  if (module_ == nullptr) return;
  TILETUNE_CU_NOTHROW(cuModuleUnload(module_));
  module_ = nullptr;
}

// --- DeviceBuffer --------------------------------------------------------------------------

MappedFlags::MappedFlags() {
  void* host = nullptr;
  TILETUNE_CU_CTX(cuMemHostAlloc(&host, 2 * sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP), "2 mapped flags");
  host_ = static_cast<int*>(host);
  host_[0] = host_[1] = 0;
  if (const CUresult r = detail::require().cuMemHostGetDevicePointer(&device_, host, 0); r != CUDA_SUCCESS) {
    TILETUNE_CU_NOTHROW(cuMemFreeHost(host));
    throw DriverError(r, "the device address of 2 mapped flags");
  }
}

MappedFlags::~MappedFlags() { TILETUNE_CU_NOTHROW(cuMemFreeHost(host_)); }

int MappedFlags::load(int i) const noexcept { return std::atomic_ref<int>(host_[i]).load(std::memory_order_acquire); }

void MappedFlags::store(int i, int value) noexcept {
  std::atomic_ref<int>(host_[i]).store(value, std::memory_order_release);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : size_(bytes) {
  if (bytes == 0) return;  // cuMemAlloc rejects 0 bytes; an empty buffer owns nothing
  TILETUNE_CU_CTX(cuMemAlloc(&ptr_, bytes), fmt::format("{} bytes", bytes));
}

DeviceBuffer::~DeviceBuffer() { free(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    free();
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void copy_to_device(CUdeviceptr dst, const void* src, std::size_t bytes, const std::string& what) {
  if (bytes == 0) return;
  TILETUNE_CU_CTX(cuMemcpyHtoD(dst, src, bytes), what);
  TILETUNE_CU_CTX(cuCtxSynchronize(), what + " (waiting for the copy to land)");
}

void DeviceBuffer::upload(const void* src, std::size_t bytes) {
  if (bytes > size_) { throw Error(fmt::format("DeviceBuffer::upload: {} bytes into a buffer of {}", bytes, size_)); }
  copy_to_device(ptr_, src, bytes, fmt::format("{} bytes", bytes));
}

void DeviceBuffer::download(void* dst, std::size_t bytes) const {
  if (bytes > size_) { throw Error(fmt::format("DeviceBuffer::download: {} bytes from a buffer of {}", bytes, size_)); }
  if (bytes == 0) return;
  TILETUNE_CU_CTX(cuMemcpyDtoH(dst, ptr_, bytes), fmt::format("{} bytes", bytes));
}

void DeviceBuffer::fill_async(unsigned char value, CUstream stream) {
  if (size_ == 0) return;
  TILETUNE_CU_CTX(cuMemsetD8Async(ptr_, value, size_, stream), fmt::format("{} bytes", size_));
}

void DeviceBuffer::free() noexcept {
  if (ptr_ == 0) return;
  TILETUNE_CU_NOTHROW(cuMemFree(ptr_));
  ptr_ = 0;
  size_ = 0;
}

// --- Event ---------------------------------------------------------------------------------

Event::Event(unsigned flags) { TILETUNE_CU(cuEventCreate(&event_, flags)); }

Event::~Event() { destroy(); }

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy();
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(CUstream stream) { TILETUNE_CU(cuEventRecord(event_, stream)); }

void Event::synchronize() const { TILETUNE_CU(cuEventSynchronize(event_)); }

bool Event::done() const {
  const CUresult r = detail::require().cuEventQuery(event_);
  if (r == CUDA_ERROR_NOT_READY) return false;
  check(r, "cuEventQuery(event_)", __FILE__, __LINE__);
  return true;
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  float ms = 0.0f;
  TILETUNE_CU(cuEventElapsedTime(&ms, start.event_, end.event_));
  return ms;
}

void Event::destroy() noexcept {
  if (event_ == nullptr) return;
  TILETUNE_CU_NOTHROW(cuEventDestroy(event_));
  event_ = nullptr;
}

// --- Stream --------------------------------------------------------------------------------

Stream::Stream(unsigned flags) { TILETUNE_CU(cuStreamCreate(&stream_, flags)); }

Stream::~Stream() { destroy(); }

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy();
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const { TILETUNE_CU(cuStreamSynchronize(stream_)); }

void Stream::destroy() noexcept {
  if (stream_ == nullptr) return;
  TILETUNE_CU_NOTHROW(cuStreamDestroy(stream_));
  stream_ = nullptr;
}

// --- functions -----------------------------------------------------------------------------

int function_attribute(CUfunction f, CUfunction_attribute attribute) {
  int value = 0;
  TILETUNE_CU_CTX(cuFuncGetAttribute(&value, attribute, f), fmt::format("attribute {}", static_cast<int>(attribute)));
  return value;
}

void set_max_dynamic_shared_bytes(CUfunction f, int bytes) {
  TILETUNE_CU_CTX(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
                  fmt::format("{} bytes", bytes));
}

int max_active_blocks_per_sm(CUfunction f, int block_threads, std::size_t dynamic_shared_bytes) {
  int blocks = 0;
  TILETUNE_CU_CTX(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, block_threads, dynamic_shared_bytes),
                  fmt::format("{} threads, {} B dynamic shared", block_threads, dynamic_shared_bytes));
  return blocks;
}

}  // namespace tiletune::cu
