// Implementation of the positioned YAML reader used by the space loader. All yaml-cpp
// exceptions stop here or in the loader: callers only ever see SpaceError.
#include "space/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tiletune::detail {

namespace {

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// "at the top level" / "in launch": where a key was looked for, for messages.
std::string map_place(const YamlValue& map) {
  return map.path.empty() ? std::string("at the top level") : "in " + map.path;
}

// Net count of open parentheses: a flow-list piece like "ceil_div(N" is > 0.
int paren_depth(std::string_view s) {
  int depth = 0;
  for (char c : s) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
  return depth;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("form"/"from").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

template <typename Range>
std::optional<std::string> closest(std::string_view name, const Range& candidates) {
  const std::string key = lower(name);
  // Roughly one typo per three characters; names under three characters only match
  // ignoring case (any one-letter name is one edit from any other: no signal).
  std::size_t best = (name.size() < 3 ? 0 : std::max<std::size_t>(1, name.size() / 3)) + 1;
  std::optional<std::string> found;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(key, lower(c));
    if (d < best) {
      best = d;
      found = std::string(c);
    }
  }
  return found;
}

template <typename Range>
std::string join(const Range& names) {
  std::string s;
  for (const auto& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

bool is_bool_word(std::string_view s) {
  const std::string l = lower(s);
  return l == "true" || l == "false" || l == "yes" || l == "no" || l == "on" || l == "off";
}

std::optional<double> parse_number(const std::string& s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string shorten(const std::string& s) {
  return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

}  // namespace

std::string YamlValue::text() const {
  if (joined) return *joined;
  return node.IsScalar() ? node.Scalar() : std::string();
}

std::string YamlValue::name() const { return path.empty() ? "the search space" : path; }

YamlReader::YamlReader(std::string text, std::string file)
    : text_(std::move(text)), file_(std::move(file)) {}

SourceLocation YamlReader::at(const YAML::Mark& mark) const {
  SourceLocation loc{file_, 0, 0};
  if (mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column >= 0 ? mark.column + 1 : 0;
  }
  return loc;
}

SourceLocation YamlReader::at_offset(const YamlValue& scalar, std::size_t offset) const {
  SourceLocation loc = at(scalar.mark);
  if (!scalar.is_scalar() || scalar.mark.pos < 0 || loc.column == 0) return loc;
  const std::string s = scalar.text();
  offset = std::min(offset, s.size());
  auto start = static_cast<std::size_t>(scalar.mark.pos);
  // A quoted scalar's mark is at its opening quote.
  if (!scalar.is_plain() && start < text_.size() && (text_[start] == '"' || text_[start] == '\''))
    ++start;
  // Only map the offset when the file holds the text verbatim (no escapes, no line folding).
  const std::string_view prefix = std::string_view(s).substr(0, offset);
  if (prefix.find('\n') == std::string_view::npos && start + offset <= text_.size() &&
      text_.compare(start, offset, prefix) == 0)
    loc.column += static_cast<int>(start - static_cast<std::size_t>(scalar.mark.pos) + offset);
  return loc;
}

void YamlReader::fail(const YAML::Mark& mark, std::string what, std::string remedy) const {
  throw SpaceError(at(mark), std::move(what), std::move(remedy));
}

void YamlReader::fail(const YamlValue& value, std::string what, std::string remedy) const {
  fail(value.mark, std::move(what), std::move(remedy));
}

void YamlReader::fail_type(const YamlValue& value, std::string_view expected,
                           std::string remedy) const {
  if (remedy.empty()) remedy = "see configs/transpose.yaml for an example of every key";
  fail(value, value.name() + ": expected " + std::string(expected) + ", got " + describe(value),
       std::move(remedy));
}

YamlValue YamlReader::root() const {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text_);
  } catch (const YAML::Exception& e) {
    fail(e.mark, "YAML syntax error: " + e.msg,
         "check the indentation, brackets and quotes here; an expression containing ': ' or "
         "starting with a special character must be quoted");
  }
  if (docs.empty() || docs.front().IsNull())
    throw SpaceError(SourceLocation{file_, 1, 1}, "the search space is empty",
                     "a search space needs at least kernel, source, entry, params, launch and args");
  if (docs.size() > 1)
    fail(docs[1].Mark(), "more than one YAML document in the file ('---')",
         "keep one search space per file");
  return YamlValue{docs.front(), std::nullopt, docs.front().Mark(), {}};
}

std::optional<std::size_t> YamlReader::raw_end(const YAML::Node& plain) const {
  if (!plain.IsScalar() || plain.Tag() != "?" || plain.Mark().pos < 0) return std::nullopt;
  const auto pos = static_cast<std::size_t>(plain.Mark().pos);
  const std::string& s = plain.Scalar();
  if (pos + s.size() > text_.size() || text_.compare(pos, s.size(), s) != 0) return std::nullopt;
  return pos + s.size();
}

std::vector<YamlEntry> YamlReader::entries(const YamlValue& map,
                                           std::span<const std::string_view> allowed,
                                           std::string_view expected, std::string remedy) const {
  if (!map.is_map()) fail_type(map, expected, std::move(remedy));
  const bool flow = map.node.Style() == YAML::EmitterStyle::Flow;
  std::vector<YamlEntry> out;
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    // In {count: max(N, M)} YAML sees the key "M)" with no value: join it back.
    if (flow && !out.empty() && value.IsNull() && raw_end(key)) {
      YamlValue& prev = out.back().value;
      if (prev.is_plain() && paren_depth(prev.text()) > 0 && (prev.joined || raw_end(prev.node))) {
        const auto start = static_cast<std::size_t>(prev.mark.pos);
        prev.joined = text_.substr(start, *raw_end(key) - start);
        continue;
      }
    }
    if (!key.IsScalar())
      fail_type(YamlValue{key, std::nullopt, key.Mark(), "a key " + map_place(map)}, "a name",
                "keys are plain names such as 'TILE' or 'grid'");
    const std::string name = key.Scalar();
    for (const YamlEntry& e : out) {
      if (e.key == name)
        fail(key.Mark(), "duplicate key '" + name + "' " + map_place(map),
             "it was first given at line " + std::to_string(e.key_mark.line + 1) +
                 "; keep one of them");
    }
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string what = "unknown key '" + name + "' " + map_place(map);
      if (auto s = did_you_mean(name, allowed)) what += "; did you mean '" + *s + "'?";
      fail(key.Mark(), what, "valid keys " + map_place(map) + ": " + join_names(allowed));
    }
    // An empty value's own mark is wherever the next token starts: point at the key instead.
    const YAML::Mark mark = value.IsNull() ? key.Mark() : value.Mark();
    out.push_back(YamlEntry{name, key.Mark(),
                            YamlValue{value, std::nullopt, mark, child_path(map.path, name)}});
  }
  return out;
}

std::vector<YamlValue> YamlReader::items(const YamlValue& list, std::string_view expected,
                                        std::string remedy) const {
  if (!list.is_sequence()) fail_type(list, expected, std::move(remedy));
  const bool flow = list.node.Style() == YAML::EmitterStyle::Flow;
  std::vector<YamlValue> out;
  for (const YAML::Node& item : list.node) {
    // In [ceil_div(N, TILE), 1] YAML sees "ceil_div(N" and "TILE)": join them back.
    if (flow && !out.empty() && raw_end(item)) {
      YamlValue& prev = out.back();
      if (prev.is_plain() && paren_depth(prev.text()) > 0 && (prev.joined || raw_end(prev.node))) {
        const auto start = static_cast<std::size_t>(prev.mark.pos);
        prev.joined = text_.substr(start, *raw_end(item) - start);
        continue;
      }
    }
    const YAML::Mark mark = item.Mark().pos >= 0 ? item.Mark() : list.mark;
    out.push_back(YamlValue{item, std::nullopt, mark,
                            list.path + "[" + std::to_string(out.size()) + "]"});
  }
  return out;
}

std::string YamlReader::describe(const YamlValue& value) const {
  if (value.is_null()) return "nothing";
  if (value.is_map()) return value.node.size() == 0 ? "an empty map" : "a map";
  if (value.is_sequence()) return value.node.size() == 0 ? "an empty list" : "a list";
  const std::string s = value.text();
  if (!value.is_plain()) {
    if (value.node.Tag() == "!") return "the quoted string \"" + shorten(s) + "\"";
    return "a value tagged " + value.node.Tag();
  }
  if (parse_integer(s)) return "the integer " + s;
  if (is_bool_word(s)) return "the boolean " + s;
  if (parse_number(s)) return "the number " + shorten(s);
  return "the string '" + shorten(s) + "'";
}

std::int64_t YamlReader::integer(const YamlValue& value, std::string_view expected,
                                 std::string remedy) const {
  if (value.is_scalar()) {
    const std::string s = value.text();
    if (value.is_plain()) {
      if (auto v = parse_integer(s)) return *v;
      if (parse_number(s) && s.find_first_of(".eE") == std::string::npos)
        fail(value, value.name() + ": " + s + " does not fit in a 64-bit integer",
             "integers lie between -9223372036854775808 and 9223372036854775807");
      if (parse_number(s)) fail_type(value, expected, "values must be whole numbers");
    } else if (parse_integer(s)) {
      fail_type(value, expected, "remove the quotes: a quoted value is a string");
    }
  }
  if (remedy.empty()) remedy = "write a whole number such as 32 (decimal or 0x hex), unquoted";
  fail_type(value, expected, std::move(remedy));
}

bool YamlReader::boolean(const YamlValue& value) const {
  if (value.is_plain()) {
    const std::string l = lower(value.text());
    if (l == "true") return true;
    if (l == "false") return false;
  }
  fail_type(value, "true or false", "write true or false, unquoted");
}

double YamlReader::number(const YamlValue& value) const {
  if (value.is_plain()) {
    if (auto v = parse_number(value.text())) return *v;
  }
  fail_type(value, "a number", "write a number such as 0, 0.5 or 1e-5, unquoted");
}

std::string YamlReader::string(const YamlValue& value, std::string_view expected,
                               std::string remedy) const {
  if (!value.is_scalar() || value.text().empty()) fail_type(value, expected, std::move(remedy));
  return value.text();
}

std::optional<std::string> did_you_mean(std::string_view name, std::span<const std::string> candidates) {
  return closest(name, candidates);
}

std::optional<std::string> did_you_mean(std::string_view name,
                                        std::span<const std::string_view> candidates) {
  return closest(name, candidates);
}

std::string join_names(std::span<const std::string> names) { return join(names); }
std::string join_names(std::span<const std::string_view> names) { return join(names); }

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::optional<std::int64_t> parse_integer(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (magnitude > max + 1) return std::nullopt;
    if (magnitude == max + 1) return std::numeric_limits<std::int64_t>::min();
    return -static_cast<std::int64_t>(magnitude);
  }
  if (magnitude > max) return std::nullopt;
  return static_cast<std::int64_t>(magnitude);
}

}  // namespace tiletune::detail
