// NVML loaded at run time with dlopen (never linked, like the CUDA driver in device/driver.cpp), so
// that tiletune runs where there is no NVIDIA driver and the tests run against a fake library.
// Only the few entry points the energy measurement, the clock check and the trial's conditions
// (memory clock, temperature) need are resolved; the clock and temperature ones are optional (a
// library without them gives no such readings, not an error). The types and codes are
// those of NVML's public ABI (nvml.h is not part of the CUDA toolkit, so they are declared here).
#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

#include "common/dynamic_library.hpp"
#include "tiletune/energy.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

using nvmlReturn = int;
struct NvmlDeviceOpaque;
using nvmlDevice = NvmlDeviceOpaque*;

constexpr nvmlReturn kNvmlSuccess = 0;
constexpr nvmlReturn kNvmlNotSupported = 3;

struct NvmlApi {
  nvmlReturn (*init)() = nullptr;                                         // nvmlInit_v2
  nvmlReturn (*shutdown)() = nullptr;                                     // nvmlShutdown
  const char* (*error_string)(nvmlReturn) = nullptr;                      // nvmlErrorString
  nvmlReturn (*handle_by_uuid)(const char*, nvmlDevice*) = nullptr;       // nvmlDeviceGetHandleByUUID
  nvmlReturn (*total_energy)(nvmlDevice, unsigned long long*) = nullptr;  // nvmlDeviceGetTotalEnergyConsumption
  nvmlReturn (*power_usage)(nvmlDevice, unsigned*) = nullptr;             // nvmlDeviceGetPowerUsage
  nvmlReturn (*name)(nvmlDevice, char*, unsigned) = nullptr;              // nvmlDeviceGetName
  nvmlReturn (*clock_info)(nvmlDevice, int, unsigned*) = nullptr;         // nvmlDeviceGetClockInfo (optional)
  // nvmlDeviceGetCurrentClocksEventReasons, or its older name ...ClocksThrottleReasons (optional)
  nvmlReturn (*clock_reasons)(nvmlDevice, unsigned long long*) = nullptr;
  nvmlReturn (*temperature)(nvmlDevice, int, unsigned*) = nullptr;  // nvmlDeviceGetTemperature (optional)
};

constexpr int kNvmlClockSm = 1;       // NVML_CLOCK_SM
constexpr int kNvmlClockMemory = 2;   // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

}  // namespace

std::string nvml_library_name() {
  const char* env = std::getenv("TILETUNE_NVML_LIBRARY");
  return env && *env ? std::string(env) : std::string("libnvidia-ml.so.1");
}

struct NvmlEnergySource::Impl {
  void* handle = nullptr;
  NvmlApi api;
  nvmlDevice device = nullptr;
  bool initialized = false;
  bool energy_supported = true;
  bool power_supported = true;
  std::string library;

  ~Impl() {
    if (initialized) (void)api.shutdown();
    if (handle) ::dlclose(handle);
  }

  [[nodiscard]] std::string describe(nvmlReturn r) const {
    const char* text = api.error_string ? api.error_string(r) : nullptr;
    return text ? fmt::format("{} (NVML code {})", text, r) : fmt::format("NVML code {}", r);
  }
};

NvmlEnergySource::NvmlEnergySource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NvmlEnergySource::~NvmlEnergySource() = default;

std::unique_ptr<NvmlEnergySource> NvmlEnergySource::open(const std::string& device_uuid, std::string& why,
                                                         const std::string& library) {
  auto impl = std::make_unique<Impl>();
  impl->library = library.empty() ? nvml_library_name() : library;
  ::dlerror();
  impl->handle = ::dlopen(impl->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle) {
    const char* e = ::dlerror();
    why = fmt::format("cannot load {}: {}", impl->library, e ? e : "unknown dlopen error");
    return nullptr;
  }
  std::string missing;
  NvmlApi& a = impl->api;
  detail::resolve_symbol(impl->handle, "nvmlInit_v2", a.init, missing);
  detail::resolve_symbol(impl->handle, "nvmlShutdown", a.shutdown, missing);
  detail::resolve_symbol(impl->handle, "nvmlErrorString", a.error_string, missing);
  detail::resolve_symbol(impl->handle, "nvmlDeviceGetHandleByUUID", a.handle_by_uuid, missing);
  detail::resolve_symbol(impl->handle, "nvmlDeviceGetTotalEnergyConsumption", a.total_energy, missing);
  detail::resolve_symbol(impl->handle, "nvmlDeviceGetPowerUsage", a.power_usage, missing);
  detail::resolve_symbol(impl->handle, "nvmlDeviceGetName", a.name, missing);
  std::string optional_missing;  // the clock functions: without them, no clock check
  detail::resolve_symbol(impl->handle, "nvmlDeviceGetClockInfo", a.clock_info, optional_missing);
  if (!detail::resolve_symbol(impl->handle, "nvmlDeviceGetCurrentClocksEventReasons", a.clock_reasons,
                              optional_missing))
    detail::resolve_symbol(impl->handle, "nvmlDeviceGetCurrentClocksThrottleReasons", a.clock_reasons,
                           optional_missing);
  detail::resolve_symbol(impl->handle, "nvmlDeviceGetTemperature", a.temperature, optional_missing);
  if (!missing.empty()) {
    why = fmt::format("{} lacks NVML functions tiletune needs: {}", impl->library, missing);
    return nullptr;
  }
  if (const nvmlReturn r = a.init(); r != kNvmlSuccess) {
    why = fmt::format("nvmlInit_v2 failed: {}", impl->describe(r));
    return nullptr;
  }
  impl->initialized = true;
  if (const nvmlReturn r = a.handle_by_uuid(device_uuid.c_str(), &impl->device); r != kNvmlSuccess) {
    why = fmt::format("nvmlDeviceGetHandleByUUID({}) failed: {}", device_uuid, impl->describe(r));
    return nullptr;
  }
  return std::unique_ptr<NvmlEnergySource>(new NvmlEnergySource(std::move(impl)));
}

std::optional<std::uint64_t> NvmlEnergySource::total_energy_mj() {
  if (!impl_->energy_supported) return std::nullopt;
  unsigned long long mj = 0;
  const nvmlReturn r = impl_->api.total_energy(impl_->device, &mj);
  if (r == kNvmlNotSupported) {
    impl_->energy_supported = false;
    return std::nullopt;
  }
  if (r != kNvmlSuccess) throw Error(fmt::format("nvmlDeviceGetTotalEnergyConsumption failed: {}", impl_->describe(r)));
  return static_cast<std::uint64_t>(mj);
}

std::optional<unsigned> NvmlEnergySource::power_mw() {
  if (!impl_->power_supported) return std::nullopt;
  unsigned mw = 0;
  const nvmlReturn r = impl_->api.power_usage(impl_->device, &mw);
  if (r == kNvmlNotSupported) {
    impl_->power_supported = false;
    return std::nullopt;
  }
  if (r != kNvmlSuccess) throw Error(fmt::format("nvmlDeviceGetPowerUsage failed: {}", impl_->describe(r)));
  return mw;
}

std::optional<ClockReading> NvmlEnergySource::sm_clock() {
  if (!impl_->api.clock_info) return std::nullopt;
  ClockReading reading;
  if (impl_->api.clock_info(impl_->device, kNvmlClockSm, &reading.sm_mhz) != kNvmlSuccess) return std::nullopt;
  unsigned long long reasons = 0;
  if (impl_->api.clock_reasons && impl_->api.clock_reasons(impl_->device, &reasons) == kNvmlSuccess)
    reading.event_reasons = reasons;
  return reading;
}

std::optional<unsigned> NvmlEnergySource::memory_clock_mhz() {
  unsigned mhz = 0;
  if (!impl_->api.clock_info || impl_->api.clock_info(impl_->device, kNvmlClockMemory, &mhz) != kNvmlSuccess)
    return std::nullopt;
  return mhz;
}

std::optional<unsigned> NvmlEnergySource::temperature_c() {
  unsigned celsius = 0;
  if (!impl_->api.temperature || impl_->api.temperature(impl_->device, kNvmlTemperatureGpu, &celsius) != kNvmlSuccess)
    return std::nullopt;
  return celsius;
}

std::string NvmlEnergySource::device_name() const {
  char name[96] = {};
  if (impl_->api.name(impl_->device, name, sizeof name) != kNvmlSuccess) return "?";
  return name;
}

}  // namespace tiletune
