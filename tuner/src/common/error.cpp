// Formatting of the shared error types.
#include "tiletune/error.hpp"
#include "tiletune/message.hpp"

#include "common/text_out.hpp"

#include <cstdint>
#include <filesystem>
#include <new>

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

// U+0080 to U+009F (C2 80 to C2 9F): C1 controls, which some terminals obey (CSI is U+009B).
bool c1_control(std::string_view text, std::size_t i) {
  return static_cast<unsigned char>(text[i]) == 0xC2 && i + 1 < text.size() &&
         static_cast<unsigned char>(text[i + 1]) < 0xA0;
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
    } else if (const std::size_t n = c >= 0x80 ? text_out::utf8_length(text, i) : 0; n > 0 && !c1_control(text, i)) {
      out += text.substr(i, n);
      i += n;
    } else {
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++i;
    }
  }
  return out;
}

std::string quote(std::string_view text, std::size_t max_chars) {
  std::string out = escaped_excerpt(text, max_chars);
  // A quote inside would end the quoted text early to a reader.
  for (std::size_t at = out.find('\''); at != std::string::npos; at = out.find('\'', at + 2)) out.insert(at, 1, '\\');
  return "'" + out + "'";
}

std::string one_line(std::string_view message, std::size_t max_chars) { return escaped_excerpt(message, max_chars); }

std::string exception_reason(const std::exception_ptr& e) noexcept try {
  try {
    std::rethrow_exception(e);
  } catch (const std::filesystem::filesystem_error& x) {
    return (x.path1().empty() ? std::string() : quote(x.path1().native(), 120) + ": ") + x.code().message();
  } catch (const std::bad_alloc&) {
    return "out of memory (an input too large to hold?)";
  } catch (const std::length_error& x) {
    return "too large to hold in memory (" + one_line(x.what(), 80) + ")";
  } catch (const Error& x) { return one_line(x.what()); } catch (const std::exception& x) {
    // nlohmann::json's exceptions: "[json.exception.type_error.302] type must be string, ...".
    const std::string_view what = x.what();
    constexpr std::string_view json = "[json.exception.";
    if (what.starts_with(json) && what.find("] ") != std::string_view::npos)
      return "not the JSON expected: " + one_line(what.substr(what.find("] ") + 2));
    return "internal error: " + one_line(what);
  } catch (...) { return "internal error: an exception of unknown type"; }
} catch (...) { return "out of memory"; }

namespace {
std::string format_space_error(const SourceLocation& where, const std::string& what, const std::string& remedy) {
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
