// One output interface for what the commands print (`show`, `best`, `export`, `plan`): a command
// builds a PrintDocument once (tables of typed cells, plus top-level fields) and hands it to the
// Printer of the chosen format — an aligned table, CSV, JSON or Markdown — instead of an
// `if (format)` chain per command.
//
// Modelled on nvbench's printer_base (nvbench/printer_base.cuh with csv_printer, json_printer and
// markdown_printer). The same: one base class per output, constructed on the std::ostream it
// writes to and move-only; the public call is non-virtual and forwards to a private virtual
// do_print hook that each format overrides; the data is given as named columns carrying a hint
// of what they hold (nvbench's summaries with "hint" and "short_name"), and each printer formats
// by the hint: CSV and JSON keep every digit, the human formats round. What differs: nvbench's
// printers walk its own benchmark/state objects (print_benchmark_results) and build their table
// inside each printer; ours print a format-neutral PrintDocument that the command builds once, so
// a command knows nothing of the formats. nvbench's CSV writes cells unquoted, ours quotes as RFC
// 4180 does; nvbench's terminal output is its Markdown, ours is a plain aligned table (Markdown
// is for pasting into documents); nvbench's logging hooks (log, log_run_state) have no
// counterpart here: progress and errors go to stderr elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tiletune {

/// A cell: nothing (NULL, not measured), text, an integer, a real, a yes/no, or a list of texts
/// or integers (a JSON array; joined in the other formats).
using PrintCell = std::variant<std::monostate, std::string, std::int64_t, double, bool, std::vector<std::string>,
                               std::vector<std::int64_t>>;

/// A column of a PrintTable.
struct PrintColumn {
  /// Which printers show it: the human ones (table, Markdown) show a shortened view, the machine
  /// ones (CSV, JSON) the full data, so a command may give a column for each.
  enum class Shown { everywhere, human, machine };

  std::string key{};      ///< CSV header and JSON key
  std::string heading{};  ///< table and Markdown heading; empty: the key
  int digits = -1;        ///< reals in the human formats: this many decimals; -1: every digit
  Shown shown = Shown::everywhere;
  bool drop_if_empty = false;  ///< human formats: left out when no row has a value in it
  std::size_t max_width = 0;   ///< human formats: text cut to its first line and this many chars
  std::string group{};         ///< JSON: the value sits in this object of its row ("params")
};

/// Rows of cells under columns; every row has one cell per column. (Every member has an
/// initializer, so that designated initializers may leave any out without a warning.)
struct PrintTable {
  std::string name{};  ///< JSON key in a document of several parts; a Markdown heading
  std::vector<PrintColumn> columns{};
  std::vector<std::vector<PrintCell>> rows{};
  std::string footer{};  ///< human formats: printed after the rows ("3 trials")
};

/// A value of the document beside its tables (JSON only).
struct PrintField {
  std::string key{};
  PrintCell value{};
  std::string group{};  ///< JSON: the value sits in this object of the document ("summary")
};

/// What one command prints. JSON: with no fields and one table, the array of its rows; else an
/// object of the fields and one array per table, under its name. CSV holds one table: the first
/// (fields and other tables are for JSON). The human formats print every table and its footer.
struct PrintDocument {
  std::vector<PrintField> fields{};
  std::vector<PrintTable> tables{};
};

enum class PrintFormat { table, csv, json, markdown };

[[nodiscard]] std::string_view print_format_name(PrintFormat format) noexcept;
[[nodiscard]] std::optional<PrintFormat> parse_print_format(std::string_view name) noexcept;

/// Prints documents in one format to the stream it was made with.
class Printer {
 public:
  explicit Printer(std::ostream& out) : out_(&out) {}
  virtual ~Printer() = default;
  Printer(const Printer&) = delete;
  Printer& operator=(const Printer&) = delete;
  Printer(Printer&&) = default;
  Printer& operator=(Printer&&) = default;

  void print(const PrintDocument& document) { do_print(document); }

  /// Bytes that were not UTF-8 and were written as U+FFFD (JSON only, whose text must be UTF-8),
  /// over every print so far: the command reports them once.
  [[nodiscard]] std::size_t replaced_bytes() const noexcept { return replaced_; }

 protected:
  [[nodiscard]] std::ostream& out() const noexcept { return *out_; }
  std::size_t replaced_ = 0;

 private:
  virtual void do_print(const PrintDocument& document) = 0;
  std::ostream* out_;
};

/// The printer of a format, writing to out (which must outlive it).
[[nodiscard]] std::unique_ptr<Printer> make_printer(PrintFormat format, std::ostream& out);

}  // namespace tiletune
