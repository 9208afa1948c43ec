// Reading YAML with positions, for the search-space loader: a thin layer over yaml-cpp in
// which every value knows where it was written and its key path ("params.TILE", "args[2]"),
// so that each error can name a file:line:column and suggest a fix.
//
// The text is checked before yaml-cpp sees it, so that no input can hang it or eat memory:
// a size cap, the encoding (a UTF-8 byte-order mark is dropped, UTF-16 and UTF-32 with a mark
// are converted, anything else must be valid UTF-8 without NUL bytes), and the document
// structure (yaml-cpp 0.7's LoadAll loops forever on a document that starts with ','). Only
// one document is read, with YAML::Load, which calls the parser once.
//
// A search space is plain YAML: any YAML reader sees the same values. In particular an
// expression with a comma inside [...] or {...} must be quoted ("ceil_div(N, TILE)"); the
// reader recognises a plain expression that YAML split at such a comma and says how to quote it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tiletune/error.hpp"

namespace tiletune::detail {

/// Limits that keep every input's work bounded (documented in docs/reference/space.md, "Limits").
inline constexpr std::size_t kMaxSpaceFileBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxNameLength = 128;
inline constexpr std::size_t kMaxQuotedLength = 80;  ///< user text quoted in a message

/// One YAML value, where it was written and how to name it in a message.
struct YamlValue {
  YAML::Node node;   ///< a null node when the value is empty or absent
  YAML::Mark mark;   ///< where to point (the key's mark for an empty value)
  std::string path;  ///< key path for messages; empty for the document root

  [[nodiscard]] bool is_null() const { return node.IsNull(); }
  [[nodiscard]] bool is_scalar() const { return node.IsScalar(); }
  [[nodiscard]] bool is_map() const { return node.IsMap(); }
  [[nodiscard]] bool is_sequence() const { return node.IsSequence(); }
  /// An unquoted, untagged scalar (its text is what YAML would type as int/bool/...).
  [[nodiscard]] bool is_plain() const { return node.IsScalar() && node.Tag() == "?"; }
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

/// A plain expression that YAML split at a comma inside [...] or {...}: the byte range of the
/// whole expression in the text (from its first piece to the end of its last).
struct SplitExpression {
  std::size_t begin = 0;
  std::size_t end = 0;
  YAML::Mark mark;  ///< of the first piece
};

/// Parses one YAML document and reads values out of it, throwing SpaceError on every misuse.
class YamlReader {
 public:
  /// Checks the text (size, encoding, structure) and parses it. Throws SpaceError.
  YamlReader(std::string text, std::string file);

  /// The document's root (a null value for an empty document).
  [[nodiscard]] YamlValue root() const;
  /// The text as parsed (UTF-8, without a byte-order mark).
  [[nodiscard]] const std::string& text() const noexcept { return text_; }

  [[nodiscard]] SourceLocation at(const YAML::Mark& mark) const;
  /// Position of character `offset` of a scalar's text, where it can be mapped back to the
  /// file exactly (single-line plain or quoted scalars); otherwise the scalar's own position.
  [[nodiscard]] SourceLocation at_offset(const YamlValue& scalar, std::size_t offset) const;

  [[noreturn]] void fail(const YAML::Mark& mark, std::string what, std::string remedy = {}) const;
  [[noreturn]] void fail(const YamlValue& value, std::string what, std::string remedy = {}) const;
  /// "<name>: expected <expected>, got <what value is>"; a generic hint when none is given.
  [[noreturn]] void fail_type(const YamlValue& value, std::string_view expected, std::string remedy = {}) const;

  /// Entries of a map in document order. Rejects a non-map, non-scalar keys, duplicate keys,
  /// tags and split expressions; when `allowed` is not empty, also unknown keys (with a
  /// did-you-mean).
  [[nodiscard]] std::vector<YamlEntry> entries(const YamlValue& map, std::span<const std::string_view> allowed,
                                               std::string_view expected = "a map", std::string remedy = {}) const;
  /// Items of a list. Rejects a non-list, tags and split expressions.
  [[nodiscard]] std::vector<YamlValue> items(const YamlValue& list, std::string_view expected = "a list",
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
  /// Any non-empty scalar, as text (at most `max_length` bytes).
  [[nodiscard]] std::string string(const YamlValue& value, std::string_view expected = "a string",
                                   std::string remedy = {}, std::size_t max_length = 4096) const;

  /// Every split expression in the document, in text order (for the upgrade of old spaces).
  [[nodiscard]] std::vector<SplitExpression> split_expressions() const;

 private:
  [[nodiscard]] std::optional<std::size_t> raw_end(const YAML::Node& plain) const;
  [[nodiscard]] std::optional<SplitExpression> split_at(const std::vector<YAML::Node>& pieces, std::size_t first) const;
  void check_tag(const YAML::Node& node, const YAML::Mark& mark, const std::string& path) const;
  [[noreturn]] void fail_split(const SplitExpression& split, const std::string& path) const;

  std::string text_;
  std::string file_;
  YAML::Node document_;
};

/// The candidate closest to `name` by edit distance (case-insensitive), if close enough.
/// Bounded: names longer than 64 characters get no suggestion.
[[nodiscard]] std::optional<std::string> did_you_mean(std::string_view name, std::span<const std::string> candidates);
[[nodiscard]] std::optional<std::string> did_you_mean(std::string_view name,
                                                      std::span<const std::string_view> candidates);
/// "a, b, c".
[[nodiscard]] std::string join_names(std::span<const std::string> names);
[[nodiscard]] std::string join_names(std::span<const std::string_view> names);
/// [A-Za-z_][A-Za-z0-9_]*
[[nodiscard]] bool is_identifier(std::string_view s);
/// Parses a whole decimal or 0x-hex integer with an optional sign.
[[nodiscard]] std::optional<std::int64_t> parse_integer(std::string_view s);
/// Parses a whole finite decimal number ("0.5", "-1e-3", "32").
[[nodiscard]] std::optional<double> parse_number(std::string_view s);
/// User text for a message: at most kMaxQuotedLength characters, control characters escaped.
[[nodiscard]] std::string excerpt(std::string_view s);

}  // namespace tiletune::detail
