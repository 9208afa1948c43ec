// The Python expression interpreter: Python 3's semantics where Kernel Tuner scripts and T1 files
// rely on them (true and floor division, **, chained comparisons, and/or returning operands,
// comprehensions, the whitelisted functions), what it refuses (attributes, lambdas, unknown
// functions), and its bounds (steps, list sizes, nesting, 64-bit integers). The expected values
// are what CPython 3.11 prints for the same text.
#include <gtest/gtest.h>

#include <string>

#include "tiletune/error.hpp"
#include "tiletune/expr.hpp"
#include "tiletune/python_expr.hpp"

namespace tiletune {
namespace {

std::string eval_repr(const std::string& text) { return py::eval_constant(text).repr(); }

TEST(PythonExpr, ArithmeticHasPythonSemantics) {
  EXPECT_EQ(eval_repr("7 / 2"), "3.5");
  EXPECT_EQ(eval_repr("7 // 2"), "3");
  EXPECT_EQ(eval_repr("-7 // 2"), "-4");
  EXPECT_EQ(eval_repr("-7 % 3"), "2");
  EXPECT_EQ(eval_repr("7 % -3"), "-2");
  EXPECT_EQ(eval_repr("7.5 // 2"), "3.0");
  EXPECT_EQ(eval_repr("-7.5 % 2"), "0.5");
  EXPECT_EQ(eval_repr("2 ** 10"), "1024");
  EXPECT_EQ(eval_repr("2 ** -1"), "0.5");
  EXPECT_EQ(eval_repr("-2 ** 2"), "-4");
  EXPECT_EQ(eval_repr("2 ** 3 ** 2"), "512");
  EXPECT_EQ(eval_repr("1 + 2 * 3 - 4"), "3");
  EXPECT_EQ(eval_repr("True + True"), "2");
  EXPECT_EQ(eval_repr("(1 << 4) | 3"), "19");
  EXPECT_EQ(eval_repr("0.1 + 0.2"), "0.30000000000000004");
  EXPECT_EQ(eval_repr("1e16"), "1e+16");
  EXPECT_EQ(eval_repr("0.0001"), "0.0001");
  EXPECT_EQ(eval_repr("0.00001"), "1e-05");
  EXPECT_EQ(eval_repr("1.0"), "1.0");
  EXPECT_EQ(eval_repr("'ab' + 'c'"), "'abc'");
  EXPECT_EQ(eval_repr("[1, 2] * 2"), "[1, 2, 1, 2]");
}

TEST(PythonExpr, ComparisonsChainAndBooleansReturnOperands) {
  EXPECT_EQ(eval_repr("32 <= 4 * 16 <= 1024"), "True");
  EXPECT_EQ(eval_repr("32 <= 4 * 4 <= 1024"), "False");
  EXPECT_EQ(eval_repr("1 < 2 > 1.5"), "True");
  EXPECT_EQ(eval_repr("0 or 5"), "5");
  EXPECT_EQ(eval_repr("3 and 0"), "0");
  EXPECT_EQ(eval_repr("not 0"), "True");
  EXPECT_EQ(eval_repr("1 == 1.0"), "True");
  EXPECT_EQ(eval_repr("'float' == 'float'"), "True");
  EXPECT_EQ(eval_repr("3 in [1, 2, 3]"), "True");
  EXPECT_EQ(eval_repr("'a' not in 'bcd'"), "True");
  EXPECT_EQ(eval_repr("None is None"), "True");
  EXPECT_EQ(eval_repr("8 if 2 > 1 else 16"), "8");
  // An int and a float compare exactly, not through a double.
  EXPECT_EQ(eval_repr("9007199254740993 == 9007199254740992.0"), "False");
}

TEST(PythonExpr, ComprehensionsRangesAndFunctions) {
  EXPECT_EQ(eval_repr("[2**i for i in range(6)]"), "[1, 2, 4, 8, 16, 32]");
  EXPECT_EQ(eval_repr("len(list(range(32, 1024+1, 32)))"), "32");
  EXPECT_EQ(eval_repr("list(range(32, 1024+1, 32))[-1]"), "1024");
  EXPECT_EQ(eval_repr("(1, 2)"), "[1, 2]");  // a tuple is a list
  EXPECT_EQ(eval_repr("[x * y for x in [1, 2] for y in [10, 20] if x * y != 20]"), "[10, 40]");
  EXPECT_EQ(eval_repr("[i for i in range(10, 0, -3)]"), "[10, 7, 4, 1]");
  EXPECT_EQ(eval_repr("sum(i * i for i in range(4))"), "14");
  EXPECT_EQ(eval_repr("max([3, 9, 2])"), "9");
  EXPECT_EQ(eval_repr("min(4, 2.5)"), "2.5");
  EXPECT_EQ(eval_repr("ceil(4096 / 48)"), "86");
  EXPECT_EQ(eval_repr("math.floor(-0.5)"), "-1");
  EXPECT_EQ(eval_repr("int(7.9)"), "7");
  EXPECT_EQ(eval_repr("int(-7.9)"), "-7");
  EXPECT_EQ(eval_repr("round(2.5)"), "2");
  EXPECT_EQ(eval_repr("round(3.5)"), "4");
  EXPECT_EQ(eval_repr("float('1.5')"), "1.5");
  EXPECT_EQ(eval_repr("str(32) + 'x'"), "'32x'");
  EXPECT_EQ(eval_repr("[(a, b) for a, b in [[1, 2], [3, 4]]]"), "[[1, 2], [3, 4]]");
  EXPECT_EQ(eval_repr("sorted([3, 1, 2])"), "[1, 2, 3]");
  EXPECT_EQ(eval_repr("abs(-3) + isqrt(17) + len('abc')"), "10");
  EXPECT_EQ(eval_repr("all([1, 2]) and not any([0, 0])"), "True");
  EXPECT_EQ(eval_repr("log2(1024)"), "10.0");
  EXPECT_EQ(eval_repr("[1, 2, 3][-1]"), "3");
}

TEST(PythonExpr, FreeNamesBindInOrderOfAppearance) {
  const py::Program p = py::Program::parse("block_size_x * tile_x <= 1024 and [t for t in [tile_x]][0] > 0");
  ASSERT_EQ(p.free_names(), (std::vector<std::string>{"block_size_x", "tile_x"}));
  EXPECT_EQ(p.free_name_offset(1), 15u);
  const py::Value args[] = {py::Value::integer(256), py::Value::integer(4)};
  EXPECT_EQ(p.eval(args).repr(), "True");
  const py::Value big[] = {py::Value::integer(512), py::Value::integer(4)};
  EXPECT_EQ(p.eval(big).repr(), "False");
}

TEST(PythonExpr, RefusesWhatIsNotInTheSubset) {
  for (const char* text :
       {"x.y",  "lambda x: x", "__import__('os')", "open('f')", "a[1:2]",       "f'{a}'",    "x := 3",
        "1, 2", "a = 1",       "import os",        "[1, 2",     "1 +",          "eval('1')", "{1: 2}",
        "a; b", "math.pi",     "os.system('x')",   "`x`",       "max(key=len)", "print(1)"}) {
    EXPECT_THROW((void)py::Program::parse(text), ExprSyntaxError) << text;
  }
  try {
    (void)py::Program::parse("a + getattr(b, 'c')");
    FAIL();
  } catch (const ExprSyntaxError& e) {
    EXPECT_EQ(e.offset(), 4u);
    EXPECT_NE(std::string(e.what()).find("getattr"), std::string::npos) << e.what();
  }
}

TEST(PythonExpr, EvaluationErrorsAreNamedLikePythons) {
  auto error_of = [](const std::string& text) {
    try {
      (void)py::eval_constant(text);
    } catch (const EvalError& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  EXPECT_NE(error_of("1 // 0").find("ZeroDivisionError"), std::string::npos);
  EXPECT_NE(error_of("1 / 0.0").find("ZeroDivisionError"), std::string::npos);
  EXPECT_NE(error_of("'a' < 1").find("TypeError"), std::string::npos);
  EXPECT_NE(error_of("[1][3]").find("IndexError"), std::string::npos);
  EXPECT_NE(error_of("max([])").find("ValueError"), std::string::npos);
  EXPECT_NE(error_of("2 ** 63").find("OverflowError"), std::string::npos);
  EXPECT_NE(error_of("9223372036854775807 + 1").find("OverflowError"), std::string::npos);
  EXPECT_NE(error_of("sqrt(-1)").find("math domain error"), std::string::npos);
  EXPECT_EQ(error_of("2 ** 62"), "no error");
}

TEST(PythonExpr, LongListsCostTheirLength) {
  // A comprehension of 2^20 items is within the bounds (its steps grow with its length, not its square).
  EXPECT_EQ(py::eval_constant("len([i for i in range(2**20)])").repr(), "1048576");
  EXPECT_EQ(py::eval_constant("sum([i % 7 for i in range(300000)])").repr(), "899997");
}

TEST(PythonExpr, WorkIsBounded) {
  py::Limits small;
  small.steps = 10'000;
  EXPECT_THROW((void)py::eval_constant("[i for i in range(100000)]", small), EvalError);
  EXPECT_THROW((void)py::eval_constant("list(range(10**9))"), EvalError);
  EXPECT_THROW((void)py::eval_constant("'x' * 10**9"), EvalError);
  EXPECT_THROW((void)py::eval_constant("[[1] * 1000 for i in range(100000)]"), EvalError);
  EXPECT_THROW((void)py::Program::parse(std::string(300, '(') + "1" + std::string(300, ')')), ExprSyntaxError);
  EXPECT_THROW((void)py::Program::parse(std::string(2 << 20, '1')), ExprSyntaxError);
  EXPECT_THROW((void)py::Program::parse("99999999999999999999"), ExprSyntaxError);
  // A long chain is as deep as nesting: refused before evaluation recurses through it.
  std::string chain = "1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_THROW((void)py::Program::parse(chain), ExprSyntaxError);
  std::string sum = "1";
  for (int i = 0; i < 900; ++i) sum += " + 1";
  EXPECT_EQ(py::eval_constant(sum).repr(), "901");
}

TEST(PythonExpr, AsAnExprSeesRealAndTextParamsThroughTheirLabels) {
  Expr e = Expr::parse_python("dtype == 'float' and alpha * n / 2 >= 1.5");
  EXPECT_TRUE(e.is_python());
  ASSERT_EQ(e.variables(), (std::vector<std::string>{"dtype", "alpha", "n"}));
  const std::vector<std::string> slots{"n", "alpha", "dtype"};
  const std::vector<Expr::SlotDecoding> decodings{
      nullptr, std::make_shared<const std::vector<py::Value>>(std::vector{py::Value::real(0.5), py::Value::real(1.5)}),
      std::make_shared<const std::vector<py::Value>>(std::vector{py::Value::text("float"), py::Value::text("double")})};
  e.bind(slots, decodings);
  EXPECT_EQ(e.eval(std::vector<std::int64_t>{4, 1, 0}), 1);  // 1.5 * 4 / 2 = 3.0
  EXPECT_EQ(e.eval(std::vector<std::int64_t>{4, 0, 0}), 0);  // 0.5 * 4 / 2 = 1.0 < 1.5: the and is False
  EXPECT_EQ(e.eval(std::vector<std::int64_t>{2, 1, 1}), 0);  // double
  Expr grid = Expr::parse_python("ceil(n / (bx / 32))");
  grid.bind(std::vector<std::string>{"n", "bx"});
  EXPECT_EQ(grid.eval(std::vector<std::int64_t>{1000, 64}), 500);
  Expr half = Expr::parse_python("n / 2");
  half.bind(std::vector<std::string>{"n"});
  EXPECT_EQ(half.eval(std::vector<std::int64_t>{8}), 4);
  EXPECT_THROW((void)half.eval(std::vector<std::int64_t>{7}), EvalError);  // 3.5 is not a whole number
  Expr unknown = Expr::parse_python("m + 1");
  EXPECT_THROW(unknown.bind(std::vector<std::string>{"n"}), ExprSyntaxError);
}

}  // namespace
}  // namespace tiletune
