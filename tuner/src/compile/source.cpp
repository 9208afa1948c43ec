// Loading a kernel source for NVRTC: the .cu file and, recursively, every header it pulls
// in with a quoted #include, each found relative to the file that includes it. NVRTC
// matches quoted includes against the header names it is given *as written*, so each
// header keeps the name from its #include line; two different files under one name
// cannot both be given to NVRTC and are refused.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "compile/hash.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error("cannot read " + what + " '" + path.string() + "': " +
                std::generic_category().message(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("error while reading " + what + " '" + path.string() + "'");
  return ss.str();
}

// Blanks out comments (keeping newlines, so line numbers stay right) so that a commented-out
// #include is not followed. String and character literals are skipped over intact.
std::string strip_comments(const std::string& text) {
  std::string out = text;
  enum class State { code, line_comment, block_comment, string, character } state = State::code;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case State::code:
        if (c == '/' && next == '/') {
          state = State::line_comment;
          out[i] = ' ';
        } else if (c == '/' && next == '*') {
          state = State::block_comment;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c == '"') {
          state = State::string;
        } else if (c == '\'') {
          state = State::character;
        }
        break;
      case State::line_comment:
        if (c == '\n') state = State::code;
        else out[i] = ' ';
        break;
      case State::block_comment:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = State::code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case State::string:
      case State::character:
        if (c == '\\') ++i;
        else if (c == (state == State::string ? '"' : '\'') || c == '\n') state = State::code;
        break;
    }
  }
  return out;
}

struct QuotedInclude {
  std::string name;
  int line = 0;
};

// The `#include "name"` directives of a text, in order. Angle-bracket includes are left to
// NVRTC (its built-in headers and -I paths).
std::vector<QuotedInclude> quoted_includes(const std::string& text) {
  std::vector<QuotedInclude> found;
  std::istringstream lines(strip_comments(text));
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line.compare(i, 7, "include") != 0) continue;
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string::npos || line[i] != '"') continue;
    const std::size_t end = line.find('"', i + 1);
    if (end == std::string::npos || end == i + 1) continue;
    found.push_back({line.substr(i + 1, end - i - 1), number});
  }
  return found;
}

struct Loader {
  KernelSource source;
  std::map<std::string, fs::path> name_to_path;  // header name -> the file it stands for

  void scan(const fs::path& file, const std::string& text) {
    const fs::path dir = file.parent_path();
    for (const auto& include : quoted_includes(text)) {
      const fs::path candidate = dir / include.name;
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec)) {
        throw Error(file.string() + ":" + std::to_string(include.line) + ": #include \"" +
                    include.name + "\": no such file (looked for '" + candidate.string() + "')");
      }
      const fs::path canonical = fs::weakly_canonical(candidate);
      auto [it, inserted] = name_to_path.emplace(include.name, canonical);
      if (!inserted && it->second != canonical) {
        throw Error(file.string() + ":" + std::to_string(include.line) + ": #include \"" +
                    include.name + "\" names '" + canonical.string() + "', but '" +
                    it->second.string() +
                    "' is included under the same name; NVRTC tells headers apart only by "
                    "the name as written, so give one of them a different path");
      }
      if (!inserted) continue;  // already loaded under this name
      std::string header_text = read_text(candidate, "header");
      source.headers.push_back({include.name, header_text});
      scan(candidate, header_text);  // terminates: each name is loaded once
    }
  }
};

}  // namespace

KernelSource load_kernel_source(const std::filesystem::path& path) {
  Loader loader;
  loader.source.main = {path.filename().string(), read_text(path, "kernel source")};
  loader.scan(path, loader.source.main.text);

  compile_detail::FieldHasher hasher;
  hasher.add(loader.source.main.name);
  hasher.add(loader.source.main.text);
  for (const auto& header : loader.source.headers) {
    hasher.add(header.name);
    hasher.add(header.text);
  }
  loader.source.hash = hasher.hex();
  return std::move(loader.source);
}

}  // namespace tiletune
