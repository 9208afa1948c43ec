// Spaces that say what they mean in Python, as Kernel Tuner scripts and T1 files do: {python:
// "..."} wherever an expression goes (constraints over integer, real and text params, launch
// sizes, counts), Python value lists, and an allowed-configs list; with the errors a person can
// act on (file:line:column inside the Python text, the CSV's line).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/space.hpp"

namespace fs = std::filesystem;
using namespace tiletune;
using Values = std::vector<std::int64_t>;

namespace {

struct Files {
  tiletune::testing::TempDir dir;
  fs::path yaml() const { return dir.path() / "space.yaml"; }
};

// A space in `files`' directory with these params, constraints (YAML list items) and extra keys.
std::string space_text(const std::string& params, const std::string& constraints = "", const std::string& extra = "") {
  return "kernel: k\n"
         "source: " +
         (tiletune::testing::source_dir() / "kernels/transpose.cu").string() +
         "\n"
         "entry: transpose\n"
         "problem:\n"
         "  N: [1024]\n"
         "params:\n" +
         params + (constraints.empty() ? "" : "constraints:\n" + constraints) +
         "launch:\n"
         "  grid: [\"ceil_div(N, 32)\"]\n"
         "  block: 32\n"
         "buffers:\n"
         "  out: {count: N, output: true}\n"
         "args: [out, N]\n"
         "verify: none\n" +
         extra;
}

Space load(const Files& f, const std::string& text) { return parse_space(text, f.yaml()); }

SpaceError load_error(const Files& f, const std::string& text) {
  try {
    (void)load(f, text);
  } catch (const SpaceError& e) { return e; }
  ADD_FAILURE() << "no error for:\n" << text;
  return SpaceError({}, "none");
}

std::vector<Values> configs_of(const Space& s, const Problem& p = Problem{{1024}}) {
  std::vector<Values> out;
  Enumerator e(s, p);
  while (auto c = e.next()) out.push_back(c->values);
  return out;
}

TEST(SpacePython, ChainedComparisonConstraint) {
  Files f;
  const Space s =
      load(f, space_text("  BX: [16, 32, 64]\n  BY: [1, 2, 4, 8]\n", "  - {python: \"32 <= BX * BY <= 128\"}\n"));
  std::vector<Values> want;
  for (std::int64_t bx : {16, 32, 64})
    for (std::int64_t by : {1, 2, 4, 8})
      if (32 <= bx * by && bx * by <= 128) want.push_back({bx, by});
  EXPECT_EQ(configs_of(s), want);
  EXPECT_TRUE(s.constraints[0].condition.expr.is_python());
}

TEST(SpacePython, ConstraintsSeeRealAndTextParamsAsPythonValues) {
  Files f;
  const Space s = load(f, space_text("  T: [float, double]\n  ALPHA: [0.5, 1.5]\n  V: [1, 2, 4]\n",
                                     "  - {python: \"T == 'float' or V <= 2\"}\n"
                                     "  - {python: \"ALPHA * V / 2 >= 0.5\"}\n"));
  // Values of real and text params are their indexes in a Config.
  std::vector<Values> want;
  for (std::int64_t t : {0, 1})
    for (std::int64_t a : {0, 1})
      for (std::int64_t v : {1, 2, 4}) {
        const double alpha = a == 0 ? 0.5 : 1.5;
        if ((t == 0 || v <= 2) && alpha * double(v) / 2 >= 0.5) want.push_back({t, a, v});
      }
  EXPECT_EQ(configs_of(s), want);
  // tiletune's own expressions still take integers only, and say where to go instead.
  const SpaceError e = load_error(f, space_text("  T: [float, double]\n  V: [1, 2]\n", "  - T == 0\n"));
  EXPECT_NE(std::string(e.what()).find("{python:"), std::string::npos) << e.what();
}

TEST(SpacePython, LaunchAndCountsInPython) {
  Files f;
  std::string text = space_text("  BX: [48, 64]\n");
  text.replace(text.find("  grid: [\"ceil_div(N, 32)\"]\n"), std::string("  grid: [\"ceil_div(N, 32)\"]\n").size(),
               "  grid: [{python: \"ceil(N / BX)\"}]\n");
  text.replace(text.find("  block: 32\n"), std::string("  block: 32\n").size(), "  block: [{python: BX}]\n");
  text.replace(text.find("{count: N,"), std::string("{count: N,").size(), "{count: {python: \"N * 2 // 1\"},");
  const Space s = load(f, text);
  const std::vector<std::int64_t> slots{1024, 48};
  EXPECT_EQ(s.launch.grid[0].expr.eval(slots), 22);  // ceil(1024 / 48)
  EXPECT_EQ(s.launch.block[0].expr.eval(slots), 48);
  EXPECT_EQ(s.buffers[0].count.expr.eval(slots), 2048);
}

TEST(SpacePython, OptionPiecesInPython) {
  Files f;
  const Space s =
      load(f, space_text("  BX: [48, 64]\n  T: [float, half]\n", "",
                         "options: [\"-DG=${python: ceil(N / BX)}\", \"-DW=${python: 2 if T == 'half' else 4}\"]\n"));
  const std::vector<std::int64_t> slots{1024, 48, 1};  // T = half
  EXPECT_EQ(expand_option(s.compile_options[0], slots), "-DG=22");
  EXPECT_EQ(expand_option(s.compile_options[1], slots), "-DW=2");
  const SpaceError e = load_error(f, space_text("  BX: [48]\n", "", "options: [\"-DG=${python: BX +}\"]\n"));
  EXPECT_NE(std::string(e.what()).find("bad expression"), std::string::npos) << e.what();
}

TEST(SpacePython, ValuesFromPython) {
  Files f;
  const Space s = load(f, space_text("  TILE: {python: \"[2**i for i in range(4, 7)]\"}\n"
                                     "  B: {python: \"list(range(32, 128+1, 32))\"}\n"
                                     "  ALPHA: {python: \"[x / 2 for x in range(1, 4)]\"}\n"
                                     "  T: {python: \"['float', 'half']\"}\n"));
  EXPECT_EQ(s.params[0].values, (Values{16, 32, 64}));
  EXPECT_EQ(s.params[1].values, (Values{32, 64, 96, 128}));
  EXPECT_EQ(s.params[2].kind, AxisKind::real);
  EXPECT_EQ(s.params[2].labels, (std::vector<std::string>{"0.5", "1.0", "1.5"}));
  EXPECT_EQ(s.params[3].kind, AxisKind::text);
  EXPECT_EQ(s.params[3].labels, (std::vector<std::string>{"float", "half"}));
}

TEST(SpacePython, ErrorsPointIntoThePythonText) {
  Files f;
  // The syntax error is at 'getattr': line 9, column 25 (the text starts at column 15).
  SpaceError e = load_error(f, space_text("  BX: [16]\n", "  - {python: \"BX > 1 or getattr(BX, 'x')\"}\n"));
  EXPECT_EQ(e.where().line, 9);
  EXPECT_EQ(e.where().column, 25);
  EXPECT_NE(e.reason().find("getattr"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: [16]\n", "  - {python: \"BXX > 1\"}\n"));
  EXPECT_NE(e.reason().find("did you mean 'BX'"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: {python: \"[]\"}\n"));
  EXPECT_NE(e.reason().find("no values"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: {python: \"[1, 'a']\"}\n"));
  EXPECT_NE(e.reason().find("another kind"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: {python: \"[True, False]\"}\n"));
  EXPECT_NE(e.reason().find("booleans"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: {python: \"7\"}\n"));
  EXPECT_NE(e.reason().find("not a list"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: {python: \"[1, 1]\"}\n"));
  EXPECT_NE(e.reason().find("twice"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: {python: \"[1 // 0]\"}\n"));
  EXPECT_NE(e.reason().find("ZeroDivisionError"), std::string::npos) << e.what();
  e = load_error(f, space_text("  BX: [16]\n", "  - {pyhton: \"BX > 1\"}\n"));
  EXPECT_NE(std::string(e.what()).find("{python:"), std::string::npos) << e.what();
}

TEST(SpacePython, AnEvaluationErrorRejectsThatConfigOnly) {
  Files f;
  const Space s = load(f, space_text("  A: [0, 1, 2]\n", "  - {python: \"10 // A > 0\"}\n"));
  Enumerator e(s, Problem{{1024}});
  std::vector<std::int64_t> kept;
  while (auto c = e.next()) kept.push_back(c->values[0]);
  EXPECT_EQ(kept, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(e.errored(), 1u);
  const auto why = e.check(Config{{0}});
  ASSERT_TRUE(why);
  EXPECT_NE(why->reason.find("ZeroDivisionError"), std::string::npos) << why->reason;
}

TEST(SpaceAllowed, OnlyListedConfigsInEnumerationOrder) {
  Files f;
  f.dir.write("allowed.csv", "B,A\n2,10\n1,30\n\"2\",30\n1,30\n");  // a repeat, a quoted field, another order
  const Space s =
      load(f, space_text("  A: [10, 20, 30]\n  B: [1, 2]\n", "  - A != 20\n", "allowed: {file: allowed.csv}\n"));
  ASSERT_TRUE(s.allowed);
  EXPECT_EQ(s.allowed->size(), 3u);
  EXPECT_EQ(configs_of(s), (std::vector<Values>{{10, 2}, {30, 1}, {30, 2}}));
  Enumerator e(s, Problem{{1024}});
  EXPECT_EQ(e.product_size(), 3u);
  const auto why = e.check(Config{{10, 1}});
  ASSERT_TRUE(why);
  EXPECT_EQ(why->constraint_index, s.constraints.size());
  EXPECT_FALSE(e.check(Config{{30, 2}}));
}

TEST(SpaceAllowed, DerivedValuesAndWordsAndNumbers) {
  Files f;
  // A derived param (G) whose value the list pairs with each config, a text and a real param.
  f.dir.write("allowed.csv", "T,X,G\nfloat,0.50,4\ndouble,1.5,8\n");
  const Space s = load(
      f, space_text("  T: [float, double]\n  X: [0.5, 1.5]\n  G: [4, 8, 16]\n", "", "allowed: {file: allowed.csv}\n"));
  EXPECT_EQ(configs_of(s), (std::vector<Values>{{0, 0, 4}, {1, 1, 8}}));
}

TEST(SpaceAllowed, TheListBoundsTheWorkInsteadOfTheProduct) {
  Files f;
  // 2^20 * 2^20 points would be refused as a product; two configs are listed.
  f.dir.write("allowed.csv", "A,B\n0,1\n5,7\n");
  const Space s = load(f, space_text("  A: {from: 0, to: 1048575}\n  B: {from: 0, to: 1048575}\n", "",
                                     "allowed: {file: allowed.csv}\n"));
  EXPECT_EQ(configs_of(s), (std::vector<Values>{{0, 1}, {5, 7}}));
}

TEST(SpaceAllowed, MistakesNameTheLine) {
  Files f;
  const std::string params = "  A: [10, 20]\n  B: [1, 2]\n";
  auto error_with = [&](const std::string& csv, const std::string& extra = "") {
    f.dir.write("allowed.csv", csv);
    return std::string(load_error(f, space_text(params, "", "allowed: {file: allowed.csv}\n" + extra)).what());
  };
  EXPECT_NE(error_with("A,B\n10,1\n10,3\n").find("allowed.csv:3: B = '3' is not one of its values"), std::string::npos);
  EXPECT_NE(error_with("A\n10\n").find("does not name the param B"), std::string::npos);
  EXPECT_NE(error_with("A,B,C\n").find("'C' is not a param"), std::string::npos);
  EXPECT_NE(error_with("A,A,B\n").find("named twice"), std::string::npos);
  EXPECT_NE(error_with("A,B\n10\n").find("allowed.csv:2: 1 fields, the header names 2"), std::string::npos);
  EXPECT_NE(error_with("A,B\n\"10,1\n").find("not closed"), std::string::npos);
  EXPECT_NE(error_with("A,B\n").find("lists no config"), std::string::npos);
  EXPECT_NE(error_with("").find("is empty"), std::string::npos);
  EXPECT_NE(error_with("A,B\n10,1\n", "default: {A: 20, B: 2}\n").find("not listed in the allowed configs"),
            std::string::npos);
  const std::string missing = load_error(f, space_text(params, "", "allowed: {file: nothere.csv}\n")).what();
  EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
}

}  // namespace
