// Implementation of the positioned YAML reader used by the space loader. All yaml-cpp
// exceptions stop here or in the loader: callers only ever see SpaceError.
#include "space/yaml_reader.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

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

// Optimal string alignment distance (Levenshtein plus adjacent transpositions: "form"/"from"),
// in three rows of memory.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
}

// Suggestions are for typos in names: a long name or a huge candidate list is no typo, and
// comparing them would cost time quadratic in the input.
constexpr std::size_t kMaxSuggestedName = 64;
constexpr std::size_t kMaxCandidates = 4096;

template <typename Range>
std::optional<std::string> closest(std::string_view name, const Range& candidates) {
  if (name.size() > kMaxSuggestedName || std::size(candidates) > kMaxCandidates) return std::nullopt;
  const std::string key = lower(name);
  // Roughly one typo per three characters; names under three characters only match
  // ignoring case (any one-letter name is one edit from any other: no signal).
  std::size_t best = (name.size() < 3 ? 0 : std::max<std::size_t>(1, name.size() / 3)) + 1;
  std::optional<std::string> found;
  for (const auto& c : candidates) {
    if (std::string_view(c).size() > kMaxSuggestedName) continue;
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
    s += excerpt(n);
  }
  return s;
}

bool is_bool_word(std::string_view s) {
  const std::string l = lower(s);
  return l == "true" || l == "false" || l == "yes" || l == "no" || l == "on" || l == "off";
}

// --- the text before yaml-cpp sees it ------------------------------------------------------

// Line and column (1-based, in bytes) of a byte offset.
SourceLocation location_of(const std::string& file, std::string_view text, std::size_t offset) {
  SourceLocation loc{file, 1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else {
      ++loc.column;
    }
  }
  return loc;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// UTF-16 or UTF-32 (after its byte-order mark) to UTF-8.
std::string transcode(std::string_view raw, int unit, bool big_endian, const std::string& file) {
  auto fail = [&](std::size_t at, const std::string& what) {
    throw SpaceError(SourceLocation{file, 0, 0},
                     "the file is UTF-" + std::to_string(unit * 8) + " but " + what + " at byte " + std::to_string(at),
                     "save the search space as UTF-8");
  };
  if (raw.size() % static_cast<std::size_t>(unit) != 0) fail(raw.size(), "its length is not a whole number of units");
  auto read = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (int k = 0; k < unit; ++k) {
      const auto byte = static_cast<unsigned char>(raw[at + static_cast<std::size_t>(big_endian ? k : unit - 1 - k)]);
      v = (v << 8) | byte;
    }
    return v;
  };
  std::string out;
  out.reserve(raw.size());
  for (std::size_t at = 0; at < raw.size(); at += static_cast<std::size_t>(unit)) {
    std::uint32_t cp = read(at);
    if (unit == 2 && cp >= 0xD800 && cp < 0xDC00) {
      if (at + 4 > raw.size()) fail(at, "a surrogate pair is cut short");
      const std::uint32_t low = read(at + 2);
      if (low < 0xDC00 || low >= 0xE000) fail(at, "a surrogate pair is broken");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      at += 2;
    } else if ((cp >= 0xD800 && cp < 0xE000) || cp > 0x10FFFF) {
      fail(at, "it holds an invalid character");
    }
    append_utf8(out, cp);
  }
  return out;
}

// Length of the valid UTF-8 sequence at `at`, or 0.
std::size_t utf8_length(std::string_view s, std::size_t at) {
  const auto c = static_cast<unsigned char>(s[at]);
  std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || at + n > s.size() || (n == 2 && c < 0xC2)) return 0;
  std::uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(s[at + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return 0;
  return n;
}

// The text yaml-cpp will see: bounded, UTF-8, no byte-order mark, no NUL or other control
// character (YAML allows none but tab, line feed and carriage return).
std::string prepare_text(std::string raw, const std::string& file) {
  if (raw.size() > kMaxSpaceFileBytes)
    throw SpaceError(SourceLocation{file, 0, 0},
                     "the file has " + std::to_string(raw.size()) + " bytes, more than a search space may have (" +
                         std::to_string(kMaxSpaceFileBytes >> 20) + " MiB)",
                     "a search space is a short YAML file: is this the right file?");
  const auto starts = [&](std::string_view bom) { return raw.compare(0, bom.size(), bom) == 0; };
  using namespace std::string_view_literals;
  if (starts("\xFF\xFE\0\0"sv)) return prepare_text(transcode(std::string_view(raw).substr(4), 4, false, file), file);
  if (starts("\0\0\xFE\xFF"sv)) return prepare_text(transcode(std::string_view(raw).substr(4), 4, true, file), file);
  if (starts("\xFF\xFE"sv)) return prepare_text(transcode(std::string_view(raw).substr(2), 2, false, file), file);
  if (starts("\xFE\xFF"sv)) return prepare_text(transcode(std::string_view(raw).substr(2), 2, true, file), file);
  if (starts("\xEF\xBB\xBF"sv)) raw.erase(0, 3);
  if (const auto nuls = static_cast<std::size_t>(std::count(raw.begin(), raw.end(), '\0'));
      nuls > 0 && 4 * nuls >= raw.size())
    throw SpaceError(SourceLocation{file, 0, 0},
                     "the file is mostly NUL bytes: UTF-16 or UTF-32 without a byte-order mark, or not text at all",
                     "save the search space as UTF-8");
  for (std::size_t i = 0; i < raw.size();) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c == 0)
      throw SpaceError(location_of(file, raw, i), "the file holds a NUL byte", "a search space is text: remove it");
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
      throw SpaceError(location_of(file, raw, i), "the file holds the control character " + std::to_string(c),
                       "YAML allows no control characters but tab and line breaks: remove it");
    const std::size_t n = utf8_length(raw, i);
    if (n == 0)
      throw SpaceError(location_of(file, raw, i), "the file is not valid UTF-8 here", "save the search space as UTF-8");
    i += n;
  }
  return raw;
}

// The events of one document, enough to tell a real document from yaml-cpp 0.7's loop on a
// document that starts with ',': it "parses" a null there again and again without moving on.
struct DocumentProbe : YAML::EventHandler {
  int nodes = 0;
  bool lone_null = false;
  YAML::Mark first;
  void node(const YAML::Mark& mark, bool is_null) {
    if (nodes++ == 0) {
      first = mark;
      lone_null = is_null;
    } else {
      lone_null = false;
    }
  }
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, true); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, false); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    node(mark, false);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, false);
  }
  void OnMapEnd() override {}
};

// The first quote before `limit` that opens a scalar and is not closed on its line (comments
// skipped), or nullopt. Multi-line quoted scalars are legal YAML but never needed in a space.
std::optional<std::size_t> unclosed_quote(const std::string& text, int limit) {
  const std::size_t end = limit < 0 ? text.size() : std::min(text.size(), static_cast<std::size_t>(limit));
  for (std::size_t i = 0; i < end; ++i) {
    const char c = text[i];
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n')) {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    // A quote opens a scalar only where a value starts: after ": ", "- ", "[", "{", "," or a line start.
    const bool starts = i == 0 || text[i - 1] == ' ' || text[i - 1] == '[' || text[i - 1] == '{' ||
                        text[i - 1] == ',' || text[i - 1] == '\n';
    if ((c != '"' && c != '\'') || !starts) continue;
    std::size_t j = i + 1;
    for (; j < text.size() && text[j] != '\n'; ++j) {
      if (c == '"' && text[j] == '\\') {
        ++j;
      } else if (text[j] == c) {
        if (c == '\'' && j + 1 < text.size() && text[j + 1] == '\'') {
          ++j;  // '' is an escaped quote
          continue;
        }
        break;
      }
    }
    if (j >= text.size() || text[j] == '\n') return i;
    i = j;
  }
  return std::nullopt;
}

constexpr const char* kSyntaxHint =
    "check the indentation, brackets and quotes here; an expression containing ': ', a comma "
    "inside [...] or {...}, or starting with a special character must be quoted";

}  // namespace

std::string excerpt(std::string_view s) { return escaped_excerpt(s, kMaxQuotedLength); }

std::string YamlValue::text() const { return node.IsScalar() ? node.Scalar() : std::string(); }

std::string YamlValue::name() const { return path.empty() ? "the search space" : path; }

YamlReader::YamlReader(std::string text, std::string file)
    : text_(prepare_text(std::move(text), file)), file_(std::move(file)) {
  try {
    std::istringstream in(text_);
    YAML::Parser parser(in);
    DocumentProbe first;
    if (!parser.HandleNextDocument(first)) return;  // an empty stream: root() says so
    DocumentProbe second;
    if (parser.HandleNextDocument(second)) {
      const bool stuck = second.lone_null && second.first.pos >= 0 &&
                         static_cast<std::size_t>(second.first.pos) < text_.size() && text_[second.first.pos] == ',';
      if (stuck)
        fail(second.first, "YAML syntax error: unexpected ','",
             "a comma separates items inside [...] or {...} only: remove it or quote the value");
      fail(second.first, "more than one YAML document in the file ('---')", "keep one search space per file");
    }
    document_ = YAML::Load(text_);
  } catch (const YAML::DeepRecursion& e) {
    fail(e.mark, "YAML nesting deeper than " + std::to_string(e.depth()) + " levels",
         "a search space nests a few levels deep: look for unbalanced brackets");
  } catch (const YAML::Exception& e) {
    // An unclosed quote makes YAML read on to some later, unrelated line: point at the quote.
    if (const auto quote = unclosed_quote(text_, e.mark.pos))
      throw SpaceError(location_of(file_, text_, *quote),
                       "YAML syntax error: this quote is not closed on its line (YAML then failed at " +
                           at(e.mark).str() + ": " + e.msg + ")",
                       "close the quote, or quote the value with the other kind of quote");
    fail(e.mark, "YAML syntax error: " + e.msg, kSyntaxHint);
  }
}

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
  if (!scalar.is_plain() && start < text_.size() && (text_[start] == '"' || text_[start] == '\'')) ++start;
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

void YamlReader::fail_type(const YamlValue& value, std::string_view expected, std::string remedy) const {
  if (remedy.empty()) remedy = "see configs/transpose.yaml for an example of every key";
  fail(value, value.name() + ": expected " + std::string(expected) + ", got " + describe(value), std::move(remedy));
}

YamlValue YamlReader::root() const {
  if (!document_ || document_.IsNull())
    throw SpaceError(SourceLocation{file_, 1, 1}, "the search space is empty",
                     "a search space needs at least kernel, source, entry, params, launch, args and verify");
  check_tag(document_, document_.Mark(), "the search space");
  return YamlValue{document_, document_.Mark(), {}};
}

void YamlReader::check_tag(const YAML::Node& node, const YAML::Mark& mark, const std::string& path) const {
  // "?" is an untagged plain node, "!" an untagged quoted scalar, "" a null.
  const std::string& tag = node.Tag();
  if (tag.empty() || tag == "?" || tag == "!") return;
  fail(mark, path + ": the YAML tag '" + excerpt(tag) + "' is not used in a search space",
       "remove the tag: values are plain numbers, words, lists and maps");
}

std::optional<std::size_t> YamlReader::raw_end(const YAML::Node& plain) const {
  if (!plain.IsScalar() || plain.Tag() != "?" || plain.Mark().pos < 0) return std::nullopt;
  const auto pos = static_cast<std::size_t>(plain.Mark().pos);
  const std::string& s = plain.Scalar();
  if (pos + s.size() > text_.size() || text_.compare(pos, s.size(), s) != 0) return std::nullopt;
  return pos + s.size();
}

std::optional<SplitExpression> YamlReader::split_at(const std::vector<YAML::Node>& pieces, std::size_t first) const {
  if (!raw_end(pieces[first])) return std::nullopt;
  int depth = paren_depth(pieces[first].Scalar());
  if (depth <= 0) return std::nullopt;
  for (std::size_t i = first + 1; i < pieces.size(); ++i) {
    const auto end = raw_end(pieces[i]);
    if (!end) return std::nullopt;
    depth += paren_depth(pieces[i].Scalar());
    if (depth <= 0)
      return SplitExpression{static_cast<std::size_t>(pieces[first].Mark().pos), *end, pieces[first].Mark()};
  }
  return std::nullopt;
}

void YamlReader::fail_split(const SplitExpression& split, const std::string& path) const {
  const std::string whole = text_.substr(split.begin, split.end - split.begin);
  fail(split.mark,
       path + ": the expression '" + excerpt(whole) +
           "' was split by YAML at its comma (inside [...] and {...} a comma separates items)",
       "quote the whole expression: \"" + excerpt(whole) +
           "\" (`tiletune upgrade-space FILE --write` quotes every such expression)");
}

std::vector<YamlEntry> YamlReader::entries(const YamlValue& map, std::span<const std::string_view> allowed,
                                           std::string_view expected, std::string remedy) const {
  if (!map.is_map()) fail_type(map, expected, std::move(remedy));
  const bool flow = map.node.Style() == YAML::EmitterStyle::Flow;
  std::vector<YAML::Node> pieces;  // values and keys in order, to find split expressions
  std::vector<YamlEntry> out;
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    // In {count: max(N, M)} YAML sees the key "M)" with no value.
    if (flow && !pieces.empty() && value.IsNull() && raw_end(key)) {
      pieces.push_back(key);
      for (std::size_t first = 0; first + 1 < pieces.size(); ++first)
        if (auto split = split_at(pieces, first)) fail_split(*split, map.path);
    }
    if (!key.IsScalar())
      fail_type(YamlValue{key, key.Mark(), "a key " + map_place(map)}, "a name",
                "keys are plain names such as 'TILE' or 'grid'");
    check_tag(key, key.Mark(), "a key " + map_place(map));
    const std::string name = key.Scalar();
    if (name.size() > kMaxNameLength)
      fail(key.Mark(),
           "the key '" + excerpt(name) + "' " + map_place(map) + " is longer than " + std::to_string(kMaxNameLength) +
               " characters",
           "keys are short names such as 'TILE' or 'grid'");
    for (const YamlEntry& e : out) {
      if (e.key == name)
        fail(key.Mark(), "duplicate key '" + excerpt(name) + "' " + map_place(map),
             "it was first given at line " + std::to_string(e.key_mark.line + 1) + "; keep one of them");
    }
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string what = "unknown key '" + excerpt(name) + "' " + map_place(map);
      if (auto s = did_you_mean(name, allowed)) what += "; did you mean '" + *s + "'?";
      fail(key.Mark(), what, "valid keys " + map_place(map) + ": " + join_names(allowed));
    }
    // An empty value's own mark is wherever the next token starts: point at the key instead.
    const YAML::Mark mark = value.IsNull() ? key.Mark() : value.Mark();
    check_tag(value, mark, child_path(map.path, name));
    pieces.push_back(value);
    out.push_back(YamlEntry{name, key.Mark(), YamlValue{value, mark, child_path(map.path, name)}});
  }
  return out;
}

std::vector<YamlValue> YamlReader::items(const YamlValue& list, std::string_view expected, std::string remedy) const {
  if (!list.is_sequence()) fail_type(list, expected, std::move(remedy));
  std::vector<YAML::Node> nodes;
  for (const YAML::Node& item : list.node) nodes.push_back(item);
  if (list.node.Style() == YAML::EmitterStyle::Flow) {
    // In [ceil_div(N, TILE), 1] YAML sees "ceil_div(N" and "TILE)".
    for (std::size_t first = 0; first + 1 < nodes.size(); ++first)
      if (auto split = split_at(nodes, first)) fail_split(*split, list.path + "[" + std::to_string(first) + "]");
  }
  std::vector<YamlValue> out;
  for (const YAML::Node& item : nodes) {
    const YAML::Mark mark = item.Mark().pos >= 0 ? item.Mark() : list.mark;
    const std::string path = list.path + "[" + std::to_string(out.size()) + "]";
    check_tag(item, mark, path);
    out.push_back(YamlValue{item, mark, path});
  }
  return out;
}

std::vector<SplitExpression> YamlReader::split_expressions() const {
  std::vector<SplitExpression> found;
  // Depth is bounded by yaml-cpp's own guard on what it parsed.
  auto walk = [&](auto& self, const YAML::Node& node) -> void {
    if (node.IsSequence() || node.IsMap()) {
      std::vector<YAML::Node> pieces;
      if (node.IsSequence()) {
        for (const YAML::Node& item : node) pieces.push_back(item);
      } else {
        for (auto it = node.begin(); it != node.end(); ++it) {
          pieces.push_back(it->first);
          pieces.push_back(it->second);
        }
      }
      if (node.Style() == YAML::EmitterStyle::Flow) {
        for (std::size_t first = 0; first + 1 < pieces.size(); ++first) {
          if (auto split = split_at(pieces, first)) {
            found.push_back(*split);
            while (first + 1 < pieces.size() && pieces[first + 1].Mark().pos >= 0 &&
                   static_cast<std::size_t>(pieces[first + 1].Mark().pos) < split->end)
              ++first;
          }
        }
      }
      for (const YAML::Node& child : pieces) self(self, child);
    }
  };
  if (document_) walk(walk, document_);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  return found;
}

std::string YamlReader::describe(const YamlValue& value) const {
  if (value.is_null()) return "nothing";
  if (value.is_map()) return value.node.size() == 0 ? "an empty map" : "a map";
  if (value.is_sequence()) return value.node.size() == 0 ? "an empty list" : "a list";
  const std::string s = value.text();
  if (!value.is_plain()) return "the quoted string \"" + excerpt(s) + "\"";
  if (parse_integer(s)) return "the integer " + excerpt(s);
  if (is_bool_word(s)) return "the boolean " + s;
  if (parse_number(s)) return "the number " + excerpt(s);
  return "the string '" + excerpt(s) + "'";
}

std::int64_t YamlReader::integer(const YamlValue& value, std::string_view expected, std::string remedy) const {
  if (value.is_scalar()) {
    const std::string s = value.text();
    if (value.is_plain()) {
      if (auto v = parse_integer(s)) return *v;
      if (parse_number(s) && s.find_first_of(".eE") == std::string::npos)
        fail(value, value.name() + ": " + excerpt(s) + " does not fit in a 64-bit integer",
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

std::string YamlReader::string(const YamlValue& value, std::string_view expected, std::string remedy,
                               std::size_t max_length) const {
  if (!value.is_scalar() || value.text().empty()) fail_type(value, expected, std::move(remedy));
  if (value.text().size() > max_length)
    fail(value,
         value.name() + ": " + std::to_string(value.text().size()) + " characters, more than the " +
             std::to_string(max_length) + " allowed here",
         std::move(remedy));
  return value.text();
}

std::optional<std::string> did_you_mean(std::string_view name, std::span<const std::string> candidates) {
  return closest(name, candidates);
}

std::optional<std::string> did_you_mean(std::string_view name, std::span<const std::string_view> candidates) {
  return closest(name, candidates);
}

std::string join_names(std::span<const std::string> names) { return join(names); }
std::string join_names(std::span<const std::string_view> names) { return join(names); }

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
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

std::optional<double> parse_number(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.size() > 64) return std::nullopt;
  // Plain decimal notation only: strtod would also take "inf", "nan" and hex floats.
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+')
      return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace tiletune::detail
