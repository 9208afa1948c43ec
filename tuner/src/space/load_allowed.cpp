// `allowed: {file: allowed.csv}`: the configs a file lists are the only ones enumerated. A
// front end that can only decide in Python which configs are valid (a Kernel Tuner restriction
// function) or that derives a value per config (a grid divisor computed by a callable, a
// generated source's variant) writes them here. The file is CSV: a header naming every param
// once, in any order, then one config per line with each param's value as written in params:
// (an integer, a number, a word; a field may be quoted "..." with "" inside, RFC 4180).
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "common/input_file.hpp"
#include "common/text_out.hpp"
#include "space/loader.hpp"

namespace tiletune {

bool AllowedConfigs::contains(std::span<const std::int64_t> config_values) const {
  if (config_values.size() != width) return false;
  const auto less = [&](std::uint32_t i, std::span<const std::int64_t> v) {
    const auto c = config(i);
    return std::lexicographical_compare(c.begin(), c.end(), v.begin(), v.end());
  };
  const auto it = std::lower_bound(by_value.begin(), by_value.end(), config_values, less);
  if (it == by_value.end()) return false;
  const auto c = config(*it);
  return std::equal(c.begin(), c.end(), config_values.begin(), config_values.end());
}

namespace detail {
namespace {

constexpr std::size_t kMaxAllowedBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxAllowedConfigs = 10'000'000;
constexpr std::string_view kAllowedKeys[] = {"file"};

// Each axis' values by their text, to index (enumeration position) and Config value.
struct AxisLookup {
  std::unordered_map<std::string, std::size_t> by_text;  // integer: decimal; real, text: the label
  std::vector<double> reals;                             // real axes: to match 0.50 against 0.5
};

}  // namespace

void SpaceLoader::read_allowed(const YamlValue& v) {
  const Entries es = yaml_.entries(v, kAllowedKeys, "a map {file: allowed.csv}",
                                   "write allowed: {file: allowed.csv}, the CSV relative to this file");
  const YamlEntry* file = find(es, "file");
  if (!file) yaml_.fail(v, v.name() + ": missing 'file'", "write allowed: {file: allowed.csv}");
  AllowedConfigs allowed;
  allowed.file = read_path(file->value, "allowed-configs file", "for example 'allowed: {file: allowed.csv}'");
  allowed.where = yaml_.at(file->value.mark);
  std::string text;
  try {
    text = read_input_file(allowed.file, "an allowed-configs file", kMaxAllowedBytes);
  } catch (const Error& e) { yaml_.fail(file->value, e.what(), "name a CSV file of at most 256 MiB"); }
  const std::string shown = excerpt(allowed.file.filename().string());
  auto fail_line = [&](std::size_t line, const std::string& what) {
    yaml_.fail(file->value, shown + ":" + std::to_string(line) + ": " + what,
               "the file has a header naming every param, then one config per line");
  };

  std::vector<AxisLookup> lookups(space_.params.size());
  for (std::size_t p = 0; p < space_.params.size(); ++p) {
    const Axis& a = space_.params[p];
    for (std::size_t k = 0; k < a.values.size(); ++k) {
      lookups[p].by_text.emplace(a.text_of(a.values[k]), k);
      if (a.kind == AxisKind::real) lookups[p].reals.push_back(a.real_of(a.values[k]));
    }
  }
  std::vector<std::size_t> column_param;  // the param of each column
  const std::size_t width = space_.params.size();
  std::vector<std::uint32_t> rows;  // value indexes, `width` per config, in params order
  // RFC 4180 through the one CSV reader (common/text_out.hpp): a quoted value may hold commas,
  // doubled quotes and line breaks.
  text_out::CsvReader csv(text);
  std::vector<text_out::CsvField> record;
  std::vector<std::string> values;
  while (!csv.at_end()) {
    const std::size_t line_number = static_cast<std::size_t>(csv.line());
    if (csv.peek_line().empty()) {
      csv.skip_line();
      continue;
    }
    if (const auto error = csv.record(record)) fail_line(line_number, *error);
    values.clear();
    for (text_out::CsvField& f : record) values.push_back(std::move(f.text));
    if (column_param.empty()) {  // the header
      for (const std::string& name : values) {
        const int p = space_.param_index(name);
        if (p < 0) fail_line(line_number, "'" + excerpt(name) + "' is not a param of this space");
        if (std::find(column_param.begin(), column_param.end(), static_cast<std::size_t>(p)) != column_param.end())
          fail_line(line_number, "'" + excerpt(name) + "' is named twice");
        column_param.push_back(static_cast<std::size_t>(p));
      }
      if (column_param.size() != space_.params.size()) {
        for (std::size_t p = 0; p < space_.params.size(); ++p)
          if (std::find(column_param.begin(), column_param.end(), p) == column_param.end())
            fail_line(line_number, "the header does not name the param " + space_.params[p].name);
      }
      continue;
    }
    if (values.size() != column_param.size())
      fail_line(line_number,
                std::to_string(values.size()) + " fields, the header names " + std::to_string(column_param.size()));
    if (rows.size() / width >= kMaxAllowedConfigs)
      fail_line(line_number, "more than " + std::to_string(kMaxAllowedConfigs) + " configs");
    const std::size_t row = rows.size();
    rows.resize(row + width);
    for (std::size_t c = 0; c < values.size(); ++c) {
      const std::size_t p = column_param[c];
      const Axis& a = space_.params[p];
      const std::string& field = values[c];
      auto found = lookups[p].by_text.find(field);
      std::optional<std::size_t> index;
      if (found != lookups[p].by_text.end()) index = found->second;
      if (!index && a.kind == AxisKind::integer)
        if (const auto x = parse_integer(field))
          if (auto f = lookups[p].by_text.find(std::to_string(*x)); f != lookups[p].by_text.end()) index = f->second;
      if (!index && a.kind == AxisKind::real)
        if (const auto x = parse_number(field)) {
          const auto r = std::find(lookups[p].reals.begin(), lookups[p].reals.end(), *x);
          if (r != lookups[p].reals.end()) index = static_cast<std::size_t>(r - lookups[p].reals.begin());
        }
      if (!index) fail_line(line_number, a.name + " = '" + excerpt(field) + "' is not one of its values");
      rows[row + p] = static_cast<std::uint32_t>(*index);
    }
  }
  if (column_param.empty())
    yaml_.fail(file->value, shown + " is empty: it needs a header and configs",
               "write a header naming every param, then one config per line");
  if (rows.empty() || width == 0)
    yaml_.fail(file->value, shown + " lists no config", "list at least one config under the header");
  // Enumeration order: the last param varies fastest, each param's values in YAML order, so
  // the rows sorted by their value indexes.
  const std::size_t count = rows.size() / width;
  const auto row_of = [&](std::size_t i) { return std::span<const std::uint32_t>(rows.data() + i * width, width); };
  const auto row_less = [&](std::size_t x, std::size_t y) {
    return std::ranges::lexicographical_compare(row_of(x), row_of(y));
  };
  std::vector<std::uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), row_less);
  order.erase(std::unique(order.begin(), order.end(),
                          [&](std::size_t x, std::size_t y) { return std::ranges::equal(row_of(x), row_of(y)); }),
              order.end());
  allowed.width = width;
  allowed.values.reserve(order.size() * width);
  for (const std::uint32_t r : order)
    for (std::size_t p = 0; p < width; ++p) allowed.values.push_back(space_.params[p].values[row_of(r)[p]]);
  allowed.by_value.resize(order.size());
  std::iota(allowed.by_value.begin(), allowed.by_value.end(), 0u);
  std::sort(allowed.by_value.begin(), allowed.by_value.end(), [&](std::uint32_t x, std::uint32_t y) {
    return std::ranges::lexicographical_compare(allowed.config(x), allowed.config(y));
  });
  space_.allowed = std::move(allowed);
}

}  // namespace detail
}  // namespace tiletune
