// The input generators on the device (gpu label): every kind gives the bits the host gives
// (normal within an ulp: log and cos may differ in the last bit), CSR columns generated from
// offsets on the device; and the setup time of a 1 GiB problem, generated on the host and
// uploaded (what the worker did before) against generated on the GPU (what it does now), in
// the same run, printed.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "device/driver.hpp"
#include "worker/generators.hpp"
#include "worker/worker_kernels.hpp"
#include "worker_device.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/reference.hpp"
#include "tiletune/runner.hpp"

namespace tiletune {
namespace {

using testing::Clock;
using testing::ms_since;
using Device = testing::WorkerDevice;
Device& device() { return testing::worker_device(); }

BufferPlan plan(ElementType type, std::uint64_t count, BufferInit kind, double a = 0, double b = 0) {
  BufferPlan p;
  p.name = "x";
  p.type = type;
  p.count = count;
  p.init.kind = kind;
  p.init.a = a;
  p.init.b = b;
  return p;
}

// Generates `p` on the device (offsets: a device buffer for csr_columns) and downloads it.
std::vector<std::byte> on_device(const BufferPlan& p, std::uint64_t seed, const cu::DeviceBuffer* offsets = nullptr,
                                 ElementType offsets_type = ElementType::i32) {
  Device& d = device();
  cu::DeviceBuffer out(p.count * element_size(p.type));
  tiletune_gen::Params params = generator_params(p.name, p.type, p.count, p.init, seed);
  if (offsets != nullptr) {
    params.offsets = reinterpret_cast<const void*>(offsets->ptr());
    params.offsets_type = static_cast<int>(offsets_type);
  }
  d.kernels.generate(out.ptr(), params, d.stream.get());
  d.stream.synchronize();
  std::vector<std::byte> bytes(out.size());
  out.download(bytes.data(), bytes.size());
  return bytes;
}

TEST(DeviceInputs, EveryKindGivesTheHostsBits) {
  constexpr std::uint64_t n = 1 << 20;
  for (const ElementType type : kElementTypes) {
    for (const BufferInit kind : {BufferInit::random, BufferInit::iota, BufferInit::constant, BufferInit::uniform}) {
      SCOPED_TRACE(::testing::Message() << element_type_name(type) << " " << static_cast<int>(kind));
      const bool integer = !is_floating(type);
      const BufferPlan p = plan(type, n, kind, integer ? 3 : 0.25, integer ? 100 : 4.5);
      EXPECT_TRUE(make_host_buffer(p, 99).bytes == on_device(p, 99));
    }
  }
  for (const ElementType type : {ElementType::f32, ElementType::f64}) {
    const BufferPlan p = plan(type, n, BufferInit::normal, 1, 2);
    const HostBuffer host = make_host_buffer(p, 99);
    const std::vector<std::byte> gpu = on_device(p, 99);
    double worst = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      double h, g;
      if (type == ElementType::f32) {
        float hf, gf;
        std::memcpy(&hf, host.bytes.data() + 4 * i, 4);
        std::memcpy(&gf, gpu.data() + 4 * i, 4);
        h = hf;
        g = gf;
      } else {
        std::memcpy(&h, host.bytes.data() + 8 * i, 8);
        std::memcpy(&g, gpu.data() + 8 * i, 8);
      }
      worst = std::max(worst, std::abs(h - g) / std::max(1.0, std::abs(h)));
    }
    EXPECT_LT(worst, type == ElementType::f32 ? 2e-7 : 1e-14) << element_type_name(type);
  }
}

TEST(DeviceInputs, CsrOffsetsAndColumnsMatchTheHost) {
  for (const ElementType type : {ElementType::i32, ElementType::u32, ElementType::i64, ElementType::u64}) {
    SCOPED_TRACE(element_type_name(type));
    BufferPlan offsets = plan(type, 4097, BufferInit::csr_offsets);
    offsets.init.rows = 4096;
    offsets.init.columns = 100000;
    offsets.init.nnz = 4096 * 37;
    const HostBuffer host_offsets = make_host_buffer(offsets, 5);
    const std::vector<std::byte> gpu_offsets = on_device(offsets, 5);
    ASSERT_TRUE(host_offsets.bytes == gpu_offsets);
    BufferPlan columns = plan(type, offsets.init.nnz, BufferInit::csr_columns);
    columns.init = offsets.init;
    columns.init.kind = BufferInit::csr_columns;
    columns.init.source = 0;
    cu::DeviceBuffer device_offsets(gpu_offsets.size());
    device_offsets.upload(gpu_offsets.data(), gpu_offsets.size());
    EXPECT_TRUE(make_host_buffer(columns, 5, &host_offsets).bytes == on_device(columns, 5, &device_offsets, type));
  }
}

// The setup of a 1 GiB input (2^28 floats, `random`): before, generated on the host and
// uploaded; now, generated on the device. Both give the same bits.
TEST(DeviceInputs, OneGibibyteSetupBeforeAndAfterGpuGeneration) {
  constexpr std::uint64_t n = std::uint64_t{1} << 28;
  const BufferPlan p = plan(ElementType::f32, n, BufferInit::random);
  Device& d = device();
  cu::DeviceBuffer host_path(n * 4);
  auto t = Clock::now();
  const HostBuffer host = make_host_buffer(p, 1);
  const double host_generate_ms = ms_since(t);
  host_path.upload(host.bytes.data(), host.bytes.size());
  const double host_total_ms = ms_since(t);

  cu::DeviceBuffer gpu_path(n * 4);
  t = Clock::now();
  d.kernels.generate(gpu_path.ptr(), generator_params(p.name, p.type, p.count, p.init, 1), d.stream.get());
  d.stream.synchronize();
  const double gpu_ms = ms_since(t);

  std::vector<std::byte> back(n * 4);
  gpu_path.download(back.data(), back.size());
  EXPECT_TRUE(back == host.bytes) << "the device and the host generate the same bits";
  std::printf(
      "1 GiB input (2^28 floats, random): host generate %.0f ms + upload %.0f ms = %.0f ms (before); "
      "GPU generate %.2f ms (now): %.0fx\n",
      host_generate_ms, host_total_ms - host_generate_ms, host_total_ms, gpu_ms, host_total_ms / gpu_ms);
  EXPECT_LT(gpu_ms, host_total_ms / 10);
}

// The same through a worker trial: the setup of a problem with a 1 GiB input and a 1 GiB
// in/out copy of it, as setup_ms reports it.
TEST(DeviceInputs, OneGibibyteTrialSetupThroughTheRunner) {
  GpuRunner runner(0);
  KernelSource source;
  source.main = {"touch.cu", "extern \"C\" __global__ void touch(const float* in, float* out) { out[0] += in[0]; }"};
  CompileRequest request;
  request.source = &source;
  request.arch = std::to_string(runner.arch());
  request.entry = "touch";
  const CompileResult compiled = compile_nvrtc(request);
  ASSERT_TRUE(compiled.ok()) << compiled.log;
  TrialRequest r;
  r.kernel = "touch";
  r.config_text = "test";
  r.problem_key = "touch|1GiB";
  r.cubin = compiled.kernel->cubin;
  r.function = compiled.kernel->lowered_name;
  constexpr std::uint64_t n = std::uint64_t{1} << 28;
  BufferPlan in = plan(ElementType::f32, n, BufferInit::uniform, 0, 1);
  in.name = "in";
  BufferPlan out = plan(ElementType::f32, n, BufferInit::copy);
  out.name = "out";
  out.init.source = 0;
  out.output = true;
  r.buffers = {in, out};
  ArgPlan a0, a1;
  a0.is_buffer = a1.is_buffer = true;
  a0.buffer = 0;
  a1.buffer = 1;
  r.args = {a0, a1};
  r.verify.mode = VerifySettings::Mode::none;
  r.timing.min_samples = 3;
  const TrialResult first = runner.run_trial(r);
  ASSERT_EQ(first.status, TrialStatus::ok) << first.detail;
  const TrialResult second = runner.run_trial(r);
  ASSERT_EQ(second.status, TrialStatus::ok) << second.detail;
  std::printf("trial with a 1 GiB generated input and a 1 GiB in/out copy: setup %.1f ms (first), %.1f ms (reused)\n",
              first.setup_ms, second.setup_ms);
  EXPECT_GT(first.setup_ms, 0);
  EXPECT_EQ(second.setup_ms, 0);
  EXPECT_LT(first.setup_ms, 1000);
}

}  // namespace
}  // namespace tiletune
