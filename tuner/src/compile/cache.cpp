// The on-disk cubin cache and the compile that goes through it. An entry is two files in
// <dir>/<key[0:2]>/: <key>.cubin (the ELF image as NVRTC gave it) and <key>.meta (lowered
// name, resources, warnings, log, and the size and hash of the cubin); a failed compile is one
// file, <key>.fail (the reason, warnings and log), so that it is not paid for again. Each is
// written to a unique temp file and renamed into place, the cubin first, so a reader never
// sees a half-written file; a reader checks the cubin against the meta, so anything
// truncated, corrupt or from another format version is a miss, never a crash. The cache is an
// optimisation: when it cannot be written the compile still succeeds.
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include "compile/hash.hpp"
#include "compile/temp_name.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMetaMagic = "tiletune-cubin-meta 2";
constexpr std::string_view kFailureMagic = "tiletune-compile-failure 1";

fs::path entry_dir(const fs::path& dir, const std::string& key) { return dir / key.substr(0, 2); }

// A key names files: only hex digits are accepted, so a key never escapes the directory.
bool valid_key(const std::string& key) {
  if (key.size() != 32) return false;
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<std::string> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

// One line of text: a field value cannot hold a line break.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// "NAMEs COUNT\n" then "NAME VALUE\n" per item.
void write_list(std::ostringstream& out, std::string_view name, const std::vector<std::string>& items) {
  out << name << "s " << items.size() << '\n';
  for (const auto& item : items) out << name << ' ' << one_line(item) << '\n';
}

std::string serialize_meta(const std::string& key, const CompiledKernel& kernel) {
  const Resources& r = kernel.resources;
  std::ostringstream out;
  out << kMetaMagic << '\n'
      << "key " << key << '\n'
      << "lowered_name " << kernel.lowered_name << '\n'
      << "registers " << r.registers << '\n'
      << "static_shared_bytes " << r.static_shared_bytes << '\n'
      << "spill_store_bytes " << r.spill_store_bytes << '\n'
      << "spill_load_bytes " << r.spill_load_bytes << '\n'
      << "stack_frame_bytes " << r.stack_frame_bytes << '\n'
      << "barriers " << r.barriers << '\n'
      << "constant_bytes " << r.constant_bytes << '\n';
  write_list(out, "warning", kernel.warnings);
  write_list(out, "extra_option", kernel.extra_options);
  out << "cubin_size " << kernel.cubin.size() << '\n'
      << "cubin_xxh3 " << compile_detail::xxh3_128_hex(kernel.cubin) << '\n'
      << "log_size " << kernel.log.size() << '\n'
      << kernel.log;
  return out.str();
}

// Reads "name value\n" at `pos`, advancing it; nullopt when the line is not that field.
std::optional<std::string> take_field(const std::string& text, std::size_t& pos, std::string_view name) {
  const std::size_t end = text.find('\n', pos);
  if (end == std::string::npos) return std::nullopt;
  const std::string_view line(text.data() + pos, end - pos);
  if (line.size() < name.size() + 1 || line.substr(0, name.size()) != name || line[name.size()] != ' ') {
    return std::nullopt;
  }
  pos = end + 1;
  return std::string(line.substr(name.size() + 1));
}

bool to_number(const std::optional<std::string>& text, long long& out) {
  if (!text || text->empty()) return false;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), out);
  return ec == std::errc() && p == text->data() + text->size() && out >= 0;
}

// The list write_list wrote, or nullopt.
std::optional<std::vector<std::string>> take_list(const std::string& text, std::size_t& pos, const std::string& name) {
  long long count = 0;
  if (!to_number(take_field(text, pos, name + "s"), count) || count > 100000) return std::nullopt;
  std::vector<std::string> items;
  for (long long i = 0; i < count; ++i) {
    auto item = take_field(text, pos, name);
    if (!item) return std::nullopt;
    items.push_back(std::move(*item));
  }
  return items;
}

// The rest of the text after "log_size N\n", when N is its length.
std::optional<std::string> take_log(const std::string& text, std::size_t& pos) {
  long long log_size = 0;
  if (!to_number(take_field(text, pos, "log_size"), log_size)) return std::nullopt;
  if (static_cast<unsigned long long>(log_size) != text.size() - pos) return std::nullopt;
  return text.substr(pos);
}

// Past the magic line and "key KEY"; false when either is not there.
bool take_header(const std::string& text, std::size_t& pos, std::string_view magic, const std::string& key) {
  if (text.compare(0, magic.size(), magic) != 0 || text.size() <= magic.size() || text[magic.size()] != '\n')
    return false;
  pos = magic.size() + 1;
  return take_field(text, pos, "key") == key;
}

std::optional<CompiledKernel> parse_meta(const std::string& meta, const std::string& key, std::string cubin) {
  std::size_t pos = 0;
  if (!take_header(meta, pos, kMetaMagic, key)) return std::nullopt;
  CompiledKernel kernel;
  auto lowered = take_field(meta, pos, "lowered_name");
  if (!lowered || lowered->empty()) return std::nullopt;
  kernel.lowered_name = *lowered;
  Resources& r = kernel.resources;
  for (auto [name, field] : {std::pair<std::string_view, int*>{"registers", &r.registers},
                             {"static_shared_bytes", &r.static_shared_bytes},
                             {"spill_store_bytes", &r.spill_store_bytes},
                             {"spill_load_bytes", &r.spill_load_bytes},
                             {"stack_frame_bytes", &r.stack_frame_bytes},
                             {"barriers", &r.barriers},
                             {"constant_bytes", &r.constant_bytes}}) {
    long long value = 0;
    if (!to_number(take_field(meta, pos, name), value) || value > 0x7fffffff) return std::nullopt;
    *field = static_cast<int>(value);
  }
  auto warnings = take_list(meta, pos, "warning");
  auto extra_options = take_list(meta, pos, "extra_option");
  if (!warnings || !extra_options) return std::nullopt;
  long long cubin_size = 0;
  if (!to_number(take_field(meta, pos, "cubin_size"), cubin_size)) return std::nullopt;
  const auto cubin_hash = take_field(meta, pos, "cubin_xxh3");
  auto log = take_log(meta, pos);
  if (!log) return std::nullopt;
  if (cubin.empty() || static_cast<unsigned long long>(cubin_size) != cubin.size() ||
      cubin_hash != compile_detail::xxh3_128_hex(cubin)) {
    return std::nullopt;
  }
  kernel.warnings = std::move(*warnings);
  kernel.extra_options = std::move(*extra_options);
  kernel.log = std::move(*log);
  kernel.cubin = std::move(cubin);
  return kernel;
}

std::string serialize_failure(const std::string& key, const CompileFailure& failure) {
  std::ostringstream out;
  out << kFailureMagic << '\n' << "key " << key << '\n' << "error " << one_line(failure.error) << '\n';
  write_list(out, "warning", failure.warnings);
  out << "log_size " << failure.log.size() << '\n' << failure.log;
  return out.str();
}

std::optional<CompileFailure> parse_failure(const std::string& text, const std::string& key) {
  std::size_t pos = 0;
  if (!take_header(text, pos, kFailureMagic, key)) return std::nullopt;
  CompileFailure failure;
  auto error = take_field(text, pos, "error");
  auto warnings = take_list(text, pos, "warning");
  if (!error || error->empty() || !warnings) return std::nullopt;
  auto log = take_log(text, pos);
  if (!log) return std::nullopt;
  failure.error = std::move(*error);
  failure.warnings = std::move(*warnings);
  failure.log = std::move(*log);
  return failure;
}

// Writes `bytes` to `target` through a temp file in the same directory and rename(), which
// is atomic on POSIX (and on NFS within one directory): readers see the old file, or none, or
// the whole new one.
bool write_atomically(const fs::path& target, std::string_view bytes) {
  const fs::path temp = compile_detail::unique_temp_path(target);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temp, ignored);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return false;
  }
  return true;
}

void warn_unwritable_once(const fs::path& dir, const std::string& why) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  std::fprintf(stderr,
               "tiletune: warning: cannot write the cubin cache in '%s' (%s); "
               "compiling without caching\n",
               dir.c_str(), why.c_str());
}

// Writes the files of one entry, in order (name suffix, bytes), into the key's directory; what
// cannot be written is a warning, once: the cache is an optimisation.
void write_entry(const fs::path& root, const std::string& key,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> files) {
  try {
    const fs::path dir = entry_dir(root, key);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      warn_unwritable_once(root, ec.message());
      return;
    }
    for (const auto& [suffix, bytes] : files) {
      if (!write_atomically(dir / (key + std::string(suffix)), bytes)) {
        warn_unwritable_once(root, "write or rename failed");
        return;
      }
    }
  } catch (const std::exception& e) { warn_unwritable_once(root, e.what()); }
}

}  // namespace

namespace compile_detail {

fs::path unique_temp_path(const fs::path& target) {
  // Drawn once per process: two hosts that share a name and a pid (containers) still differ.
  static const unsigned long long nonce = [] {
    std::random_device device;
    return (static_cast<unsigned long long>(device()) << 32) ^ device();
  }();
  static std::atomic<unsigned long long> counter{0};
  char host[256] = "unknown-host";
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown-host");
  host[sizeof host - 1] = '\0';
  for (char* c = host; *c; ++c)
    if (*c == '/') *c = '_';  // a host name never names a directory
  char suffix[96];
  std::snprintf(suffix, sizeof suffix, ".%ld.%016llx.%llu", static_cast<long>(::getpid()), nonce, counter.fetch_add(1));
  return target.string() + ".tmp." + host + suffix;
}

}  // namespace compile_detail

CubinCache::CubinCache(std::filesystem::path directory) : dir_(std::move(directory)) {}

std::filesystem::path CubinCache::default_directory() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  if (auto dir = env("TILETUNE_CUBIN_CACHE"); !dir.empty()) return dir;
  if (auto xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "tiletune" / "cubin";
  if (auto home = env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "tiletune" / "cubin";
  return {};  // nowhere sensible: caching off
}

std::string CubinCache::key(const CompileRequest& request) const {
  if (request.source == nullptr) throw Error("CubinCache::key: the request has no source");
  compile_detail::FieldHasher hasher;
  hasher.add("tiletune-cubin-key 2");  // bump when the entry format or the key changes
  hasher.add(request.source->hash);
  const auto options = key_options(request);
  hasher.add(std::to_string(options.size()));
  for (const auto& option : options) hasher.add(option);
  hasher.add(nvrtc_version());
  hasher.add(normalize_arch(request.arch));
  hasher.add(request.entry);
  return hasher.hex();
}

std::optional<CompiledKernel> CubinCache::get(const std::string& key) const {
  if (dir_.empty() || !valid_key(key)) return std::nullopt;
  try {
    const fs::path dir = entry_dir(dir_, key);
    auto meta = read_all(dir / (key + ".meta"));
    if (!meta) return std::nullopt;
    auto cubin = read_all(dir / (key + ".cubin"));
    if (!cubin) return std::nullopt;
    return parse_meta(*meta, key, std::move(*cubin));
  } catch (const std::exception&) {
    return std::nullopt;  // an unreadable entry is a miss
  }
}

void CubinCache::put(const std::string& key, const CompiledKernel& kernel) const {
  if (dir_.empty() || !valid_key(key)) return;
  // Cubin first: once the meta is in place its cubin is too.
  write_entry(dir_, key, {{".cubin", kernel.cubin}, {".meta", serialize_meta(key, kernel)}});
}

std::optional<CompileFailure> CubinCache::get_failure(const std::string& key) const {
  if (dir_.empty() || !valid_key(key)) return std::nullopt;
  try {
    auto text = read_all(entry_dir(dir_, key) / (key + ".fail"));
    if (!text) return std::nullopt;
    return parse_failure(*text, key);
  } catch (const std::exception&) { return std::nullopt; }
}

void CubinCache::put_failure(const std::string& key, const CompileFailure& failure) const {
  if (dir_.empty() || !valid_key(key)) return;
  write_entry(dir_, key, {{".fail", serialize_failure(key, failure)}});
}

namespace {

CompileResult cached_result(const CompileRequest& request, const std::string& key) {
  CompileResult result;
  result.options = nvrtc_options(request);
  result.cache_hit = true;
  result.cache_key = key;
  return result;
}

}  // namespace

CompileResult compile_cached(const CompileRequest& request, const CubinCache& cache, Compiler* compiler) {
  const std::string key = cache.key(request);
  if (auto kernel = cache.get(key)) {
    CompileResult result = cached_result(request, key);
    result.options.insert(result.options.end(), kernel->extra_options.begin(), kernel->extra_options.end());
    result.log = kernel->log;
    result.warnings = kernel->warnings;
    result.kernel = std::move(kernel);
    return result;
  }
  if (auto failure = cache.get_failure(key)) {
    CompileResult result = cached_result(request, key);
    result.error = std::move(failure->error);
    result.log = std::move(failure->log);
    result.warnings = std::move(failure->warnings);
    return result;
  }
  CompileResult result = compiler != nullptr ? compiler->compile(request) : compile_nvrtc(request);
  result.cache_key = key;
  if (result.ok())
    cache.put(key, *result.kernel);
  else if (!result.transient)
    cache.put_failure(key, CompileFailure{result.error, result.log, result.warnings});
  return result;
}

}  // namespace tiletune
