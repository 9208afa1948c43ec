// The printers of tiletune/printer.hpp on small documents: the exact text of the table, Markdown
// and CSV outputs, and the JSON structure (a bare array for one table, an object of fields and
// tables otherwise, NULL cells left out, grouped columns nested). Which columns each format shows
// (human, machine, dropped when empty) and how cells read (rounded, cut, "-", "*") are checked
// through the outputs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tiletune/printer.hpp"

namespace tiletune {
namespace {

using Shown = PrintColumn::Shown;

PrintTable sample_table() {
  PrintTable t{.name = "trials"};
  t.columns = {{.key = "kernel"},
               {.key = "params", .shown = Shown::machine},
               {.key = "config", .heading = "params", .shown = Shown::human},
               {.key = "time_ms", .heading = "time ms", .digits = 3},
               {.key = "energy_mj", .heading = "energy mJ", .digits = 1, .drop_if_empty = true},
               {.key = "samples", .group = "stats"},
               {.key = "best"},
               {.key = "detail", .max_width = 8}};
  t.rows = {{std::string("transpose"), std::string("TILE=32;PAD=1"), std::string("TILE=32 PAD=1"), 0.123456,
             PrintCell(), std::int64_t{25}, true, std::string("a, \"quoted\"\nsecond line")},
            {std::string("matmul"), std::string("B=8"), std::string("B=8"), PrintCell(), PrintCell(), PrintCell(),
             false, std::string("a long reason")}};
  t.footer = "2 trials";
  return t;
}

std::string printed(PrintFormat format, const PrintDocument& doc) {
  std::ostringstream out;
  make_printer(format, out)->print(doc);
  return out.str();
}

TEST(Printer, TableAlignsRoundsCutsAndDropsEmptyColumns) {
  EXPECT_EQ(printed(PrintFormat::table, {.tables = {sample_table()}}),
            "kernel     params         time ms  samples  best  detail\n"
            "transpose  TILE=32 PAD=1    0.123       25  *     a, \"q...\n"
            "matmul     B=8                  -        -        a lon...\n"
            "2 trials\n");
}

TEST(Printer, MarkdownIsAPipeTableOfTheHumanColumns) {
  PrintTable t = sample_table();
  t.rows[1][4] = 2.2;  // energy measured once: the column stays
  t.rows[1][7] = std::string("x|y");
  EXPECT_EQ(printed(PrintFormat::markdown, {.tables = {t}}),
            "| kernel | params | time ms | energy mJ | samples | best | detail |\n"
            "| --- | --- | ---: | ---: | ---: | --- | --- |\n"
            "| transpose | TILE=32 PAD=1 | 0.123 | - | 25 | * | a, \"q... |\n"
            "| matmul | B=8 | - | 2.2 | - |  | x\\|y |\n"
            "\n2 trials\n");
}

TEST(Printer, CsvHasTheMachineColumnsEveryDigitAndQuotesAsRfc4180) {
  EXPECT_EQ(printed(PrintFormat::csv, {.tables = {sample_table()}}),
            "kernel,params,time_ms,energy_mj,samples,best,detail\n"
            "transpose,TILE=32;PAD=1,0.123456,,25,1,\"a, \"\"quoted\"\"\nsecond line\"\n"
            "matmul,B=8,,,,0,a long reason\n");
}

TEST(Printer, CsvOfADocumentIsItsFirstTable) {
  PrintTable other{.name = "devices", .columns = {{.key = "uuid"}}, .rows = {{std::string("GPU-1")}}};
  const std::string csv =
      printed(PrintFormat::csv, {.fields = {{"schema_version", std::int64_t{5}}}, .tables = {sample_table(), other}});
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "kernel,params,time_ms,energy_mj,samples,best,detail");
  EXPECT_EQ(csv.find("GPU-1"), std::string::npos);
  EXPECT_EQ(csv.find("schema_version"), std::string::npos);
}

TEST(Printer, JsonOfOneTableIsAnArrayWithoutNullsAndWithGroups) {
  const auto j = nlohmann::json::parse(printed(PrintFormat::json, {.tables = {sample_table()}}));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["kernel"], "transpose");
  EXPECT_EQ(j[0]["params"], "TILE=32;PAD=1");
  EXPECT_FALSE(j[0].contains("config"));  // human only
  EXPECT_EQ(j[0]["time_ms"], 0.123456);
  EXPECT_FALSE(j[0].contains("energy_mj"));
  EXPECT_EQ(j[0]["stats"]["samples"], 25);
  EXPECT_EQ(j[0]["best"], true);
  EXPECT_EQ(j[0]["detail"], "a, \"quoted\"\nsecond line");
  EXPECT_FALSE(j[1].contains("time_ms"));
  EXPECT_FALSE(j[1].contains("stats"));
  EXPECT_EQ(j[1]["best"], false);
}

TEST(Printer, JsonOfADocumentIsAnObjectOfFieldsAndTables) {
  PrintTable other{.name = "devices", .columns = {{.key = "uuid"}}, .rows = {{std::string("GPU-1")}}};
  const auto j = nlohmann::json::parse(
      printed(PrintFormat::json, {.fields = {{"schema_version", std::int64_t{5}}}, .tables = {sample_table(), other}}));
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["schema_version"], 5);
  EXPECT_EQ(j["trials"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["uuid"], "GPU-1");
}

TEST(Printer, HumanFormatsPrintEveryTableUnderItsName) {
  PrintTable other{.name = "devices", .columns = {{.key = "uuid"}}, .rows = {{std::string("GPU-1")}}};
  const std::string text = printed(PrintFormat::table, {.tables = {sample_table(), other}});
  EXPECT_EQ(text.substr(0, 8), "trials:\n");
  EXPECT_NE(text.find("\n\ndevices:\nuuid\nGPU-1\n"), std::string::npos) << text;
  const std::string md = printed(PrintFormat::markdown, {.tables = {sample_table(), other}});
  EXPECT_NE(md.find("### devices\n\n| uuid |\n| --- |\n| GPU-1 |\n"), std::string::npos) << md;
}

TEST(Printer, AnEmptyTablePrintsItsHeadingsAndFooter) {
  PrintTable t = sample_table();
  t.rows.clear();
  t.footer = "0 trials";
  EXPECT_EQ(printed(PrintFormat::table, {.tables = {t}}), "kernel  params  time ms  samples  best  detail\n0 trials\n");
  EXPECT_EQ(printed(PrintFormat::json, {.tables = {t}}), "[]\n");
  EXPECT_EQ(printed(PrintFormat::csv, {.tables = {t}}), "kernel,params,time_ms,energy_mj,samples,best,detail\n");
}

TEST(Printer, ListsAreArraysInJsonAndJoinedElsewhereAndFieldsGroup) {
  PrintTable t{.name = "rows",
               .columns = {{.key = "grid"}, {.key = "warnings"}},
               .rows = {{std::vector<std::int64_t>{256, 2, 1}, std::vector<std::string>{"a, b", "c"}}}};
  const PrintDocument doc{.fields = {{"kernel", std::string("k")}, {"points", std::int64_t{108}, "summary"}},
                          .tables = {t}};
  const auto j = nlohmann::json::parse(printed(PrintFormat::json, doc));
  EXPECT_EQ(j["kernel"], "k");
  EXPECT_EQ(j["summary"]["points"], 108);
  EXPECT_EQ(j["rows"][0]["grid"], nlohmann::json::array({256, 2, 1}));
  EXPECT_EQ(j["rows"][0]["warnings"], nlohmann::json::array({"a, b", "c"}));
  EXPECT_EQ(printed(PrintFormat::csv, doc), "grid,warnings\n256 2 1,\"a, b c\"\n");
  EXPECT_EQ(printed(PrintFormat::table, doc), "grid     warnings\n256x2x1  a, b; c\n");
}

TEST(Printer, FormatNamesRoundTrip) {
  for (PrintFormat f : {PrintFormat::table, PrintFormat::csv, PrintFormat::json, PrintFormat::markdown})
    EXPECT_EQ(parse_print_format(print_format_name(f)), f);
  EXPECT_FALSE(parse_print_format("yaml"));
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// A number that is not finite (a cache edited by hand: a time of 1e999) is printed as no number:
// "-" for people, an empty field in CSV, null in JSON; never "inf" or "nan".
TEST(Printer, NumbersThatAreNotFiniteArePrintedAsNone) {
  PrintTable t{.name = "trials"};
  t.columns = {{.key = "params"}, {.key = "time_ms", .heading = "time ms", .digits = 3}, {.key = "gbps"}};
  t.rows = {{std::string("A=1"), std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()},
            {std::string("A=2"), -std::numeric_limits<double>::infinity(), 1.5}};
  const PrintDocument doc{.tables = {t}};
  for (const PrintFormat f : {PrintFormat::table, PrintFormat::csv, PrintFormat::json, PrintFormat::markdown}) {
    const std::string text = printed(f, doc);
    EXPECT_EQ(text.find("inf"), std::string::npos) << text;
    EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  }
  EXPECT_EQ(printed(PrintFormat::csv, doc), "params,time_ms,gbps\nA=1,,\nA=2,,1.5\n");
  EXPECT_EQ(printed(PrintFormat::json, doc), "[\n  {\n    \"params\": \"A=1\"\n  },\n  {\n    \"params\": \"A=2\",\n    \"gbps\": 1.5\n  }\n]\n");
  EXPECT_EQ(printed(PrintFormat::table, doc), "params  time ms  gbps\nA=1           -     -\nA=2           -   1.5\n");
}

}  // namespace
}  // namespace tiletune
