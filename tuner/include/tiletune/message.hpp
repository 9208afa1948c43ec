// The message helper (issue 22): how every error message quotes what someone else wrote and how a
// library's exception becomes one line. Messages are "tiletune: WHERE: reason", one line of a few
// hundred bytes at most, whatever the input held (megabytes, ESC, newlines, bytes not UTF-8).
#pragma once

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

#include "tiletune/error.hpp"

namespace tiletune {

/// How many characters `quote` shows by default: a message quoting it stays one short line.
inline constexpr std::size_t kQuotedChars = 40;

/// Hostile input in a message (a name, a value, an argument): escaped_excerpt in single quotes,
/// (named so that std::quoted, which ADL finds for a std::string, is never a candidate);
/// a quote inside shown as \'. One line of at most 4 * max_chars + 30 bytes (an escape such as
/// \x1b counts as one character), however many megabytes the text has.
[[nodiscard]] std::string quote(std::string_view text, std::size_t max_chars = kQuotedChars);

/// Any message (a library's what(), text already formatted) as one line of at most `max_chars`
/// characters: newlines and control characters escaped, the rest cut with "... (N bytes)".
[[nodiscard]] std::string one_line(std::string_view message, std::size_t max_chars = 200);

/// What an exception says, as one line for "tiletune: WHERE: reason": a filesystem error as its
/// path (quoted) and the system's reason, bad_alloc as "out of memory", length_error as "too
/// large", a JSON library's type or range error as "not the JSON expected: ...", a tiletune::Error
/// as its message, anything else as "internal error: ...". Never throws.
[[nodiscard]] std::string exception_reason(const std::exception_ptr& e) noexcept;

}  // namespace tiletune
