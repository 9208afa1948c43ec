// Parsing of ptxas' verbose report (`-Xptxas -v`), which NVRTC puts in the program log and
// nvcc prints on stderr. A report covers every function of the module:
//
//   ptxas info    : Compiling entry function 'transpose' for 'sm_90'
//   ptxas info    : Function properties for transpose
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 32 registers, used 1 barriers, 4224 bytes smem, 360 bytes cmem[0]
//
// The field set varies with the version and the arch (no barriers before CUDA 12, no cmem on
// sm_90 with NVRTC 13), and nvcc indents the stack line where NVRTC prefixes it with
// "ptxas .", so fields are found by their unit words, not by position.
#include <charconv>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

// The integer written just before `suffix` in `line` ("4224 bytes smem" -> 4224), or -1.
long long number_before(std::string_view line, std::string_view suffix) {
  const std::size_t at = line.find(suffix);
  if (at == std::string_view::npos) return -1;
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  std::size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  long long value = -1;
  if (begin == end) return -1;
  std::from_chars(line.data() + begin, line.data() + end, value);
  return value;
}

// The integer written just after `prefix` ("Used 32 registers" after "Used " -> 32), or -1.
long long number_after(std::string_view line, std::string_view prefix) {
  const std::size_t at = line.find(prefix);
  if (at == std::string_view::npos) return -1;
  long long value = -1;
  const char* first = line.data() + at + prefix.size();
  auto [ptr, ec] = std::from_chars(first, line.data() + line.size(), value);
  return ec == std::errc() ? value : -1;
}

// The text between the first pair of single quotes after `marker`, or "" when absent.
std::string quoted_after(std::string_view line, std::string_view marker) {
  const std::size_t at = line.find(marker);
  if (at == std::string_view::npos) return {};
  const std::size_t open = line.find('\'', at + marker.size());
  if (open == std::string_view::npos) return {};
  const std::size_t close = line.find('\'', open + 1);
  if (close == std::string_view::npos) return {};
  return std::string(line.substr(open + 1, close - open - 1));
}

int clamp_int(long long v) { return v < 0 ? 0 : v > 0x7fffffff ? 0x7fffffff : static_cast<int>(v); }

}  // namespace

Resources parse_ptxas_report(const std::string& log, const std::string& function) {
  Resources resources;
  bool found_usage = false;
  bool found_properties = false;
  std::vector<std::string> seen;  // entry functions in the log, for the error message
  std::string entry;              // the entry function whose "Used" line comes next
  std::string properties_of;      // the function whose stack line comes next

  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find("Compiling entry function") != std::string::npos) {
      entry = quoted_after(line, "Compiling entry function");
      seen.push_back(entry);
      continue;
    }
    if (const std::size_t at = line.find("Function properties for "); at != std::string::npos) {
      properties_of = line.substr(at + std::string_view("Function properties for ").size());
      while (!properties_of.empty() && (properties_of.back() == ' ' || properties_of.back() == ':'))
        properties_of.pop_back();
      continue;
    }
    if (line.find("bytes stack frame") != std::string::npos) {
      // The first report wins when a log holds the function twice (several archs).
      if (properties_of == function && !found_properties) {
        found_properties = true;
        resources.stack_frame_bytes = clamp_int(number_before(line, "bytes stack frame"));
        resources.spill_store_bytes = clamp_int(number_before(line, "bytes spill stores"));
        resources.spill_load_bytes = clamp_int(number_before(line, "bytes spill loads"));
      }
      properties_of.clear();
      continue;
    }
    if (line.find("Used ") != std::string::npos && line.find(" registers") != std::string::npos) {
      if (entry == function && !found_usage) {
        found_usage = true;
        resources.registers = clamp_int(number_after(line, "Used "));
        resources.barriers = clamp_int(number_after(line, "used "));  // "used 1 barriers"
        resources.static_shared_bytes = clamp_int(number_before(line, "bytes smem"));
        resources.constant_bytes = clamp_int(number_before(line, "bytes cmem[0]"));
      }
      entry.clear();
    }
  }
  if (!found_usage) {
    std::string message = "ptxas report has no resource usage (\"Used N registers\") for '" + function + "'";
    if (seen.empty()) {
      message += "; the log holds no ptxas report (was -Xptxas -v given?)";
    } else {
      message += "; entry functions in the report:";
      for (const auto& name : seen) message += " '" + name + "'";
    }
    throw Error(message);
  }
  return resources;
}

}  // namespace tiletune
