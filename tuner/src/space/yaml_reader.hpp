// Reading YAML with positions, for the search-space loader: a thin layer over yaml-cpp in
// which every value knows where it was written and its key path ("params.TILE", "args[2]"),
// so that each error can name a file:line:column and suggest a fix. It also undoes one YAML
// surprise: inside [...] and {...} a comma ends a plain scalar, so `[ceil_div(N, TILE), 1]`
// reads as three scalars; pieces with unbalanced parentheses are joined back from the text.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/error.hpp"

namespace tiletune::detail {

/// One YAML value, where it was written and how to name it in a message.
struct YamlValue {
  YAML::Node node;                    ///< a null node when the value is empty or absent
  std::optional<std::string> joined;  ///< a plain scalar re-joined after flow-comma splitting
  YAML::Mark mark;                    ///< where to point (the key's mark for an empty value)
  std::string path;                   ///< key path for messages; empty for the document root

  [[nodiscard]] bool is_null() const { return !joined && node.IsNull(); }
  [[nodiscard]] bool is_scalar() const { return joined || node.IsScalar(); }
  [[nodiscard]] bool is_map() const { return !joined && node.IsMap(); }
  [[nodiscard]] bool is_sequence() const { return !joined && node.IsSequence(); }
  /// An unquoted, untagged scalar (its text is what YAML would type as int/bool/...).
  [[nodiscard]] bool is_plain() const { return joined || (node.IsScalar() && node.Tag() == "?"); }
  /// The scalar's text (empty for a non-scalar).
  [[nodiscard]] std::string text() const;
  /// "params.TILE" or, for the root, "the search space".
  [[nodiscard]] std::string name() const;
};

/// One key of a map and its value.
struct YamlEntry {
  std::string key;
  YAML::Mark key_mark;
  YamlValue value;
};

/// Parses one YAML document and reads values out of it, throwing SpaceError on every misuse.
class YamlReader {
 public:
  YamlReader(std::string text, std::string file);

  /// The document's root. Throws SpaceError for a syntax error, an empty file, or more than
  /// one document.
  [[nodiscard]] YamlValue root() const;

  [[nodiscard]] SourceLocation at(const YAML::Mark& mark) const;
  /// Position of character `offset` of a scalar's text, where it can be mapped back to the
  /// file exactly (single-line plain or quoted scalars); otherwise the scalar's own position.
  [[nodiscard]] SourceLocation at_offset(const YamlValue& scalar, std::size_t offset) const;

  [[noreturn]] void fail(const YAML::Mark& mark, std::string what, std::string remedy = {}) const;
  [[noreturn]] void fail(const YamlValue& value, std::string what, std::string remedy = {}) const;
  /// "<name>: expected <expected>, got <what value is>"; a generic hint when none is given.
  [[noreturn]] void fail_type(const YamlValue& value, std::string_view expected,
                              std::string remedy = {}) const;

  /// Entries of a map in document order. Rejects a non-map, non-scalar keys and duplicate
  /// keys; when `allowed` is not empty, also unknown keys (with a did-you-mean).
  [[nodiscard]] std::vector<YamlEntry> entries(const YamlValue& map,
                                               std::span<const std::string_view> allowed,
                                               std::string_view expected = "a map",
                                               std::string remedy = {}) const;
  /// Items of a list (flow-split expressions joined back). Rejects a non-list.
  [[nodiscard]] std::vector<YamlValue> items(const YamlValue& list,
                                             std::string_view expected = "a list",
                                             std::string remedy = {}) const;

  /// What a value is, for messages: "a map", "nothing", "the number 1.5", "the string 'abc'".
  [[nodiscard]] std::string describe(const YamlValue& value) const;

  /// A plain integer scalar (decimal or 0x hex, fits in 64 bits).
  [[nodiscard]] std::int64_t integer(const YamlValue& value, std::string_view expected = "an integer",
                                     std::string remedy = {}) const;
  /// A plain scalar true or false.
  [[nodiscard]] bool boolean(const YamlValue& value) const;
  /// A plain finite number (integer or decimal).
  [[nodiscard]] double number(const YamlValue& value) const;
  /// Any non-empty scalar, as text.
  [[nodiscard]] std::string string(const YamlValue& value, std::string_view expected = "a string",
                                   std::string remedy = {}) const;

 private:
  [[nodiscard]] std::optional<std::size_t> raw_end(const YAML::Node& plain) const;

  std::string text_;
  std::string file_;
};

/// The candidate closest to `name` by edit distance (case-insensitive), if close enough.
[[nodiscard]] std::optional<std::string> did_you_mean(std::string_view name,
                                                      std::span<const std::string> candidates);
[[nodiscard]] std::optional<std::string> did_you_mean(std::string_view name,
                                                      std::span<const std::string_view> candidates);
/// "a, b, c".
[[nodiscard]] std::string join_names(std::span<const std::string> names);
[[nodiscard]] std::string join_names(std::span<const std::string_view> names);
/// [A-Za-z_][A-Za-z0-9_]*
[[nodiscard]] bool is_identifier(std::string_view s);
/// Parses a whole decimal or 0x-hex integer with an optional sign.
[[nodiscard]] std::optional<std::int64_t> parse_integer(std::string_view s);

}  // namespace tiletune::detail
