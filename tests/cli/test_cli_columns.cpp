// Every column of the trial column table (tiletune/trial_record.hpp) goes through the whole path:
// written with CacheDb (CacheBuilder), read back by `tiletune show` and `tiletune export` as CSV and as JSON,
// with its exact value (CSV and JSON keep every digit), and an unmeasured column stays empty
// (CSV) or absent (JSON). The human formats print through the same printers. CPU only, fast.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

CommandResult tiletune_in(const TempDir& dir, const std::string& args) {
  return run_command("cd " + quote(dir.path()) + " && TILETUNE_DB=" + quote(dir.path() / "cache.db") + " " +
                     quote(cli_path()) + " " + args);
}

TrialValue distinct_value(const TrialColumn& c, std::size_t i) {
  if (c.type == TrialColumn::Type::integer) return TrialValue(std::int64_t{900'001} + std::int64_t(i));
  // No comma and no quote: read_csv below splits at every comma before the detail.
  if (c.type == TrialColumn::Type::text)
    return TrialValue("k.cu(" + std::to_string(i) + "): warning #177-D: variable x was declared but never referenced");
  return TrialValue(2.0 / 3.0 + double(i) * 1.000000123);
}

// One ok trial with every column set, one timeout with none, of one kernel on one device.
void write_cache(const fs::path& path) {
  CacheBuilder()
      .device("GPU-11111111-0000-0000-0000-000000000000")
      .kernel("transpose", "hash1", "-O3", "12.4")
      .trial("N=8192", "TILE=64;PAD=1", 0,
             [](TrialRecord& ok) {
               for (std::size_t i = 0; i < trial_column_count; ++i)
                 trial_columns[i].set(ok, distinct_value(trial_columns[i], i));
             })
      .failed("N=8192", "TILE=8;PAD=0", TrialStatus::timeout, "overran, by far")
      .build(path);
}

double number_of(const TrialValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return double(*i);
  return std::get<double>(v);
}

// Splits CSV lines whose only quoted field may be the last (the detail).
std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::size_t pos = 0;
    while (true) {
      if (pos < line.size() && line[pos] == '"') {
        cells.push_back(line.substr(pos + 1, line.rfind('"') - pos - 1));
        break;
      }
      const std::size_t comma = line.find(',', pos);
      cells.push_back(line.substr(pos, comma - pos));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

void expect_csv_has_every_column(const std::string& csv) {
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 3u) << csv;  // the header and two trials, the ok one first
  const auto& header = rows[0];
  for (std::size_t i = 0; i < trial_column_count; ++i) {
    const TrialColumn& c = trial_columns[i];
    SCOPED_TRACE(std::string(c.name));
    const auto at = std::find(header.begin(), header.end(), c.name);
    ASSERT_NE(at, header.end()) << csv;
    const std::size_t k = std::size_t(at - header.begin());
    ASSERT_EQ(rows[1].size(), header.size()) << csv;
    const TrialValue want = distinct_value(c, i);
    if (const auto* text = std::get_if<std::string>(&want))
      EXPECT_EQ(rows[1][k], *text) << csv;
    else
      EXPECT_EQ(std::stod(rows[1][k]), number_of(want)) << csv;
    EXPECT_EQ(rows[2][k], "") << csv;
  }
}

void expect_json_has_every_column(const nlohmann::json& trials) {
  ASSERT_EQ(trials.size(), 2u) << trials.dump();
  for (std::size_t i = 0; i < trial_column_count; ++i) {
    const TrialColumn& c = trial_columns[i];
    SCOPED_TRACE(std::string(c.name));
    ASSERT_TRUE(trials[0].contains(c.name)) << trials.dump();
    const TrialValue want = distinct_value(c, i);
    if (const auto* text = std::get_if<std::string>(&want))
      EXPECT_EQ(trials[0][std::string(c.name)].get<std::string>(), *text);
    else
      EXPECT_EQ(trials[0][std::string(c.name)].get<double>(), number_of(want));
    EXPECT_FALSE(trials[1].contains(c.name));
  }
  EXPECT_EQ(trials[1]["detail"], "overran, by far");
}

TEST(CliColumns, ShowAndExportCarryEveryColumnAsCsvAndJson) {
  TempDir dir;
  write_cache(dir.path() / "cache.db");
  for (const std::string command : {"show --format csv", "export --format csv"}) {
    SCOPED_TRACE(command);
    const CommandResult r = tiletune_in(dir, command);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_csv_has_every_column(r.output);
  }
  const CommandResult show = tiletune_in(dir, "show --format json");
  ASSERT_EQ(show.exit_code, 0) << show.output;
  expect_json_has_every_column(nlohmann::json::parse(show.output));

  const CommandResult exported = tiletune_in(dir, "export --format json");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const auto doc = nlohmann::json::parse(exported.output);
  EXPECT_EQ(doc["schema_version"], CacheDb::latest_schema_version());
  expect_json_has_every_column(doc["trials"]);
  EXPECT_EQ(doc["trials"][0]["source_hash"], "hash1");
  EXPECT_EQ(doc["devices"][0]["uuid"], "GPU-11111111-0000-0000-0000-000000000000");
}

TEST(CliColumns, TheHumanFormatsShowTheChosenColumnsRounded) {
  TempDir dir;
  write_cache(dir.path() / "cache.db");
  const CommandResult table = tiletune_in(dir, "show");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  // time_ms rounded to its 4 digits, the params spaced, a NULL as "-", the count at the end.
  EXPECT_NE(table.output.find("0.6667"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("TILE=64 PAD=1"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("throttled"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("2 trials"), std::string::npos) << table.output;
  EXPECT_EQ(table.output.find("source_hash"), std::string::npos) << table.output;

  const CommandResult md = tiletune_in(dir, "show --format markdown");
  ASSERT_EQ(md.exit_code, 0) << md.output;
  EXPECT_EQ(md.output.substr(0, 11), "| kernel | ") << md.output;
  EXPECT_NE(md.output.find("| TILE=64 PAD=1 |"), std::string::npos) << md.output;

  const CommandResult best = tiletune_in(dir, "best --format csv");
  ASSERT_EQ(best.exit_code, 0) << best.output;
  EXPECT_EQ(best.output.substr(0, best.output.find('\n')),
            "kernel,device,device_uuid,problem,params,time_ms,gbps,gflops,energy_mj,headroom_pct,bound,ties,"
            "tie_spread_pct,tie_set,fastest_params,fastest_ms,winner_changes,runs,pinned,pin_reason")
      << best.output;
  // The winner's headroom to the nearer of its recorded ceilings (the physics guard's).
  EXPECT_NE(best.output.find(",70.58823554948094,arithmetic,"), std::string::npos) << best.output;
}

}  // namespace
}  // namespace tiletune::testing
