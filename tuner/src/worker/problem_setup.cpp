// A problem's buffers, globals and expected outputs in the worker. Inputs are generated on the
// device (one kernel launch per buffer), read from files or copied on the device; host copies
// exist only where a CPU reference reads them, downloaded from what the GPU generated, so that
// the reference and the kernel see the same bits. The simple built-in references run on the
// device (worker/device_reference.hpp) and need no host copy at all.
#include "worker/problem_setup.hpp"

#include <fmt/format.h>

#include "worker/device_reference.hpp"
#include "worker/generators.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

// 0xFF bytes: NaN for f32/f64/f16, -1 for signed and the maximum for unsigned integers.
constexpr unsigned char kPoison = 0xFF;

std::string init_key(const InitPlan& init) {
  return fmt::format("{}:{}:{}:{}:{}:{}:{}:{}", static_cast<int>(init.kind), init.a, init.b, init.rows, init.columns,
                     init.nnz, init.source, init.file);
}

bool uses_source(BufferInit kind) { return kind == BufferInit::copy || kind == BufferInit::csr_columns; }

void memset_async(CUdeviceptr p, unsigned char value, std::size_t bytes, CUstream stream, std::string_view what) {
  if (bytes == 0) return;
  TILETUNE_CU_CTX(cuMemsetD8Async(p, value, bytes, stream), what);
}

void copy_async(CUdeviceptr to, CUdeviceptr from, std::size_t bytes, CUstream stream, std::string_view what) {
  if (bytes == 0) return;
  TILETUNE_CU_CTX(cuMemcpyDtoDAsync(to, from, bytes, stream), what);
}

}  // namespace

std::string problem_cache_key(const TrialRequest& request) {
  const VerifySettings& v = request.verify;
  std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", request.kernel, request.problem_key,
                                request.seed, static_cast<int>(v.mode), v.cpu_reference, v.library, v.function);
  for (const CheckPlan& c : v.checks)
    key += fmt::format(
        "\x1f"
        "check:{}:{}",
        c.buffer, c.expected_file);
  // Buffer counts are left out: a buffer generated element by element has the same first
  // elements whatever its count, so a buffer sized by a param (a scratch sized by the grid, an
  // input padded to the tile) is rebuilt on its own and the reference outputs stay.
  for (const BufferPlan& b : request.buffers)
    key += fmt::format("\x1f{}:{}:{}:{}", b.name, static_cast<int>(b.type), b.output ? 1 : 0, init_key(b.init));
  for (const GlobalPlan& g : request.globals)
    key +=
        fmt::format("\x1fglobal:{}:{}:{}:{}:{}", g.name, g.symbol, static_cast<int>(g.type), g.count, init_key(g.init));
  return key;
}

void ProblemSetup::clear() noexcept {
  key_.clear();
  buffers_.clear();
  globals_.clear();
  expected_.clear();
  reference_ready_ = false;
}

bool ProblemSetup::prepare(const TrialRequest& request, WorkerKernels& kernels, CUstream stream) {
  const std::string key = problem_cache_key(request);
  const bool fresh = key != key_;
  if (fresh) clear();  // free the previous problem's memory before allocating the next
  try {
    buffers_.resize(request.buffers.size());
    expected_.resize(request.buffers.size());
    std::vector<int> state(request.buffers.size(), 0);
    for (std::size_t i = 0; i < request.buffers.size(); ++i) fit_buffer(request, i, state, kernels, stream);
    if (fresh) {
      try {
        for (const GlobalPlan& g : request.globals) {
          HeldGlobal& held = globals_.emplace_back();
          held.plan = g;
          held.data = cu::DeviceBuffer(held.bytes());
          fill(held.data.ptr(), fmt::format("module global '{}'", g.name), g.name, g.type, g.count, g.init, request,
               kernels, stream);
        }
        compute_expected(request, kernels, stream);
      } catch (const cu::DriverError& e) {
        throw ProblemSetupError(fmt::format("cannot set up the globals and expected outputs of {} ({}): {}",
                                            request.kernel, request.problem_key, e.what()));
      } catch (const ProblemSetupError&) {
        throw;
      } catch (const Error& e) {
        throw ProblemSetupError(e.what());
      }
      key_ = key;
    }
    TILETUNE_CU_CTX(cuStreamSynchronize(stream), "setting up the inputs");
  } catch (const cu::DriverError& e) {
    clear();
    throw Error(fmt::format("cannot set up the buffers of {} ({}): {}", request.kernel, request.problem_key, e.what()));
  } catch (...) {
    clear();
    throw;
  }
  return fresh;
}

// state: 0 not seen, 1 being fitted (a second visit is a cycle), 2 kept, 3 rebuilt.
void ProblemSetup::fit_buffer(const TrialRequest& request, std::size_t index, std::vector<int>& state,
                              WorkerKernels& kernels, CUstream stream) {
  if (state[index] >= 2) return;
  const BufferPlan& want = request.buffers[index];
  if (state[index] == 1) throw Error(fmt::format("buffer '{}' derives from itself (copy or csr_columns)", want.name));
  state[index] = 1;
  bool source_rebuilt = false;
  if (uses_source(want.init.kind)) {
    const int source = want.init.source;
    if (source < 0 || static_cast<std::size_t>(source) >= request.buffers.size())
      throw Error(fmt::format("buffer '{}' derives from buffer #{}, but the request has {} buffers", want.name, source,
                              request.buffers.size()));
    fit_buffer(request, static_cast<std::size_t>(source), state, kernels, stream);
    source_rebuilt = state[static_cast<std::size_t>(source)] == 3;
  }
  HeldBuffer& held = buffers_[index];
  if (held.ready && held.plan == want && !source_rebuilt) {
    state[index] = 2;
    return;
  }
  held = HeldBuffer{};
  held.plan = want;
  held.device = cu::DeviceBuffer(held.bytes());
  fill(held.device.ptr(), fmt::format("buffer '{}'", want.name), want.name, want.type, want.count, want.init, request,
       kernels, stream);
  if (want.in_out()) {
    held.initial = cu::DeviceBuffer(held.bytes());
    copy_async(held.initial.ptr(), held.device.ptr(), held.bytes(), stream, fmt::format("keeping '{}'", want.name));
  }
  held.ready = true;
  state[index] = 3;
}

void ProblemSetup::fill(CUdeviceptr out, const std::string& what, std::string_view name, ElementType type,
                        std::uint64_t count, const InitPlan& init, const TrialRequest& request, WorkerKernels& kernels,
                        CUstream stream) {
  const std::size_t bytes = count * element_size(type);
  if (init.kind == BufferInit::file) {
    const std::vector<std::byte> data = read_data_file(init.file, type, count, what);
    cu::copy_to_device(out, data.data(), bytes, what);
    return;
  }
  const HeldBuffer* source = nullptr;
  if (uses_source(init.kind)) {
    if (init.source < 0 || static_cast<std::size_t>(init.source) >= buffers_.size() ||
        !buffers_[static_cast<std::size_t>(init.source)].ready)
      throw Error(fmt::format("{} of {} derives from buffer #{}, which the request does not hold", what, request.kernel,
                              init.source));
    source = &buffers_[static_cast<std::size_t>(init.source)];
  }
  if (init.kind == BufferInit::copy) {
    if (source->plan.type != type || source->plan.count != count)
      throw Error(fmt::format("{} ({} x {}) cannot be a copy of buffer '{}' ({} x {})", what, count,
                              element_type_name(type), source->plan.name, source->plan.count,
                              element_type_name(source->plan.type)));
    copy_async(out, source->pristine(), bytes, stream, what);
    return;
  }
  if (!is_generated(init.kind)) {
    memset_async(out, 0, bytes, stream, what);
    return;
  }
  tiletune_gen::Params params = generator_params(name, type, count, init, request.seed);
  if (init.kind == BufferInit::csr_columns) {
    if (!is_index_type(source->plan.type) || source->plan.count < init.rows + 1)
      throw Error(fmt::format("{}: the row offsets '{}' ({} x {}) are not {} integers", what, source->plan.name,
                              source->plan.count, element_type_name(source->plan.type), init.rows + 1));
    params.offsets = reinterpret_cast<const void*>(source->pristine());
    params.offsets_type = static_cast<int>(source->plan.type);
  }
  kernels.generate(out, params, stream);
}

void ProblemSetup::compute_expected(const TrialRequest& request, WorkerKernels& kernels, CUstream stream) {
  switch (request.verify.mode) {
    case VerifySettings::Mode::cpu:
    case VerifySettings::Mode::library: expected_from_host(request, kernels, stream); return;
    case VerifySettings::Mode::files: expected_from_files(request, kernels, stream); return;
    case VerifySettings::Mode::reference_run:
    case VerifySettings::Mode::none: return;  // the reference run fills them; none needs none
  }
}

namespace {

HostBuffer download(std::string name, ElementType type, std::uint64_t count, CUdeviceptr from) {
  HostBuffer host;
  host.name = std::move(name);
  host.type = type;
  host.bytes.resize(count * element_size(type));
  if (!host.bytes.empty())
    TILETUNE_CU_CTX(cuMemcpyDtoH(host.bytes.data(), from, host.bytes.size()), "reading an input for the reference");
  return host;
}

std::string known_references() {
  std::string known;
  for (const auto name : cpu_reference_names()) known += fmt::format("{}{}", known.empty() ? "" : ", ", name);
  return known;
}

}  // namespace

void ProblemSetup::expected_from_host(const TrialRequest& request, WorkerKernels& kernels, CUstream stream) {
  const VerifySettings& v = request.verify;
  const CpuReference* builtin = nullptr;
  if (v.mode == VerifySettings::Mode::cpu) {
    builtin = find_cpu_reference(v.cpu_reference);
    if (builtin == nullptr)
      throw Error(fmt::format("{}: no built-in reference named '{}' (built in: {})", request.kernel, v.cpu_reference,
                              known_references()));
  }
  if (builtin != nullptr && expected_on_device(request, kernels, stream)) {
    reference_ready_ = true;
    return;
  }
  TILETUNE_CU_CTX(cuStreamSynchronize(stream), "generating the inputs");
  std::vector<HostBuffer> inputs;
  std::vector<HostBuffer> outputs;
  for (const HeldBuffer& b : buffers_)
    (b.plan.output ? outputs : inputs).push_back(download(b.plan.name, b.plan.type, b.plan.count, b.pristine()));
  try {
    if (builtin != nullptr) {
      builtin->compute(ReferenceArgs(request.sizes, inputs, outputs));
    } else {
      // A library reference sees the module globals too, after the buffers: a convolution's
      // weights in __constant__ memory are an input like any other.
      for (const HeldGlobal& g : globals_)
        inputs.push_back(download(g.plan.name, g.plan.type, g.plan.count, g.data.ptr()));
      LibraryReference(v.library, v.function).compute(request.sizes, inputs, outputs);
    }
  } catch (const Error& e) {
    throw Error(fmt::format("the reference of {} ({}) failed: {}", request.kernel, request.problem_key, e.what()));
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    if (!buffers_[i].plan.output) continue;
    const HostBuffer& out = outputs[next++];
    keep_expected(i, out.bytes.data(), out.count(), kernels, stream);
  }
  reference_ready_ = true;
}

// The built-in reference on the device (worker/device_reference.hpp): each output's expected buffer
// starts as its initial contents (what the CPU version's output starts from) and the reference
// kernel writes it. False, with no expected output kept, when the reference has no device version
// or the problem does not fit it.
bool ProblemSetup::expected_on_device(const TrialRequest& request, WorkerKernels& kernels, CUstream stream) {
  std::vector<DeviceBufferView> inputs;
  std::vector<DeviceBufferView> outputs;
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    HeldBuffer& b = buffers_[i];
    if (!b.plan.output) {
      inputs.push_back({b.plan.name, b.plan.type, b.pristine(), b.plan.count});
      continue;
    }
    ExpectedOutput& e = expected_[i];
    e.data = cu::DeviceBuffer(b.bytes());
    if (b.bytes() != 0) copy_async(e.data.ptr(), b.pristine(), b.bytes(), stream, "the reference's initial output");
    outputs.push_back({b.plan.name, b.plan.type, e.data.ptr(), b.plan.count});
  }
  if (!compute_reference_on_device(request.verify.cpu_reference, request.sizes, inputs, outputs, kernels, stream)) {
    for (ExpectedOutput& e : expected_) e = ExpectedOutput{};
    return false;
  }
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    if (!buffers_[i].plan.output) continue;
    ExpectedOutput& e = expected_[i];
    e.count = buffers_[i].plan.count;
    e.sum = kernels.sum(buffers_[i].plan.type, e.data.ptr(), e.count, stream);
    e.ready = true;
  }
  return true;
}

void ProblemSetup::expected_from_files(const TrialRequest& request, WorkerKernels& kernels, CUstream stream) {
  for (const CheckPlan& check : request.verify.checks) {
    if (check.compare == OutputCheck::Compare::none) continue;
    if (check.buffer < 0 || static_cast<std::size_t>(check.buffer) >= buffers_.size())
      throw Error(fmt::format("{}: a check names buffer #{}, the request has {}", request.kernel, check.buffer,
                              buffers_.size()));
    const BufferPlan& plan = buffers_[static_cast<std::size_t>(check.buffer)].plan;
    if (check.expected_file.empty())
      throw Error(fmt::format("{}: output '{}' has no expected file", request.kernel, plan.name));
    const std::vector<std::byte> data =
        read_data_file(check.expected_file, plan.type, std::nullopt, fmt::format("expected output '{}'", plan.name));
    keep_expected(static_cast<std::size_t>(check.buffer), data.data(), data.size() / element_size(plan.type), kernels,
                  stream);
  }
  reference_ready_ = true;
}

void ProblemSetup::keep_expected(std::size_t index, const std::byte* bytes, std::uint64_t count, WorkerKernels& kernels,
                                 CUstream stream) {
  const BufferPlan& plan = buffers_[index].plan;
  ExpectedOutput& e = expected_[index];
  e.count = count;
  e.data = cu::DeviceBuffer(count * element_size(plan.type));
  if (count != 0) e.data.upload(bytes, count * element_size(plan.type));
  e.sum = kernels.sum(plan.type, e.data.ptr(), count, stream);
  e.ready = true;
}

void ProblemSetup::restore_inputs(const std::vector<CUdeviceptr>& symbols, CUstream stream) {
  for (HeldBuffer& b : buffers_) {
    if (b.plan.in_out())
      copy_async(b.device.ptr(), b.initial.ptr(), b.bytes(), stream, fmt::format("restoring buffer '{}'", b.plan.name));
  }
  for (std::size_t i = 0; i < globals_.size() && i < symbols.size(); ++i) {
    if (symbols[i] == 0) continue;
    copy_async(symbols[i], globals_[i].data.ptr(), globals_[i].bytes(), stream,
               fmt::format("filling module global '{}'", globals_[i].plan.name));
  }
}

void ProblemSetup::reset_for_launch(const std::vector<CUdeviceptr>& symbols, CUstream stream) {
  for (HeldBuffer& b : buffers_) {
    if (b.plan.output && !b.plan.in_out())
      memset_async(b.device.ptr(), kPoison, b.bytes(), stream, fmt::format("poisoning buffer '{}'", b.plan.name));
  }
  restore_inputs(symbols, stream);
}

bool ProblemSetup::has_inputs_to_restore() const {
  for (const HeldBuffer& b : buffers_)
    if (b.plan.in_out()) return true;
  return !globals_.empty();
}

}  // namespace tiletune
