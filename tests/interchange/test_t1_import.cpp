// T1 import: the fixture spaces (written from Kernel Tuner's T1 1.0.0 schema and KTT's loader)
// become spaces that load, whose configs after constraints are exactly those the Python
// conditions allow (counted here by brute force, by hand-written C++ of the same conditions),
// with the launch geometry T1 means; and everything that does not map is refused by field.
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
  explicit Imported(const std::string& name) {
    const auto yaml = dir.path() / (name + ".yaml");
    import = import_t1(fixture(name + ".json"), yaml);
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
  EXPECT_EQ(count_configs(s, {}).valid,
            brute_force(s, [](auto& v) { return v[1] <= v[0] && v[0] % v[1] == 0; }));
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
  EXPECT_EQ(s.buffers[0].init.kind, BufferInit::random);
  EXPECT_EQ(s.verify.reference, VerifySpec::Reference::none);
  ASSERT_EQ(t.import.notes.size(), 1u);
  EXPECT_NE(t.import.notes[0].find("--budget 25%"), std::string::npos);
  // Expressions are written as quoted YAML strings.
  EXPECT_NE(t.import.yaml.find("grid: [\"(4096 + TILE - 1) / TILE\", \"(4096 + TILE - 1) / TILE\"]"), std::string::npos);
}

TEST(T1Import, VectorAddRangeValuesAndVectorTypes) {
  Imported t("vector_add");
  const Space& s = t.space;
  EXPECT_EQ(s.params[0].values, range(64, 1025, 64));
  EXPECT_EQ(count_configs(s, {}).valid,
            brute_force(s, [](auto& v) { return v[1] % v[2] == 0 || v[2] == 1; }));
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
  EXPECT_EQ(t.import.notes.size(), 1u);  // Search
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
  EXPECT_EQ(count_configs(s, {}).valid,
            brute_force(s, [](auto& v) { return v[3] < v[2] && v[0] * v[1] >= 64; }));
  const LaunchGeometry g = evaluate_launch(s, {}, config(s, {{"WORK_GROUP_SIZE_X", 32}, {"WORK_GROUP_SIZE_Y", 4},
                                                             {"Z_ITERATIONS", 8}, {"INNER_UNROLL_FACTOR", 2},
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
  } catch (const InterchangeError& e) {
    return e.what();
  }
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
  expect_refused(with((param + "/Type").c_str(), "float"), "ConfigurationSpace.TuningParameters[0].Type", "integers");
  expect_refused(with((param + "/Values").c_str(), "[2**10, 2**11]"),
                 "ConfigurationSpace.TuningParameters[0].Values", "'**'");
  expect_refused(with((param + "/Values").c_str(), "[x for x in range(5)]"),
                 "ConfigurationSpace.TuningParameters[0].Values", "list comprehension");
  expect_refused(with((param + "/Values").c_str(), "[1, 2, 2]"), "ConfigurationSpace.TuningParameters[0].Values",
                 "listed twice");
  expect_refused(with((param + "/Values").c_str(), Json::array({1, 2.5})),
                 "ConfigurationSpace.TuningParameters[0].Values[1]", "integers");
  expect_refused(with((param + "/Name").c_str(), "W-G"), "ConfigurationSpace.TuningParameters[0].Name", "identifier");
  expect_refused(with(cond.c_str(), "WG / 2 > 1"), "ConfigurationSpace.Conditions[0].Expression", "true division");
  expect_refused(with(cond.c_str(), "1 < WG < 4"), "ConfigurationSpace.Conditions[0].Expression", "chained comparison");
  expect_refused(with(cond.c_str(), "B > 1"), "ConfigurationSpace.Conditions[0].Expression", "unknown name 'B'");
  expect_refused(with(cond.c_str(), "WG > 1.5"), "ConfigurationSpace.Conditions[0].Expression", "not an integer");
  expect_refused(with(cond.c_str(), "WG if WG else 1"), "ConfigurationSpace.Conditions[0].Expression", "'if'");
  expect_refused(with(cond.c_str(), "abs(WG) > 1"), "ConfigurationSpace.Conditions[0].Expression", "abs()");
  expect_refused(with("/ConfigurationSpace/Conditions/0/Parameters/0", "Z"),
                 "ConfigurationSpace.Conditions[0].Parameters[0]", "not a tuning parameter");
  expect_refused(with((kernel + "/KernelFile").c_str(), "kernels/missing.cu"), "KernelSpecification.KernelFile",
                 "not a file");
  expect_refused(with((kernel + "/GlobalSizeType").c_str(), "SYCL"), "KernelSpecification.GlobalSizeType", "SYCL");
  expect_refused(with((kernel + "/LocalSize/X").c_str(), "WG ** 2"), "KernelSpecification.LocalSize.X", "'**'");
  expect_refused(with((kernel + "/KernelTypeNames").c_str(), Json::array({"float"})),
                 "KernelSpecification.KernelTypeNames", "template");
  const std::string arg = kernel + "/Arguments/0";
  expect_refused(with((arg + "/Type").c_str(), "int16"), "KernelSpecification.Arguments[0].Type", "int16");
  expect_refused(with((arg + "/MemoryType").c_str(), "Local"), "KernelSpecification.Arguments[0].MemoryType", "Local");
  expect_refused(with((arg + "/FillType").c_str(), "BinaryRaw"), "KernelSpecification.Arguments[0].FillType",
                 "BinaryRaw");
  expect_refused(with((arg + "/AccessType").c_str(), "ReadOnly"), "KernelSpecification.Arguments",
                 "needs an output");
  Json constant = minimal();
  constant[Json::json_pointer(arg + "/FillType")] = "Constant";
  constant[Json::json_pointer(arg + "/FillValue")] = 3.0;
  expect_refused(constant, "KernelSpecification.Arguments[0].FillValue", "constant fill of 3");
  Json scalar = minimal();
  scalar["KernelSpecification"]["Arguments"].push_back({{"Name", "s"}, {"Type", "float"}, {"FillValue", 0.5},
                                                        {"MemoryType", "Scalar"}});
  expect_refused(scalar, "KernelSpecification.Arguments[1].FillValue", "not an integer");
  Json missing = minimal();
  missing.erase("KernelSpecification");
  expect_refused(missing, "KernelSpecification", "required by the T1 schema");
  Json no_x = minimal();
  no_x["KernelSpecification"]["LocalSize"].erase("X");
  expect_refused(no_x, "KernelSpecification.LocalSize.X", "required");
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
  const auto bad = dir.write("bad.json", R"({"ConfigurationSpace": {"TuningParameters": []}, "KernelSpecification": {}})");
  r = testing::run_command(cli + " import-t1 " + bad.string() + " -o " + (dir.path() / "bad.yaml").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "bad.yaml"));
  r = testing::run_command(cli + " plan " + out.string() + " --sample 1000 --format json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace tiletune
