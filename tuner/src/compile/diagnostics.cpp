// Reading NVRTC's log: its NUL bytes, the first error as a one-line reason, the warnings, and
// ptxas' errors turned into what they mean for the kernel (see diagnostics.hpp).
#include "compile/diagnostics.hpp"

#include <cctype>

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <string_view>

namespace tiletune::compile_detail {
namespace {

// Calls `f` on each line of `log` that is not indented: NVRTC indents the source lines it
// quotes under a message, and those may hold any text.
template <typename F>
void for_each_message_line(const std::string& log, F&& f) {
  std::string_view rest(log);
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() != ' ' && line.front() != '\t' && !f(line)) return;
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
}

// Whether `word` appears in `line` as a message kind: "error: ", "error #20-D: ", "warning #".
bool has_kind(std::string_view line, std::string_view word) {
  for (std::size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
    const std::size_t after = at + word.size();
    if (after < line.size() && (line[after] == ':' || line.substr(after, 2) == " #")) return true;
  }
  return false;
}

bool is_ptxas_line(std::string_view line, std::string_view kind) {
  if (line.substr(0, 6) != "ptxas ") return false;
  line.remove_prefix(6);
  const std::size_t start = line.find_first_not_of(' ');
  return start != std::string_view::npos && line.substr(start, kind.size()) == kind;
}

// The message of "ptxas error   : MESSAGE".
std::string_view ptxas_message(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return line;
  line.remove_prefix(colon + 1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '.')) line.remove_suffix(1);
  return line;
}

std::optional<std::uint64_t> parse_hex(std::string_view text) {
  if (text.substr(0, 2) == "0x") text.remove_prefix(2);
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KB", bytes / 1024);
  return fmt::format("{} B", bytes);
}

// "uses too much shared data (0x14000 bytes, 0xc000 max)" -> "static shared memory 81920 B >
// 48 KB max"; other messages stay as ptxas wrote them.
std::string explain_ptxas(std::string_view message) {
  constexpr std::string_view kShared = "uses too much shared data (";
  if (message.substr(0, kShared.size()) == kShared) {
    std::string_view numbers = message.substr(kShared.size());
    const std::size_t bytes_end = numbers.find(" bytes, ");
    const std::size_t max_end = numbers.find(" max)");
    if (bytes_end != std::string_view::npos && max_end != std::string_view::npos && max_end > bytes_end) {
      const auto used = parse_hex(numbers.substr(0, bytes_end));
      const auto max = parse_hex(numbers.substr(bytes_end + 8, max_end - bytes_end - 8));
      if (used && max) return fmt::format("static shared memory {} B > {} max", *used, bytes_text(*max));
    }
  }
  return "ptxas: " + std::string(message);
}

// The name in "Entry function 'NAME' ..." / "Function 'NAME' ...", and the rest after it.
std::pair<std::string, std::string_view> function_of(std::string_view message) {
  for (std::string_view lead : {"Entry function '", "Function '"}) {
    if (message.substr(0, lead.size()) != lead) continue;
    const std::size_t close = message.find('\'', lead.size());
    if (close == std::string_view::npos) break;
    std::string_view rest = message.substr(close + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return {std::string(message.substr(lead.size(), close - lead.size())), rest};
  }
  return {std::string(), message};
}

}  // namespace

std::string clean_log(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  for (char& c : log)
    if (c == '\0') c = '\n';
  if (!log.empty()) log += '\n';
  return log;
}

std::optional<PtxasError> first_ptxas_error(const std::string& log) {
  std::optional<PtxasError> found;
  for_each_message_line(log, [&](std::string_view line) {
    if (!is_ptxas_line(line, "error") && !is_ptxas_line(line, "fatal")) return true;
    auto [function, rest] = function_of(ptxas_message(line));
    PtxasError error;
    error.reason = function.empty() ? explain_ptxas(rest) : kernel_display_name(function) + ": " + explain_ptxas(rest);
    error.function = std::move(function);
    found = std::move(error);
    return false;
  });
  return found;
}

std::string first_error(const std::string& log) {
  std::string front_end;
  for_each_message_line(log, [&](std::string_view line) {
    if (line.substr(0, 6) == "ptxas " || !has_kind(line, "error")) return true;
    front_end = std::string(line);
    return false;
  });
  if (!front_end.empty()) return front_end;
  if (auto ptxas = first_ptxas_error(log)) return ptxas->reason;
  return {};
}

std::optional<std::string> macro_in_first_error(const std::string& log, const std::string& main_name,
                                                const std::vector<std::string>& macros) {
  const std::string first = first_error(log);
  const std::size_t at = first.empty() ? std::string::npos : log.find(first);
  if (at == std::string::npos || first.rfind(main_name + "(", 0) == 0) return std::nullopt;
  // The excerpt: the next line, indented.
  const std::size_t start = log.find('\n', at);
  if (start == std::string::npos) return std::nullopt;
  const std::string excerpt = log.substr(start + 1, log.find('\n', start + 1) - start - 1);
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const std::string& name : macros) {
    for (std::size_t p = excerpt.find(name); p != std::string::npos; p = excerpt.find(name, p + 1)) {
      const bool before = p > 0 && word_char(excerpt[p - 1]);
      const bool after = p + name.size() < excerpt.size() && word_char(excerpt[p + name.size()]);
      if (!before && !after) return name;
    }
  }
  return std::nullopt;
}

std::vector<std::string> log_warnings(const std::string& log) {
  std::vector<std::string> warnings;
  for_each_message_line(log, [&](std::string_view line) {
    const bool warning = line.substr(0, 6) == "ptxas " ? is_ptxas_line(line, "warning") : has_kind(line, "warning");
    if (warning) {
      std::string text(line);
      bool seen = false;
      for (const std::string& w : warnings) seen = seen || w == text;
      if (!seen) warnings.push_back(std::move(text));
    }
    return true;
  });
  return warnings;
}

std::string kernel_display_name(const std::string& symbol) {
  std::string_view rest(symbol);
  if (rest.substr(0, 2) != "_Z") return symbol;
  rest.remove_prefix(2);
  const bool nested = !rest.empty() && rest.front() == 'N';
  if (nested) rest.remove_prefix(1);
  std::string name;
  while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
    std::size_t length = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), length);
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (ec != std::errc() || length == 0 || length > rest.size()) return symbol;
    if (!name.empty()) name += "::";
    name += rest.substr(0, length);
    rest.remove_prefix(length);
    if (!nested) break;
  }
  return name.empty() ? symbol : name;
}

}  // namespace tiletune::compile_detail
