// `tiletune upgrade-space`: rewrites a search space written for earlier versions into the
// current format, as small edits of its text, so that comments and layout stay as they were:
//  - an expression that YAML split at a comma inside [...] or {...} is quoted;
//  - `reference: cpu`, which picked a built-in reference by the kernel's name, names it;
//  - a reference config written as a bare map of params becomes {config: {...}};
//  - a space without `verify:` gets the check earlier versions used for it.
#include <algorithm>
#include <sstream>

#include "space/loader.hpp"

namespace tiletune {

namespace {

struct Edit {
  std::size_t begin = 0;
  std::size_t end = 0;  ///< replaced range [begin, end)
  std::string text;
  std::string note;
};

// The end of the flow collection opening at `begin` ('[' or '{'), quotes skipped.
std::optional<std::size_t> flow_end(const std::string& text, std::size_t begin) {
  int depth = 0;
  for (std::size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c; ++i)
        if (c == '"' && text[i] == '\\') ++i;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::nullopt;
}

std::string line_col(const std::string& text, std::size_t pos) {
  const auto line =
      1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(pos, text.size())), '\n');
  const std::size_t start = text.rfind('\n', pos == 0 ? 0 : pos - 1);
  const std::size_t column = pos - (start == std::string::npos || pos == 0 ? 0 : start + 1) + 1;
  return std::to_string(line) + ":" + std::to_string(column);
}

// The value of `key` in a map, or an undefined node (false in a test) when there is none.
YAML::Node child(const YAML::Node& map, std::string_view key) {
  if (map.IsMap())
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node(YAML::NodeType::Undefined);
}

bool is_shipped(std::string_view name) {
  const auto families = detail::shipped_families();
  return std::any_of(families.begin(), families.end(), [&](const detail::ShippedFamily& f) { return f.name == name; });
}

}  // namespace

SpaceUpgrade upgrade_space_text(const std::string& raw, const std::filesystem::path& path) {
  const detail::YamlReader yaml(raw, path.string());
  const std::string& text = yaml.text();
  std::vector<Edit> edits;
  for (const detail::SplitExpression& split : yaml.split_expressions()) {
    const std::string whole = text.substr(split.begin, split.end - split.begin);
    edits.push_back({split.begin, split.end, "\"" + whole + "\"", "quoted the expression \"" + whole + "\""});
  }
  const YAML::Node root = YAML::Load(text);
  const YAML::Node kernel = child(root, "kernel");
  const std::string family = kernel.IsDefined() && kernel.IsScalar() ? kernel.Scalar() : std::string();
  const YAML::Node params = child(root, "params");
  const YAML::Node verify = child(root, "verify");
  const std::string builtin = "{builtin: " + family + "}";
  std::vector<std::string> notes;
  if (!verify.IsDefined() || verify.IsNull()) {
    if (is_shipped(family)) {
      std::string append = text.empty() || text.back() == '\n' ? "" : "\n";
      append += "verify: {reference: " + builtin + "}\n";
      edits.push_back(
          {text.size(), text.size(), append,
           "added verify: {reference: " + builtin + "}, the check earlier versions chose by the kernel's name"});
    } else {
      notes.push_back("no verify: earlier versions looked for a built-in reference named '" + family +
                      "', and there is none; add 'verify: {reference: ...}' or 'verify: none' yourself");
    }
  } else if (const YAML::Node reference = child(verify, "reference"); reference.IsDefined()) {
    const auto pos = static_cast<std::size_t>(std::max(0, reference.Mark().pos));
    if (reference.IsScalar() && reference.Scalar() == "cpu") {
      if (is_shipped(family)) {
        edits.push_back({pos, pos + 3, builtin, "reference: cpu became reference: " + builtin});
      } else {
        notes.push_back(line_col(text, pos) + ": reference: cpu named no built-in reference ('" + family +
                        "' is no shipped family): choose one yourself");
      }
    } else if (reference.IsMap() && reference.size() > 0) {
      bool all_params = true;
      for (auto it = reference.begin(); it != reference.end(); ++it)
        all_params = all_params && it->first.IsScalar() && child(params, it->first.Scalar()).IsDefined();
      const auto end = reference.Style() == YAML::EmitterStyle::Flow ? flow_end(text, pos) : std::nullopt;
      if (all_params && end) {
        const std::string config = text.substr(pos, *end - pos);
        edits.push_back(
            {pos, *end, "{config: " + config + "}", "the reference config became {config: " + config + "}"});
      } else if (all_params) {
        notes.push_back(line_col(text, pos) +
                        ": the reference config is a block map: write it under 'config:' yourself");
      }
    }
  }
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  SpaceUpgrade out;
  out.text = text;
  for (const Edit& e : edits) {
    out.changes.push_back(line_col(text, e.begin) + ": " + e.note);
    out.text.replace(e.begin, e.end - e.begin, e.text);
  }
  std::reverse(out.changes.begin(), out.changes.end());
  out.notes = std::move(notes);
  return out;
}

}  // namespace tiletune
