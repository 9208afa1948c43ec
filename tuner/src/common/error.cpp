// Formatting of the shared error types.
#include "tiletune/error.hpp"

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
