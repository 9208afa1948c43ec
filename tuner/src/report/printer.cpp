// The printers of tiletune/printer.hpp: an aligned table and Markdown for people, CSV and JSON
// for programs. Each is a do_print over a PrintDocument; what they share is how a cell reads in
// the human formats and which columns a format shows.
#include "tiletune/printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "common/text_out.hpp"

namespace tiletune {

namespace {

bool shown_to_people(const PrintColumn& c) { return c.shown != PrintColumn::Shown::machine; }
bool shown_to_programs(const PrintColumn& c) { return c.shown != PrintColumn::Shown::human; }

bool is_number(const PrintCell& cell) {
  return std::holds_alternative<std::int64_t>(cell) || std::holds_alternative<double>(cell);
}

// A list's items joined by sep.
std::string joined(const PrintCell& cell, std::string_view sep) {
  std::string out;
  auto add = [&](const auto& items) {
    for (const auto& item : items) out += fmt::format("{}{}", out.empty() ? "" : sep, item);
  };
  if (const auto* texts = std::get_if<std::vector<std::string>>(&cell)) add(*texts);
  if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&cell)) add(*ints);
  return out;
}

bool is_list(const PrintCell& cell) {
  return std::holds_alternative<std::vector<std::string>>(cell) ||
         std::holds_alternative<std::vector<std::int64_t>>(cell);
}

// A cell as people read it: "-" for nothing, reals rounded to the column's digits, a yes as "*",
// lists joined ("256x1x1", "a; b"), text cut to its first line and the column's width (in
// characters, never inside one). Text is made safe for a terminal (text_out::terminal_text):
// a cache's ESC sequences and stray bytes are shown, not obeyed.
std::string human_text(const PrintCell& cell, const PrintColumn& column) {
  if (std::holds_alternative<std::monostate>(cell)) return "-";
  if (std::holds_alternative<std::vector<std::int64_t>>(cell)) return joined(cell, "x");
  if (std::holds_alternative<std::vector<std::string>>(cell)) return text_out::terminal_text(joined(cell, "; "));
  if (const auto* b = std::get_if<bool>(&cell)) return *b ? "*" : "";
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    if (!std::isfinite(*d)) return "-";  // a cache edited by hand: no number to show
    return column.digits >= 0 ? fmt::format("{:.{}f}", *d, column.digits) : fmt::format("{}", *d);
  }
  std::string_view s = std::get<std::string>(cell);
  if (column.max_width == 0) return text_out::terminal_text(s);
  return text_out::cut_chars(text_out::terminal_text(s.substr(0, s.find('\n'))), column.max_width);
}

// The columns of a table that the human formats print, by index: the machine-only ones and the
// empty ones that may be dropped are left out.
std::vector<std::size_t> human_columns(const PrintTable& table) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const PrintColumn& column = table.columns[c];
    if (!shown_to_people(column)) continue;
    const bool empty = std::all_of(table.rows.begin(), table.rows.end(), [c](const std::vector<PrintCell>& row) {
      return std::holds_alternative<std::monostate>(row[c]);
    });
    if (column.drop_if_empty && empty) continue;
    out.push_back(c);
  }
  return out;
}

std::string heading(const PrintColumn& c) { return text_out::terminal_text(c.heading.empty() ? c.key : c.heading); }

// Numbers are right-aligned, so is the heading over them.
bool numeric_column(const PrintTable& table, std::size_t c) {
  for (const auto& row : table.rows)
    if (!std::holds_alternative<std::monostate>(row[c])) return is_number(row[c]);
  return false;
}

class TablePrinter final : public Printer {
 public:
  using Printer::Printer;

 private:
  void do_print(const PrintDocument& document) override {
    bool first = true;
    for (const PrintTable& table : document.tables) {
      if (!first) out() << '\n';
      first = false;
      if (document.tables.size() > 1 && !table.name.empty()) out() << table.name << ":\n";
      print_table(table);
    }
  }

  void print_table(const PrintTable& table) {
    const std::vector<std::size_t> columns = human_columns(table);
    std::vector<std::vector<std::string>> cells(table.rows.size());
    std::vector<std::size_t> width;
    std::vector<bool> right;
    for (std::size_t c : columns) {
      width.push_back(text_out::display_width(heading(table.columns[c])));
      right.push_back(numeric_column(table, c));
    }
    for (std::size_t r = 0; r < table.rows.size(); ++r)
      for (std::size_t i = 0; i < columns.size(); ++i) {
        cells[r].push_back(human_text(table.rows[r][columns[i]], table.columns[columns[i]]));
        width[i] = std::max(width[i], text_out::display_width(cells[r].back()));
      }
    auto line = [&](auto&& text_of) {
      std::string s;
      for (std::size_t i = 0; i < columns.size(); ++i) {
        if (i > 0) s += "  ";
        s += text_out::padded(text_of(i), width[i], right[i]);
      }
      s.erase(s.find_last_not_of(' ') + 1);
      out() << s << '\n';
    };
    line([&](std::size_t i) { return heading(table.columns[columns[i]]); });
    for (const auto& row : cells) line([&](std::size_t i) { return row[i]; });
    if (!table.footer.empty()) out() << table.footer << '\n';
  }
};

class MarkdownPrinter final : public Printer {
 public:
  using Printer::Printer;

 private:
  // Cells come terminal-safe from human_text; a '|' would end the cell and a '<' open HTML
  // that a Markdown renderer obeys.
  static std::string escaped(std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += '\\';
      if (c == '<')
        out += "&lt;";
      else
        out += c == '\n' ? ' ' : c;
    }
    return out;
  }

  void do_print(const PrintDocument& document) override {
    bool first = true;
    for (const PrintTable& table : document.tables) {
      if (!first) out() << '\n';
      first = false;
      if (document.tables.size() > 1 && !table.name.empty()) out() << "### " << table.name << "\n\n";
      const std::vector<std::size_t> columns = human_columns(table);
      std::string head = "|", rule = "|";
      for (std::size_t c : columns) {
        head += " " + escaped(heading(table.columns[c])) + " |";
        rule += numeric_column(table, c) ? " ---: |" : " --- |";
      }
      out() << head << '\n' << rule << '\n';
      for (const auto& row : table.rows) {
        std::string line = "|";
        for (std::size_t c : columns) line += " " + escaped(human_text(row[c], table.columns[c])) + " |";
        out() << line << '\n';
      }
      if (!table.footer.empty()) out() << '\n' << table.footer << '\n';
    }
  }
};

class CsvPrinter final : public Printer {
 public:
  using Printer::Printer;

 private:
  // RFC 4180 (text_out::csv_field): a field with a comma, a quote or a line break is quoted.
  static std::string field(std::string_view s) { return text_out::csv_field(s); }

  static std::string text(const PrintCell& cell) {
    if (const auto* s = std::get_if<std::string>(&cell)) return field(*s);
    if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&cell))  // shortest exact; empty (NULL) for no finite number
      return std::isfinite(*d) ? fmt::format("{}", *d) : std::string();
    if (const auto* b = std::get_if<bool>(&cell)) return *b ? "1" : "0";
    if (is_list(cell)) return field(joined(cell, " "));
    return {};
  }

  void do_print(const PrintDocument& document) override {
    if (document.tables.empty()) return;
    const PrintTable& table = document.tables.front();
    std::vector<std::size_t> columns;
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      if (shown_to_programs(table.columns[c])) columns.push_back(c);
    auto line = [&](auto&& text_of) {
      std::string s;
      for (std::size_t i = 0; i < columns.size(); ++i) s += (i ? "," : "") + text_of(columns[i]);
      out() << s << '\n';
    };
    line([&](std::size_t c) { return field(table.columns[c].key); });
    for (const auto& row : table.rows) line([&](std::size_t c) { return text(row[c]); });
  }
};

class JsonPrinter final : public Printer {
 public:
  using Printer::Printer;

 private:
  using Json = nlohmann::ordered_json;

  static Json value(const PrintCell& cell) {
    if (const auto* s = std::get_if<std::string>(&cell)) return *s;
    if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i;
    if (const auto* d = std::get_if<double>(&cell)) return std::isfinite(*d) ? Json(*d) : Json(nullptr);
    if (const auto* b = std::get_if<bool>(&cell)) return *b;
    if (const auto* texts = std::get_if<std::vector<std::string>>(&cell)) return *texts;
    if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&cell)) return *ints;
    return nullptr;
  }

  // One object per row; a NULL cell is left out (absent = not measured).
  static Json rows(const PrintTable& table) {
    Json out = Json::array();
    for (const auto& row : table.rows) {
      Json object = Json::object();
      for (std::size_t c = 0; c < table.columns.size(); ++c) {
        const PrintColumn& column = table.columns[c];
        if (!shown_to_programs(column) || std::holds_alternative<std::monostate>(row[c])) continue;
        Json cell = value(row[c]);
        if (cell.is_null()) continue;  // a number that is not finite: as absent as a NULL
        Json& into = column.group.empty() ? object : object[column.group];
        into[column.key] = std::move(cell);
      }
      out.push_back(std::move(object));
    }
    return out;
  }

  void do_print(const PrintDocument& document) override {
    Json doc;
    if (document.fields.empty() && document.tables.size() == 1) {
      doc = rows(document.tables.front());
    } else {
      doc = Json::object();
      for (const PrintField& f : document.fields) (f.group.empty() ? doc : doc[f.group])[f.key] = value(f.value);
      for (const PrintTable& table : document.tables) doc[table.name] = rows(table);
    }
    // Through the escaping layer: valid UTF-8 whatever the cache holds; the caller reports the count.
    out() << text_out::dump_json(doc, 2, &replaced_) << '\n';
  }
};

}  // namespace

std::string_view print_format_name(PrintFormat format) noexcept {
  switch (format) {
    case PrintFormat::table: return "table";
    case PrintFormat::csv: return "csv";
    case PrintFormat::json: return "json";
    case PrintFormat::markdown: return "markdown";
  }
  return "table";
}

std::optional<PrintFormat> parse_print_format(std::string_view name) noexcept {
  for (PrintFormat f : {PrintFormat::table, PrintFormat::csv, PrintFormat::json, PrintFormat::markdown})
    if (print_format_name(f) == name) return f;
  return std::nullopt;
}

std::unique_ptr<Printer> make_printer(PrintFormat format, std::ostream& out) {
  switch (format) {
    case PrintFormat::csv: return std::make_unique<CsvPrinter>(out);
    case PrintFormat::json: return std::make_unique<JsonPrinter>(out);
    case PrintFormat::markdown: return std::make_unique<MarkdownPrinter>(out);
    case PrintFormat::table: break;
  }
  return std::make_unique<TablePrinter>(out);
}

}  // namespace tiletune
