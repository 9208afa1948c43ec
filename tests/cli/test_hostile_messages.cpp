// Hostile input and its messages (issue 22, items 4 and 5 of "what to build"): whatever a T1 file
// or an argument holds (megabytes of text with ESC and newlines, a JSON type where another is
// meant, numbers past the 64-bit integers, 10^6 values), a command fails with exactly one line on
// stderr, "tiletune: " and the file or option and what is wrong, of a bounded length with no raw
// control character; argument errors exit 2 and numbers are never wrapped; and nothing in the
// folder it ran in changed (tree_digest). CPU only; each command runs under `timeout 60`.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::size_t kMaxLine = 400;

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// `tiletune ARGS` in dir, stdout discarded (what is left is stderr), under a watchdog.
CommandResult tiletune_in(const TempDir& dir, const std::string& args) {
  return run_command("(cd " + sh_quote(dir.path().string()) +
                     " && TILETUNE_DB=" + sh_quote((dir.path() / "cache.db").string()) +
                     " TILETUNE_CUBIN_CACHE=" + sh_quote((dir.path() / "cubin").string()) + " timeout 60 " +
                     sh_quote(cli_path().string()) + " " + args + " 2>&1 >/dev/null)");
}

/// The house rule for a failure's message: one line, "tiletune: ", bounded, no raw control byte,
/// naming each of `words`.
void expect_one_located_line(const CommandResult& r, const std::vector<std::string>& words) {
  const std::string& m = r.output;
  EXPECT_EQ(m.rfind("tiletune: ", 0), 0u) << m.substr(0, 600);
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 1) << m.substr(0, 600);
  EXPECT_TRUE(!m.empty() && m.back() == '\n') << m.substr(0, 600);
  EXPECT_LT(m.size(), kMaxLine) << m.substr(0, 600);
  EXPECT_TRUE(std::none_of(m.begin(), m.end() - (m.empty() ? 0 : 1), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  })) << m.substr(0, 600);
  for (const std::string& w : words)
    EXPECT_NE(m.find(w), std::string::npos) << "wanted '" << w << "' in " << m.substr(0, 600);
}

/// Text of n bytes or more that would steer a terminal and break a line: ESC sequences, newlines.
std::string hostile_text(std::size_t n) {
  std::string s;
  while (s.size() < n) s += "\x1b[31m\nA\r\x07";
  return s;
}

/// A T1 file that imports: one param, a launch, one output.
Json base_t1() {
  return Json::parse(R"({
    "ConfigurationSpace": {"TuningParameters": [{"Name": "BLOCK", "Type": "int", "Values": [32, 64]}],
                           "Conditions": [{"Parameters": ["BLOCK"], "Expression": "BLOCK >= 32"}]},
    "KernelSpecification": {"Language": "CUDA", "KernelName": "vector_add", "KernelFile": "k.cu",
                            "GlobalSize": {"X": "1024"}, "LocalSize": {"X": "BLOCK"},
                            "Arguments": [{"Name": "c", "Type": "float", "Size": 1024, "AccessType": "WriteOnly",
                                           "MemoryType": "Vector"},
                                          {"Name": "n", "Type": "int32", "FillValue": 1024, "MemoryType": "Scalar"}]}})");
}

/// A folder with the kernel a T1 file names (k.cu) and ref.bin, and the file as space.json.
void write_t1(const TempDir& dir, const std::string& text) {
  (void)dir.write("k.cu", read_file(source_dir() / "kernels" / "vector_add.cu"));
  (void)dir.write("ref.bin", std::string(4096, '\0'));
  (void)dir.write("space.json", text);
}

TEST(HostileMessagesT1, TheBaseFileImports) {
  TempDir dir;
  write_t1(dir, base_t1().dump());
  const CommandResult r = tiletune_in(dir, "import-t1 space.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// --- import-t1: a mutation of the base file, and what the one line must name -----------------

struct T1Case {
  std::string name;
  std::function<void(Json&)> mutate;
  std::vector<std::string> words;  ///< besides "space.json"
};

std::ostream& operator<<(std::ostream& out, const T1Case& c) { return out << c.name; }

Json& param0(Json& j) { return j["ConfigurationSpace"]["TuningParameters"][0]; }
Json& spec(Json& j) { return j["KernelSpecification"]; }
Json& arg0(Json& j) { return j["KernelSpecification"]["Arguments"][0]; }
Json& arg1(Json& j) { return j["KernelSpecification"]["Arguments"][1]; }

const std::string kBig = hostile_text(2 << 20);     // 2 MiB
const std::string kHuge = "18446744073709551615";   // 2^64 - 1
const std::string kBelow = "-9223372036854775809";  // -2^63 - 1

std::vector<T1Case> t1_cases() {
  return {
      // megabytes of hostile text in every kind of field
      {"BigName", [](Json& j) { param0(j)["Name"] = kBig; }, {"TuningParameters[0].Name", "bytes)"}},
      {"BigType", [](Json& j) { param0(j)["Type"] = kBig; }, {"TuningParameters[0].Type", "bytes)"}},
      {"BigPythonValues", [](Json& j) { param0(j)["Values"] = "[1, " + kBig + "]"; }, {"TuningParameters[0].Values"}},
      {"BigStringValue",
       [](Json& j) {
         param0(j) = {{"Name", "S"}, {"Type", "string"}, {"Values", {"a", kBig}}};
       },
       {"TuningParameters[0].Values", "bytes)"}},
      {"BigLanguage", [](Json& j) { spec(j)["Language"] = kBig; }, {"KernelSpecification.Language", "bytes)"}},
      {"BigKernelName", [](Json& j) { spec(j)["KernelName"] = kBig; }, {"KernelSpecification.KernelName", "bytes)"}},
      {"BigKernelFile", [](Json& j) { spec(j)["KernelFile"] = "x" + kBig; }, {"KernelSpecification.KernelFile"}},
      {"BigCondition",
       [](Json& j) { j["ConfigurationSpace"]["Conditions"][0]["Expression"] = kBig; },
       {"Conditions[0].Expression"}},
      {"BigConditionParameter",
       [](Json& j) { j["ConfigurationSpace"]["Conditions"][0]["Parameters"][0] = kBig; },
       {"Conditions[0].Parameters[0]"}},
      {"BigLocalSize", [](Json& j) { spec(j)["LocalSize"]["X"] = kBig; }, {"KernelSpecification.LocalSize.X"}},
      {"BigArgumentName", [](Json& j) { arg0(j)["Name"] = kBig; }, {"Arguments[0].Name", "bytes)"}},
      {"BigMemoryType", [](Json& j) { arg0(j)["MemoryType"] = kBig; }, {"Arguments[0].MemoryType", "bytes)"}},
      {"BigFillType", [](Json& j) { arg0(j)["FillType"] = kBig; }, {"Arguments[0].FillType", "bytes)"}},
      {"BigGlobalSizeType", [](Json& j) { spec(j)["GlobalSizeType"] = kBig; }, {"GlobalSizeType", "bytes)"}},
      // numbers past the 64-bit integers: refused, never wrapped to -1
      {"HugeValue",
       [](Json& j) { param0(j)["Values"] = Json::parse("[" + kHuge + "]"); },
       {"TuningParameters[0].Values[0]", "beyond the 64-bit integers"}},
      {"BelowValue",
       [](Json& j) { param0(j)["Values"] = Json::parse("[" + kBelow + "]"); },
       {"TuningParameters[0].Values", "not an exact integer"}},
      {"HugePythonValue", [](Json& j) { param0(j)["Values"] = "[" + kHuge + "]"; }, {"TuningParameters[0].Values"}},
      {"HugeDefault",
       [](Json& j) { param0(j)["Default"] = Json::parse(kHuge); },
       {"TuningParameters[0].Default", "beyond the 64-bit integers"}},
      {"HugeName",
       [](Json& j) { param0(j)["Name"] = Json::parse(kHuge); },
       {"TuningParameters[0].Name", "beyond the 64-bit integers"}},
      {"HugeProblemSize",
       [](Json& j) { spec(j)["ProblemSize"] = Json::parse("[" + kHuge + "]"); },
       {"ProblemSize[0]", "beyond the 64-bit integers"}},
      {"BelowProblemSize",
       [](Json& j) { spec(j)["ProblemSize"] = Json::parse("[" + kBelow + "]"); },
       {"ProblemSize[0]", "not a positive integer"}},
      {"HugeSize",
       [](Json& j) { arg0(j)["Size"] = Json::parse(kHuge); },
       {"Arguments[0].Size", "beyond the 64-bit integers"}},
      {"HugeScalar",
       [](Json& j) { arg1(j)["FillValue"] = Json::parse(kHuge); },
       {"Arguments[1].FillValue", "beyond the 64-bit integers"}},
      {"BelowScalar",
       [](Json& j) { arg1(j)["FillValue"] = Json::parse(kBelow); },
       {"Arguments[1].FillValue", "not an exact"}},
      {"HugeFill",
       [](Json& j) {
         arg0(j)["Type"] = "int32";
         arg0(j)["FillValue"] = 1e30;
       },
       {"Arguments[0].FillValue", "not an exact"}},
      {"HugeLocalSize",
       [](Json& j) { spec(j)["LocalSize"]["X"] = Json::parse(kHuge); },
       {"LocalSize.X", "beyond the 64-bit integers"}},
      // a JSON type where another is meant, in every kind of field
      {"ParamsObject",
       [](Json& j) { j["ConfigurationSpace"]["TuningParameters"] = Json::object(); },
       {"ConfigurationSpace.TuningParameters", "non-empty array"}},
      {"ParamNumber", [](Json& j) { param0(j) = 5; }, {"TuningParameters[0].Name", "missing"}},
      {"NameObject", [](Json& j) { param0(j)["Name"] = Json::object(); }, {"TuningParameters[0].Name", "found object"}},
      {"TypeArray", [](Json& j) { param0(j)["Type"] = Json::array(); }, {"TuningParameters[0].Type", "found array"}},
      {"ValuesObject",
       [](Json& j) { param0(j)["Values"] = Json::object(); },
       {"TuningParameters[0].Values", "found object"}},
      {"ValueNull",
       [](Json& j) {
         param0(j)["Values"] = Json::array({1, nullptr});
       },
       {"TuningParameters[0].Values[1]"}},
      {"DefaultArray", [](Json& j) { param0(j)["Default"] = Json::array(); }, {"TuningParameters[0].Default"}},
      {"ConditionsString",
       [](Json& j) { j["ConfigurationSpace"]["Conditions"] = "x"; },
       {"ConfigurationSpace.Conditions"}},
      {"ConditionParametersNumber",
       [](Json& j) { j["ConfigurationSpace"]["Conditions"][0]["Parameters"] = 3; },
       {"Conditions[0].Parameters"}},
      {"ExpressionObject",
       [](Json& j) { j["ConfigurationSpace"]["Conditions"][0]["Expression"] = Json::object(); },
       {"Conditions[0].Expression", "found object"}},
      {"SpecArray",
       [](Json& j) { j["KernelSpecification"] = Json::array(); },
       {"KernelSpecification.Language", "missing"}},
      {"LanguageNumber", [](Json& j) { spec(j)["Language"] = 7; }, {"KernelSpecification.Language"}},
      {"KernelNameNull",
       [](Json& j) { spec(j)["KernelName"] = nullptr; },
       {"KernelSpecification.KernelName", "found null"}},
      {"CompilerOptionsObject", [](Json& j) { spec(j)["CompilerOptions"] = Json::object(); }, {"CompilerOptions"}},
      {"CompilerOptionArray",
       [](Json& j) { spec(j)["CompilerOptions"] = Json::array({Json::array()}); },
       {"CompilerOptions[0]", "found array"}},
      {"ProblemSizeObject", [](Json& j) { spec(j)["ProblemSize"] = Json::object(); }, {"ProblemSize[0]"}},
      {"LocalSizeArray", [](Json& j) { spec(j)["LocalSize"] = Json::array(); }, {"KernelSpecification.LocalSize"}},
      {"LocalSizeXObject",
       [](Json& j) { spec(j)["LocalSize"]["X"] = Json::object(); },
       {"LocalSize.X", "found object"}},
      {"ArgumentsObject", [](Json& j) { spec(j)["Arguments"] = Json::object(); }, {"KernelSpecification.Arguments"}},
      {"ArgumentNumber", [](Json& j) { arg0(j) = 1; }, {"Arguments[0].MemoryType", "missing"}},
      {"SizeArray", [](Json& j) { arg0(j)["Size"] = Json::array(); }, {"Arguments[0].Size", "found array"}},
      {"FillValueString",
       [](Json& j) {
         arg0(j)["FillType"] = "Constant";
         arg0(j)["FillValue"] = "1";
       },
       {"Arguments[0].FillValue"}},
      {"ReferencesObject", [](Json& j) { spec(j)["ReferenceArguments"] = Json::object(); }, {"ReferenceArguments"}},
      {"ValidationMethodArray",
       [](Json& j) {
         spec(j)["ReferenceArguments"] = Json::array({{{"TargetName", "c"},
                                                       {"FillType", "BinaryRaw"},
                                                       {"DataSource", "ref.bin"},
                                                       {"ValidationThreshold", 0.1},
                                                       {"ValidationMethod", Json::array()}}});
       },
       {"ReferenceArguments[0].ValidationMethod", "found array"}},
      {"TopLevelArray", [](Json& j) { j = Json::array(); }, {"a T1 file is a JSON object"}},
      // sizes that would take quadratic time, or a space past the loader's bound
      {"TooManyParams",
       [](Json& j) {
         Json list = Json::array();
         for (int i = 0; i < 200000; ++i)
           list.push_back({{"Name", "P" + std::to_string(i)}, {"Type", "int"}, {"Values", {1}}});
         j["ConfigurationSpace"]["TuningParameters"] = list;
       },
       {"ConfigurationSpace.TuningParameters", "more than the 1024"}},
      {"MillionDuplicates",
       [](Json& j) { param0(j)["Values"] = Json(std::vector<int>(1'000'000, 7)); },
       {"TuningParameters[0].Values", "'7' is listed twice"}},
      {"MillionValues",
       [](Json& j) {
         std::vector<int> v(1'000'000);
         for (int i = 0; i < 1'000'000; ++i) v[static_cast<std::size_t>(i)] = i;
         param0(j)["Values"] = v;
       },
       {"the space it maps to does not load"}},
      {"MillionPythonValues",
       [](Json& j) { param0(j)["Values"] = "list(range(1000000))"; },
       {"the space it maps to does not load"}},
  };
}

class HostileMessagesT1 : public ::testing::TestWithParam<T1Case> {};

TEST_P(HostileMessagesT1, OneBoundedLocatedLine) {
  const T1Case& c = GetParam();
  TempDir dir;
  Json j = base_t1();
  c.mutate(j);
  write_t1(dir, j.dump());
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "import-t1 space.json");
  EXPECT_EQ(r.exit_code, 1) << r.output.substr(0, 600);  // 124 would be the watchdog: too slow
  std::vector<std::string> words = c.words;
  words.push_back("tiletune: space.json: ");
  expect_one_located_line(r, words);
  EXPECT_EQ(tree_digest(dir.path()), before);
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileMessagesT1, ::testing::ValuesIn(t1_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(HostileMessagesT1, NotJsonOfMegabytesIsOneLine) {
  TempDir dir;
  write_t1(dir, "{\"a\": \"" + kBig);  // an unterminated string of 2 MiB
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "import-t1 space.json");
  EXPECT_EQ(r.exit_code, 1);
  expect_one_located_line(r, {"tiletune: space.json: not JSON"});
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(HostileMessagesT1, KernelFileNameTooLongIsLocated) {
  TempDir dir;
  Json j = base_t1();
  spec(j)["KernelFile"] = std::string(5000, 'k') + "/x.cu";
  write_t1(dir, j.dump());
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "import-t1 space.json");
  EXPECT_EQ(r.exit_code, 1);
  expect_one_located_line(r, {"tiletune: space.json: KernelSpecification.KernelFile: ", "is not a file"});
  EXPECT_EQ(tree_digest(dir.path()), before);
}

// A library's exception that no stage caught (here std::filesystem's, for a name the system
// refuses): one line naming the command and the path, not "internal error".
TEST(HostileMessagesT1, OutputNameTooLongIsOneLine) {
  TempDir dir;
  write_t1(dir, base_t1().dump());
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "import-t1 space.json --force -o " + std::string(5000, 'o') + "/x.yaml");
  EXPECT_EQ(r.exit_code, 1);
  expect_one_located_line(r, {"tiletune: ooooo", "File name too long"});
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_EQ(tree_digest(dir.path()), before);
}

// A number past a double's range is JSON that nlohmann refuses with out_of_range, not parse_error:
// found by fuzz_t1 and fuzz_kt_cache (fuzz/seeds/t1 and kt_cache keep the inputs).
TEST(HostileMessagesT1, NumberPastADoubleIsNotJson) {
  TempDir dir;
  write_t1(dir, "{\"General\": 2222e2222}");
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "import-t1 space.json");
  EXPECT_EQ(r.exit_code, 1);
  expect_one_located_line(r, {"tiletune: space.json: not JSON", "number overflow"});
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(HostileMessagesKt, NumberPastADoubleIsNotJson) {
  TempDir dir;
  (void)dir.write("c.json", "{\"cache\": {\"1\": {\"time\": 9999E99999}}}");
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "import-kt-cache c.json");
  EXPECT_EQ(r.exit_code, 1);
  expect_one_located_line(r, {"tiletune: c.json: ", "not JSON", "number overflow"});
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_EQ(tree_digest(dir.path()), before);
}

// --- import-kt-cache: the same rule for a Kernel Tuner cache ------------------------------------

struct KtCase {
  std::string name;
  std::function<void(Json&)> mutate;
  std::vector<std::string> words;  ///< besides "c.json"
};

std::ostream& operator<<(std::ostream& out, const KtCase& c) { return out << c.name; }

Json base_kt() {
  return Json::parse(R"({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["a"],
    "tune_params": {"a": [1, 2]}, "objective": "time", "problem_size": [1024],
    "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": 2.0}}})");
}

std::vector<KtCase> kt_cases() {
  return {
      {"BigKernelName", [](Json& j) { j["kernel_name"] = kBig; }, {"kernel_name", "bytes)"}},
      {"DeviceNumber", [](Json& j) { j["device_name"] = 5; }, {"device_name", "expected a string"}},
      {"KeysString", [](Json& j) { j["tune_params_keys"] = "a"; }, {"tune_params_keys"}},
      {"ParamsList", [](Json& j) { j["tune_params"] = Json::array({1}); }, {"tune_params"}},
      {"HugeValue",
       [](Json& j) {
         j["tune_params"]["a"] = Json::parse("[" + kHuge + ", 2]");
         j["cache"] = Json::parse("{\"" + kHuge + "\": {\"a\": " + kHuge + ", \"time\": 1.0}}");
       },
       {"does not fit in a 64-bit integer"}},
      {"BigTime", [](Json& j) { j["cache"]["1"]["time"] = kBig; }, {"cache['1'].time", "bytes)"}},
  };
}

class HostileMessagesKt : public ::testing::TestWithParam<KtCase> {};

TEST_P(HostileMessagesKt, OneBoundedLocatedLine) {
  const KtCase& c = GetParam();
  TempDir dir;
  Json j = base_kt();
  c.mutate(j);
  (void)dir.write("c.json", j.dump());
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "import-kt-cache c.json");
  EXPECT_EQ(r.exit_code, 1) << r.output.substr(0, 600);
  std::vector<std::string> words = c.words;
  words.push_back("tiletune: c.json: ");
  expect_one_located_line(r, words);
  EXPECT_EQ(tree_digest(dir.path()), before);
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileMessagesKt, ::testing::ValuesIn(kt_cases()),
                         [](const auto& info) { return info.param.name; });

// --- arguments: exit 2, one line naming the option, nothing done -----------------------------

struct ArgCase {
  std::string name;
  std::string args;  ///< after `tiletune`; SPACE is a copy of the shipped transpose space
  std::vector<std::string> words;
  int exit_code = 2;
};

std::ostream& operator<<(std::ostream& out, const ArgCase& c) { return out << c.name; }

// A shell word of 100,000 bytes with ESC, newline and carriage return (one argument stays below
// Linux's 128 KiB).
const std::string kHostileArg = "\"$(printf '\\033[31m\\n\\r%0100000d' 0)\"";

std::vector<ArgCase> arg_cases() {
  return {
      {"DevicesHostile", "tune SPACE --devices " + kHostileArg, {"--devices", "bytes)"}},
      {"DevicesHuge", "tune SPACE --devices 18446744073709551615", {"--devices", "not a device ordinal"}},
      {"DevicesNegative", "tune SPACE --devices 0,-1", {"--devices", "'-1' is not a device ordinal"}},
      {"DevicesEscape", "tune SPACE --devices \"$(printf '0,\\033]0;x\\007')\"", {"--devices", "\\x1b]0;x\\x07"}},
      {"DeviceHuge", "tune SPACE --device 18446744073709551615", {"--device", "out of range"}},
      {"TuneTopHuge", "tune SPACE --top 18446744073709551615", {"--top", "out of range"}},
      {"TuneSeedPast", "tune SPACE --seed 18446744073709551616", {"--seed", "out of range"}},
      {"TuneMinSamplesNegative", "tune SPACE --min-samples -1", {"--min-samples"}},
      {"TuneConfirmHuge", "tune SPACE --confirm 99999999999999999999999", {"--confirm", "out of range"}},
      {"TuneInFlightZero", "tune SPACE --in-flight 0", {"--in-flight", "out of range"}},
      {"TuneMaxTimeNan", "tune SPACE --max-time nan", {"--max-time", "not a finite number"}},
      {"TuneDeadlineInf", "tune SPACE --deadline -inf", {"--deadline"}},
      {"TuneBudgetHostile", "tune SPACE --budget " + kHostileArg, {"--budget", "bytes)"}},
      {"TuneSizeHuge", "tune SPACE --size N=18446744073709551615", {"--size", "not a whole number"}},
      {"PlanSampleNegative", "plan SPACE --sample -1", {"--sample", "not a whole number"}},
      {"PlanSampleHuge", "plan SPACE --sample 18446744073709551615", {"--sample", "out of range"}},
      {"PlanThreadsHuge", "plan SPACE --threads 18446744073709551615", {"--threads", "out of range"}},
      {"PlanSizeBelow", "plan SPACE --size N=-9223372036854775809", {"--size", "not a whole number"}},
      {"PlanArchHostile", "plan SPACE --arch " + kHostileArg, {"--arch", "bytes)"}},
      {"ShowLimitNegative", "show --limit -1", {"--limit", "not a whole number"}},
      {"ShowLimitHuge", "show --limit 18446744073709551615", {"--limit", "out of range"}},
      {"ShowKernelHostile", "show --kernel " + kHostileArg, {"--kernel", "bytes)"}},
      {"BestSizeHuge", "best --kernel transpose --size N=18446744073709551615", {"--size", "not a whole number"}},
      {"BestSizeNegative", "best --kernel transpose --size N=-1", {"--size"}},
      {"BestDeviceHostile", "best --device " + kHostileArg, {"--device", "bytes)"}},
      {"ExportDeviceHostile", "export --device " + kHostileArg, {"--device", "bytes)"}},
      {"ReportTopNegative", "report --top -1", {"--top", "not a whole number"}},
      {"ReportTopHuge", "report --top 18446744073709551615", {"--top", "out of range"}},
      {"ReportTopZero", "report --top 0", {"--top", "out of range"}},
      {"ReportHeatmapOne", "report --heatmap TILE", {"--heatmap", "expected two params"}},
      {"ReportHeatmapHostile", "report --heatmap " + kHostileArg, {"--heatmap", "bytes)"}},
      {"ReportPlotWithHtml", "report --plot devices", {"--plot needs --format svg or png"}},
      {"ReportSvgWithoutPlot", "report --format svg", {"--format svg writes one plot"}},
      {"ReportPngToStdout", "report --format png --plot devices -o -", {"--format png cannot write to stdout"}},
      {"ReportKernelHostile", "report --kernel 'a;b'", {"--kernel", "is not a name"}},
      {"ReportDefaultHostile", "report --default " + kHostileArg, {"--default", "bytes)"}},
      {"ImportT1NameHostile", "import-t1 space.json --name " + kHostileArg, {"--name", "bytes)"}},
      {"ImportKtNameHostile", "import-kt-cache space.json --name 'a;b'", {"--name", "is not a name"}},
      {"NvmlDeviceNegative", "nvml --device -1", {"--device", "not a whole number"}},
      {"NvmlDeviceHuge", "nvml --device 18446744073709551615", {"--device", "out of range"}},
      {"NvmlSecondsNan", "nvml --seconds nan", {"--seconds", "not a finite number"}},
  };
}

class HostileMessagesArgs : public ::testing::TestWithParam<ArgCase> {};

TEST_P(HostileMessagesArgs, ExitTwoOneBoundedLine) {
  const ArgCase& c = GetParam();
  TempDir dir;
  write_t1(dir, base_t1().dump());
  (void)dir.write("space.yaml", read_file(source_dir() / "configs" / "transpose.yaml"));
  write_cache(dir.path() / "cache.db", "GPU-1", 0.15, /*wal=*/false);
  std::string args = c.args;
  if (const auto at = args.find("SPACE"); at != std::string::npos)
    args.replace(at, 5, sh_quote((source_dir() / "configs" / "transpose.yaml").string()));
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.output.substr(0, 600);
  expect_one_located_line(r, c.words);
  EXPECT_EQ(tree_digest(dir.path()), before);
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileMessagesArgs, ::testing::ValuesIn(arg_cases()),
                         [](const auto& info) { return info.param.name; });

// --- the report's messages about the cache's content -----------------------------------------

TEST(HostileMessagesReport, UnknownLongPlotIsOneBoundedLine) {
  TempDir dir;
  write_cache(dir.path() / "cache.db", "GPU-1", 0.15, /*wal=*/false);
  const std::string before = tree_digest(dir.path());
  const CommandResult r =
      tiletune_in(dir, "report --format svg --plot heatmap:" + std::string(500, 'T') + ",B -o x.svg");
  EXPECT_EQ(r.exit_code, 1);
  expect_one_located_line(r, {"unknown plot 'heatmap:TTT", "bytes)"});
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(HostileMessagesReport, NoTrialsQuotesTheFilter) {
  TempDir dir;
  write_cache(dir.path() / "cache.db", "GPU-1", 0.15, /*wal=*/false);
  const std::string before = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "report --problem \"$(printf 'N=\\033[31m')\" -o x.html");
  EXPECT_EQ(r.exit_code, 2);  // a control character in --problem: refused as an argument
  expect_one_located_line(r, {"--problem"});
  const CommandResult r2 = tiletune_in(dir, "report --problem N=" + std::string(3000, '9') + " -o x.html");
  EXPECT_EQ(r2.exit_code, 1);
  expect_one_located_line(r2, {"no trials in", "at problem 'N=999", "bytes)"});
  EXPECT_EQ(tree_digest(dir.path()), before);
}

}  // namespace
}  // namespace tiletune::testing
