// QueryDevice: parsing a device spec ("GPU-...", "sm_90", "9.0", a name) and reading the live
// device through the CUDA driver, loaded with dlopen so that the query library never links
// libcuda (a program that links it runs on machines without a GPU). The few driver types are
// declared here rather than taken from cuda.h, so the library builds without the CUDA headers.
#include <dlfcn.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <mutex>

#include "tiletune/query.hpp"

namespace tiletune {
namespace {

// From cuda.h (stable driver ABI).
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  char bytes[16];
};
constexpr int cu_attribute_cc_major = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int cu_attribute_cc_minor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

struct Driver {
  void* handle = nullptr;
  std::string error;  // why the driver is unusable
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
};

template <class F>
bool load(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(handle, name));
  return fn != nullptr;
}

// Loaded and initialized once per process; never unloaded (the driver does not support that well).
const Driver& driver() {
  static const Driver d = [] {
    Driver d;
    d.handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d.handle) {
      const char* why = ::dlerror();
      d.error = std::string("cannot load the CUDA driver (libcuda.so.1): ") + (why ? why : "unknown dlopen error");
      return d;
    }
    bool ok = load(d.handle, "cuInit", d.init) && load(d.handle, "cuDeviceGet", d.device_get) &&
              load(d.handle, "cuDeviceGetCount", d.device_get_count) &&
              load(d.handle, "cuDeviceGetName", d.device_get_name) &&
              load(d.handle, "cuDeviceGetAttribute", d.device_get_attribute);
    // cuda.h maps cuDeviceGetUuid to the _v2 symbol (same struct, same bytes) since CUDA 11.4.
    ok = ok && (load(d.handle, "cuDeviceGetUuid_v2", d.device_get_uuid) ||
                load(d.handle, "cuDeviceGetUuid", d.device_get_uuid));
    (void)load(d.handle, "cuGetErrorName", d.get_error_name);
    if (!ok) {
      d.error = "the CUDA driver (libcuda.so.1) lacks a function the query library needs";
      return d;
    }
    if (CUresult rc = d.init(0); rc != 0) {
      const char* name = nullptr;
      if (d.get_error_name) d.get_error_name(rc, &name);
      d.error = "cuInit failed: " + (name ? std::string(name) : "CUresult " + std::to_string(rc));
    }
    return d;
  }();
  return d;
}

std::string cu_error(const Driver& d, CUresult rc, const char* call) {
  const char* name = nullptr;
  if (d.get_error_name) d.get_error_name(rc, &name);
  return std::string(call) + " failed: " + (name ? std::string(name) : "CUresult " + std::to_string(rc));
}

std::string format_uuid(const CUuuid& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char s[48];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return s;
}

// "90" → 9.0, "89" → 8.9, "100" → 10.0, "120a" → 12.0.
bool parse_sm(std::string_view digits, int& major, int& minor) {
  while (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) digits.remove_suffix(1);
  if (digits.size() < 2 || digits.size() > 3) return false;
  int v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size()) return false;
  major = v / 10;
  minor = v % 10;
  return major > 0;
}

bool parse_dotted(std::string_view s, int& major, int& minor) {
  auto dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  auto a = s.substr(0, dot);
  auto b = s.substr(dot + 1);
  auto num = [](std::string_view t, int& out) {
    if (t.empty()) return false;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && p == t.data() + t.size();
  };
  return num(a, major) && num(b, minor) && major > 0 && minor >= 0 && minor < 10;
}

}  // namespace

QueryDevice QueryDevice::parse(std::string_view spec) {
  while (!spec.empty() && std::isspace(static_cast<unsigned char>(spec.front()))) spec.remove_prefix(1);
  while (!spec.empty() && std::isspace(static_cast<unsigned char>(spec.back()))) spec.remove_suffix(1);
  QueryDevice d;
  if (spec.empty()) return d;
  if (spec.starts_with("GPU-") || spec.starts_with("MIG-")) {
    d.uuid = std::string(spec);
    return d;
  }
  int major = 0;
  int minor = 0;
  for (std::string_view prefix : {"sm_", "sm", "compute_"}) {
    if (spec.starts_with(prefix) && parse_sm(spec.substr(prefix.size()), major, minor)) {
      d.cc_major = major;
      d.cc_minor = minor;
      return d;
    }
  }
  if (parse_dotted(spec, major, minor)) {
    d.cc_major = major;
    d.cc_minor = minor;
    return d;
  }
  d.name = std::string(spec);
  return d;
}

std::optional<QueryDevice> QueryDevice::detect(int ordinal, std::string* error) noexcept {
  auto fail = [&](const std::string& why) -> std::optional<QueryDevice> {
    if (error) {
      try {
        *error = why;
      } catch (...) {}
    }
    return std::nullopt;
  };
  try {
    const Driver& d = driver();
    if (!d.error.empty()) return fail(d.error);
    int count = 0;
    if (CUresult rc = d.device_get_count(&count); rc != 0) return fail(cu_error(d, rc, "cuDeviceGetCount"));
    if (ordinal < 0 || ordinal >= count)
      return fail("no CUDA device " + std::to_string(ordinal) + " (the driver sees " + std::to_string(count) + ")");
    CUdevice dev = 0;
    if (CUresult rc = d.device_get(&dev, ordinal); rc != 0) return fail(cu_error(d, rc, "cuDeviceGet"));
    QueryDevice out;
    char name[256] = {};
    if (CUresult rc = d.device_get_name(name, static_cast<int>(sizeof name) - 1, dev); rc != 0)
      return fail(cu_error(d, rc, "cuDeviceGetName"));
    out.name = name;
    CUuuid uuid{};
    if (CUresult rc = d.device_get_uuid(&uuid, dev); rc != 0) return fail(cu_error(d, rc, "cuDeviceGetUuid"));
    out.uuid = format_uuid(uuid);
    if (CUresult rc = d.device_get_attribute(&out.cc_major, cu_attribute_cc_major, dev); rc != 0)
      return fail(cu_error(d, rc, "cuDeviceGetAttribute(compute capability major)"));
    if (CUresult rc = d.device_get_attribute(&out.cc_minor, cu_attribute_cc_minor, dev); rc != 0)
      return fail(cu_error(d, rc, "cuDeviceGetAttribute(compute capability minor)"));
    return out;
  } catch (...) { return fail("reading the CUDA device failed (out of memory?)"); }
}

}  // namespace tiletune
