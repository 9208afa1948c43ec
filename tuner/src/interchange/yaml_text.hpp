// Private to the interchange stage: the pieces of YAML text the importers (T1, Kernel Tuner caches)
// write, and the name rule their spaces need.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune::interchange_detail {

/// A double-quoted YAML scalar: every expression is written this way (real YAML: commas in
/// "ceil_div(N, T)" would otherwise split a flow sequence).
inline std::string yaml_quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

/// "[a, b]", each item quoted or as it is.
inline std::string yaml_list(const std::vector<std::string>& items, bool quote) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + (quote ? yaml_quoted(items[i]) : items[i]);
  return out + "]";
}

/// A C identifier: a letter or '_', then letters, digits and '_'.
inline bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace tiletune::interchange_detail
