// Error types shared by every stage of the engine. Each error says what failed and where:
// a file:line:column for YAML, a config for a kernel, a call name for CUDA/NVRTC/SQLite.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tiletune {

/// A position in a text file; line and column are 1-based, 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:column" (omitting the parts that are unknown).
  [[nodiscard]] std::string str() const;
};

/// Text someone else wrote (a YAML value, a program's answer), fit for a message: at most
/// `max_chars` characters, then "... (N bytes)"; control characters and bytes that are not
/// UTF-8 escaped (\n, \t, \xNN).
[[nodiscard]] std::string escaped_excerpt(std::string_view text, std::size_t max_chars);

/// Base of every error tiletune throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A search space that cannot be used: message is "file:line:col: error: what\n  hint: remedy".
class SpaceError : public Error {
 public:
  SpaceError(SourceLocation where, std::string what, std::string remedy = {});
  [[nodiscard]] const SourceLocation& where() const noexcept { return where_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] const std::string& remedy() const noexcept { return remedy_; }

 private:
  SourceLocation where_;
  std::string reason_;
  std::string remedy_;
};

/// A syntax error in an expression; offset is the 0-based character position in its text.
class ExprSyntaxError : public Error {
 public:
  ExprSyntaxError(std::string what, std::size_t offset) : Error(std::move(what)), offset_(offset) {}
  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }

 private:
  std::size_t offset_;
};

/// An expression that could not be evaluated for one config (division by zero, overflow, ...).
class EvalError : public Error {
 public:
  using Error::Error;
};

}  // namespace tiletune
