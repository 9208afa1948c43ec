// Hostile caches through every output of the `tiletune` executable (issue 22, "Output"): bytes that
// are not UTF-8 (a compiler quoting a Latin-1 line), ESC sequences, line breaks, commas and quotes
// in params, infinite times. Each case asserts the exit status, that the output is valid for its
// format (json.loads, RFC 4180 read back, XML parse of the SVG, no control character on a
// terminal), that stderr is at most one located warning line, and that nothing it was given
// changed (tree_digest). CPU only, a few seconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/text_out.hpp"
#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/landscape.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

constexpr const char* kUuid = "GPU-0badc0de-0000-4000-8000-000000000001";

/// What a fixture's text is made of.
enum class Flavor { latin1, escapes, csv_meta, infinite };

std::ostream& operator<<(std::ostream& out, Flavor f) {
  constexpr const char* names[] = {"latin1", "escapes", "csv_meta", "infinite"};
  return out << names[static_cast<int>(f)];
}

/// The hostile part of a flavor: a param value, a detail and a device name.
struct Hostile {
  std::string value, detail, device;
};

Hostile hostile(Flavor f) {
  switch (f) {
    case Flavor::latin1: return {"caf\xe9", "k.cu(3): error: \"caf\xe9\" \xff\xfe is not UTF-8", "H200 caf\xe9"};
    case Flavor::escapes:
      return {"\x1b[2J\x1b]0;pwn\x07",
              "\x1b[31mred\x1b[0m\r\n\xc2\x9b"
              "31m\x7f",
              "H200 \x1b[5mblink\x1b[0m"};
    case Flavor::csv_meta:
      return {"two\nN=8192,TILE=1;T=forged,ok,0.001,0,0,,,,\nx", "a,\"quoted\",\nN=1,forged", "H200, \"PCIe\""};
    case Flavor::infinite: return {"inf", "time is inf", "H200"};
  }
  return {};
}

/// A cache of transpose trials at N=8192 whose text (params, detail, device and kernel version)
/// holds the flavor's hostile bytes; the infinite flavor's ok trials have infinite times and rates.
/// Returns the number of trials written.
std::size_t write_hostile_cache(const fs::path& path, Flavor flavor) {
  const Hostile h = hostile(flavor);
  CacheBuilder cache;
  cache.wal(false).device(kUuid, h.device).kernel("transpose", "hash" + h.value, "--opt=" + h.value, "13.0");
  // The fastest has integer params, so that a lookup (whose params are integers) finds it.
  const std::vector<std::pair<std::string, TrialStatus>> trials = {
      {"TILE=8;T=1", TrialStatus::ok},
      {"TILE=32;T=" + h.value, TrialStatus::ok},
      {"TILE=32;T=a b", TrialStatus::ok},
      {"TILE=32;T=say \"hi\"", TrialStatus::ok},
      {"TILE=64;T=" + h.value, TrialStatus::compile_failed},
      {"TILE=16;T=x" + h.value + "y", TrialStatus::wrong_result},
      {"TILE=4;T=plain", TrialStatus::ok}};
  double time = 0.1;
  for (const auto& [params, status] : trials) {
    if (status == TrialStatus::ok) {
      cache.trial("N=8192", params, time, [&](TrialRecord& t) {
        t.detail = h.detail;
        t.stddev_ms = time / 10;
        t.gbps = 100 / time;
        t.registers = 32;
        t.occupancy_offline = 0.5;
        t.compile_ms = 10;
        t.measure_ms = 5;
      });
    } else {
      cache.failed("N=8192", params, status, h.detail, [&](TrialRecord& t) { t.compile_log = h.detail; });
    }
    time += 0.1;
  }
  cache.build(path);
  if (flavor == Flavor::infinite) {  // record_trial refuses them; a hand-edited cache has them
    const CommandResult edit = run_command(
        "sqlite3 " + quote(path) +
        " 'UPDATE trials SET time_ms = 1e999, stddev_ms = 1e999, gbps = 1e999 WHERE time_ms > 0.15 AND time_ms < 0.45;"
        " UPDATE trials SET occupancy_offline = 1e999, stddev_ms = 1e999 WHERE time_ms > 0.65 AND time_ms < 1'");
    EXPECT_EQ(edit.exit_code, 0) << edit.output;
  }
  return trials.size();
}

/// What a case checks its stdout (or -o file) for.
enum class Check { json, csv, table, landscape, html, svg };

struct OutputCase {
  std::string args;  ///< after `tiletune`, with --db given; OUT is the output file
  Check check;
  int exit_code = 0;
};

std::ostream& operator<<(std::ostream& out, const OutputCase& c) { return out << c.args; }

CommandResult run_in(const fs::path& dir, const std::string& args, const fs::path& out, const fs::path& err) {
  // In a subshell: run_command's own 2>&1 must not undo the 2> here.
  return run_command("(cd " + quote(dir) + " && TILETUNE_DB=" + quote(dir / "none.db") +
                     " TILETUNE_CUBIN_CACHE=" + quote(dir / "cubin") + " timeout 60 " + quote(cli_path()) + " " + args +
                     " > " + quote(out) + " 2> " + quote(err) + ")");
}

/// Exit status of a python3 check of a file (argv[1]); its output for the message.
CommandResult python(const std::string& program, const fs::path& file) {
  const fs::path script = file.string() + ".py";
  { std::ofstream(script) << program; }
  return run_command("timeout 60 python3 " + quote(script) + " " + quote(file));
}

// Python's own parsers, strict: the JSON must be UTF-8 and parse; the SVG must parse as XML.
constexpr const char* kJsonCheck = "import json,sys; json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))";
constexpr const char* kSvgCheck = R"PY(import re,sys
import xml.etree.ElementTree as ET
text = open(sys.argv[1], 'rb').read().decode('utf-8')
svgs = re.findall(r'<svg .*?</svg>', text, re.S)
assert svgs, 'no svg'
for s in svgs:
    ET.fromstring(s)
    for v in re.findall(r'\b(?:cx|cy|x|y|x1|x2|y1|y2|width|height|r|points)="([^"]*)"', s):
        assert not re.search(r'nan|inf', v, re.I), v
print(len(svgs))
)PY";

/// No byte a terminal obeys: valid UTF-8, no C0 but line feeds, no DEL, no C1.
void expect_terminal_safe(const std::string& text) {
  EXPECT_TRUE(text_out::is_valid_utf8(text)) << text;
  for (std::size_t i = 0; i < text.size(); i += std::max<std::size_t>(1, text_out::utf8_length(text, i))) {
    const std::size_t n = std::max<std::size_t>(1, text_out::utf8_length(text, i));
    const std::uint32_t c = text_out::code_point(text, i, n);
    EXPECT_FALSE((c < 0x20 && c != '\n') || (c >= 0x7F && c <= 0x9F)) << "control " << c << " in:\n" << text;
  }
}

/// The RFC 4180 records of a CSV text, each with its field count.
std::vector<std::vector<std::string>> csv_records(const std::string& text) {
  text_out::CsvReader reader(text);
  std::vector<std::vector<std::string>> out;
  std::vector<text_out::CsvField> fields;
  while (!reader.at_end()) {
    const auto error = reader.record(fields);
    EXPECT_FALSE(error.has_value()) << *error;
    if (error) break;
    out.emplace_back();
    for (const auto& f : fields) out.back().push_back(f.text);
  }
  return out;
}

class HostileOutput : public ::testing::TestWithParam<std::tuple<Flavor, OutputCase>> {};

TEST_P(HostileOutput, ValidOutputAndNothingChanged) {
  const auto& [flavor, c] = GetParam();
  TempDir dir;
  const fs::path cache = dir.path() / "in" / "cache.db";
  fs::create_directories(cache.parent_path());
  const std::size_t trials = write_hostile_cache(cache, flavor);
  const std::string before = tree_digest(cache.parent_path());
  const fs::path out = dir.path() / "out.txt", err = dir.path() / "err.txt", file = dir.path() / "page";
  // The subcommand, then --db, then the case's options.
  std::string args = c.args;
  args.insert(args.find(' ') == std::string::npos ? args.size() : args.find(' '), " --db " + quote(cache));
  for (auto at = args.find("OUT"); at != std::string::npos; at = args.find("OUT")) args.replace(at, 3, quote(file));
  const CommandResult r = run_in(dir.path(), args, out, err);
  const std::string output = read_file(out), errors = read_file(err);
  // A recording holds only recordable params and finite numbers: the latin1 cache alone exports.
  const int expected = c.check == Check::landscape && flavor != Flavor::latin1 ? 1 : c.exit_code;
  ASSERT_EQ(r.exit_code, expected) << errors << output;
  EXPECT_EQ(tree_digest(cache.parent_path()), before) << "the cache or its folder changed";
  // stderr: nothing, the report's "report: wrote FILE", or one located line (bytes replaced in
  // JSON, a landscape refused).
  if (!errors.empty() && errors.rfind("report: wrote ", 0) != 0) {
    EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << errors;
    EXPECT_EQ(errors.rfind("tiletune: ", 0), 0u) << errors;
    expect_terminal_safe(errors);
  }
  switch (c.check) {
    case Check::json: {
      const CommandResult py = python(kJsonCheck, out);
      EXPECT_EQ(py.exit_code, 0) << py.output;
      expect_terminal_safe(output);  // JSON escapes every control character
      if (flavor == Flavor::latin1 && c.args.find("--size") == std::string::npos) {
        EXPECT_NE(errors.find("U+FFFD"), std::string::npos) << errors;
        EXPECT_NE(errors.find(cache.string()), std::string::npos) << errors;
      }
      break;
    }
    case Check::csv: {
      const auto records = csv_records(output);
      ASSERT_FALSE(records.empty());
      const bool best = c.args.rfind("best", 0) == 0;
      if (!best) EXPECT_EQ(records.size(), trials + 1) << output;  // no row forged, none lost
      for (const auto& rec : records) EXPECT_EQ(rec.size(), records.front().size());
      const CommandResult py = python(
          "import csv,sys; rows=list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8', "
          "errors='surrogateescape'))); print(len(rows))",
          out);
      EXPECT_EQ(py.exit_code, 0) << py.output;
      EXPECT_EQ(std::stoul(py.output), records.size()) << py.output;
      break;
    }
    case Check::table:
      expect_terminal_safe(output);
      if (c.args.rfind("show", 0) == 0 && c.args.find("markdown") == std::string::npos)
        EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), static_cast<long>(trials + 2)) << output;
      break;
    case Check::landscape: {
      if (expected == 1) {  // params a recording cannot hold, or an infinite time: refused
        EXPECT_TRUE(output.empty()) << output;
        EXPECT_NE(errors.find("landscape of transpose"), std::string::npos) << errors;
        break;
      }
      // The replay's reader gets exactly the cache's trials: no forged row, every value as it was.
      const Landscape l = load_landscape(out);
      std::multiset<std::string> read, stored;
      for (const auto& p : l.problems)
        for (const auto& t : p.trials) read.insert(p.problem + "|" + t.params);
      CacheDb db = CacheDb::open(cache, CacheDb::Mode::read_only);
      for (const TrialRow& row : db.trials({})) stored.insert(row.trial.key.problem + "|" + row.trial.key.params);
      EXPECT_EQ(read, stored) << output;
      break;
    }
    case Check::html:
    case Check::svg: {
      const std::string page = read_file(file);
      EXPECT_TRUE(text_out::is_valid_utf8(page));
      const CommandResult py = python(kSvgCheck, file);
      EXPECT_EQ(py.exit_code, 0) << py.output;
      for (const char* bad : {"\x1b", "NaN", ">nan", ">inf"}) EXPECT_EQ(page.find(bad), std::string::npos) << bad;
      break;
    }
  }
}

const std::string kLookup = std::string("best --kernel transpose --size N=8192 --device ") + kUuid;

INSTANTIATE_TEST_SUITE_P(
    HostileOutput, HostileOutput,
    ::testing::Combine(
        ::testing::Values(Flavor::latin1, Flavor::escapes, Flavor::csv_meta, Flavor::infinite),
        ::testing::Values(OutputCase{"show --format json", Check::json}, OutputCase{"best --format json", Check::json},
                          OutputCase{"export", Check::json}, OutputCase{"export --format t4", Check::json},
                          OutputCase{kLookup + " --format json", Check::json},
                          OutputCase{"show --format csv", Check::csv}, OutputCase{"export --format csv", Check::csv},
                          OutputCase{"best --format csv", Check::csv}, OutputCase{"show", Check::table},
                          OutputCase{"best", Check::table}, OutputCase{"show --format markdown", Check::table},
                          OutputCase{kLookup, Check::table},
                          OutputCase{"export --format landscape --kernel transpose", Check::landscape},
                          OutputCase{"report -o OUT", Check::html},
                          OutputCase{"report --format svg --plot progress -o OUT", Check::svg},
                          OutputCase{"report --format svg --plot param:TILE -o OUT", Check::svg},
                          OutputCase{"report --format svg --plot occupancy -o OUT", Check::svg})),
    [](const auto& info) {
      std::ostringstream name;
      name << std::get<0>(info.param) << "_" << info.index;
      return name.str();
    });

// --- the landscape round trip, value by value -------------------------------------------------

// A recording's params hold quotes and any byte from 0x80 (read back exactly); a comma, a ';', a
// line break or a control character is refused before anything is written (recordable_value).
// The detail may hold anything: it comes back as its first line.
struct LandscapeValue {
  std::string value;
  bool recordable;
};

std::ostream& operator<<(std::ostream& out, const LandscapeValue& v) { return out << text_out::terminal_text(v.value); }

class HostileLandscapeValue : public ::testing::TestWithParam<LandscapeValue> {};

TEST_P(HostileLandscapeValue, ReplayReadsExactlyTheRowsWritten) {
  const LandscapeValue& v = GetParam();
  TempDir dir;
  Landscape l;
  l.kernel = "transpose";
  l.header.emplace_back("device", "H200,\n# kernel: forged");
  LandscapeProblem p{"N=8192", {}};
  for (const std::string& value : {v.value, std::string("plain")}) {
    LandscapeTrial t;
    t.params = "TILE=32;T=" + value;
    t.status = TrialStatus::ok;
    t.time_ms = 0.5;
    t.detail = "\n" + v.value + "\nsecond line";
    p.trials.push_back(t);
  }
  l.problems.push_back(p);
  std::ostringstream text;
  if (!v.recordable) {
    EXPECT_THROW(write_landscape(text, l), Error);
    EXPECT_TRUE(text.str().empty());
    // The detail alone is hostile: written quoted, read back as its first line.
    l.problems[0].trials[0].params = "TILE=32;T=x";
  }
  write_landscape(text, l);
  const fs::path file = dir.write("rec.csv", text.str());
  const Landscape back = load_landscape(file);
  EXPECT_EQ(back.kernel, "transpose");
  EXPECT_EQ(back.header_value("device").value_or(""), "H200,");
  ASSERT_EQ(back.problems.size(), 1u) << text.str();
  ASSERT_EQ(back.problems[0].trials.size(), 2u) << text.str();
  const std::string first_line = v.value.substr(0, v.value.find_first_of("\r\n"));
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.problems[0].trials[i].params, l.problems[0].trials[i].params);
    if (!first_line.empty()) EXPECT_EQ(back.problems[0].trials[i].detail, first_line) << text.str();
  }
}

INSTANTIATE_TEST_SUITE_P(HostileOutput, HostileLandscapeValue,
                         ::testing::Values(LandscapeValue{"say \"hi\"", true}, LandscapeValue{"\"", true},
                                           LandscapeValue{"\"x\"y\"\"", true}, LandscapeValue{"caf\xe9", true},
                                           LandscapeValue{"\xff\xfe\x80", true}, LandscapeValue{"日本語", true},
                                           LandscapeValue{"a,b", false}, LandscapeValue{"two\nlines", false},
                                           LandscapeValue{"cr\r\nlf", false}, LandscapeValue{"\x1b[2J", false},
                                           LandscapeValue{"x\nN=8192,TILE=1;T=forged,ok,0.001,0,0,,,,\ny", false},
                                           LandscapeValue{",,,,,,,,,,", false}));

/// A time that is not finite is refused before anything is written (the reader refuses it).
TEST(HostileOutputLandscape, RefusesAnInfiniteTime) {
  Landscape l;
  l.kernel = "transpose";
  LandscapeTrial t;
  t.params = "TILE=32";
  t.status = TrialStatus::ok;
  t.time_ms = std::numeric_limits<double>::infinity();
  l.problems.push_back({"N=8192", {t}});
  std::ostringstream text;
  try {
    write_landscape(text, l);
    ADD_FAILURE() << "written: " << text.str();
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find("time_ms is inf"), std::string::npos) << e.what(); }
  EXPECT_TRUE(text.str().empty());
}

/// A recording written before quoting (an unquoted detail with commas) is still read.
TEST(HostileOutputLandscape, ReadsTheUnquotedDetailOfOlderRecordings) {
  const Landscape l = load_landscape(test_data_dir() / "data" / "landscapes" / "transpose.csv");
  bool comma = false;
  for (const auto& p : l.problems)
    for (const auto& t : p.trials) comma = comma || t.detail.find(", ") != std::string::npos;
  EXPECT_TRUE(comma);
}

// --- the report's size bound -------------------------------------------------------------------

/// A cache of n ok trials of one kernel, device and problem, each with its own params (one
/// param of n values), written by sqlite3 from a one-trial cache. Returns the report's size.
std::size_t report_size(std::size_t n) {
  TempDir dir;
  const fs::path cache = dir.path() / "many.db";
  {
    CacheBuilder()
        .wal(false)
        .device(kUuid, "H200")
        .kernel("transpose", "h", "", "13.0")
        .trial("N=8192", "TILE=0;ID=0", 1)
        .build(cache);
  }
  const CommandResult fill =
      run_command("sqlite3 " + quote(cache) +
                  " \"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < " + std::to_string(n) +
                  ") INSERT INTO trials(device_id,kernel_id,problem,params,status,time_ms,registers,occupancy_offline) "
                  "SELECT 1,1,'N=8192','TILE='||(n%97)||';ID='||n,'ok',0.01+(n*7919%10007)/1e4,16+n%64,0.5 FROM c\"");
  EXPECT_EQ(fill.exit_code, 0) << fill.output;
  const fs::path page = dir.path() / "report.html";
  const CommandResult r =
      run_command("timeout 300 " + quote(cli_path()) + " report --db " + quote(cache) + " -o " + quote(page));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string text = read_file(page);
  EXPECT_NE(text.find("only the best 2000 of"), std::string::npos);
  const CommandResult py = python(kSvgCheck, page);
  EXPECT_EQ(py.exit_code, 0) << py.output;
  return text.size();
}

// Ten times the trials, about the same page: the plots draw the best kMaxDrawnTrials, the tables
// are bounded. (Before the bound: 59 MB for 4000 trials, 595 MB for 40,000, since every trial was
// drawn in every plot and a param of 40,000 values made heatmaps of as many columns.)
TEST(HostileOutputReport, PageSizeIsBoundedWhateverTheTrials) {
  if (run_command("command -v sqlite3").exit_code != 0) GTEST_SKIP() << "needs the sqlite3 CLI";
  const std::size_t small = report_size(4000), large = report_size(40000);
  std::cout << "report of 4000 trials: " << small << " bytes; of 40000: " << large << " bytes\n";
  EXPECT_LT(large, small + small / 5) << small << " bytes for 4000 trials, " << large << " for 40000";
  EXPECT_LT(large, std::size_t{8} << 20);
}

}  // namespace
}  // namespace tiletune::testing
