// The one escaping layer for text that leaves the program (issue 22): whatever bytes a cache
// holds (a compiler message quoting a Latin-1 line, a merged cache's ESC sequences), what is
// written is valid for where it goes.
//  - JSON: valid UTF-8 always; a byte that is not part of a UTF-8 character becomes U+FFFD and is
//    counted (the caller reports the count: the CLI once on stderr, the query library in the
//    document); C0 controls, DEL and C1 controls written as \u00XX, so nothing reaches a terminal raw.
//  - Terminal tables: controls shown as \n, \t, \x1b; bytes that are not UTF-8 as \xNN; widths
//    counted in characters, and text cut only between characters.
//  - CSV (and landscapes): fields quoted as RFC 4180 says, and read back by one reader.
//  - XML/HTML (SVG, the report): & < > " ' escaped, valid UTF-8, characters XML forbids replaced.
// Header-only: the query library links nothing of the engine and uses it too.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune::text_out {

/// Bytes of the UTF-8 character that starts at s[i], or 0 when none does (a stray continuation
/// byte, a truncated or overlong sequence, a surrogate, past U+10FFFF).
[[nodiscard]] inline std::size_t utf8_length(std::string_view s, std::size_t i) noexcept {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t code = 0;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2, code = c & 0x1Fu;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, code = c & 0x0Fu;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, code = c & 0x07u;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    code = (code << 6) | (b & 0x3Fu);
  }
  if ((n == 3 && code < 0x800) || (n == 4 && code < 0x10000) || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  return n;
}

/// The code point of the valid character of n bytes at s[i].
[[nodiscard]] inline std::uint32_t code_point(std::string_view s, std::size_t i, std::size_t n) noexcept {
  const auto c = static_cast<unsigned char>(s[i]);
  std::uint32_t code = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (std::size_t k = 1; k < n; ++k) code = (code << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  return code;
}

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

[[nodiscard]] inline bool is_valid_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

/// s with every byte that is not part of a UTF-8 character replaced by U+FFFD; adds the number
/// replaced to *replaced.
/// Calls emit(code, bytes) for each character of s in turn; a byte that is not part of a UTF-8
/// character comes as U+FFFD (bytes kReplacement) and adds one to *replaced. What JSON, XML and
/// valid_utf8 share: they differ only in what a character becomes.
template <class Emit>
void for_each_char_replacing(std::string_view s, std::size_t* replaced, Emit&& emit) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {
      if (replaced) ++*replaced;
      emit(std::uint32_t{0xFFFD}, kReplacement);
      ++i;
      continue;
    }
    emit(code_point(s, i, n), s.substr(i, n));
    i += n;
  }
}

[[nodiscard]] inline std::string valid_utf8(std::string_view s, std::size_t* replaced = nullptr) {
  std::string out;
  out.reserve(s.size());
  for_each_char_replacing(s, replaced, [&out](std::uint32_t, std::string_view bytes) { out.append(bytes); });
  return out;
}

/// The largest n <= max_bytes at which s may be cut without splitting a UTF-8 character (a
/// byte that is not UTF-8 counts as a character of its own).
[[nodiscard]] inline std::size_t utf8_boundary(std::string_view s, std::size_t max_bytes) noexcept {
  if (max_bytes >= s.size()) return s.size();
  std::size_t end = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = std::max<std::size_t>(1, utf8_length(s, i));
    if (i + n > max_bytes) break;
    i += n;
    end = i;
  }
  return end;
}

/// The number of characters of s (a byte that is not UTF-8 counts as one).
[[nodiscard]] inline std::size_t char_count(std::string_view s) noexcept {
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size(); ++count) i += std::max<std::size_t>(1, utf8_length(s, i));
  return count;
}

/// s cut to at most max_chars characters, never inside one; a cut one ends in `ellipsis`
/// (within the max_chars).
[[nodiscard]] inline std::string cut_chars(std::string_view s, std::size_t max_chars,
                                           std::string_view ellipsis = "...") {
  if (char_count(s) <= max_chars) return std::string(s);
  const std::size_t keep = max_chars > ellipsis.size() ? max_chars - ellipsis.size() : 0;
  std::size_t i = 0;
  for (std::size_t shown = 0; shown < keep && i < s.size(); ++shown) i += std::max<std::size_t>(1, utf8_length(s, i));
  return std::string(s.substr(0, i)) + std::string(ellipsis.substr(0, max_chars - keep));
}

namespace detail {
inline void append_hex_byte(std::string& out, unsigned char c, std::string_view prefix) {
  constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  out += kHex[c >> 4];
  out += kHex[c & 15];
}
}  // namespace detail

// ---- JSON -------------------------------------------------------------------------------------

/// s as a quoted JSON string: valid UTF-8 (bad bytes U+FFFD, counted in *replaced), " and the backslash
/// escaped, C0 controls, DEL and C1 controls as \u00XX.
inline void append_json_string(std::string& out, std::string_view s, std::size_t* replaced = nullptr) {
  out += '"';
  for_each_char_replacing(s, replaced, [&out](std::uint32_t code, std::string_view bytes) {
    if (code == '"')
      out += "\\\"";
    else if (code == '\\')
      out += "\\\\";
    else if (code == '\n')
      out += "\\n";
    else if (code == '\t')
      out += "\\t";
    else if (code == '\r')
      out += "\\r";
    else if (code < 0x20 || (code >= 0x7F && code <= 0x9F))
      detail::append_hex_byte(out, static_cast<unsigned char>(code), "\\u00");
    else
      out.append(bytes);
  });
  out += '"';
}

[[nodiscard]] inline std::string json_string(std::string_view s, std::size_t* replaced = nullptr) {
  std::string out;
  append_json_string(out, s, replaced);
  return out;
}

/// A number as JSON: shortest round-trip text; null when it is not finite (JSON has no NaN).
inline void append_json_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out += buf;
}

/// A copy of a nlohmann::json (or ordered_json) document whose strings, keys included, are valid
/// UTF-8 (bad bytes U+FFFD, counted in replaced).
template <class Json>
[[nodiscard]] Json repaired_json(const Json& j, std::size_t& replaced) {
  if (j.is_string()) return Json(valid_utf8(j.template get_ref<const typename Json::string_t&>(), &replaced));
  if (j.is_array()) {
    Json out = Json::array();
    for (const Json& v : j) out.push_back(repaired_json(v, replaced));
    return out;
  }
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it)
      out[valid_utf8(it.key(), &replaced)] = repaired_json(it.value(), replaced);
    return out;
  }
  return j;
}

/// Dumped JSON text with DEL and C1 controls (which nlohmann writes raw) as \u00XX. In valid
/// UTF-8 JSON they can only stand inside strings, where the escape means the same character.
[[nodiscard]] inline std::string escape_raw_controls(std::string_view dumped) {
  std::string out;
  out.reserve(dumped.size());
  for (std::size_t i = 0; i < dumped.size(); ++i) {
    const auto c = static_cast<unsigned char>(dumped[i]);
    const auto next = i + 1 < dumped.size() ? static_cast<unsigned char>(dumped[i + 1]) : 0;
    if (c == 0x7F) {
      out += "\\u007f";
    } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
      detail::append_hex_byte(out, next, "\\u00");
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Every JSON document of the CLI is written through here: valid UTF-8 (count of replaced bytes
/// added to *replaced), no raw control character, indented by `indent`, no final newline.
template <class Json>
[[nodiscard]] std::string dump_json(const Json& j, int indent, std::size_t* replaced) {
  std::size_t count = 0;
  const std::string text = escape_raw_controls(repaired_json(j, count).dump(indent));
  if (replaced) *replaced += count;
  return text;
}

/// The warning the CLI prints once when a JSON output replaced bytes ("" when none were).
[[nodiscard]] inline std::string replaced_warning(std::string_view what, std::size_t replaced) {
  if (replaced == 0) return {};
  return "tiletune: " + std::string(what) + ": warning: " + std::to_string(replaced) + " byte" +
         (replaced == 1 ? "" : "s") + " that are not UTF-8 written as U+FFFD in the JSON output";
}

// ---- terminal ---------------------------------------------------------------------------------

/// s as a terminal shows it safely: \n, \r, \t and other C0 controls, DEL and C1 controls
/// visible (\n, \r, \t, \x1b, \x7f, \u009b), a byte that is not UTF-8 as \xNN. The result is
/// valid UTF-8 of printable characters only. keep_lines: line feeds and tabs stay as they are
/// (a compiler's log printed as lines).
[[nodiscard]] inline std::string terminal_text(std::string_view s, bool keep_lines = false) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 0) {
      detail::append_hex_byte(out, c, "\\x");
      ++i;
      continue;
    }
    const std::uint32_t code = code_point(s, i, n);
    if (keep_lines && (code == '\n' || code == '\t'))
      out += static_cast<char>(code);
    else if (code == '\n')
      out += "\\n";
    else if (code == '\r')
      out += "\\r";
    else if (code == '\t')
      out += "\\t";
    else if (code < 0x20 || code == 0x7F)
      detail::append_hex_byte(out, static_cast<unsigned char>(code), "\\x");
    else if (code >= 0x80 && code <= 0x9F)
      detail::append_hex_byte(out, static_cast<unsigned char>(code), "\\u00");
    else
      out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

/// Columns that text made by terminal_text takes: one per character, except combining marks
/// and zero-width characters (none) and East Asian wide characters (two), roughly as wcwidth.
[[nodiscard]] inline std::size_t display_width(std::string_view s) noexcept {
  std::size_t width = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = std::max<std::size_t>(1, utf8_length(s, i));
    const std::uint32_t c = n == 1 ? static_cast<unsigned char>(s[i]) : code_point(s, i, n);
    i += n;
    if ((c >= 0x300 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F) || c == 0xFEFF) continue;
    const bool wide = (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
                      (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
                      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1FAFF) || (c >= 0x20000 && c <= 0x3FFFD);
    width += wide ? 2 : 1;
  }
  return width;
}

/// s padded with spaces to `width` display columns, on the left (right-aligned) or the right.
[[nodiscard]] inline std::string padded(std::string_view s, std::size_t width, bool right_align) {
  const std::size_t w = display_width(s);
  const std::string pad(w < width ? width - w : 0, ' ');
  return right_align ? pad + std::string(s) : std::string(s) + pad;
}

// ---- CSV (RFC 4180) ---------------------------------------------------------------------------

/// A CSV field: quoted when it holds a comma, a quote, CR or LF (its quotes doubled), else as is.
/// Bytes are kept as they are, so that a reader gets back exactly what was written.
[[nodiscard]] inline std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

struct CsvField {
  std::string text;
  bool quoted = false;
};

/// Reads RFC 4180 records from a text: fields separated by commas, records by LF or CRLF; a
/// quoted field may hold commas, line breaks and doubled quotes. Lenient where RFC 4180 is
/// silent: a quote inside an unquoted field is literal. The text must outlive the reader.
class CsvReader {
 public:
  explicit CsvReader(std::string_view text) : text_(text) {}

  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
  /// The 1-based line where the next record (or line) starts.
  [[nodiscard]] int line() const noexcept { return line_; }
  /// The next physical line as it is, without its line break (for comments and headers).
  [[nodiscard]] std::string_view peek_line() const noexcept {
    const std::string_view rest = text_.substr(pos_);
    std::string_view l = rest.substr(0, rest.find('\n'));
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return l;
  }
  void skip_line() noexcept {
    const auto nl = text_.find('\n', pos_);
    pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    ++line_;
  }

  /// The next record into `fields`; an error (nullopt when none) for a quoted field that is not
  /// closed, or text after a closing quote.
  std::optional<std::string> record(std::vector<CsvField>& fields) {
    fields.clear();
    for (;;) {
      CsvField f;
      if (pos_ < text_.size() && text_[pos_] == '"') {
        if (auto error = quoted(f)) return error;
      } else {
        while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n') f.text += text_[pos_++];
        if (!f.text.empty() && f.text.back() == '\r' && (pos_ >= text_.size() || text_[pos_] == '\n'))
          f.text.pop_back();
      }
      fields.push_back(std::move(f));
      if (pos_ >= text_.size()) break;
      const char sep = text_[pos_++];
      if (sep == '\n') break;
    }
    ++line_;
    line_ += pending_lines_;
    pending_lines_ = 0;
    return std::nullopt;
  }

 private:
  std::optional<std::string> quoted(CsvField& f) {
    f.quoted = true;
    ++pos_;
    for (;;) {
      if (pos_ >= text_.size()) return std::string("a quoted field is not closed");
      const char c = text_[pos_++];
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {
          f.text += '"';
          ++pos_;
          continue;
        }
        if (pos_ + 1 < text_.size() && text_[pos_] == '\r' && text_[pos_ + 1] == '\n') ++pos_;
        if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n')
          return std::string("text after a closing quote (a quote inside a quoted field is written \"\")");
        return std::nullopt;
      }
      if (c == '\n') ++pending_lines_;
      f.text += c;
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int pending_lines_ = 0;
};

// ---- XML and HTML -----------------------------------------------------------------------------

/// s fit for XML/HTML text or an attribute value: valid UTF-8 (bad bytes U+FFFD, counted in
/// *replaced), & < > " ' escaped, the characters XML 1.0 forbids (C0 but tab and line breaks,
/// U+FFFE, U+FFFF) and C1 controls shown as U+FFFD too.
[[nodiscard]] inline std::string xml_text(std::string_view s, std::size_t* replaced = nullptr) {
  std::string out;
  out.reserve(s.size());
  for_each_char_replacing(s, replaced, [&out](std::uint32_t c, std::string_view bytes) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&#39;";
    else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || (c >= 0x7F && c <= 0x9F) || c == 0xFFFE ||
             c == 0xFFFF)
      out += kReplacement;
    else
      out.append(bytes);
  });
  return out;
}

}  // namespace tiletune::text_out
