// The search-space loader on good input: the shipped transpose space field by field, the
// value forms (lists, ranges, pow2), source resolution, slot order, the default config,
// buffers and args, expression positions, and the errors that have no line (a missing file,
// a directory). Malformed spaces are in test_malformed.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/space.hpp"

namespace fs = std::filesystem;
using namespace tiletune;
using Values = std::vector<std::int64_t>;

namespace {

fs::path configs_dir() { return tiletune::testing::source_dir() / "configs"; }

// Parses text as if it were configs/inline.yaml, so "../kernels/transpose.cu" resolves.
Space parse(const std::string& text) { return parse_space(text, configs_dir() / "inline.yaml"); }

// A valid space with `params` (indented entries) and `extra` top-level keys appended.
std::string space_text(const std::string& params = "  TILE: [16, 32]\n", const std::string& extra = "") {
  return "kernel: k\n"
         "source: ../kernels/transpose.cu\n"
         "entry: transpose\n"
         "problem:\n"
         "  N: [1024]\n"
         "params:\n" +
         params +
         "launch:\n"
         "  grid: [\"ceil_div(N, TILE)\"]\n"
         "  block: TILE\n"
         "buffers:\n"
         "  out: {count: N, output: true}\n"
         "args: [out, N]\n" +
         extra + (extra.find("verify:") == std::string::npos ? "verify: none\n" : "");
}

SpaceError parse_error(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const SpaceError& e) { return e; }
  ADD_FAILURE() << "no error for:\n" << text;
  return SpaceError({}, "none");
}

TEST(Space, LoadsTheTransposeConfig) {
  const fs::path yaml = configs_dir() / "transpose.yaml";
  const Space s = load_space(yaml);
  EXPECT_TRUE(s.yaml_path.is_absolute());
  EXPECT_EQ(s.yaml_path.filename(), "transpose.yaml");
  EXPECT_EQ(s.kernel, "transpose");
  EXPECT_EQ(s.entry, "transpose");
  EXPECT_EQ(fs::weakly_canonical(s.source),
            fs::weakly_canonical(tiletune::testing::source_dir() / "kernels/transpose.cu"));
  EXPECT_TRUE(s.compile_options.empty());

  ASSERT_EQ(s.problem.size(), 1u);
  EXPECT_EQ(s.problem[0].name, "N");
  EXPECT_EQ(s.problem[0].values, (Values{1024, 4096, 8192}));
  EXPECT_EQ(s.problem[0].where.line, 8);
  EXPECT_EQ(s.problem[0].where.column, 3);
  ASSERT_EQ(s.params.size(), 4u);
  EXPECT_EQ(s.params[0].name, "TILE");
  EXPECT_EQ(s.params[0].values, (Values{16, 32, 64}));
  EXPECT_EQ(s.params[1].name, "BLOCK_ROWS");
  EXPECT_EQ(s.params[1].values, (Values{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(s.params[2].name, "PAD");
  EXPECT_EQ(s.params[2].values, (Values{0, 1, 2}));
  EXPECT_EQ(s.params[3].name, "VEC");
  EXPECT_EQ(s.params[3].values, (Values{1, 2, 4}));
  EXPECT_EQ(s.variable_names(), (std::vector<std::string>{"N", "TILE", "BLOCK_ROWS", "PAD", "VEC"}));
  EXPECT_EQ(s.param_index("BLOCK_ROWS"), 1);
  EXPECT_EQ(s.param_index("N"), -1);
  EXPECT_EQ(s.problem_index("N"), 0);
  EXPECT_EQ(s.problem_index("TILE"), -1);

  // Slots: N=4096 TILE=32 BLOCK_ROWS=8 PAD=1 VEC=1.
  const Values slots{4096, 32, 8, 1, 1};
  ASSERT_EQ(s.constraints.size(), 3u);
  EXPECT_EQ(s.constraints[0].condition.expr.text(), "BLOCK_ROWS <= TILE");
  EXPECT_EQ(s.constraints[1].condition.expr.text(), "TILE % BLOCK_ROWS == 0");
  EXPECT_EQ(s.constraints[2].condition.expr.text(), "TILE / VEC >= 8");
  EXPECT_EQ(s.constraints[2].condition.expr.eval(Values{4096, 16, 4, 0, 4}), 0);
  EXPECT_EQ(s.constraints[1].condition.where.line, 16);
  EXPECT_EQ(s.constraints[1].condition.where.column, 5);
  EXPECT_EQ(s.constraints[0].condition.expr.eval(slots), 1);
  EXPECT_EQ(s.constraints[0].condition.expr.eval(Values{4096, 16, 32, 0, 1}), 0);

  // Quoted in the flow list, so that every YAML reader sees one expression.
  EXPECT_EQ(s.launch.grid[0].expr.text(), "ceil_div(N, TILE)");
  EXPECT_EQ(s.launch.grid[1].expr.text(), "ceil_div(N, TILE)");
  EXPECT_EQ(s.launch.grid[0].where.line, 19);
  EXPECT_EQ(s.launch.grid[0].where.column, 10);
  EXPECT_EQ(s.launch.grid[1].where.column, 31);
  EXPECT_EQ(s.launch.grid[0].expr.eval(slots), 128);
  EXPECT_EQ(s.launch.grid[2].expr.eval(slots), 1);
  EXPECT_EQ(s.launch.block[0].expr.eval(slots), 32);
  EXPECT_EQ(s.launch.block[0].expr.eval(Values{4096, 32, 8, 1, 4}), 8);  // TILE / VEC
  EXPECT_EQ(s.launch.block[1].expr.eval(slots), 8);
  EXPECT_EQ(s.launch.block[2].expr.eval(slots), 1);
  EXPECT_EQ(s.launch.shared_bytes.expr.eval(slots), 0);

  ASSERT_EQ(s.buffers.size(), 2u);
  EXPECT_EQ(s.buffers[0].name, "in");
  EXPECT_EQ(s.buffers[0].type, ElementType::f32);
  EXPECT_EQ(s.buffers[0].init.kind, BufferInit::random);
  EXPECT_FALSE(s.buffers[0].output);
  EXPECT_EQ(s.buffers[0].count.expr.eval(slots), 4096 * 4096);
  EXPECT_EQ(s.buffers[1].name, "out");
  EXPECT_EQ(s.buffers[1].init.kind, BufferInit::zero);
  EXPECT_TRUE(s.buffers[1].output);

  ASSERT_EQ(s.args.size(), 3u);
  EXPECT_EQ(s.args[0].kind, ArgSpec::Kind::buffer);
  EXPECT_EQ(s.args[0].buffer, "in");
  EXPECT_EQ(s.args[1].kind, ArgSpec::Kind::buffer);
  EXPECT_EQ(s.args[1].buffer, "out");
  EXPECT_EQ(s.args[2].kind, ArgSpec::Kind::scalar);
  EXPECT_EQ(s.args[2].scalar_type, ElementType::i32);
  EXPECT_EQ(s.args[2].value.expr.expr.eval(slots), 4096);

  EXPECT_EQ(s.verify.reference, VerifySpec::Reference::builtin);
  EXPECT_EQ(s.verify.builtin, "transpose");
  ASSERT_EQ(s.verify.outputs.size(), 1u);
  EXPECT_EQ(s.verify.outputs[0].buffer, "out");
  EXPECT_EQ(s.verify.outputs[0].rtol, 0.0);
  EXPECT_EQ(s.verify.outputs[0].atol, 0.0);
  EXPECT_EQ(s.verify.where.line, 26);
  ASSERT_TRUE(s.metric_bytes);
  EXPECT_EQ(s.metric_bytes->expr.eval(slots), 2LL * 4096 * 4096 * 4);
  EXPECT_FALSE(s.metric_flops);
  ASSERT_TRUE(s.default_config);
  EXPECT_EQ(*s.default_config, (Values{32, 8, 0, 1}));
  EXPECT_EQ(s.default_where.line, 28);
}

TEST(Space, ParsesFromText) {
  const Space s = parse(space_text());
  EXPECT_EQ(s.kernel, "k");
  EXPECT_EQ(s.yaml_path, configs_dir() / "inline.yaml");
  EXPECT_EQ(s.params[0].values, (Values{16, 32}));
  EXPECT_EQ(s.launch.block[0].expr.text(), "TILE");  // a scalar is one dimension
  EXPECT_EQ(s.launch.block[1].expr.eval(Values{1024, 16}), 1);
  EXPECT_EQ(s.launch.shared_bytes.expr.eval(Values{1024, 16}), 0);
  EXPECT_EQ(s.verify.reference, VerifySpec::Reference::none);
  EXPECT_FALSE(s.default_config);
  EXPECT_FALSE(s.metric_bytes);
}

TEST(Space, ValueForms) {
  const Space s =
      parse(space_text("  TILE: [16, 32]\n"
                       "  X: {from: 1, to: 32, step: 2}\n"
                       "  Y: {pow2: [16, 1024]}\n"
                       "  Z: 7\n"
                       "  R: {from: -2, to: 2}\n"
                       "  S: {from: 3, to: 3}\n"
                       "  P: {pow2: [1, 1]}\n"
                       "  H: [0x10, -0x1, +5]\n"
                       "  Q: {from: 0, to: 10, step: 4}\n"));
  Values odd;
  for (std::int64_t v = 1; v <= 31; v += 2) odd.push_back(v);
  EXPECT_EQ(s.params[1].values, odd);
  EXPECT_EQ(s.params[2].values, (Values{16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(s.params[3].values, (Values{7}));
  EXPECT_EQ(s.params[4].values, (Values{-2, -1, 0, 1, 2}));
  EXPECT_EQ(s.params[5].values, (Values{3}));
  EXPECT_EQ(s.params[6].values, (Values{1}));
  EXPECT_EQ(s.params[7].values, (Values{16, -1, 5}));
  EXPECT_EQ(s.params[8].values, (Values{0, 4, 8}));  // the end need not be on a step
}

TEST(Space, BlockListsAndExtremeIntegers) {
  const Space s =
      parse(space_text("  TILE:\n"
                       "    - 16\n"
                       "    - 32\n"
                       "  BIG: [9223372036854775807, -9223372036854775808]\n"
                       "  W: {from: 9223372036854775806, to: 9223372036854775807}\n"));
  EXPECT_EQ(s.params[0].values, (Values{16, 32}));
  EXPECT_EQ(s.params[1].values, (Values{INT64_MAX, INT64_MIN}));
  EXPECT_EQ(s.params[2].values, (Values{INT64_MAX - 1, INT64_MAX}));
}

TEST(Space, RelativeSourceIsResolvedFromTheYamlDirectory) {
  tiletune::testing::TempDir dir;
  const fs::path kernel = dir.write("kernels/k.cu", "extern \"C\" __global__ void k() {}\n");
  std::string text = space_text();
  text.replace(text.find("../kernels/transpose.cu"), 23, "../../kernels/k.cu");
  const fs::path yaml = dir.write("spaces/sub/space.yaml", text);
  EXPECT_EQ(load_space(yaml).source, kernel.lexically_normal());

  // An absolute source is taken as is.
  std::string absolute = space_text();
  absolute.replace(absolute.find("../kernels/transpose.cu"), 23, kernel.string());
  EXPECT_EQ(load_space(dir.write("elsewhere/a.yaml", absolute)).source, kernel);

  // The same text one directory up no longer finds the kernel; the error names the value.
  const fs::path moved = dir.write("spaces/space.yaml", text);
  try {
    (void)load_space(moved);
    FAIL() << "expected a missing source";
  } catch (const SpaceError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 9);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(Space, VariableNamesPutProblemSizesFirst) {
  // params written before problem in the file: slots are still problem, then params.
  const std::string text =
      "params: {B: [1], A: [2]}\n"
      "problem: {M: [8], N: [9]}\n"
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: e\n"
      "launch: {grid: M, block: [A, B]}\n"
      "verify: {reference: none}\n"
      "args: [M]\n";
  const Space s = parse(text);
  EXPECT_EQ(s.variable_names(), (std::vector<std::string>{"M", "N", "B", "A"}));
  EXPECT_EQ(s.launch.block[0].expr.eval(Values{8, 9, 1, 2}), 2);
  EXPECT_EQ(s.param_index("A"), 1);
  EXPECT_EQ(s.problem_index("N"), 1);

  // No problem at all: the slots are the params.
  const Space t = parse(
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: e\nparams: {T: [1]}\n"
      "launch: {grid: 1, block: T}\nverify: {reference: none}\nargs: [T]\n");
  EXPECT_TRUE(t.problem.empty());
  EXPECT_EQ(t.variable_names(), (std::vector<std::string>{"T"}));
}

TEST(Space, DefaultConfigFollowsParamOrder) {
  const Space s = parse(space_text("  TILE: [16, 32]\n  PAD: [0, 1]\n", "default: {PAD: 1, TILE: 32}\n"));
  ASSERT_TRUE(s.default_config);
  EXPECT_EQ(*s.default_config, (Values{32, 1}));
  EXPECT_EQ(s.default_where.line, 15);
  EXPECT_EQ(s.default_where.column, 10);
}

TEST(Space, BuffersAndArgs) {
  const std::string text =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: e\n"
      "problem: {N: [64]}\n"
      "params: {T: [4]}\n"
      "launch: {grid: 1, block: T}\n"
      "buffers:\n"
      "  a: {type: double, count: \"max(N, 2*T)\", init: iota}\n"  // comma inside a flow map: quoted
      "  b: {type: int, count: 'N + 1', init: none}\n"
      "  c: {type: uint, count: N}\n"
      "  d: {type: int64, count: N}\n"
      "  e: {type: uint8, count: N}\n"
      "  f: {type: half, count: N, output: true, init: zero}\n"
      "args: [a, b, c, d, e, f, N, \"min(N, 3)\", \"T * 2\",\n"
      "       {value: N, type: int64}, {value: 'N / 2', type: float}, {value: 1, type: double},\n"
      "       {value: 7, type: uint}, {value: N}]\n"
      "verify: {reference: {config: {T: 4}}, rtol: 1e-5, atol: 0.5}\n"
      "metrics: {bytes: N * 8, flops: 'min(N, T) * 2'}\n"
      "options: [-use_fast_math, --std=c++17]\n";
  const Space s = parse(text);
  const Values slots{64, 4};
  ASSERT_EQ(s.buffers.size(), 6u);
  const ElementType types[] = {ElementType::f64, ElementType::i32, ElementType::u32,
                               ElementType::i64, ElementType::u8,  ElementType::f16};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(s.buffers[i].type, types[i]) << i;
  EXPECT_EQ(s.buffers[0].count.expr.text(), "max(N, 2*T)");
  EXPECT_EQ(s.buffers[0].count.expr.eval(slots), 64);
  EXPECT_EQ(s.buffers[0].init.kind, BufferInit::iota);
  EXPECT_EQ(s.buffers[1].count.expr.eval(slots), 65);
  EXPECT_EQ(s.buffers[1].init.kind, BufferInit::none);
  EXPECT_EQ(s.buffers[5].init.kind, BufferInit::zero);
  EXPECT_TRUE(s.buffers[5].output);
  EXPECT_EQ(s.buffers[2].where.line, 10);
  EXPECT_EQ(s.buffers[2].where.column, 3);

  ASSERT_EQ(s.args.size(), 14u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.args[i].kind, ArgSpec::Kind::buffer) << i;
    EXPECT_EQ(s.args[i].buffer, s.buffers[i].name);
  }
  for (std::size_t i = 6; i < 14; ++i) EXPECT_EQ(s.args[i].kind, ArgSpec::Kind::scalar) << i;
  EXPECT_EQ(s.args[6].value.expr.expr.eval(slots), 64);
  EXPECT_EQ(s.args[7].value.expr.expr.text(), "min(N, 3)");
  EXPECT_EQ(s.args[7].value.expr.expr.eval(slots), 3);
  EXPECT_EQ(s.args[8].value.expr.expr.eval(slots), 8);
  EXPECT_EQ(s.args[9].scalar_type, ElementType::i64);
  EXPECT_EQ(s.args[10].scalar_type, ElementType::f32);
  EXPECT_EQ(s.args[10].value.expr.expr.eval(slots), 32);
  EXPECT_EQ(s.args[11].scalar_type, ElementType::f64);
  EXPECT_EQ(s.args[12].scalar_type, ElementType::u32);
  EXPECT_EQ(s.args[13].scalar_type, ElementType::i32);
  EXPECT_EQ(s.args[9].where.line, 15);
  EXPECT_EQ(s.args[9].where.column, 8);

  EXPECT_EQ(s.verify.reference, VerifySpec::Reference::config);
  EXPECT_EQ(s.verify.reference_config, (Values{4}));
  ASSERT_FALSE(s.verify.outputs.empty());
  EXPECT_DOUBLE_EQ(s.verify.outputs[0].rtol, 1e-5);
  EXPECT_DOUBLE_EQ(s.verify.outputs[0].atol, 0.5);
  ASSERT_TRUE(s.metric_flops);
  EXPECT_EQ(s.metric_flops->expr.eval(slots), 8);
  EXPECT_EQ(s.metric_bytes->expr.eval(slots), 512);
  ASSERT_EQ(s.compile_options.size(), 2u);
  EXPECT_EQ(s.compile_options[0].text, "-use_fast_math");
  EXPECT_EQ(s.compile_options[1].text, "--std=c++17");
}

TEST(Space, VerifyNoneNeedsNoOutputBuffer) {
  const std::string text =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: e\nparams: {T: [4]}\n"
      "launch: {grid: 1, block: T}\nbuffers: {x: {count: 4}}\nargs: [x]\nverify: {reference: none}\n";
  EXPECT_EQ(parse(text).verify.reference, VerifySpec::Reference::none);
  // Without verify, nothing is chosen silently: the space must say how it is checked.
  std::string without = text.substr(0, text.find("verify:"));
  EXPECT_NE(std::string(parse_error(without).what()).find("no 'verify'"), std::string::npos);
}

TEST(Space, ConstraintsMayBeIntegersAndBooleans) {
  const Space s = parse(space_text("  TILE: [16, 32]\n",
                                   "constraints:\n  - true\n  - 0\n  - 'TILE >= 16'\n"
                                   "  - ceil_div(TILE, 16) <= 2 && is_pow2(TILE)\n"));
  ASSERT_EQ(s.constraints.size(), 4u);
  EXPECT_EQ(s.constraints[0].condition.expr.eval(Values{1, 16}), 1);
  EXPECT_EQ(s.constraints[1].condition.expr.eval(Values{1, 16}), 0);
  EXPECT_EQ(s.constraints[2].condition.expr.eval(Values{1, 16}), 1);
  EXPECT_EQ(s.constraints[3].condition.expr.eval(Values{1, 32}), 1);
}

TEST(Space, ExpressionsAreNotEvaluatedAtLoad) {
  // Division by a param that may be zero: only an error once evaluated for a config.
  const Space s = parse(space_text("  TILE: [0, 16]\n", "metrics: {bytes: N / TILE}\n"));
  EXPECT_EQ(s.metric_bytes->expr.eval(Values{1024, 16}), 64);
  EXPECT_THROW((void)s.metric_bytes->expr.eval(Values{1024, 0}), EvalError);
}

TEST(Space, ExpressionErrorsPointInsideTheScalar) {
  // Plain scalar: column of the scalar + offset.
  SpaceError e = parse_error(space_text("  TILE: [16]\n", "metrics: {bytes: N * $}\n"));
  EXPECT_EQ(e.where().line, 14);
  EXPECT_EQ(e.where().column, 22);
  // Double-quoted: one more for the quote.
  e = parse_error(space_text("  TILE: [16]\n", "metrics:\n  bytes: \"N * $\"\n"));
  EXPECT_EQ(e.where().line, 15);
  EXPECT_EQ(e.where().column, 15);
  // Single-quoted.
  e = parse_error(space_text("  TILE: [16]\n", "metrics:\n  bytes: 'N * $'\n"));
  EXPECT_EQ(e.where().column, 15);
  // An unknown name after the comma of a quoted flow item.
  e = parse_error(space_text("  TILE: [16]\n", "metrics: {bytes: \"max(N, TILES)\"}\n"));
  EXPECT_EQ(e.where().line, 14);
  EXPECT_EQ(e.where().column, 26);
  EXPECT_NE(std::string(e.what()).find("did you mean 'TILE'"), std::string::npos) << e.what();
  // Escapes make the offset unmappable: the scalar's own position is used.
  e = parse_error(space_text("  TILE: [16]\n", "metrics:\n  bytes: \"\\x4E * $\"\n"));
  EXPECT_EQ(e.where().line, 15);
  EXPECT_EQ(e.where().column, 10);
}

TEST(Space, ErrorMessageFormat) {
  const SpaceError e = parse_error(space_text("  TILE: [16, 16]\n"));
  const std::string expected_start = (configs_dir() / "inline.yaml").string() + ":7:14: error: ";
  EXPECT_EQ(std::string(e.what()).rfind(expected_start, 0), 0u) << e.what();
  EXPECT_NE(std::string(e.what()).find("\n  hint: "), std::string::npos) << e.what();
  EXPECT_EQ(e.where().file, (configs_dir() / "inline.yaml").string());
}

TEST(Space, UnknownKeysListTheValidOnes) {
  const SpaceError e = parse_error(space_text("  TILE: [16]\n", "verfiy: {rtol: 0}\n"));
  const std::string m = e.what();
  EXPECT_NE(m.find("unknown key 'verfiy' at the top level; did you mean 'verify'?"), std::string::npos) << m;
  EXPECT_NE(m.find("kernel, source, entry"), std::string::npos) << m;
  // Nothing close: no suggestion, still the list.
  const std::string n = parse_error(space_text("  TILE: [16]\n", "zzzzzz: 1\n")).what();
  EXPECT_EQ(n.find("did you mean"), std::string::npos) << n;
  EXPECT_NE(n.find("valid keys"), std::string::npos) << n;
}

TEST(Space, MissingOrDirectoryFileHasNoLine) {
  tiletune::testing::TempDir dir;
  const fs::path missing = dir.path() / "nope.yaml";
  try {
    (void)load_space(missing);
    FAIL();
  } catch (const SpaceError& e) {
    EXPECT_EQ(e.where().file, missing.string());
    EXPECT_EQ(e.where().line, 0);
    EXPECT_EQ(std::string(e.what()).rfind(missing.string() + ": error: ", 0), 0u) << e.what();
  }
  try {
    (void)load_space(dir.path());
    FAIL();
  } catch (const SpaceError& e) {
    EXPECT_EQ(e.where().line, 0);
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
  // A truly empty file.
  try {
    (void)load_space(dir.write("empty.yaml", ""));
    FAIL();
  } catch (const SpaceError& e) { EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what(); }
}

TEST(Space, ElementTypes) {
  struct Expected {
    ElementType type;
    std::size_t size;
    const char* name;
  };
  const Expected expected[] = {
      {ElementType::f32, 4, "float"},  {ElementType::f64, 8, "double"}, {ElementType::i32, 4, "int"},
      {ElementType::u32, 4, "uint"},   {ElementType::i64, 8, "int64"},  {ElementType::u8, 1, "uint8"},
      {ElementType::f16, 2, "half"},   {ElementType::i8, 1, "int8"},    {ElementType::i16, 2, "int16"},
      {ElementType::u16, 2, "uint16"}, {ElementType::u64, 8, "uint64"}};
  ASSERT_EQ(std::size(expected), kElementTypeCount);
  for (std::size_t i = 0; i < kElementTypeCount; ++i) {
    // The numbers are fixed (tiletune/reference.h, the generators): the new types come last.
    EXPECT_EQ(static_cast<std::size_t>(expected[i].type), i);
    EXPECT_EQ(element_size(expected[i].type), expected[i].size);
    EXPECT_STREQ(element_type_name(expected[i].type), expected[i].name);
  }
  // kElementTypes lists each type once; its YAML name reads back.
  std::vector<bool> seen(kElementTypeCount, false);
  for (const ElementType t : kElementTypes) {
    ASSERT_LT(static_cast<std::size_t>(t), kElementTypeCount);
    EXPECT_FALSE(seen[static_cast<std::size_t>(t)]) << element_type_name(t);
    seen[static_cast<std::size_t>(t)] = true;
    EXPECT_EQ(element_type_from_name(element_type_name(t)), t);
  }
  EXPECT_EQ(element_type_list(), "float, double, half, int8, int16, int, int64, uint8, uint16, uint, uint64");
}

TEST(Space, ElementTypesFromCSpellings) {
  // What a text param's -DT=... may say; the spellings whose width or signedness is the
  // platform's (char, long, size_t) are not taken.
  const std::pair<const char*, ElementType> spellings[] = {{"signed char", ElementType::i8},
                                                           {"int8_t", ElementType::i8},
                                                           {"short", ElementType::i16},
                                                           {"int16_t", ElementType::i16},
                                                           {"unsigned short", ElementType::u16},
                                                           {"uint16_t", ElementType::u16},
                                                           {"unsigned long long", ElementType::u64},
                                                           {"uint64_t", ElementType::u64},
                                                           {"unsigned char", ElementType::u8},
                                                           {"long long", ElementType::i64},
                                                           {"__half", ElementType::f16},
                                                           {"unsigned", ElementType::u32}};
  for (const auto& [name, type] : spellings) EXPECT_EQ(element_type_from_name(name), type) << name;
  for (const char* name : {"char", "long", "unsigned long", "size_t", "int128", "short int"})
    EXPECT_FALSE(element_type_from_name(name)) << name;
}

TEST(Space, NarrowAndWideIntegerTypesEverywhere) {
  const std::string text =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: e\n"
      "problem: {N: [64]}\n"
      "params: {T: [4], U: [int8, uint16, half]}\n"
      "launch: {grid: 1, block: T}\n"
      "buffers:\n"
      "  a: {type: int8, count: N, init: {uniform: [-128, 128]}}\n"
      "  b: {type: int16, count: N, init: {constant: -32768}}\n"
      "  c: {type: uint16, count: N, init: iota}\n"
      "  d: {type: uint64, count: 'N + 1', init: {csr_offsets: {rows: N, columns: N, nnz: 4 * N}}}\n"
      "  e: {type: uint64, count: 4 * N, init: {csr_columns: d}}\n"
      "  f: {type: char4, count: N, init: random}\n"
      "  g: {type: ushort2, count: N, init: {uniform: [0, 65536]}}\n"
      "  h: {type: U, count: N, output: true}\n"
      "globals: {w: {type: int16, count: 9, init: random}, z: {type: ulonglong2, count: 2, init: iota}}\n"
      "args: [a, b, c, d, e, f, g, h, {value: 3, type: int8}, {value: -128, type: int8}, {value: 32767, type: int16},\n"
      "       {value: 65535, type: uint16}, {value: N, type: uint64}, {value: 255, type: uint8},\n"
      "       {value: 0.5, type: half}, {value: 7, type: U}, {value: -65504, type: half}]\n"
      "verify: none\n";
  const Space s = parse(text);
  const std::vector<std::int64_t> slots{64, 4, 0};
  const ElementType types[] = {ElementType::i8,  ElementType::i16, ElementType::u16, ElementType::u64,
                               ElementType::u64, ElementType::i8,  ElementType::u16, ElementType::i8};
  ASSERT_EQ(s.buffers.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(s.buffers[i].type, types[i]) << i;
  EXPECT_EQ(s.buffers[7].type_param, 1);
  EXPECT_EQ(s.buffers[5].count.expr.eval(slots), 256);  // char4: four int8 per element
  EXPECT_EQ(s.buffers[6].count.expr.eval(slots), 128);
  EXPECT_EQ(s.buffers[3].init.kind, BufferInit::csr_offsets);
  ASSERT_EQ(s.globals.size(), 2u);
  EXPECT_EQ(s.globals[0].type, ElementType::i16);
  EXPECT_EQ(s.globals[1].type, ElementType::u64);
  EXPECT_EQ(s.globals[1].count.expr.eval(slots), 4);
  ASSERT_EQ(s.args.size(), 17u);
  const ElementType scalars[] = {ElementType::i8,  ElementType::i8,  ElementType::i16,
                                 ElementType::u16, ElementType::u64, ElementType::u8,
                                 ElementType::f16, ElementType::i8,  ElementType::f16};
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(s.args[8 + i].scalar_type, scalars[i]) << i;
  EXPECT_EQ(s.args[9].value.expr.expr.eval(slots), -128);
  EXPECT_DOUBLE_EQ(*s.args[14].value.real, 0.5);
  EXPECT_EQ(s.args[15].type_param, 1);
}

// A scalar argument or a fill value that does not fit its type is refused where it is written,
// naming the value and the type's range.
TEST(Space, ValuesOutOfTheirTypesRangeAreRefused) {
  auto refused = [&](const std::string& buffers, const std::string& args, const std::string& expected, int line,
                     int column) {
    const std::string text =
        "kernel: k\nsource: ../kernels/transpose.cu\nentry: e\nproblem: {N: [64]}\n"
        "params: {T: [4], U: [int, int8]}\nlaunch: {grid: 1, block: T}\n"
        "buffers:\n  out: {count: N, output: true}\n" +
        buffers + "args: [out" + args + "]\nverify: none\n";
    const SpaceError e = parse_error(text);
    EXPECT_NE(e.reason().find(expected), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().column, column) << e.what();
  };
  refused("", ", {value: 128, type: int8}", "128 does not fit int8 (-128 to 127)", 9, 21);
  refused("", ", {value: -129, type: int8}", "-129 does not fit int8 (-128 to 127)", 9, 21);
  refused("", ", {value: 40000, type: int16}", "40000 does not fit int16 (-32768 to 32767)", 9, 21);
  refused("", ", {value: 65536, type: uint16}", "65536 does not fit uint16 (0 to 65535)", 9, 21);
  refused("", ", {value: -1, type: uint16}", "-1 does not fit uint16", 9, 21);
  refused("", ", {value: 256, type: uint8}", "256 does not fit uint8 (0 to 255)", 9, 21);
  refused("", ", {value: -1, type: uint64}", "-1 does not fit uint64 (0 to 9223372036854775807)", 9, 21);
  refused("", ", {value: 2147483648, type: int}", "2147483648 does not fit int (-2147483648 to 2147483647)", 9, 21);
  refused("", ", {value: 4294967296, type: uint}", "4294967296 does not fit uint (0 to 4294967295)", 9, 21);
  refused("", ", \"1024 * 1024 * 1024 * 1024\"", "1099511627776 does not fit int", 9, 13);  // a bare scalar is an int
  refused("", ", {value: 65520, type: half}", "65520 does not fit half (its largest value is 65504)", 9, 21);
  refused("", ", {value: -1e39, type: float}", "does not fit float", 9, 21);
  refused("", ", {value: 200, type: U}", "200 does not fit int8", 9, 21);  // every type the param gives
  refused("  x: {type: int8, count: N, init: {constant: 300}}\n", "", "300 does not fit int8", 9, 46);
  refused("  x: {type: uint8, count: N, init: {uniform: [-1, 10]}}\n", "", "-1 does not fit uint8", 9, 47);
  refused("  x: {type: uint8, count: N, init: {uniform: [0, 257]}}\n", "",
          "the largest value drawn, 256 does not fit uint8 (0 to 255)", 9, 50);
  refused("  x: {type: half, count: N, init: {uniform: [0, 1e5]}}\n", "", "100000 does not fit half", 9, 49);
  refused("  x: {type: U, count: N, init: {constant: 1000}}\n", "", "1000 does not fit int8", 9, 43);
  // The edges of each range are taken.
  const std::string edges =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: e\nproblem: {N: [64]}\n"
      "params: {T: [4]}\nlaunch: {grid: 1, block: T}\n"
      "buffers:\n  out: {count: N, output: true}\n"
      "  x: {type: uint8, count: N, init: {uniform: [0, 256]}}\n"
      "  y: {type: int16, count: N, init: {uniform: [-32768, 32768]}}\n"
      "args: [out, x, y, {value: 127, type: int8}, {value: -32768, type: int16}, {value: 65535, type: uint16},\n"
      "       {value: 9223372036854775807, type: uint64}, {value: 65519, type: half}]\nverify: none\n";
  EXPECT_NO_THROW((void)parse(edges));
}

TEST(Space, ValueMisfit) {
  EXPECT_FALSE(value_misfit(ElementType::i8, std::int64_t{-128}));
  EXPECT_FALSE(value_misfit(ElementType::u64, std::numeric_limits<std::int64_t>::max()));
  EXPECT_FALSE(value_misfit(ElementType::i64, std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(value_misfit(ElementType::u8, std::int64_t{-1}), "-1 does not fit uint8 (0 to 255)");
  EXPECT_EQ(value_misfit(ElementType::u64, 1e19), "1e+19 does not fit uint64 (0 to 9223372036854775807)");
  EXPECT_EQ(value_misfit(ElementType::i16, 0.5), "0.5 does not fit int16 (-32768 to 32767)");
  EXPECT_FALSE(value_misfit(ElementType::i32, 2147483647.0));
  EXPECT_TRUE(value_misfit(ElementType::i32, 2147483648.0));
  EXPECT_TRUE(value_misfit(ElementType::i64, 9223372036854775808.0));
  // Floating types: what rounds to a finite value fits; infinity written as such fits too.
  EXPECT_FALSE(value_misfit(ElementType::f16, 65519.0));
  EXPECT_TRUE(value_misfit(ElementType::f16, -65520.0));
  EXPECT_FALSE(value_misfit(ElementType::f16, std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(value_misfit(ElementType::f32, 3.4e38));
  EXPECT_TRUE(value_misfit(ElementType::f32, 3.5e38));
  EXPECT_FALSE(value_misfit(ElementType::f64, 1e308));
  EXPECT_FALSE(value_misfit(ElementType::f32, std::numeric_limits<std::int64_t>::max()));
}

}  // namespace

namespace tiletune {
namespace {

// tests/spaces/good/foreign_forms.yaml holds every form a kernel written elsewhere needs.
TEST(ForeignForms, EveryKeyIsReadIntoTheSpace) {
  const Space s = load_space(testing::test_data_dir() / "spaces/good/foreign_forms.yaml");
  // Params of three kinds: a Config holds label indexes for real and text params.
  ASSERT_EQ(s.params.size(), 3u);
  EXPECT_EQ(s.params[1].kind, AxisKind::text);
  EXPECT_EQ(s.params[1].labels, (std::vector<std::string>{"float", "double"}));
  EXPECT_EQ(s.params[1].values, (Values{0, 1}));
  EXPECT_EQ(s.params[2].kind, AxisKind::real);
  EXPECT_EQ(s.params[2].text_of(2), "2.5");
  EXPECT_DOUBLE_EQ(s.params[2].real_of(0), 0.5);
  // The default names a text value by its word and a real one by its number (1.0 is 1).
  EXPECT_EQ(*s.default_config, (Values{64, 1, 1}));
  // Options with ${...}: pieces around the expressions.
  ASSERT_EQ(s.compile_options.size(), 2u);
  EXPECT_EQ(expand_option(s.compile_options[0], slot_values(Problem{{1000, 8}}, Config{{64, 0, 0}})), "-DWIDTH=2000");
  EXPECT_EQ(expand_option(s.compile_options[1], {}), "-DPLAIN");
  // Inputs.
  auto buffer = [&](const std::string& name) -> const BufferSpec& {
    return s.buffers.at(static_cast<std::size_t>(s.buffer_index(name)));
  };
  EXPECT_EQ(buffer("rows").init.kind, BufferInit::csr_offsets);
  const std::vector<std::int64_t> slots = slot_values(Problem{{1000, 8}}, Config{{64, 1, 0}});
  EXPECT_EQ(buffer("rows").init.nnz.expr.eval(slots), 8000);
  EXPECT_EQ(buffer("rows").init.columns.expr.eval(slots), 1000);
  EXPECT_EQ(buffer("cols").init.kind, BufferInit::csr_columns);
  EXPECT_EQ(buffer("cols").init.of, "rows");
  EXPECT_EQ(buffer("vals").type_param, 1);
  EXPECT_EQ(resolved_type(s, buffer("vals").type, buffer("vals").type_param, Config{{64, 1, 0}}), ElementType::f64);
  EXPECT_EQ(buffer("vals").init.kind, BufferInit::uniform);
  EXPECT_EQ(eval_number(s, buffer("vals").init.a, slots), -2.0);
  EXPECT_EQ(buffer("x").init.kind, BufferInit::normal);
  EXPECT_DOUBLE_EQ(eval_number(s, buffer("x").init.b, slots), 0.5);
  EXPECT_EQ(eval_number(s, buffer("idx").init.b, slots), 1000.0);
  EXPECT_DOUBLE_EQ(*buffer("c").init.a.real, 0.25);
  EXPECT_EQ(buffer("f").init.kind, BufferInit::file);
  EXPECT_EQ(expand_path(s, buffer("f").init.file, buffer("f").init.file_dir, Problem{{1000, 8}}),
            testing::test_data_dir() / "spaces/good/data/x.npy");
  EXPECT_EQ(buffer("y").init.kind, BufferInit::copy);
  EXPECT_TRUE(buffer("y").output);
  ASSERT_TRUE(buffer("sparse").init.density);
  EXPECT_DOUBLE_EQ(*buffer("sparse").init.density, 0.01);
  // Globals, with a C++ qualified name.
  ASSERT_EQ(s.globals.size(), 2u);
  EXPECT_EQ(s.globals[1].name, "conv::bias");
  EXPECT_EQ(s.globals[0].count.expr.eval(slots), 9);
  // Scalars: a decimal literal, a real param passed with a text param's type, an expression.
  ASSERT_EQ(s.args.size(), 14u);
  EXPECT_EQ(s.args[11].scalar_type, ElementType::f32);
  EXPECT_DOUBLE_EQ(eval_number(s, s.args[11].value, slots), 0.5);
  EXPECT_EQ(s.args[12].value.real_param, 2);
  EXPECT_EQ(s.args[12].type_param, 1);
  EXPECT_DOUBLE_EQ(eval_number(s, s.args[12].value, slot_values(Problem{{1000, 8}}, Config{{64, 1, 2}})), 2.5);
  EXPECT_EQ(eval_number(s, s.args[13].value, slots), 2000.0);
  // The reference kernel and the per-output checks.
  ASSERT_EQ(s.verify.reference, VerifySpec::Reference::kernel);
  ASSERT_TRUE(s.verify.kernel);
  EXPECT_EQ(s.verify.kernel->entry, "planted_naive");
  EXPECT_EQ(s.verify.kernel->source, s.source);
  ASSERT_EQ(s.verify.kernel->defines.size(), 3u);
  EXPECT_EQ(s.verify.kernel->defines[2].text, "float");
  EXPECT_FALSE(s.verify.kernel->defines[2].integer);
  EXPECT_EQ(reference_slot_names(s, *s.verify.kernel), (std::vector<std::string>{"N", "NNZ_PER_ROW", "BLOCK", "MODE"}));
  EXPECT_EQ(s.verify.kernel->launch.grid[0].expr.eval(Values{1000, 8, 32, 0}), 32);
  EXPECT_EQ(s.verify.kernel->args.size(), s.args.size());  // the space's, by default
  ASSERT_EQ(s.verify.outputs.size(), 2u);
  EXPECT_EQ(s.verify.outputs[0].buffer, "y");
  EXPECT_EQ(s.verify.outputs[0].compare, OutputCheck::Compare::elements);
  EXPECT_DOUBLE_EQ(s.verify.outputs[0].rtol, 1e-5);
  EXPECT_EQ(s.verify.outputs[1].compare, OutputCheck::Compare::sum);
  EXPECT_EQ(s.verify.outputs[1].count->expr.eval(slots), 16);
  EXPECT_EQ(s.verify.outputs[1].reference_count->expr.eval(Values{1000, 8, 32, 0}), 32);
  EXPECT_DOUBLE_EQ(s.verify.outputs[1].atol, 0.01);
  EXPECT_DOUBLE_EQ(s.verify.outputs[1].rtol, 1e-5);
}

TEST(ForeignForms, OtherReferences) {
  const std::string base =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: transpose\nproblem: {N: [64]}\nparams: {TILE: [16, 32]}\n"
      "launch: {grid: 1, block: TILE}\nbuffers: {in: {count: N}, out: {count: N, output: true}}\nargs: [in, out]\n";
  auto reference = [&](const std::string& verify) {
    return parse_space(base + verify, testing::source_dir() / "configs/inline.yaml").verify;
  };
  VerifySpec v = reference("verify: {reference: {builtin: vector_add}}\n");
  EXPECT_EQ(v.reference, VerifySpec::Reference::builtin);
  EXPECT_EQ(v.builtin, "vector_add");
  v = reference("verify: {reference: {config: {TILE: 32}}}\n");
  EXPECT_EQ(v.reference_config, (Values{32}));
  v = reference("verify: {reference: {files: {out: \"expected/out_{N}.npy\"}}}\n");
  ASSERT_EQ(v.files.size(), 1u);
  EXPECT_EQ(v.files[0].second, "expected/out_{N}.npy");
  v = reference("verify: {reference: {library: ../kernels/transpose.cu, function: my_reference}}\n");
  EXPECT_EQ(v.reference, VerifySpec::Reference::library);
  EXPECT_EQ(v.library, testing::source_dir() / "kernels/transpose.cu");
  EXPECT_EQ(v.function, "my_reference");
  v = reference("verify: none\n");
  EXPECT_EQ(v.reference, VerifySpec::Reference::none);
  // A reference with every output skipped checks nothing: refused.
  EXPECT_THROW((void)reference("verify:\n  reference: {builtin: transpose}\n  outputs: {out: {compare: none}}\n"),
               SpaceError);
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// `verify: {command: [...]}`: the argv as written, the program found as a shell would (on PATH,
// or from the YAML's directory when it holds a '/') and checked executable, the YAML's directory
// as its working directory, beside any reference.
TEST(ForeignForms, AHostCheckCommandIsFoundAsAShellWould) {
  const std::string base =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: transpose\nproblem: {N: [64]}\nparams: {TILE: [16, 32]}\n"
      "launch: {grid: 1, block: TILE}\nbuffers: {in: {count: N}, out: {count: N, output: true}}\nargs: [in, out]\n";
  const fs::path yaml = testing::source_dir() / "configs/inline.yaml";
  auto verify = [&](const std::string& text) { return parse_space(base + text, yaml).verify; };

  VerifySpec v = verify("verify:\n  reference: none\n  command: [sh, check.py, --flag, \"\", 1e-3]\n");
  EXPECT_EQ(v.reference, VerifySpec::Reference::none);
  EXPECT_EQ(v.command.argv, (std::vector<std::string>{"sh", "check.py", "--flag", "", "1e-3"}));
  const fs::path sh = v.command.program;
  EXPECT_TRUE(sh.is_absolute()) << sh;
  EXPECT_EQ(sh.filename(), "sh");
  EXPECT_EQ(::access(sh.c_str(), X_OK), 0) << sh;
  EXPECT_EQ(v.command.directory, (testing::source_dir() / "configs").string());
  EXPECT_EQ(v.command_where.line, 11);
  EXPECT_EQ(v.command_where.column, 3);
  EXPECT_EQ(v.command.text(), "[sh, check.py, --flag, , 1e-3]");

  // A path with a '/' is the YAML's directory's; any reference goes with a command.
  v = verify("verify: {reference: {builtin: transpose}, command: [../scripts/build.sh, -x]}\n");
  EXPECT_EQ(v.reference, VerifySpec::Reference::builtin);
  EXPECT_EQ(v.command.program, (testing::source_dir() / "scripts/build.sh").string());
  EXPECT_EQ(v.command.argv.front(), "../scripts/build.sh");

  // PATH is searched in order, skipping what is not executable; an empty PATH entry is the
  // current directory, as in a shell.
  testing::TempDir dir;
  fs::create_directories(dir.path() / "a");
  fs::create_directories(dir.path() / "b");
  (void)dir.write("a/my-check", "#!/bin/sh\n");  // not executable: skipped
  const fs::path found = dir.write("b/my-check", "#!/bin/sh\n");
  fs::permissions(found, fs::perms::owner_all);
  const std::string path = (dir.path() / "a").string() + ":" + (dir.path() / "b").string();
  {
    const char* old = std::getenv("PATH");
    const std::string saved = old ? old : "";
    ::setenv("PATH", path.c_str(), 1);
    const VerifySpec on_path = verify("verify: {reference: none, command: [my-check]}\n");
    ::setenv("PATH", (dir.path() / "a").string().c_str(), 1);
    std::string error;
    try {
      (void)verify("verify: {reference: none, command: [my-check]}\n");
    } catch (const SpaceError& e) { error = e.what(); }
    ::setenv("PATH", saved.c_str(), 1);
    EXPECT_EQ(on_path.command.program, found.string());
    EXPECT_NE(error.find("inline.yaml:9:27: error: command: program 'my-check' is not on PATH"), std::string::npos)
        << error;
    EXPECT_NE(error.find((dir.path() / "a/my-check").string() + " is there but not executable"), std::string::npos)
        << error;
  }
  // `verify: none` takes no command; the command needs a reference (none or another).
  EXPECT_THROW((void)verify("verify: {command: [sh]}\n"), SpaceError);
  EXPECT_THROW((void)verify("verify: {reference: none, command: [sh], comand: 1}\n"), SpaceError);
}

// `command_buffers:` names what the host check reads, kept in the space's buffer order; a name
// that is no buffer, a repeat, an empty list or a list without a command is refused, located.
TEST(ForeignForms, AHostCheckReadsOnlyTheBuffersItNames) {
  const std::string base =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: transpose\nproblem: {N: [64]}\nparams: {TILE: [16, 32]}\n"
      "launch: {grid: 1, block: TILE}\nbuffers: {in: {count: N}, out: {count: N, output: true}, tmp: {count: N}}\n"
      "args: [in, out, tmp]\n";
  const fs::path yaml = testing::source_dir() / "configs/inline.yaml";
  auto verify = [&](const std::string& text) { return parse_space(base + text, yaml).verify; };

  VerifySpec v = verify("verify: {reference: none, command: [sh], command_buffers: [tmp, out]}\n");
  EXPECT_EQ(v.command.buffers, (std::vector<std::string>{"out", "tmp"})) << "the space's order";
  EXPECT_TRUE(v.command.reads("out"));
  EXPECT_FALSE(v.command.reads("in"));
  v = verify("verify: {reference: none, command: [sh]}\n");
  EXPECT_TRUE(v.command.buffers.empty());
  EXPECT_TRUE(v.command.reads("in")) << "no list: every buffer";

  auto message = [&](const std::string& text) {
    try {
      (void)verify(text);
    } catch (const SpaceError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("verify: {reference: none, command: [sh], command_buffers: [outt]}\n")
                .find("inline.yaml:9:60: error: verify.command_buffers[0]: 'outt' is not a buffer; did you mean 'out'?"),
            std::string::npos)
      << message("verify: {reference: none, command: [sh], command_buffers: [outt]}\n");
  EXPECT_NE(message("verify: {reference: none, command: [sh], command_buffers: [out, out]}\n").find("named twice"),
            std::string::npos);
  EXPECT_NE(message("verify: {reference: none, command: [sh], command_buffers: []}\n").find("empty list"),
            std::string::npos);
  EXPECT_NE(message("verify: {reference: none, command_buffers: [out]}\n").find("command_buffers without a command"),
            std::string::npos);
}

TEST(ForeignForms, VectorTypesCountTheirElements) {
  const std::string text =
      "kernel: k\nsource: ../kernels/transpose.cu\nentry: transpose\nproblem: {n: [1000]}\nparams: {B: [32]}\n"
      "launch: {grid: 1, block: B}\n"
      "buffers: {points: {type: float2, count: n + 1, init: {uniform: [-1, 1]}}, out: {type: int4, count: 3, output: "
      "true}}\n"
      "globals: {d_vertices: {type: float2, count: 600, init: random}}\n"
      "args: [out, points, n]\nverify: none\n";
  const Space s = parse_space(text, testing::source_dir() / "configs/inline.yaml");
  const std::vector<std::int64_t> slots{1000, 32};
  EXPECT_EQ(s.buffers[0].type, ElementType::f32);
  EXPECT_EQ(s.buffers[0].count.expr.eval(slots), 2002);
  EXPECT_EQ(s.buffers[1].type, ElementType::i32);
  EXPECT_EQ(s.buffers[1].count.expr.eval(slots), 12);
  EXPECT_EQ(s.globals[0].count.expr.eval(slots), 1200);
  // Scalars take no vector type.
  EXPECT_THROW((void)parse_space(
                   text.substr(0, text.find("args:")) + "args: [out, points, {value: 1, type: float2}]\nverify: none\n",
                   testing::source_dir() / "configs/inline.yaml"),
               SpaceError);
}

}  // namespace
}  // namespace tiletune
