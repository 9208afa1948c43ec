// Formatting of the shared error types.
#include "tiletune/error.hpp"

#include <cstdint>

namespace tiletune {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ':' + std::to_string(line);
    if (column > 0) s += ':' + std::to_string(column);
  }
  return s;
}

namespace {

// Bytes of the UTF-8 sequence that starts at text[i], or 0 when none does (a stray continuation
// byte, a truncated or overlong sequence, a surrogate, past U+10FFFF).
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t n = 0;
  std::uint32_t code = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2, code = c & 0x1Fu;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, code = c & 0x0Fu;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, code = c & 0x07u;
  else return 0;
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    code = (code << 6) | (b & 0x3Fu);
  }
  if ((n == 3 && code < 0x800) || (n == 4 && code < 0x10000) || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  return n;
}

}  // namespace

std::string escaped_excerpt(std::string_view text, std::size_t max_chars) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size(); ++shown) {
    if (shown == max_chars) {
      out += "... (" + std::to_string(text.size()) + " bytes)";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t') {
      out += c == '\n' ? "\\n" : "\\t";
      ++i;
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_sequence(text, i) : 0; n > 0) {
      out += text.substr(i, n);
      i += n;
    } else {
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++i;
    }
  }
  return out;
}

namespace {
std::string format_space_error(const SourceLocation& where, const std::string& what,
                               const std::string& remedy) {
  std::string s = where.str() + ": error: " + what;
  if (!remedy.empty()) s += "\n  hint: " + remedy;
  return s;
}
}  // namespace

SpaceError::SpaceError(SourceLocation where, std::string what, std::string remedy)
    : Error(format_space_error(where, what, remedy)),
      where_(std::move(where)),
      reason_(std::move(what)),
      remedy_(std::move(remedy)) {}

}  // namespace tiletune
