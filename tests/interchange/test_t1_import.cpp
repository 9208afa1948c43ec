// T1 import: the fixture spaces (written from Kernel Tuner's T1 1.0.0 schema and KTT's loader,
// and in the styles of the published suites: Python values and conditions, ProblemSize with
// GridDiv, constant memory, every numeric type) become spaces that load, whose configs after
// constraints are exactly those the Python conditions allow (counted here by brute force, by
// hand-written C++ of the same conditions), with the launch geometry Kernel Tuner uses; and
// everything that does not map is refused by field. tests/python/test_t1_grids.py compares every
// config's grid with Kernel Tuner's own rule.
#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/interchange.hpp"
#include "tiletune/plan.hpp"

namespace tiletune {
namespace {

using testing::TempDir;

std::filesystem::path fixture(const std::string& name) { return testing::test_data_dir() / "interchange/t1" / name; }

struct Imported {
  TempDir dir;
  T1Import import;
  Space space;
  explicit Imported(const std::string& name, const std::string& family = {}) {
    const auto yaml = dir.path() / (name + ".yaml");
    import = import_t1(fixture(name + ".json"), yaml, family);
    dir.write(name + ".yaml", import.yaml);
    space = load_space(yaml);
  }
};

// Every combination of the params' values, counted where keep() says yes.
std::uint64_t brute_force(const Space& s, const std::function<bool(const std::vector<std::int64_t>&)>& keep) {
  std::vector<std::size_t> at(s.params.size(), 0);
  std::uint64_t n = 0;
  for (;;) {
    std::vector<std::int64_t> v;
    for (std::size_t i = 0; i < at.size(); ++i) v.push_back(s.params[i].values[at[i]]);
    n += keep(v) ? 1 : 0;
    std::size_t i = at.size();
    while (i > 0 && ++at[i - 1] == s.params[i - 1].values.size()) at[--i] = 0;
    if (i == 0) return n;
  }
}

std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t step = 1) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = lo; x < hi; x += step) v.push_back(x);
  return v;
}

Config config(const Space& s, const std::map<std::string, std::int64_t>& values) {
  Config c;
  for (const Axis& a : s.params) c.values.push_back(values.at(a.name));
  return c;
}

TEST(T1Import, TransposeMapsParamsConditionsLaunchAndDefault) {
  Imported t("transpose");
  const Space& s = t.space;
  EXPECT_EQ(s.kernel, "transpose");
  EXPECT_EQ(s.source, std::filesystem::weakly_canonical(testing::source_dir() / "kernels/transpose.cu"));
  ASSERT_EQ(s.compile_options.size(), 1u);
  EXPECT_EQ(s.compile_options[0].text, "-use_fast_math");
  ASSERT_EQ(s.params.size(), 3u);
  EXPECT_EQ(s.params[1].values, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(count_configs(s, {}).valid, brute_force(s, [](auto& v) { return v[1] <= v[0] && v[0] % v[1] == 0; }));
  // GlobalSizeType CUDA: GlobalSize is the grid itself.
  const LaunchGeometry g = evaluate_launch(s, {}, config(s, {{"TILE", 32}, {"BLOCK_ROWS", 8}, {"PAD", 1}}));
  EXPECT_EQ(g.grid[0], 128);
  EXPECT_EQ(g.grid[1], 128);
  EXPECT_EQ(g.block[0], 32);
  EXPECT_EQ(g.block[1], 8);
  ASSERT_TRUE(s.default_config);
  EXPECT_EQ(*s.default_config, (std::vector<std::int64_t>{32, 8, 0}));
  ASSERT_EQ(s.buffers.size(), 2u);
  EXPECT_TRUE(s.buffers[1].output);
  EXPECT_EQ(s.buffers[0].init.kind, BufferInit::normal);  // Random is Kernel Tuner's randn
  EXPECT_EQ(s.verify.reference, VerifySpec::Reference::none);
  ASSERT_EQ(t.import.notes.size(), 2u);
  EXPECT_NE(t.import.notes[0].find("--budget 25%"), std::string::npos);
  EXPECT_NE(t.import.notes[1].find("not verified"), std::string::npos);
  // Python's floor division stays Python: {python: ...}, quoted.
  EXPECT_NE(
      t.import.yaml.find("grid: [{python: \"(4096 + TILE - 1) // TILE\"}, {python: \"(4096 + TILE - 1) // TILE\"}"),
      std::string::npos)
      << t.import.yaml;
  EXPECT_NE(t.import.yaml.find("block: [\"TILE\", \"BLOCK_ROWS\", \"1\"]"), std::string::npos) << t.import.yaml;
}

TEST(T1Import, VectorAddRangeValuesAndVectorTypes) {
  Imported t("vector_add");
  const Space& s = t.space;
  EXPECT_EQ(s.params[0].values, range(64, 1025, 64));
  EXPECT_EQ(count_configs(s, {}).valid, brute_force(s, [](auto& v) { return v[1] % v[2] == 0 || v[2] == 1; }));
  // float4 of 262144 is 1048576 floats.
  const auto c = config(s, {{"BLOCK", 256}, {"ITEMS", 4}, {"VEC", 4}});
  std::vector<std::string> slots = s.variable_names();
  Expr count = s.buffers[0].count.expr;
  count.bind(slots);
  EXPECT_EQ(count.eval(slot_values({}, c)), 1048576);
  EXPECT_EQ(s.buffers[0].type, ElementType::f32);
  // OpenCL sizes (the default): GlobalSize counts threads, the grid is ceil(global / local).
  const LaunchGeometry g = evaluate_launch(s, {}, c);
  EXPECT_EQ(g.grid[0], (1048576 / 4 + 255) / 256);
  EXPECT_EQ(t.import.notes.size(), 2u);  // Search, and no reference
}

TEST(T1Import, GemmWithKttStyleArraysAndBooleanConditions) {
  Imported t("gemm");
  const Space& s = t.space;
  EXPECT_EQ(s.entry, "gemm_fast");
  EXPECT_EQ(count_configs(s, {}).valid, brute_force(s, [](auto& v) {
              const auto mwg = v[0], nwg = v[1], kwg = v[2], mdimc = v[3], ndimc = v[4], vwm = v[5];
              return mwg % (mdimc * vwm) == 0 && nwg % ndimc == 0 && mdimc * ndimc >= 64 && mdimc * ndimc <= 1024 &&
                     !(kwg > 16 && std::max(mdimc, ndimc) > 16);
            }));
  const LaunchGeometry g = evaluate_launch(
      s, {}, config(s, {{"MWG", 64}, {"NWG", 32}, {"KWG", 16}, {"MDIMC", 16}, {"NDIMC", 8}, {"VWM", 2}}));
  EXPECT_EQ(g.grid[0], 2048 / 64);
  EXPECT_EQ(g.grid[1], 2048 / 32);
  EXPECT_FALSE(s.default_config);  // no Default given
}

TEST(T1Import, ConvolutionBooleansRangesAndBudgetNotes) {
  Imported t("convolution");
  const Space& s = t.space;
  EXPECT_EQ(s.params[2].values, range(1, 5));
  EXPECT_EQ(s.params[4].values, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(s.params[5].values, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(count_configs(s, {}).valid, brute_force(s, [](auto& v) {
              return v[0] * v[1] >= 64 && v[0] * v[2] <= 256 && (!v[4] || v[0] % 32 != 0);
            }));
  std::string notes;
  for (const auto& n : t.import.notes) notes += n + "\n";
  EXPECT_NE(notes.find("--budget 100"), std::string::npos) << notes;
  EXPECT_NE(notes.find("--budget 600s"), std::string::npos) << notes;
  EXPECT_NE(notes.find("not verified"), std::string::npos) << notes;
}

TEST(T1Import, ReductionSharedMemoryAndInOutBuffer) {
  Imported t("reduction");
  const Space& s = t.space;
  EXPECT_EQ(s.params[0].values, range(32, 1025, 32));
  EXPECT_EQ(count_configs(s, {}).valid,
            brute_force(s, [](auto& v) { return !(v[2] && v[0] < 64) && v[0] * v[1] <= 4096; }));
  const LaunchGeometry g = evaluate_launch(s, {}, config(s, {{"BLOCK_SIZE", 256}, {"UNROLL", 8}, {"USE_SHUFFLE", 1}}));
  EXPECT_EQ(g.grid[0], std::min<long long>(1024, 16777216 / (256 * 8)));
  EXPECT_EQ(g.shared_bytes, 1024);
  EXPECT_TRUE(s.buffers[1].output);  // ReadWrite
  EXPECT_EQ(s.args[2].scalar_type, ElementType::i64);
}

TEST(T1Import, CoulombThreeDimensionsAndScalars) {
  Imported t("coulomb");
  const Space& s = t.space;
  EXPECT_EQ(count_configs(s, {}).valid, brute_force(s, [](auto& v) { return v[3] < v[2] && v[0] * v[1] >= 64; }));
  const LaunchGeometry g = evaluate_launch(s, {},
                                           config(s, {{"WORK_GROUP_SIZE_X", 32},
                                                      {"WORK_GROUP_SIZE_Y", 4},
                                                      {"Z_ITERATIONS", 8},
                                                      {"INNER_UNROLL_FACTOR", 2},
                                                      {"USE_SOA", 0}}));
  EXPECT_EQ(g.grid[0], 8);
  EXPECT_EQ(g.grid[1], 64);
  EXPECT_EQ(g.grid[2], 32);
  EXPECT_EQ(g.block[2], 1);
  ASSERT_EQ(s.args.size(), 4u);
  EXPECT_EQ(s.args[1].kind, ArgSpec::Kind::scalar);
}

// --- what does not map -----------------------------------------------------------------------

using Json = nlohmann::json;

// A valid file, to break one field of at a time.
Json minimal() {
  return Json::parse(R"({
    "ConfigurationSpace": {
      "TuningParameters": [{"Name": "WG", "Type": "int", "Values": "[1, 2, 4]"}],
      "Conditions": [{"Parameters": ["WG"], "Expression": "WG >= 1"}]
    },
    "KernelSpecification": {
      "Language": "CUDA", "KernelName": "gemm_fast", "KernelFile": "kernels/gemm.cu",
      "GlobalSize": {"X": "1024"}, "LocalSize": {"X": "WG * 32"},
      "Arguments": [{"Name": "out", "Type": "float", "Size": 1024, "AccessType": "WriteOnly", "MemoryType": "Vector"}]
    }
  })");
}

// The import's error for a file, or "" when it imports.
std::string error_of(const Json& j) {
  try {
    TempDir dir;
    (void)import_t1_text(j.dump(), fixture("broken.json"), dir.path() / "out.yaml");
    return "";
  } catch (const InterchangeError& e) { return e.what(); }
}

void expect_refused(const Json& j, const std::string& field, const std::string& reason) {
  const std::string e = error_of(j);
  EXPECT_NE(e.find("broken.json: " + field + ":"), std::string::npos) << e;
  EXPECT_NE(e.find(reason), std::string::npos) << e;
}

TEST(T1Import, TheMinimalFileImports) { EXPECT_EQ(error_of(minimal()), ""); }

TEST(T1Import, RefusesWhatDoesNotMapNamingTheField) {
  const auto with = [](const char* pointer, Json value) {
    Json j = minimal();
    j[Json::json_pointer(pointer)] = std::move(value);
    return j;
  };
  const std::string kernel = "/KernelSpecification";
  const std::string param = "/ConfigurationSpace/TuningParameters/0";
  const std::string cond = "/ConfigurationSpace/Conditions/0/Expression";
  expect_refused(with((kernel + "/Language").c_str(), "OpenCL"), "KernelSpecification.Language", "tunes CUDA");
  expect_refused(with((param + "/Type").c_str(), "complex"), "ConfigurationSpace.TuningParameters[0].Type",
                 "not a T1 type");
  expect_refused(with((param + "/Values").c_str(), "__import__('os')"), "ConfigurationSpace.TuningParameters[0].Values",
                 "__import__() is not one tiletune's Python knows");
  expect_refused(with((param + "/Values").c_str(), "[1] * 10**7"), "ConfigurationSpace.TuningParameters[0].Values",
                 "MemoryError");
  expect_refused(with((param + "/Values").c_str(), "[1, 2, 2]"), "ConfigurationSpace.TuningParameters[0].Values",
                 "listed twice");
  expect_refused(with((param + "/Values").c_str(), Json::array({1, "a"})),
                 "ConfigurationSpace.TuningParameters[0].Values", "mixes numbers and strings");
  expect_refused(with((param + "/Values").c_str(), "7"), "ConfigurationSpace.TuningParameters[0].Values", "not a list");
  expect_refused(with((param + "/Name").c_str(), "W-G"), "ConfigurationSpace.TuningParameters[0].Name", "identifier");
  expect_refused(with((param + "/Name").c_str(), "problem_size_x"), "ConfigurationSpace.TuningParameters[0].Name",
                 "ProblemSize");
  expect_refused(with(cond.c_str(), "B > 1"), "ConfigurationSpace.Conditions[0].Expression", "unknown name 'B'");
  expect_refused(with(cond.c_str(), "WG.bit_length() > 1"), "ConfigurationSpace.Conditions[0].Expression",
                 "attributes");
  expect_refused(with(cond.c_str(), "open('x')"), "ConfigurationSpace.Conditions[0].Expression", "open()");
  expect_refused(with(cond.c_str(), "WG >"), "ConfigurationSpace.Conditions[0].Expression", "ends too early");
  expect_refused(with("/ConfigurationSpace/Conditions/0/Parameters/0", "Z"),
                 "ConfigurationSpace.Conditions[0].Parameters[0]", "not a tuning parameter");
  expect_refused(with((kernel + "/KernelFile").c_str(), "kernels/missing.cu"), "KernelSpecification.KernelFile",
                 "not a file");
  expect_refused(with((kernel + "/GlobalSizeType").c_str(), "SYCL"), "KernelSpecification.GlobalSizeType", "SYCL");
  expect_refused(with((kernel + "/LocalSize/X").c_str(), "WG +"), "KernelSpecification.LocalSize.X", "ends too early");
  expect_refused(with((kernel + "/KernelTypeNames").c_str(), Json::array({"float"})),
                 "KernelSpecification.KernelTypeNames", "template");
  expect_refused(with((kernel + "/ProblemSize").c_str(), Json::array({0})), "KernelSpecification.ProblemSize[0]",
                 "not a positive integer");
  const std::string arg = kernel + "/Arguments/0";
  expect_refused(with((arg + "/Type").c_str(), "custom"), "KernelSpecification.Arguments[0].Type", "custom");
  expect_refused(with((arg + "/MemoryType").c_str(), "Local"), "KernelSpecification.Arguments[0].MemoryType",
                 "SharedMemory");
  expect_refused(with((arg + "/FillType").c_str(), "BinaryRaw"), "KernelSpecification.Arguments[0].DataSource",
                 "required");
  expect_refused(with((arg + "/FillType").c_str(), "Script"), "KernelSpecification.Arguments[0].FillType", "Script");
  expect_refused(with((arg + "/Size").c_str(), "ProblemSize[0]"), "KernelSpecification.Arguments[0].Size",
                 "ProblemSize, which the file does not give");
  expect_refused(with((arg + "/Size").c_str(), "WG - 5"), "KernelSpecification.Arguments[0].Size",
                 "not a positive whole number");
  expect_refused(with((arg + "/AccessType").c_str(), "ReadOnly"), "KernelSpecification.Arguments", "needs an output");
  Json fill = minimal();
  fill[Json::json_pointer(arg + "/Type")] = "int32";
  fill[Json::json_pointer(arg + "/FillType")] = "Constant";
  fill[Json::json_pointer(arg + "/FillValue")] = 2.5;
  expect_refused(fill, "KernelSpecification.Arguments[0].FillValue", "not a whole number");
  Json scalar = minimal();
  scalar["KernelSpecification"]["Arguments"].push_back(
      {{"Name", "s"}, {"Type", "int32"}, {"FillValue", 0.5}, {"MemoryType", "Scalar"}});
  expect_refused(scalar, "KernelSpecification.Arguments[1].FillValue", "not a whole number");
  Json missing = minimal();
  missing.erase("KernelSpecification");
  expect_refused(missing, "KernelSpecification", "required by the T1 schema");
  Json no_x = minimal();
  no_x["KernelSpecification"]["LocalSize"].erase("X");
  expect_refused(no_x, "KernelSpecification.LocalSize.X", "required");
  Json in_space = minimal();
  in_space[Json::json_pointer(param + "/Values")] = "[1, 2, 4]";
  in_space["KernelSpecification"]["Arguments"][0]["Name"] = "WG";  // also a param's name: the space refuses it
  EXPECT_NE(error_of(in_space), "");
}

TEST(T1Import, PythonThatUsedToBeRefusedNowMaps) {
  const auto with = [](const char* pointer, Json value) {
    Json j = minimal();
    j[Json::json_pointer(pointer)] = std::move(value);
    return j;
  };
  EXPECT_EQ(error_of(with("/ConfigurationSpace/TuningParameters/0/Values", "[2**i for i in range(3)]")), "");
  EXPECT_EQ(error_of(with("/ConfigurationSpace/Conditions/0/Expression", "WG / 2 >= 0.5")), "");
  EXPECT_EQ(error_of(with("/ConfigurationSpace/Conditions/0/Expression", "1 <= WG <= 4")), "");
  EXPECT_EQ(error_of(with("/ConfigurationSpace/Conditions/0/Expression", "WG if WG > 1 else True")), "");
  EXPECT_EQ(error_of(with("/ConfigurationSpace/Conditions/0/Expression", "abs(WG) ** 2 >= 1")), "");
  EXPECT_EQ(error_of(with("/KernelSpecification/LocalSize/X", "WG ** 2")), "");
  EXPECT_EQ(error_of(with("/KernelSpecification/Arguments/0/Type", "int16")), "");
}

TEST(T1Import, HubStyleProblemSizeGridDivConstantMemoryAndDefaults) {
  Imported t("hub_convolution", "hub_conv");
  const Space& s = t.space;
  EXPECT_EQ(s.kernel, "hub_conv");  // --name
  ASSERT_EQ(s.problem.size(), 2u);
  EXPECT_EQ(s.problem[0].name, "problem_size_x");
  EXPECT_EQ(s.problem[0].values, (std::vector<std::int64_t>{4096}));
  EXPECT_EQ(s.problem[1].name, "problem_size_y");
  // Kernel Tuner's grid: ceil(ProblemSize / (block_size * tile_size)), not GlobalSize's.
  const Problem p{{4096, 4096}};
  const auto c = config(s, {{"block_size_x", 48},
                            {"block_size_y", 4},
                            {"tile_size_x", 3},
                            {"tile_size_y", 2},
                            {"use_padding", 1},
                            {"filter_height", 15},
                            {"filter_width", 15}});
  const LaunchGeometry g = evaluate_launch(s, p, c);
  EXPECT_EQ(g.grid[0], (4096 + 48 * 3 - 1) / (48 * 3));
  EXPECT_EQ(g.grid[1], 4096 / 8);
  EXPECT_EQ(g.grid[2], 1);
  EXPECT_EQ(g.block[0], 48);
  EXPECT_EQ(g.block[1], 4);
  EXPECT_NE(t.import.yaml.find("ceil_div(problem_size_x, block_size_x * tile_size_x)"), std::string::npos)
      << t.import.yaml;
  ASSERT_EQ(t.import.warnings.size(), 1u);
  EXPECT_NE(t.import.warnings[0].find("GlobalSize gives a grid of 16384 x 16384 x 1"), std::string::npos)
      << t.import.warnings[0];
  EXPECT_NE(t.import.warnings[0].find("gives 256 x 256 x 1"), std::string::npos) << t.import.warnings[0];
  // The constant-memory argument is a module global, not a kernel argument; Size saw the params
  // as lists of their values (max(filter_width)).
  ASSERT_EQ(s.globals.size(), 1u);
  EXPECT_EQ(s.globals[0].name, "d_filter");
  std::vector<std::string> slots = s.variable_names();
  EXPECT_EQ(s.globals[0].count.expr.eval(slot_values(p, c)), 225);
  ASSERT_EQ(s.args.size(), 2u);
  EXPECT_EQ(s.buffers[1].count.expr.eval(slot_values(p, c)), 4110 * 4110);
  EXPECT_EQ(s.buffers[1].init.kind, BufferInit::normal);  // Kernel Tuner fills Random with randn
  EXPECT_TRUE(s.buffers[0].output);
  EXPECT_EQ(count_configs(s, p).valid,
            brute_force(s, [](auto& v) { return (v[4] == 0 || v[0] % 32 != 0) && v[0] * v[1] <= 1024; }));
  ASSERT_TRUE(s.default_config);
  EXPECT_EQ(*s.default_config, (std::vector<std::int64_t>{16, 16, 1, 1, 1, 15, 15}));
}

TEST(T1Import, PythonValuesConditionsTypesAndReferenceData) {
  Imported t("python_styles");
  const Space& s = t.space;
  ASSERT_EQ(s.params.size(), 6u);
  EXPECT_EQ(s.params[0].values, range(32, 1025, 32));
  EXPECT_EQ(s.params[1].values, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(s.params[2].values, (std::vector<std::int64_t>{1, 2, 4, 6, 8}));
  EXPECT_EQ(s.params[3].kind, AxisKind::real);
  EXPECT_EQ(s.params[3].labels, (std::vector<std::string>{"0.5", "1.0", "2.5"}));
  EXPECT_EQ(s.params[4].kind, AxisKind::text);
  EXPECT_EQ(s.params[5].values, (std::vector<std::int64_t>{1, 0}));  // bool as 1 and 0
  const Problem p{{1024}};
  const double scales[] = {0.5, 1.0, 2.5};
  EXPECT_EQ(count_configs(s, p).valid, brute_force(s, [&](auto& v) {
              const auto bx = v[0], items = v[1], warps = v[2];
              const bool doubles = v[4] == 1, unrolled = v[5] != 0;
              return 64 <= bx * items && bx * items <= 4096 && (unrolled ? bx / 32 >= warps : warps == 1) &&
                     !(doubles && scales[v[3]] > 1) && items * items <= std::max<std::int64_t>(bx, 64) &&
                     std::min<std::int64_t>(warps, 4) * 32 <= bx;
            }));
  const auto c = config(
      s, {{"block_size_x", 128}, {"items_per_thread", 4}, {"warps", 2}, {"scale", 0}, {"real", 0}, {"unrolled", 1}});
  const LaunchGeometry g = evaluate_launch(s, p, c);
  EXPECT_EQ(g.grid[0], 2);  // ceil(1024 / (128 * 4))
  EXPECT_EQ(g.grid[1], 1);
  std::map<std::string, ElementType> types;
  for (const BufferSpec& b : s.buffers) types[b.name] = b.type;
  EXPECT_EQ(types["a"], ElementType::i8);
  EXPECT_EQ(types["b"], ElementType::i16);
  EXPECT_EQ(types["c"], ElementType::u16);
  EXPECT_EQ(types["d"], ElementType::i64);
  EXPECT_EQ(types["e"], ElementType::u64);
  EXPECT_EQ(types["f"], ElementType::f16);
  EXPECT_EQ(types["g"], ElementType::u8);
  EXPECT_EQ(types["h"], ElementType::f32);
  EXPECT_EQ(s.buffers[1].init.kind, BufferInit::random);
  EXPECT_EQ(s.buffers[2].init.kind, BufferInit::constant);
  EXPECT_EQ(s.buffers[3].init.kind, BufferInit::iota);
  EXPECT_EQ(s.args[9].scalar_type, ElementType::f32);
  ASSERT_TRUE(s.args[9].value.real);
  EXPECT_EQ(*s.args[9].value.real, 0.5);
  EXPECT_EQ(s.args[10].scalar_type, ElementType::f64);
  EXPECT_EQ(s.verify.reference, VerifySpec::Reference::files);
  ASSERT_EQ(s.verify.outputs.size(), 1u);
  EXPECT_EQ(s.verify.outputs[0].atol, 0.001);
  std::string notes;
  for (const auto& n : t.import.notes) notes += n + "\n";
  EXPECT_NE(notes.find("--budget 25%"), std::string::npos) << notes;
  EXPECT_NE(notes.find("GeneticAlgorithm"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("not verified"), std::string::npos) << notes;
}

TEST(T1Import, DefaultsThatFailTheConditionsAreLeftOutWithAWarning) {
  Json j = minimal();
  j["ConfigurationSpace"]["TuningParameters"][0]["Default"] = 1;
  j["ConfigurationSpace"]["Conditions"][0]["Expression"] = "WG >= 2";
  TempDir dir;
  const T1Import imported = import_t1_text(j.dump(), fixture("broken.json"), dir.path() / "out.yaml");
  ASSERT_EQ(imported.warnings.size(), 1u);
  EXPECT_NE(imported.warnings[0].find("the defaults fail ConfigurationSpace.Conditions[0]"), std::string::npos);
  EXPECT_EQ(imported.yaml.find("default:"), std::string::npos);
  j["ConfigurationSpace"]["TuningParameters"][0]["Default"] = 3;
  const T1Import other = import_t1_text(j.dump(), fixture("broken.json"), dir.path() / "out.yaml");
  ASSERT_EQ(other.warnings.size(), 1u);
  EXPECT_NE(other.warnings[0].find("not one of its values"), std::string::npos);
}

TEST(T1Import, NotJsonIsAClearError) {
  TempDir dir;
  try {
    (void)import_t1_text("{ \"ConfigurationSpace\": ", fixture("broken.json"), dir.path() / "x.yaml");
    FAIL();
  } catch (const InterchangeError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json: not JSON"), std::string::npos) << e.what();
  }
}

TEST(T1ImportCli, WritesWholeFilesAndKeepsExistingOnes) {
  TempDir dir;
  const std::string cli = testing::cli_path().string();
  const auto out = dir.path() / "t.yaml";
  auto r = testing::run_command(cli + " import-t1 " + fixture("transpose.json").string() + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: Budget"), std::string::npos);
  const std::string first = testing::read_file(out);
  r = testing::run_command(cli + " import-t1 " + fixture("gemm.json").string() + " -o " + out.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--force"), std::string::npos);
  EXPECT_EQ(testing::read_file(out), first);
  // A file that does not map leaves nothing behind.
  const auto bad =
      dir.write("bad.json", R"({"ConfigurationSpace": {"TuningParameters": []}, "KernelSpecification": {}})");
  r = testing::run_command(cli + " import-t1 " + bad.string() + " -o " + (dir.path() / "bad.yaml").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "bad.yaml"));
  r = testing::run_command(cli + " plan " + out.string() + " --sample 1000 --format json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// The reduction fixture with its GlobalSize read as OpenCL threads, or as --global-size-type says.
T1Import reduction_as(const std::string& size_type, T1GlobalSize global_size, const testing::TempDir& dir) {
  nlohmann::json j = nlohmann::json::parse(testing::read_file(fixture("reduction.json")));
  j["KernelSpecification"]["GlobalSizeType"] = size_type;
  return import_t1_text(j.dump(), fixture("reduction.json"), dir.path() / "reduction.yaml", {}, global_size);
}

std::int64_t grid_x(const T1Import& imported, const testing::TempDir& dir, std::int64_t block, std::int64_t unroll) {
  const Space s = parse_space(imported.yaml, dir.path() / "reduction.yaml");
  return evaluate_launch(s, {}, config(s, {{"BLOCK_SIZE", block}, {"UNROLL", unroll}, {"USE_SHUFFLE", 1}})).grid[0];
}

// A GlobalSize that divides by its own LocalSize param counts blocks, though OpenCL's type reads
// it as threads: the import warns, naming the file and the field; --global-size-type decides.
TEST(T1Import, GlobalSizeTypeIsVisibleAndSettable) {
  TempDir dir;
  const std::int64_t global = std::min<std::int64_t>(1024, 16777216 / (256 * 2));  // 1024 at BLOCK_SIZE 256
  const T1Import as_threads = reduction_as("OpenCL", T1GlobalSize::from_file, dir);
  EXPECT_EQ(grid_x(as_threads, dir, 256, 2), (global + 255) / 256) << "threads: divided by LocalSize";
  ASSERT_EQ(as_threads.warnings.size(), 1u);
  const std::string& w = as_threads.warnings[0];
  for (const char* needle : {"reduction.json: KernelSpecification.GlobalSize.X", "divides by BLOCK_SIZE",
                             "GlobalSizeType OpenCL", "--global-size-type blocks"})
    EXPECT_NE(w.find(needle), std::string::npos) << needle << " not in: " << w;
  EXPECT_NE(as_threads.yaml.find("# warning: "), std::string::npos) << "kept in the YAML too";

  const T1Import as_blocks = reduction_as("OpenCL", T1GlobalSize::blocks, dir);
  EXPECT_EQ(grid_x(as_blocks, dir, 256, 2), global) << "blocks: GlobalSize is the grid";
  EXPECT_TRUE(as_blocks.warnings.empty());
  const T1Import told_threads = reduction_as("OpenCL", T1GlobalSize::threads, dir);
  EXPECT_EQ(grid_x(told_threads, dir, 256, 2), (global + 255) / 256);
  EXPECT_TRUE(told_threads.warnings.empty()) << "the user said so";
  const T1Import cuda_as_threads = reduction_as("CUDA", T1GlobalSize::threads, dir);
  EXPECT_EQ(grid_x(cuda_as_threads, dir, 256, 2), (global + 255) / 256) << "the option wins over the file";
  const T1Import cuda = reduction_as("CUDA", T1GlobalSize::from_file, dir);
  EXPECT_EQ(grid_x(cuda, dir, 256, 2), global);
  EXPECT_TRUE(cuda.warnings.empty());
}

}  // namespace
}  // namespace tiletune
