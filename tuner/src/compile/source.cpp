// Loading a kernel source for NVRTC with every header it may include, and the include search
// those headers are found by. NVRTC looks up an include (quoted or angle) first among the
// headers it was given by name, then, for a quoted one, in the including file's directory,
// then in the -I directories in order, then in the toolkit's (verified against NVRTC 13.0;
// docs/reference/cache-keys.md). The loader follows the same order:
//   - a quoted include found next to the source (or next to a header found so) is handed to
//     NVRTC by name, as written, since NVRTC does not know where the source lies; two files
//     under one name cannot both be given and are refused;
//   - anything else is left to NVRTC's own search and listed as a dependency with a name that
//     is the same in every checkout (the directory's role and the path below it).
// Each file is read once, only when it is a regular file of at most kMaxSourceFileBytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "compile/hash.hpp"
#include "compile/nvrtc_cub.hpp"
#include "compile/includes.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using compile_detail::IncludeDirective;
using compile_detail::kCubUmbrellaName;
using compile_detail::kCubUmbrellaText;

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes a file descriptor at scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The whole of a regular file of at most kMaxSourceFileBytes. O_NONBLOCK: opening a FIFO must
// not wait for a writer; the type is checked on the open descriptor, so a file swapped in
// between a check and the open cannot slip through.
std::string read_source_file(const fs::path& path, const std::string& what) {
  Fd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) throw Error("cannot read " + what + " '" + path.string() + "': " + std::strerror(errno));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0)
    throw Error("cannot read " + what + " '" + path.string() + "': " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    throw Error(what + " '" + path.string() + "' is " + file_type_name(info.st_mode) + ", not a regular file: refused");
  if (static_cast<std::uintmax_t>(info.st_size) > kMaxSourceFileBytes)
    throw Error(what + " '" + path.string() + "' has " + std::to_string(info.st_size) + " bytes, more than the " +
                std::to_string(kMaxSourceFileBytes >> 20) + " MiB tiletune reads of one source file");
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("error while reading " + what + " '" + path.string() + "': " + std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxSourceFileBytes)  // grew while being read
      throw Error(what + " '" + path.string() + "' grew past " + std::to_string(kMaxSourceFileBytes >> 20) +
                  " MiB while being read");
  }
  return text;
}

// A candidate path names a file to open: anything but a missing path or a directory (a FIFO
// counts, so that reading it gives the clear error instead of the search moving on).
bool names_a_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  return !ec && fs::exists(status) && !fs::is_directory(status);
}

fs::path canonical_or_same(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : canonical;
}

// A directory to search, with the role its files are named by in the key.
struct SearchDir {
  fs::path path;      // canonical
  std::string label;  // "include[0]", "toolkit[1]"
};

struct Loader {
  KernelSource source;
  std::vector<SearchDir> dirs;            // -I dirs, then the toolkit's
  std::size_t user_dirs = 0;              // how many of dirs are -I dirs
  std::map<std::string, fs::path> given;  // header name given to NVRTC -> its file
  std::set<fs::path> followed;            // files already scanned (canonical)

  // The stable name of a file found on disk: the innermost search directory it lies under
  // (include/cccl rather than include) and the path below it, else its absolute path.
  std::string dependency_name(const fs::path& file) const {
    const SearchDir* innermost = nullptr;
    fs::path below;
    for (const SearchDir& dir : dirs) {
      fs::path relative = file.lexically_relative(dir.path);
      if (relative.empty() || *relative.begin() == "..") continue;
      if (!innermost || dir.path.native().size() > innermost->path.native().size()) {
        innermost = &dir;
        below = std::move(relative);
      }
    }
    return innermost ? innermost->label + "/" + below.generic_string() : file.generic_string();
  }

  // The space's own -I directories only (not the toolkit's).
  bool search_user_dirs(const std::string& name) const {
    for (std::size_t i = 0; i < user_dirs && i < dirs.size(); ++i)
      if (names_a_file(dirs[i].path / name)) return true;
    return false;
  }

  // <cub/cub.cuh> includes CUB's host-side dispatch, which NVRTC refuses: a kernel that
  // includes it gets tiletune's device-side umbrella instead (every block, warp and thread
  // primitive of the toolkit's CUB; see nvrtc_cub.hpp), handed to NVRTC by that name, unless the
  // space's own -I provides a cub/cub.cuh.
  void give_cub_umbrella() {
    given.emplace(kCubUmbrellaName, fs::path("<tiletune>") / kCubUmbrellaName);
    source.headers.push_back({kCubUmbrellaName, std::string(kCubUmbrellaText)});
    scan(fs::path("<tiletune>") / kCubUmbrellaName, std::string(kCubUmbrellaText), false);
  }

  std::optional<fs::path> search_dirs(const std::string& name) const {
    for (const SearchDir& dir : dirs) {
      const fs::path candidate = dir.path / name;
      if (names_a_file(candidate)) return candidate;
    }
    return std::nullopt;
  }

  // A file NVRTC reads from disk: hashed and followed once. Its path is made normal lexically,
  // not resolved (a toolkit has hundreds of headers; a file reached through two spellings is
  // merely hashed twice).
  void depend_on(const fs::path& found) {
    const fs::path file = found.lexically_normal();
    if (!followed.insert(file).second) return;
    const std::string text = read_source_file(file, "header");
    source.dependencies.push_back({dependency_name(file), file, compile_detail::xxh3_128_hex(text)});
    scan(file, text, false);
  }

  // A header next to the source, handed to NVRTC by the name it is included under.
  void give(const IncludeDirective& include, const fs::path& includer, const fs::path& candidate) {
    const fs::path file = canonical_or_same(candidate);
    auto [it, inserted] = given.emplace(include.name, file);
    if (!inserted && it->second != file) {
      throw Error(includer.string() + ":" + std::to_string(include.line) + ": #include \"" + include.name +
                  "\" names '" + file.string() + "', but '" + it->second.string() +
                  "' is included under the same name; NVRTC tells headers apart only by "
                  "the name as written, so give one of them a different path");
    }
    if (!inserted) return;  // already loaded under this name
    std::string text = read_source_file(candidate, "header");
    followed.insert(file);
    source.headers.push_back({include.name, text});
    scan(candidate, text, true);  // terminates: each name is loaded once
  }

  // One include of `includer`; `given_by_name` says whether the includer is handed to NVRTC
  // by name (the source, or a header next to it) rather than read by NVRTC from disk.
  void resolve(const IncludeDirective& include, const fs::path& includer, bool given_by_name) {
    if (include.form == IncludeDirective::Form::quoted && !include.next) {
      const fs::path beside = includer.parent_path() / include.name;
      if (names_a_file(beside)) {
        if (given_by_name) return give(include, includer, beside);  // refuses a second file under one name
        if (!given.contains(include.name)) depend_on(beside);
        return;  // else NVRTC takes the header given under that name, which is hashed
      }
    }
    if (given.contains(include.name)) return;
    if (include.form == IncludeDirective::Form::angle && include.name == kCubUmbrellaName &&
        !search_user_dirs(include.name))
      return give_cub_umbrella();
    if (auto found = search_dirs(include.name)) return depend_on(*found);
    // Not found: an angle include may be one of NVRTC's built-in headers, and an include under
    // an #if or a __has_include need not exist; NVRTC reports what it really misses. A quoted
    // include of the source (or of a header next to it) is the one kind that must be found
    // here: nothing else would hand it to NVRTC.
    if (given_by_name && include.form == IncludeDirective::Form::quoted && !include.probe && !include.next) {
      throw Error(includer.string() + ":" + std::to_string(include.line) + ": #include \"" + include.name +
                  "\": no such file (looked for '" + (includer.parent_path() / include.name).string() +
                  "' and in the include directories)");
    }
  }

  void scan(const fs::path& file, const std::string& text, bool given_by_name) {
    for (const IncludeDirective& include : compile_detail::include_directives(text))
      resolve(include, file, given_by_name);
  }
};

std::string source_hash(const KernelSource& source) {
  compile_detail::FieldHasher hasher;
  hasher.add(source.main.name);
  hasher.add(source.main.text);
  for (const auto& header : source.headers) {
    hasher.add(header.name);
    hasher.add(header.text);
  }
  hasher.add("dependencies " + std::to_string(source.dependencies.size()));
  for (const auto& dependency : source.dependencies) {
    hasher.add(dependency.name);
    hasher.add(dependency.hash);
  }
  return hasher.hex();
}

}  // namespace

std::vector<std::filesystem::path> toolkit_include_dirs() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("TILETUNE_CUDA_INCLUDE"); env && *env) {
    const std::string list = env;
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) candidates.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  } else {
    const fs::path include = TILETUNE_CUDA_INCLUDE_DIR;  // from the build (CUDAToolkit_INCLUDE_DIRS)
    candidates = {include, include / "cccl"};            // nvcc's order (nvcc.profile)
  }
  std::vector<fs::path> dirs;
  for (const fs::path& dir : candidates) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) dirs.push_back(dir);
  }
  return dirs;
}

IncludeSearch include_search(const std::vector<std::string>& options) {
  IncludeSearch search;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (auto dir = compile_detail::include_dir_option(options, i)) {
      if (!dir->empty()) search.include_dirs.emplace_back(*dir);
    } else if (auto header = compile_detail::pre_include_option(options, i)) {
      if (!header->empty()) search.pre_includes.push_back(*header);
    }
  }
  search.toolkit_dirs = toolkit_include_dirs();
  return search;
}

std::vector<std::string> resolve_include_dirs(const std::vector<std::string>& options,
                                              const std::filesystem::path& base) {
  std::vector<std::string> resolved;
  resolved.reserve(options.size());
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (auto dir = compile_detail::include_dir_option(options, i); dir && !dir->empty()) {
      const fs::path path(*dir);
      resolved.push_back("-I" + (path.is_absolute() ? path : (base / path).lexically_normal()).string());
    } else {
      resolved.push_back(options[i]);
    }
  }
  return resolved;
}

KernelSource load_kernel_source(const std::filesystem::path& path, const IncludeSearch& search) {
  Loader loader;
  loader.source.search = search;
  for (std::size_t i = 0; i < search.include_dirs.size(); ++i)
    loader.dirs.push_back({canonical_or_same(search.include_dirs[i]), "include[" + std::to_string(i) + "]"});
  loader.user_dirs = loader.dirs.size();
  for (std::size_t i = 0; i < search.toolkit_dirs.size(); ++i)
    loader.dirs.push_back({canonical_or_same(search.toolkit_dirs[i]), "toolkit[" + std::to_string(i) + "]"});

  loader.source.main = {path.filename().string(), read_source_file(path, "kernel source")};
  loader.followed.insert(canonical_or_same(path));
  for (const std::string& header : search.pre_includes) {
    IncludeDirective include;
    include.form = IncludeDirective::Form::angle;
    include.name = header;
    if (fs::path(header).is_absolute() && names_a_file(header))
      loader.depend_on(header);
    else
      loader.resolve(include, path, false);
  }
  loader.scan(path, loader.source.main.text, true);
  loader.source.hash = source_hash(loader.source);
  return std::move(loader.source);
}

KernelSource memory_source(std::string name, std::string text) {
  KernelSource source;
  source.main = {std::move(name), std::move(text)};
  source.hash = source_hash(source);
  return source;
}

KernelSource load_kernel_source(const std::filesystem::path& path) {
  return load_kernel_source(path, include_search({}));
}

const KernelSource& KernelSources::for_options(const std::vector<std::string>& options) {
  IncludeSearch search = include_search(options);
  auto it = loaded_.find(search);
  if (it == loaded_.end()) it = loaded_.emplace(search, load_kernel_source(path_, search)).first;
  return it->second;
}

CompileRequest KernelSources::request(std::vector<std::string> options, std::string arch, std::string entry) {
  const KernelSource& source = for_options(options);
  return CompileRequest{&source, std::move(options), std::move(arch), std::move(entry)};
}

}  // namespace tiletune
