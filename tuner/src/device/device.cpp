// Reading the devices' identities and limits from the driver's attributes (no context is
// created: cuDeviceGetAttribute and friends need none).
#include "tiletune/device.hpp"

#include <fmt/format.h>

#include "device/driver.hpp"

namespace tiletune {
namespace {

int attribute(CUdevice device, CUdevice_attribute which, const char* what, int ordinal) {
  int value = 0;
  TILETUNE_CU_CTX(cuDeviceGetAttribute(&value, which, device), fmt::format("{} of device {}", what, ordinal));
  return value;
}

DeviceInfo read_device(int ordinal, int driver_version) {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.driver_version = driver_version;
  const std::string where = fmt::format("device {}", ordinal);

  CUdevice device = 0;
  TILETUNE_CU_CTX(cuDeviceGet(&device, ordinal), where);

  char name[256] = {};
  TILETUNE_CU_CTX(cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, device), where);
  d.name = name;

  CUuuid uuid{};
  TILETUNE_CU_CTX(cuDeviceGetUuid(&uuid, device), where);
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(uuid.bytes[i]);
  d.uuid = format_gpu_uuid(bytes);

  std::size_t total = 0;
  TILETUNE_CU_CTX(cuDeviceTotalMem(&total, device), where);
  d.total_memory = total;

  auto get = [&](CUdevice_attribute which, const char* what) { return attribute(device, which, what, ordinal); };
  auto get_size = [&](CUdevice_attribute which, const char* what) {
    return static_cast<std::size_t>(get(which, what));
  };
  d.cc_major = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major");
  d.cc_minor = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor");
  d.sm_count = get(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  d.l2_bytes = get_size(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
  d.shared_per_block = get_size(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory per block");
  d.shared_per_block_optin =
      get_size(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory per block");
  d.shared_per_sm = get_size(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared memory per SM");
  d.reserved_shared_per_block =
      get_size(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, "reserved shared memory per block");
  d.regs_per_block = get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "registers per block");
  d.regs_per_sm = get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, "registers per SM");
  d.max_threads_per_block = get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  d.max_threads_per_sm = get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "threads per SM");
  d.max_blocks_per_sm = get(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, "blocks per SM");
  d.warp_size = get(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size");
  d.max_block_dim = {get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "max block x"),
                     get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "max block y"),
                     get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "max block z")};
  d.max_grid_dim = {get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "max grid x"),
                    get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "max grid y"),
                    get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "max grid z")};
  // Clock rates are informational and deprecated in newer toolkits: a driver that refuses
  // them leaves 0 rather than failing the whole listing.
  auto get_optional = [&](CUdevice_attribute which) {
    int value = 0;
    if (cu::detail::require().cuDeviceGetAttribute(&value, which, device) != CUDA_SUCCESS) value = 0;
    return value;
  };
  d.sm_clock_khz = get_optional(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  d.memory_clock_khz = get_optional(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  d.memory_bus_width = get(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width");
  d.pci_domain = get(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI domain");
  d.pci_bus = get(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI bus");
  d.pci_device = get(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI device");
  return d;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> devices;
  if (cu::api() == nullptr) return devices;  // no driver: nothing to list, not an error
  int count = 0;
  TILETUNE_CU(cuDeviceGetCount(&count));
  int driver_version = 0;
  TILETUNE_CU(cuDriverGetVersion(&driver_version));
  devices.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) devices.push_back(read_device(i, driver_version));
  return devices;
}

DeviceLimits device_limits(const DeviceInfo& device) {
  DeviceLimits l;
  l.name = device.name;
  l.cc_major = device.cc_major;
  l.cc_minor = device.cc_minor;
  l.sm_count = device.sm_count;
  l.max_threads_per_block = device.max_threads_per_block;
  for (int i = 0; i < 3; ++i) {
    l.max_block_dim[i] = device.max_block_dim[static_cast<std::size_t>(i)];
    l.max_grid_dim[i] = device.max_grid_dim[static_cast<std::size_t>(i)];
  }
  l.max_threads_per_sm = device.max_threads_per_sm;
  l.max_blocks_per_sm = device.max_blocks_per_sm;
  l.regs_per_block = device.regs_per_block;
  l.regs_per_sm = device.regs_per_sm;
  l.warp_size = device.warp_size;
  l.shared_per_block = device.shared_per_block;
  l.shared_per_block_optin = device.shared_per_block_optin;
  l.shared_per_sm = device.shared_per_sm;
  l.reserved_shared_per_block = device.reserved_shared_per_block;
  l.sm_clock_khz = device.sm_clock_khz;
  l.l2_bytes = device.l2_bytes;
  return l;
}

std::string format_driver_version(int version) {
  // cuDriverGetVersion encodes 1000 * major + 10 * minor.
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

std::string format_gpu_uuid(const std::array<unsigned char, 16>& b) {
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
      "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

}  // namespace tiletune
