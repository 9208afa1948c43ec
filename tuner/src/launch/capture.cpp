// Capture of a launch (see tiletune/capture.hpp): which launches, reading their buffers through
// CaptureMemory, and writing the capture folder atomically (a hidden folder beside it, renamed
// into place once every file is written).
#include "tiletune/capture.hpp"

#include <fmt/format.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

#include "tiletune/data_file.hpp"
#include "tiletune/error.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

const char* capture_outcome_name(CaptureOutcome outcome) noexcept {
  switch (outcome) {
    case CaptureOutcome::off: return "off";
    case CaptureOutcome::skipped: return "skipped";
    case CaptureOutcome::done: return "done";
    case CaptureOutcome::written: return "written";
    case CaptureOutcome::duplicate: return "duplicate";
    case CaptureOutcome::too_large: return "too_large";
    case CaptureOutcome::refused: return "refused";
    case CaptureOutcome::failed: return "failed";
  }
  return "?";
}

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t unit = 1;
  switch (text.back()) {
    case 'K':
    case 'k': unit = std::uint64_t{1} << 10; break;
    case 'M':
    case 'm': unit = std::uint64_t{1} << 20; break;
    case 'G':
    case 'g': unit = std::uint64_t{1} << 30; break;
    default: break;
  }
  if (unit != 1) text.remove_suffix(1);
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > UINT64_MAX / unit) return std::nullopt;
  return value * unit;
}

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace

std::vector<std::string> kernel_patterns(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item(text.substr(start, comma - start));
    while (!item.empty() && item.back() == ' ') item.pop_back();
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

bool kernel_matches(const std::vector<std::string>& patterns, std::string_view kernel) {
  const std::string name(kernel);
  for (const std::string& p : patterns)
    if (p == name || ::fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

CaptureOptions CaptureOptions::from_environment(std::ostream& diagnostics) {
  CaptureOptions o;
  const auto patterns = env("TILETUNE_CAPTURE");
  if (!patterns) return o;
  if (auto dir = env("TILETUNE_CAPTURE_DIR")) o.directory = *dir;
  if (auto force = env("TILETUNE_CAPTURE_FORCE")) o.force = *force != "0";
  if (auto max = env("TILETUNE_CAPTURE_MAX_BYTES")) {
    auto bytes = parse_byte_size(*max);
    if (!bytes) {
      diagnostics << fmt::format(
          "tiletune: capture off: TILETUNE_CAPTURE_MAX_BYTES='{}' is not a size (bytes, or "
          "with K, M or G: 512M)\n",
          max->substr(0, 40));
      return o;
    }
    o.max_bytes = *bytes;
  }
  if (auto skip = env("TILETUNE_CAPTURE_SKIP")) {
    auto count = parse_byte_size(*skip);
    if (!count || (skip->back() < '0' || skip->back() > '9')) {
      diagnostics << fmt::format("tiletune: capture off: TILETUNE_CAPTURE_SKIP='{}' is not a count of launches\n",
                                 skip->substr(0, 40));
      return o;
    }
    o.skip = *count;
  }
  o.patterns = kernel_patterns(*patterns);
  return o;
}

bool CaptureOptions::matches(std::string_view kernel) const { return kernel_matches(patterns, kernel); }

void HostCaptureMemory::read(std::uint64_t address, std::span<std::byte> into) {
  if (into.empty()) return;
  if (address == 0) throw Error("HostCaptureMemory::read: a null buffer address");
  std::memcpy(into.data(), reinterpret_cast<const void*>(static_cast<std::uintptr_t>(address)), into.size());
}

namespace {

/// A floating-point value as a decimal the space loader reads as one ("3" is an integer there).
/// Shortest text that reads back as the same value of its own type (float or double).
template <typename T>
std::string decimal_text(T v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

/// A name part for a folder: letters, digits, `_ . + -`; anything else becomes '-'.
std::string slug(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '+' || c == '-';
    out += ok ? c : '-';
  }
  return out.substr(0, 96);
}

/// "transpose_N1000_": the start of every capture folder of this kernel and problem.
std::string folder_prefix(const Space& space, const Problem& problem) {
  std::string s = slug(space.kernel) + "_";
  for (std::size_t i = 0; i < space.problem.size(); ++i)
    s += slug(space.problem[i].name) + std::to_string(problem.sizes.at(i)) + "_";
  return s;
}

bool is_hash(std::string_view s) {
  if (s.size() != 16) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

/// One buffer or scalar read from the launch.
struct Captured {
  std::string file;  ///< "inputs/in.npy.gz", "expected/out.npy.gz"
  ElementType type = ElementType::f32;
  std::vector<std::byte> bytes;
};

/// What a buffer argument is for one launch.
struct BufferUse {
  std::size_t buffer = 0;  ///< index into Space::buffers
  std::size_t arg = 0;     ///< first argument that passes it
  ElementType type = ElementType::f32;
  std::uint64_t bytes = 0;
  bool input = false;   ///< read before the launch
  bool output = false;  ///< read after
};

}  // namespace

struct CaptureWriter::Pending {
  Problem problem;
  Config config;
  std::string problem_text;
  std::vector<BufferUse> buffers;
  std::vector<std::uint64_t> addresses;  ///< per buffer use
  std::vector<Captured> inputs;
  std::vector<std::string> scalars;  ///< per argument: the value text, or empty
  std::string hash;
};

struct CaptureWriter::Impl {
  Impl(const Space& s, CaptureOptions o, std::ostream& d) : space(s), options(std::move(o)), diagnostics(d) {}
  const Space& space;
  CaptureOptions options;
  std::ostream& diagnostics;
  std::mutex mutex;
  std::uint64_t launches = 0;
  bool stopped = false;          ///< a failure or refusal: no more captures
  std::set<std::string> done;    ///< problems captured (or found on disk)
  std::set<std::string> hashes;  ///< inputs captured, with force
  std::set<std::string> too_large_said;
  std::filesystem::path last;
  unsigned counter = 0;

  std::filesystem::path root() const {
    return options.directory.empty() ? std::filesystem::path(kDefaultCaptureDir) : options.directory;
  }
  void say(const std::string& line) { diagnostics << "tiletune: capture: " << line << '\n' << std::flush; }
  void stop(const std::string& line) {
    say(line + "; no more captures in this process");
    stopped = true;
  }
  bool captured_on_disk(const std::string& prefix) const;
  std::vector<BufferUse> buffer_uses(const Problem& problem, const Config& config) const;
  std::vector<std::string> scalar_texts(const CaptureLaunch& launch) const;
  void check_root() const;
  std::filesystem::path write(const Pending& p, const std::vector<Captured>& outputs);
};

bool CaptureWriter::Impl::captured_on_disk(const std::string& prefix) const {
  std::error_code ec;
  std::filesystem::directory_iterator it(root(), ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && is_hash(std::string_view(name).substr(prefix.size())) &&
        std::filesystem::is_regular_file(it->path() / "space.yaml", ec))
      return true;
  }
  return false;
}

std::vector<BufferUse> CaptureWriter::Impl::buffer_uses(const Problem& problem, const Config& config) const {
  const std::vector<std::int64_t> slots = slot_values(problem, config);
  std::vector<BufferUse> uses;
  std::set<std::string> seen;
  for (std::size_t a = 0; a < space.args.size(); ++a) {
    const ArgSpec& arg = space.args[a];
    if (arg.kind != ArgSpec::Kind::buffer || !seen.insert(arg.buffer).second) continue;
    const int index = space.buffer_index(arg.buffer);
    if (index < 0) continue;
    const BufferSpec& b = space.buffers[static_cast<std::size_t>(index)];
    BufferUse use;
    use.buffer = static_cast<std::size_t>(index);
    use.arg = a;
    use.type = resolved_type(space, b.type, b.type_param, config);
    const std::int64_t count = eval_located(b.count, slots, fmt::format("count of buffer {}", b.name));
    use.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(count, 0)) * element_size(use.type);
    use.output = b.output;
    use.input = !b.output || !(b.init.kind == BufferInit::zero || b.init.kind == BufferInit::none);
    uses.push_back(use);
  }
  return uses;
}

std::vector<std::string> CaptureWriter::Impl::scalar_texts(const CaptureLaunch& launch) const {
  std::vector<std::string> texts(space.args.size());
  for (std::size_t a = 0; a < space.args.size(); ++a) {
    const ArgSpec& arg = space.args[a];
    if (arg.kind != ArgSpec::Kind::scalar || arg.type_param >= 0 || arg.value.real_param >= 0) continue;
    bool uses_param = false;
    for (const std::string& v : arg.value.expr.expr.variables()) uses_param |= space.param_index(v) >= 0;
    if (uses_param) continue;  // the config decides it: kept as the space's expression
    const void* p = launch.args[a];
    auto as = [p]<typename T>(T) {
      T v;
      std::memcpy(&v, p, sizeof v);
      return v;
    };
    switch (arg.scalar_type) {
      case ElementType::i8: texts[a] = std::to_string(as(std::int8_t{})); break;
      case ElementType::i16: texts[a] = std::to_string(as(std::int16_t{})); break;
      case ElementType::i32: texts[a] = std::to_string(as(std::int32_t{})); break;
      case ElementType::i64: texts[a] = std::to_string(as(std::int64_t{})); break;
      case ElementType::u8: texts[a] = std::to_string(as(std::uint8_t{})); break;
      case ElementType::u16: texts[a] = std::to_string(as(std::uint16_t{})); break;
      case ElementType::u32: texts[a] = std::to_string(as(std::uint32_t{})); break;
      case ElementType::u64: {
        const std::uint64_t v = as(std::uint64_t{});
        if (v <= static_cast<std::uint64_t>(INT64_MAX)) texts[a] = std::to_string(v);  // else: the expression
        break;
      }
      case ElementType::f32: {
        const float v = as(float{});
        if (std::isfinite(v)) texts[a] = decimal_text(v);
        break;
      }
      case ElementType::f64: {
        const double v = as(double{});
        if (std::isfinite(v)) texts[a] = decimal_text(v);
        break;
      }
      case ElementType::f16: break;  // kept as the space's expression
    }
  }
  return texts;
}

void CaptureWriter::Impl::check_root() const {
  const std::filesystem::path dir = root();
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) throw Error(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
      throw Error(fmt::format("{}: cannot make the capture folder: {}", dir.string(), std::strerror(errno)));
    if (::lstat(dir.c_str(), &st) != 0) throw Error(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode))
    throw Error(fmt::format("{}: the capture folder is a symbolic link; give the folder it points to", dir.string()));
  if (!S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: the capture folder is not a directory", dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(fmt::format("{}: cannot write into the capture folder: {}", dir.string(), std::strerror(errno)));
}

namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(fmt::format("{}: cannot create the file: {}", path.string(), std::strerror(errno)));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write the file", path.string()));
}

void make_dir(const std::filesystem::path& path) {
  if (::mkdir(path.c_str(), 0777) != 0)
    throw Error(fmt::format("{}: cannot make the folder: {}", path.string(), std::strerror(errno)));
}

}  // namespace

std::filesystem::path CaptureWriter::Impl::write(const Pending& p, const std::vector<Captured>& outputs) {
  check_root();
  const std::string name = folder_prefix(space, p.problem) + p.hash;
  const std::filesystem::path final_path = root() / name;
  std::filesystem::path tmp;
  for (;;) {  // a fresh hidden folder of this process
    tmp = root() / fmt::format(".tmp-{}-{}-{}", name, ::getpid(), counter++);
    if (::mkdir(tmp.c_str(), 0777) == 0) break;
    if (errno != EEXIST) throw Error(fmt::format("{}: cannot make the folder: {}", tmp.string(), std::strerror(errno)));
  }
  try {
    make_dir(tmp / "inputs");
    make_dir(tmp / "expected");
    for (const Captured& c : p.inputs) write_npy(tmp / c.file, c.type, c.bytes);
    for (const Captured& c : outputs) write_npy(tmp / c.file, c.type, c.bytes);
    std::string yaml = fmt::format(
        "# A capture of kernel '{}' at {} (launched with {}), written by tiletune's Launcher.\n"
        "# Tune it: tiletune tune {}/space.yaml\n",
        space.kernel, p.problem_text, canonical_config(space, p.config), name);
    yaml += capture_space_yaml(space, p.problem, p.config, p.scalars);
    write_text(tmp / "space.yaml", yaml);
    if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
      const int e = errno;
      std::error_code ec;
      std::filesystem::remove_all(tmp, ec);
      if (e == EEXIST || e == ENOTEMPTY) return {};  // another process wrote the same capture
      throw Error(fmt::format("{}: cannot rename into place: {}", final_path.string(), std::strerror(e)));
    }
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
    throw;
  }
  return final_path;
}

CaptureWriter::CaptureWriter(const Space& space, CaptureOptions options, std::ostream& diagnostics)
    : impl_(std::make_unique<Impl>(space, std::move(options), diagnostics)) {}
CaptureWriter::~CaptureWriter() = default;

const CaptureOptions& CaptureWriter::options() const noexcept { return impl_->options; }

std::filesystem::path CaptureWriter::last_written() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->last;
}

void CaptureWriter::PendingDeleter::operator()(Pending* p) const noexcept { delete p; }

CaptureWriter::PendingCapture CaptureWriter::before(const CaptureLaunch& launch, CaptureMemory& memory,
                                                    CaptureOutcome& outcome) noexcept {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  outcome = CaptureOutcome::off;
  if (impl.stopped || !impl.options.matches(impl.space.kernel)) return nullptr;
  if (++impl.launches <= impl.options.skip) {
    outcome = CaptureOutcome::skipped;
    return nullptr;
  }
  try {
    if (auto why = capture_refusal(impl.space)) {
      outcome = CaptureOutcome::refused;
      impl.stop(*why);
      return nullptr;
    }
    PendingCapture p(new Pending());
    p->problem = launch.problem;
    p->config = launch.config;
    p->problem_text = canonical_problem(impl.space, launch.problem);
    const std::string prefix = folder_prefix(impl.space, launch.problem);
    if (!impl.options.force) {
      if (impl.done.count(p->problem_text) || impl.captured_on_disk(prefix)) {
        impl.done.insert(p->problem_text);
        outcome = CaptureOutcome::done;
        return nullptr;
      }
    }
    p->buffers = impl.buffer_uses(launch.problem, launch.config);
    std::uint64_t total = 0;
    for (const BufferUse& u : p->buffers) total += (u.input ? u.bytes : 0) + (u.output ? u.bytes : 0);
    if (total > impl.options.max_bytes) {
      outcome = CaptureOutcome::too_large;
      if (impl.too_large_said.insert(p->problem_text).second)
        impl.say(
            fmt::format("kernel '{}' {}: {} bytes of buffers exceed the cap of {} bytes "
                        "(TILETUNE_CAPTURE_MAX_BYTES); not captured",
                        impl.space.kernel, p->problem_text, total, impl.options.max_bytes));
      return nullptr;
    }
    p->scalars = impl.scalar_texts(launch);
    memory.synchronize();
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    XXH3_128bits_update(state, impl.space.kernel.data(), impl.space.kernel.size() + 1);
    XXH3_128bits_update(state, p->problem_text.data(), p->problem_text.size() + 1);
    for (const BufferUse& u : p->buffers) {
      std::uint64_t address = 0;
      std::memcpy(&address, launch.args[u.arg], sizeof address);
      p->addresses.push_back(address);
      if (!u.input) continue;
      Captured c{"inputs/" + impl.space.buffers[u.buffer].name + ".npy.gz", u.type, std::vector<std::byte>(u.bytes)};
      memory.read(address, c.bytes);
      XXH3_128bits_update(state, c.bytes.data(), c.bytes.size());
      p->inputs.push_back(std::move(c));
    }
    for (std::size_t a = 0; a < impl.space.args.size(); ++a) {
      const ArgSpec& arg = impl.space.args[a];
      if (arg.kind != ArgSpec::Kind::scalar) continue;
      const ElementType t = resolved_type(impl.space, arg.scalar_type, arg.type_param, launch.config);
      Captured c{fmt::format("inputs/arg{}.npy.gz", a), t, std::vector<std::byte>(element_size(t))};
      std::memcpy(c.bytes.data(), launch.args[a], c.bytes.size());
      XXH3_128bits_update(state, c.bytes.data(), c.bytes.size());
      p->inputs.push_back(std::move(c));
    }
    const XXH128_hash_t h = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    p->hash = fmt::format("{:016x}", h.high64);
    if (impl.options.force &&
        (impl.hashes.count(p->hash) || std::filesystem::exists(impl.root() / (prefix + p->hash)))) {
      outcome = CaptureOutcome::duplicate;
      return nullptr;
    }
    outcome = CaptureOutcome::written;  // once after() succeeds
    return p;
  } catch (const std::exception& e) {
    outcome = CaptureOutcome::failed;
    impl.stop(fmt::format("kernel '{}': reading the launch's inputs: {}", impl.space.kernel, e.what()));
    return nullptr;
  }
}

CaptureOutcome CaptureWriter::after(PendingCapture pending, CaptureMemory& memory) noexcept {
  if (!pending) return CaptureOutcome::off;
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  try {
    memory.synchronize();
    std::vector<Captured> outputs;
    for (std::size_t i = 0; i < pending->buffers.size(); ++i) {
      const BufferUse& u = pending->buffers[i];
      if (!u.output) continue;
      Captured c{"expected/" + impl.space.buffers[u.buffer].name + ".npy.gz", u.type, std::vector<std::byte>(u.bytes)};
      memory.read(pending->addresses[i], c.bytes);
      outputs.push_back(std::move(c));
    }
    const std::filesystem::path written = impl.write(*pending, outputs);
    impl.done.insert(pending->problem_text);
    impl.hashes.insert(pending->hash);
    if (written.empty()) return CaptureOutcome::duplicate;
    impl.last = written;
    return CaptureOutcome::written;
  } catch (const std::exception& e) {
    impl.stop(fmt::format("kernel '{}' {}: {}", impl.space.kernel, pending->problem_text, e.what()));
    return CaptureOutcome::failed;
  }
}

}  // namespace tiletune
