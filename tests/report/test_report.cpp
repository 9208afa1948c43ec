// The report stage on a fixture cache made of a recorded H200 landscape (transpose): the page is
// self-contained, every plot it shows has data, its numbers agree with the recording, plots can
// be had one at a time (SVG, PNG), and what the cache holds is escaped, never trusted.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <set>

#include "cache_builder.hpp"
#include "report_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/report.hpp"

namespace tiletune {
namespace {

using testing::CacheBuilder;
using testing::TempDir;
using testing::with_occupancy;

std::filesystem::path transpose_landscape() { return testing::test_data_dir() / "data/landscapes/transpose.csv"; }

struct Fixture {
  TempDir dir;
  std::filesystem::path db_path = dir.path() / "cache.db";
  explicit Fixture(bool energy = true) {
    testing::FixtureOptions o;
    o.landscapes = {transpose_landscape()};
    o.synthetic_energy = energy;
    testing::write_fixture_cache(db_path, o);
  }
  [[nodiscard]] CacheDb db() const { return CacheDb::open(db_path, CacheDb::Mode::read_only); }
};

// The fastest ok trial of one problem of the recording, found without the report's code.
const LandscapeTrial& fastest(const Landscape& l, const std::string& problem) {
  const LandscapeTrial* best = nullptr;
  for (const LandscapeTrial& t : l.find_problem(problem)->trials)
    if (t.status == TrialStatus::ok && (!best || *t.time_ms < *best->time_ms)) best = &t;
  return *best;
}

// The trial with the least energy, found without the report's code.
const TrialRow* least_energy(const std::vector<TrialRow>& rows) {
  const TrialRow* frugal = nullptr;
  for (const TrialRow& r : rows)
    if (r.trial.energy_mj && (!frugal || *r.trial.energy_mj < *frugal->trial.energy_mj)) frugal = &r;
  return frugal;
}

std::string spaced(std::string s) {
  std::replace(s.begin(), s.end(), ';', ' ');
  return s;
}

TEST(Report, IsOneSelfContainedPageWithoutScript) {
  Fixture f;
  const std::string html = render_report(f.db(), {});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  // The only URL is the SVG namespace, which names and loads nothing.
  const std::regex url("https?://[^\"]*");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), url); it != std::sregex_iterator(); ++it)
    EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
}

TEST(Report, EveryPlotShownHasAsManyDataMarksAsItDeclares) {
  Fixture f;
  const std::string html = render_report(f.db(), {});
  const std::regex plot(R"re(<svg [^>]*class="plot" data-plot="([^"]*)" data-points="(\d+)")re");
  std::size_t plots = 0;
  std::set<std::string> kinds;
  auto begin = std::sregex_iterator(html.begin(), html.end(), plot);
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    ++plots;
    EXPECT_GT(std::stoul((*it)[2]), 0u) << (*it)[1];
    kinds.insert((*it)[1].str().substr(0, (*it)[1].str().find(':')));
    // The marks of this plot: from its start to its </svg>.
    const auto start = static_cast<std::size_t>(it->position());
    const std::string svg = html.substr(start, html.find("</svg>", start) - start);
    std::size_t marks = 0;
    for (std::size_t p = svg.find("class=\"pt\""); p != std::string::npos; p = svg.find("class=\"pt\"", p + 1)) ++marks;
    EXPECT_EQ(marks, std::stoul((*it)[2])) << (*it)[1];
  }
  // 3 problems x (status + 4 params + 6 heatmaps + occupancy + registers + progress + energy) + 2.
  EXPECT_EQ(plots, 3u * 15u + 2u);
  for (const char* k :
       {"status", "param", "heatmap", "occupancy", "registers", "progress", "energy", "devices", "speedup"})
    EXPECT_TRUE(kinds.count(k)) << k;
}

TEST(Report, TopTablesLeadWithTheRecordingsFastestConfig) {
  Fixture f;
  const Landscape l = load_landscape(transpose_landscape());
  const std::string html = render_report(f.db(), {});
  for (const LandscapeProblem& p : l.problems) {
    const LandscapeTrial& best = fastest(l, p.problem);
    const auto section = html.find("— NVIDIA H200 · " + p.problem + "</h3>");
    ASSERT_NE(section, std::string::npos) << p.problem;
    const auto row = html.find("<tr class=\"best\">", section);
    ASSERT_NE(row, std::string::npos);
    EXPECT_NE(html.substr(row, 200).find(spaced(best.params)), std::string::npos) << p.problem;
  }
}

TEST(Report, SpeedupIsTheDefaultOverTheBest) {
  Fixture f;
  const Landscape l = load_landscape(transpose_landscape());
  ReportOptions o;
  o.problem = "N=8192";
  const std::string svg = render_plot(f.db(), o, "speedup");
  const std::string def = "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1";  // configs/transpose.yaml's default
  double default_ms = 0;
  for (const LandscapeTrial& t : l.find_problem("N=8192")->trials)
    if (t.params == def) default_ms = *t.time_ms;
  ASSERT_GT(default_ms, 0);
  const double speedup = default_ms / *fastest(l, "N=8192").time_ms;
  EXPECT_NE(svg.find(fmt::format("{:.2f}x", speedup)), std::string::npos) << svg;
  EXPECT_GT(speedup, 1.0);
}

TEST(Report, HeatmapHasACellForEachPairWithAnOkTrial) {
  Fixture f;
  const Landscape l = load_landscape(transpose_landscape());
  std::set<std::pair<std::string, std::string>> pairs;
  const std::regex tile("TILE=(\\d+);BLOCK_ROWS=(\\d+)");
  for (const LandscapeTrial& t : l.find_problem("N=4096")->trials) {
    std::smatch m;
    if (t.status == TrialStatus::ok && std::regex_search(t.params, m, tile)) pairs.emplace(m[1], m[2]);
  }
  ReportOptions o;
  o.problem = "N=4096";
  const std::string svg = render_plot(f.db(), o, "heatmap:TILE,BLOCK_ROWS");
  EXPECT_NE(svg.find(fmt::format("data-points=\"{}\"", pairs.size())), std::string::npos);
}

TEST(Report, EnergyObjectiveRanksByEnergy) {
  Fixture f;
  ReportOptions o;
  o.problem = "N=8192";
  o.objective = Objective::energy;
  const CacheDb db = f.db();
  const std::vector<TrialRow> rows = db.trials({.problem = "N=8192"});
  const TrialRow* frugal = least_energy(rows);
  ASSERT_NE(frugal, nullptr);
  const std::string html = render_report(db, o);
  const auto row = html.find("<tr class=\"best\">");
  ASSERT_NE(row, std::string::npos);
  EXPECT_NE(html.substr(row, 200).find(spaced(frugal->trial.key.params)), std::string::npos);
  EXPECT_NE(html.find("objective energy"), std::string::npos);
}

TEST(Report, PlotsOfOneProblemNeedTheFiltersToNameOne) {
  Fixture f;
  try {
    (void)render_plot(f.db(), {}, "status");
    FAIL() << "three problems match";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--problem 'N=8192'"), std::string::npos) << e.what();
  }
  ReportOptions o;
  o.problem = "N=1024";
  try {
    (void)render_plot(f.db(), o, "param:NOPE");
    FAIL() << "no such param";
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find("param:TILE"), std::string::npos) << e.what(); }
  const std::vector<std::string> names = plot_names(f.db(), o);
  for (const char* n : {"devices", "speedup", "status", "param:VEC", "heatmap:TILE,BLOCK_ROWS", "energy"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(Report, NoEnergyMeansNoEnergyPlotOrColumns) {
  Fixture f(false);
  const std::string html = render_report(f.db(), {});
  EXPECT_EQ(html.find("data-plot=\"energy\""), std::string::npos);
  EXPECT_EQ(html.find("energy mJ"), std::string::npos);
}

TEST(Report, WhatTheCacheHoldsIsEscaped) {
  Fixture f;
  {
    CacheDb db = CacheDb::open(f.db_path);
    const std::int64_t device = db.devices().front().id;
    const std::int64_t kernel = *db.find_kernel(db.trials({.limit = 1}).front().kernel);
    TrialRecord r;
    r.key = {device, kernel, "N=8192", "TILE=16;BLOCK_ROWS=1;PAD=0;VEC=8"};
    r.status = TrialStatus::wrong_result;
    r.detail = "<script>alert('x')</script> & \"more\"";
    (void)db.record_trial(r);
  }
  const std::string html = render_report(f.db(), {});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;more&quot;"), std::string::npos);
}

TEST(Report, NoMatchingTrialIsAClearError) {
  Fixture f;
  ReportOptions o;
  o.kernel = "nope";
  try {
    (void)render_report(f.db(), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no trials in"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("kernel 'nope'"), std::string::npos);
  }
}

TEST(ReportCli, WritesHtmlSvgAndPng) {
  Fixture f;
  const std::string cli = testing::cli_path().string();
  const std::string db = f.db_path.string();
  const auto html = f.dir.path() / "r.html";
  auto r = testing::run_command(cli + " report --db " + db + " -o " + html.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(testing::read_file(html).find("tiletune report"), std::string::npos);

  const auto svg = f.dir.path() / "heat.svg";
  r = testing::run_command(cli + " report --db " + db + " --problem N=8192 --format svg --plot heatmap:TILE,VEC -o " +
                           svg.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing::read_file(svg).rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);

  r = testing::run_command(cli + " report --db " + db + " --format svg -o x.svg 2>&1");
  EXPECT_EQ(r.exit_code, 2);  // an argument error (issue 22)
  EXPECT_NE(r.output.find("--plot"), std::string::npos);

  const auto png = f.dir.path() / "status.png";
  r = testing::run_command(cli + " report --db " + db + " --problem N=1024 --format png --plot status -o " +
                           png.string());
  if (testing::run_command("command -v rsvg-convert").exit_code == 0) {
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string bytes = testing::read_file(png);
    ASSERT_GT(bytes.size(), 1000u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  } else {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("librsvg2-bin"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(png));
  }
}

TEST(ReportCli, BestAndShowHonourEnergy) {
  Fixture f;
  const CacheDb db = f.db();
  const std::vector<TrialRow> rows = db.trials({.problem = "N=8192"});
  const TrialRow* frugal = least_energy(rows);
  ASSERT_NE(frugal, nullptr);
  const std::string base = testing::cli_path().string() + " best --db " + f.db_path.string();
  auto r = testing::run_command(base + " --kernel transpose --size N=8192 --device " + frugal->device_uuid +
                                " --objective energy --format json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"energy_mj\""), std::string::npos) << r.output;
  for (const char* p : {"TILE", "BLOCK_ROWS", "PAD", "VEC"}) {
    const std::string want = frugal->trial.key.params;
    const auto at = want.find(std::string(p) + "=");
    const std::string value = want.substr(at + std::strlen(p) + 1, want.find(';', at) - at - std::strlen(p) - 1);
    EXPECT_NE(r.output.find(fmt::format("\"{}\": {}", p, value)), std::string::npos) << p << r.output;
  }
  r = testing::run_command(base + " --objective energy 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find(spaced(frugal->trial.key.params)), std::string::npos) << r.output;
  r = testing::run_command(testing::cli_path().string() + " show --db " + f.db_path.string() +
                           " --problem N=8192 --limit 3 2>/dev/null");
  EXPECT_NE(r.output.find("energy mJ"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// Issue 24: each group says what the cache answers, with its tie set, its history and a pin.
TEST(Report, EachGroupShowsItsAnswerTiesHistoryAndPin) {
  TempDir dir;
  const auto path = dir.path() / "ties.db";
  CacheBuilder()
      .device("GPU-aaaaaaaa-3333-4000-8000-000000000001")
      .kernel()
      .trial("N=8192", "TILE=32", 1.000, with_occupancy(0.5))
      .trial("N=8192", "TILE=64", 1.002, with_occupancy(1.0))
      .trial("N=8192", "TILE=16", 1.500, with_occupancy(1.0))
      .trial("N=1024", "TILE=16", 0.100, with_occupancy(0.5))
      .kernel()  // a second run
      .trial("N=1024", "TILE=8", 0.050, with_occupancy(0.5))
      .pin(PinRecord{PinScope::architecture, "sm_90", "transpose", "N=1024", "TILE=16", "v1 <numerics>", ""})
      .build(path);
  const std::string html = render_report(CacheDb::open(path, CacheDb::Mode::read_only), {});
  EXPECT_NE(html.find("answer: TILE=64 — the pick of 2 configs tied within 0.20 %"), std::string::npos) << html;
  EXPECT_NE(html.find("fastest TILE=32"), std::string::npos);
  EXPECT_NE(html.find("answer: TILE=16 — pinned for architecture sm_90 (v1 &lt;numerics&gt;); the answer changed 1 "
                      "time over 2 runs"),
            std::string::npos)
      << html;
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// A cache edited by hand: every time of N=1024 infinite, the energies of N=4096 too. The report
// and every plot of it hold finite numbers only (no NaN coordinate, no "inf" shown), and the
// answers of those problems are still read (the tie set of infinite times used to be empty).
TEST(Report, TimesAndEnergiesThatAreNotFiniteLeaveEveryPlotFinite) {
  if (testing::run_command("command -v sqlite3").exit_code != 0) GTEST_SKIP() << "needs the sqlite3 CLI";
  Fixture f;
  // record_trial refuses such numbers; a cache edited by hand has them.
  const testing::CommandResult edit = testing::run_command(
      "sqlite3 '" + f.db_path.string() +
      "' \"UPDATE trials SET time_ms = 1e999 WHERE problem = 'N=1024' AND status = 'ok';"
      " UPDATE trials SET energy_mj = 1e999 WHERE problem = 'N=4096'\"");
  ASSERT_EQ(edit.exit_code, 0) << edit.output;
  const std::regex not_a_number(R"((^|[^a-z])(nan|inf)([^a-z]|$))", std::regex::icase);
  const std::string html = render_report(f.db(), {});
  EXPECT_FALSE(std::regex_search(html, not_a_number)) << "the report shows a number that is not finite";
  for (const char* problem : {"N=1024", "N=4096"}) {
    for (const Objective objective : {Objective::time, Objective::energy}) {
      ReportOptions o;
      o.problem = problem;
      o.objective = objective;
      for (const std::string& plot : plot_names(f.db(), o)) {
        std::string svg;
        try {
          svg = render_plot(f.db(), o, plot);
        } catch (const Error& e) {  // a plot of infinite times alone has no point: a clear error
          EXPECT_NE(std::string(e.what()).find("has nothing to draw"), std::string::npos) << e.what();
          continue;
        }
        EXPECT_FALSE(std::regex_search(svg, not_a_number)) << problem << " " << plot;
      }
    }
  }
}

}  // namespace
}  // namespace tiletune
