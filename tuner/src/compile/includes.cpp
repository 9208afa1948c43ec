// Finding include directives in a source text without a preprocessor (see includes.hpp).
#include "compile/includes.hpp"

#include <string_view>

namespace tiletune::compile_detail {

namespace {

// The first position at or after `i` whose character is in `set`, or npos. A table lookup per
// byte, not the switch of a state machine: a CUB include pulls in some 600 toolkit headers,
// and this scan is most of reading them.
class CharSet {
 public:
  explicit constexpr CharSet(std::string_view chars) {
    for (char c : chars) in_[static_cast<unsigned char>(c)] = true;
  }
  [[nodiscard]] std::size_t next(const std::string& text, std::size_t i) const {
    for (const std::size_t n = text.size(); i < n; ++i)
      if (in_[static_cast<unsigned char>(text[i])]) return i;
    return std::string::npos;
  }

 private:
  bool in_[256] = {};
};

constexpr CharSet kCodeStops("/\"'");
constexpr CharSet kStringStops("\"\\\n");
constexpr CharSet kCharStops("'\\\n");

}  // namespace

std::string strip_comments(const std::string& text) {
  std::string out = text;
  const std::size_t n = out.size();
  auto blank = [&out](std::size_t from, std::size_t to) {  // keeps the line breaks
    for (std::size_t k = from; k < to; ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  std::size_t i = 0;
  while (i < n) {
    i = kCodeStops.next(out, i);
    if (i == std::string::npos) break;
    const char c = out[i];
    if (c == '/') {
      const char next = i + 1 < n ? out[i + 1] : '\0';
      if (next == '/') {
        const std::size_t end = std::min(out.find('\n', i), n);
        blank(i, end);
        i = end;
      } else if (next == '*') {
        const std::size_t close = out.find("*/", i + 2);
        const std::size_t end = close == std::string::npos ? n : close + 2;
        blank(i, end);
        i = end;
      } else {
        ++i;
      }
      continue;
    }
    // A string or character literal, kept intact: up to its closing quote or the line's end.
    const CharSet& stops = c == '"' ? kStringStops : kCharStops;
    for (i = i + 1; i < n;) {
      i = stops.next(out, i);
      if (i == std::string::npos) return out;
      if (out[i] == '\\') {
        i += 2;
        continue;
      }
      ++i;  // past the closing quote or the line break
      break;
    }
  }
  return out;
}

namespace {

// `"name"` or `<name>` starting at line[i] (after blanks); false when neither.
bool header_name_at(std::string_view line, std::size_t i, IncludeDirective& out) {
  i = line.find_first_not_of(" \t", i);
  if (i == std::string_view::npos) return false;
  const char open = line[i];
  if (open != '"' && open != '<') return false;
  const std::size_t end = line.find(open == '"' ? '"' : '>', i + 1);
  if (end == std::string_view::npos || end == i + 1) return false;
  out.form = open == '"' ? IncludeDirective::Form::quoted : IncludeDirective::Form::angle;
  out.name = std::string(line.substr(i + 1, end - i - 1));
  return true;
}

// `# include "x"` / `#include_next <x>` at the start of a line.
void directive_in(std::string_view line, int number, std::vector<IncludeDirective>& found) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return;
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string_view::npos || line.compare(i, 7, "include") != 0) return;
  IncludeDirective d;
  d.line = number;
  i += 7;
  if (line.compare(i, 5, "_next") == 0) {
    d.next = true;
    i += 5;
  }
  if (header_name_at(line, i, d)) found.push_back(std::move(d));
}

// Every `__has_include("x")` / `__has_include_next(<x>)` in a line.
void probes_in(std::string_view line, int number, std::vector<IncludeDirective>& found) {
  constexpr std::string_view kProbe = "__has_include";
  for (std::size_t at = line.find(kProbe); at != std::string_view::npos; at = line.find(kProbe, at + 1)) {
    std::size_t i = at + kProbe.size();
    IncludeDirective d;
    d.line = number;
    d.probe = true;
    if (line.compare(i, 5, "_next") == 0) {
      d.next = true;
      i += 5;
    }
    i = line.find_first_not_of(" \t", i);
    if (i == std::string_view::npos || line[i] != '(') continue;
    if (header_name_at(line, i + 1, d)) found.push_back(std::move(d));
  }
}

// options[i] as `short_name`VALUE, `long_name`=VALUE, or either followed by VALUE as the next
// option; blanks before VALUE are dropped ("-I dir" is one option NVRTC accepts).
std::optional<std::string> option_value(const std::vector<std::string>& options, std::size_t& i,
                                        std::string_view short_name, std::string_view long_name) {
  const std::string_view option = options[i];
  std::string_view value;
  if (!long_name.empty() && option.substr(0, long_name.size()) == long_name &&
      (option.size() == long_name.size() || option[long_name.size()] == '=')) {
    value = option.substr(std::min(option.size(), long_name.size() + 1));
  } else if (!short_name.empty() && option.substr(0, short_name.size()) == short_name) {
    value = option.substr(short_name.size());
  } else {
    return std::nullopt;
  }
  const std::size_t start = value.find_first_not_of(" \t");
  value = start == std::string_view::npos ? std::string_view{} : value.substr(start);
  if (value.empty() && i + 1 < options.size()) return options[++i];
  return std::string(value);
}

}  // namespace

std::optional<std::string> include_dir_option(const std::vector<std::string>& options, std::size_t& i) {
  return option_value(options, i, "-I", "--include-path");
}

std::optional<std::string> pre_include_option(const std::vector<std::string>& options, std::size_t& i) {
  const std::string& option = options[i];
  if (option == "-include") return option_value(options, i, "-include", "");
  return option_value(options, i, "", "--pre-include");
}

std::vector<IncludeDirective> include_directives(const std::string& text) {
  std::vector<IncludeDirective> found;
  const std::string code = strip_comments(text);
  const bool probes = code.find("__has_include") != std::string::npos;
  std::string_view rest(code);
  int number = 0;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    ++number;
    directive_in(line, number, found);
    if (probes && line.find("__has_include") != std::string_view::npos) probes_in(line, number, found);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return found;
}

}  // namespace tiletune::compile_detail
