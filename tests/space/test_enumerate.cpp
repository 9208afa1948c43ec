// Enumeration: deterministic order, constraint filtering, counts before/after constraints,
// problem sizes visible to constraints, constraint errors counted and not fatal.
#include <gtest/gtest.h>

#include <set>

#include "make_space.hpp"
#include "tiletune/enumerate.hpp"

namespace tiletune {
namespace {

using testing::make_space;

TEST(Enumerate, LastParamVariesFastest) {
  Space s = make_space({}, {{"A", {1, 2}, {}}, {"B", {10, 20, 30}, {}}}, {});
  Enumerator e(s, Problem{});
  EXPECT_EQ(e.product_size(), 6u);
  std::vector<Config> got;
  while (auto c = e.next()) got.push_back(*c);
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0].values, (std::vector<std::int64_t>{1, 10}));
  EXPECT_EQ(got[1].values, (std::vector<std::int64_t>{1, 20}));
  EXPECT_EQ(got[3].values, (std::vector<std::int64_t>{2, 10}));
  EXPECT_EQ(got[5].values, (std::vector<std::int64_t>{2, 30}));
  EXPECT_FALSE(e.next().has_value());
  EXPECT_EQ(e.visited(), 6u);
  EXPECT_EQ(e.kept(), 6u);
}

TEST(Enumerate, TransposeConstraintsKeepTheRightPoints) {
  Space s = make_space({}, {{"TILE", {16, 32, 64}, {}}, {"BLOCK_ROWS", {1, 2, 4, 8, 16, 32}, {}}, {"PAD", {0, 1}, {}}},
                       {"BLOCK_ROWS <= TILE", "TILE % BLOCK_ROWS == 0"});
  SpaceCounts counts = count_configs(s, Problem{});
  EXPECT_EQ(counts.points, 36u);
  EXPECT_EQ(counts.valid, 34u);  // only BLOCK_ROWS=32 with TILE=16 (x2 pads) is dropped
  Enumerator e(s, Problem{});
  while (auto c = e.next()) {
    EXPECT_LE(c->values[1], c->values[0]);
    EXPECT_EQ(c->values[0] % c->values[1], 0);
  }
}

TEST(Enumerate, ConstraintsSeeProblemSizes) {
  Space s = make_space({{"N", {100, 1000}, {}}}, {{"T", {8, 16, 32, 64, 128}, {}}}, {"T * 4 <= N"});
  EXPECT_EQ(count_configs(s, Problem{{100}}).valid, 2u);  // 8, 16
  EXPECT_EQ(count_configs(s, Problem{{1000}}).valid, 5u);
}

TEST(Enumerate, EvalErrorsRejectThePointAndAreCounted) {
  Space s = make_space({}, {{"A", {0, 1, 2}, {}}}, {"10 / A > 0"});
  Enumerator e(s, Problem{});
  std::vector<std::int64_t> kept;
  while (auto c = e.next()) kept.push_back(c->values[0]);
  EXPECT_EQ(kept, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(e.errored(), 1u);
  auto r = e.check(Config{{0}});
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->reason.find("division by zero"), std::string::npos) << r->reason;
  auto ok = e.check(Config{{2}});
  EXPECT_FALSE(ok.has_value());
}

TEST(Enumerate, CheckNamesTheFailingConstraint) {
  Space s = make_space({}, {{"A", {1, 2}, {}}, {"B", {1, 2}, {}}}, {"A <= B", "A + B < 4"});
  Enumerator e(s, Problem{});
  auto r = e.check(Config{{2, 1}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->constraint_index, 0u);
  EXPECT_EQ(r->reason, "A <= B is false");
  r = e.check(Config{{2, 2}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->constraint_index, 1u);
}

TEST(Enumerate, AllProblemsIsTheProductInOrder) {
  Space s = make_space({{"M", {1, 2}, {}}, {"N", {7, 8, 9}, {}}}, {{"T", {1}, {}}}, {});
  auto problems = all_problems(s);
  ASSERT_EQ(problems.size(), 6u);
  EXPECT_EQ(problems[0].sizes, (std::vector<std::int64_t>{1, 7}));
  EXPECT_EQ(problems[2].sizes, (std::vector<std::int64_t>{1, 9}));
  EXPECT_EQ(problems[5].sizes, (std::vector<std::int64_t>{2, 9}));
  Space none = make_space({}, {{"T", {1}, {}}}, {});
  EXPECT_EQ(all_problems(none).size(), 1u);  // one problem with no sizes
}

TEST(Enumerate, MillionPointsWithoutMaterializing) {
  std::vector<std::int64_t> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  Space s = make_space({}, {{"A", hundred, {}}, {"B", hundred, {}}, {"C", hundred, {}}}, {"A % 2 == 0", "B <= C"});
  SpaceCounts c = count_configs(s, Problem{});
  EXPECT_EQ(c.points, 1000000u);
  EXPECT_EQ(c.valid, 50u * 5050u);
}

TEST(Enumerate, FormatConfig) {
  Space s = make_space({}, {{"TILE", {32}, {}}, {"PAD", {1}, {}}}, {});
  EXPECT_EQ(format_config(s, Config{{32, 1}}), "TILE=32 PAD=1");
}

TEST(Enumerate, ProductSizeSaturates) {
  std::vector<Axis> params;
  std::vector<std::int64_t> many(1000);
  for (int i = 0; i < 1000; ++i) many[i] = i;
  for (int i = 0; i < 8; ++i) params.push_back({"P" + std::to_string(i), many, {}});
  Space s = make_space({}, params, {});
  Enumerator e(s, Problem{});
  EXPECT_EQ(e.product_size(), std::numeric_limits<std::uint64_t>::max());
  auto first = e.next();  // still walks lazily
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->values, std::vector<std::int64_t>(8, 0));
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// A space with one problem size N, one param T and a buffer of `count` elements of `type`.
Space buffer_space(const std::string& count, ElementType type) {
  Space s = make_space({{"N", {1}, {}}}, {{"T", {1}, {}}}, {});
  BufferSpec b;
  b.name = "x";
  b.type = type;
  b.count.expr = Expr::parse(count);
  b.count.expr.bind(s.variable_names());
  b.count.where = {"s.yaml", 7, 12};
  s.buffers.push_back(std::move(b));
  return s;
}

std::optional<std::string> size_problem(const std::string& count, ElementType type, std::int64_t n) {
  const Space s = buffer_space(count, type);
  return buffer_size_problem(s, Problem{{n}}, Config{{1}});
}

TEST(BufferSizes, CountsAreEvaluatedAndBounded) {
  EXPECT_FALSE(size_problem("N * N", ElementType::f32, 8192));
  // Zero and negative counts.
  auto why = size_problem("N - 5", ElementType::f32, 5);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("s.yaml:7:12: buffer x has 0 elements; it needs at least one"), std::string::npos) << *why;
  EXPECT_TRUE(size_problem("N - 6", ElementType::f32, 5));
  // 2^62 doubles: the element count fits in 64 bits, the bytes do not.
  why = size_problem("N", ElementType::f64, std::int64_t{1} << 62);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("4611686018427387904 elements of 8 bytes, more than the 1024 GiB"), std::string::npos) << *why;
  // A product that overflows int64 is an evaluation error, not a wrapped small count.
  why = size_problem("N * N * N", ElementType::u8, std::int64_t{1} << 30);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("the count of buffer x 'N * N * N'"), std::string::npos) << *why;
  // Just under the bound passes; two buffers over it together do not.
  EXPECT_FALSE(size_problem("N", ElementType::u8, std::int64_t{1} << 40));
  Space two = buffer_space("N", ElementType::u8);
  two.buffers.push_back(two.buffers.front());
  two.buffers.back().name = "y";
  why = buffer_size_problem(two, Problem{{std::int64_t{1} << 39 | 1}}, Config{{1}});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("with buffer y the buffers take"), std::string::npos) << *why;
}

}  // namespace
}  // namespace tiletune
