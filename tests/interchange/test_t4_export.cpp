// T4 export, checked against what kernel_tuner/schema/T4/1.0.0/results-schema.json requires: an
// object with schema_version (a string, major.minor.patch) and results (an array); each result
// an object with the required configuration (object), times (object), invalidity (one of
// timeout compile runtime correctness constraints correct) and correctness (number), and where
// present timestamp (string), objectives (array), times.compilation_time, framework,
// search_algorithm, validation (numbers), times.runtimes (array), measurements (an array of
// objects with name string, value number|string|array, unit string). Then the meaning: one
// result per trial, statuses mapped, values equal to the cache's, the samples as runtimes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <map>
#include <regex>

#include "cache_builder.hpp"
#include "report_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/interchange.hpp"

namespace tiletune {
namespace {

using Json = nlohmann::json;

// Returns what violates the schema's required fields and types ("" when nothing does).
std::string schema_violations(const Json& doc) {
  std::string v;
  auto bad = [&](const std::string& what) { v += what + "\n"; };
  if (!doc.is_object()) return "the document is not an object";
  if (!doc.contains("schema_version") || !doc["schema_version"].is_string() ||
      !std::regex_match(doc["schema_version"].get<std::string>(), std::regex("^[0-9]{1,}.[0-9]{1,}.[0-9]{1,}$")))
    bad("schema_version is not a major.minor.patch string");
  if (!doc.contains("results") || !doc["results"].is_array()) return v + "results is not an array";
  static const std::set<std::string> invalidity = {"timeout",     "compile",     "runtime",
                                                   "correctness", "constraints", "correct"};
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const Json& r = doc["results"][i];
    const std::string at = "results[" + std::to_string(i) + "]";
    if (!r.is_object()) {
      bad(at + " is not an object");
      continue;
    }
    for (const char* k : {"configuration", "times", "invalidity", "correctness"})
      if (!r.contains(k)) bad(at + " lacks required " + k);
    if (r.contains("configuration") && !r["configuration"].is_object()) bad(at + ".configuration is not an object");
    if (r.contains("invalidity") &&
        (!r["invalidity"].is_string() || !invalidity.count(r["invalidity"].get<std::string>())))
      bad(at + ".invalidity is not one of the enum");
    if (r.contains("correctness") && !r["correctness"].is_number()) bad(at + ".correctness is not a number");
    if (r.contains("timestamp") && !r["timestamp"].is_string()) bad(at + ".timestamp is not a string");
    if (r.contains("objectives") && !r["objectives"].is_array()) bad(at + ".objectives is not an array");
    if (r.contains("times")) {
      const Json& t = r["times"];
      if (!t.is_object()) bad(at + ".times is not an object");
      for (const char* k : {"compilation_time", "framework", "search_algorithm", "validation"})
        if (t.is_object() && t.contains(k) && !t[k].is_number()) bad(at + ".times." + k + " is not a number");
      if (t.is_object() && t.contains("runtimes") && !t["runtimes"].is_array())
        bad(at + ".times.runtimes is not an array");
    }
    if (r.contains("measurements")) {
      if (!r["measurements"].is_array()) bad(at + ".measurements is not an array");
      for (const Json& m : r["measurements"]) {
        if (!m.is_object()) {
          bad(at + ".measurements has a non-object");
          continue;
        }
        if (m.contains("name") && !m["name"].is_string()) bad(at + " measurement name is not a string");
        if (m.contains("unit") && !m["unit"].is_string()) bad(at + " measurement unit is not a string");
        if (m.contains("value") && !(m["value"].is_number() || m["value"].is_string() || m["value"].is_array()))
          bad(at + " measurement value is not a number, string or array");
      }
    }
  }
  return v;
}

struct Fixture {
  testing::TempDir dir;
  std::filesystem::path db_path = dir.path() / "cache.db";
  Fixture() {
    testing::FixtureOptions o;
    o.landscapes = {testing::test_data_dir() / "data/landscapes/transpose.csv",
                    testing::test_data_dir() / "data/landscapes/matmul.csv"};
    o.synthetic_energy = true;
    testing::write_fixture_cache(db_path, o);
  }
};

TEST(T4Export, MeetsTheSchemasRequiredFieldsAndTypes) {
  Fixture f;
  const CacheDb db = CacheDb::open(f.db_path, CacheDb::Mode::read_only);
  const Json doc = Json::parse(export_t4(db, {}, Objective::time));
  EXPECT_EQ(schema_violations(doc), "");
  EXPECT_EQ(doc["schema_version"], "1.0.0");
  EXPECT_EQ(doc["results"].size(), db.trials({}).size());
}

TEST(T4Export, TheCheckerCatchesWhatTheSchemaForbids) {
  // The checker above must be able to fail: each broken document is caught.
  Json good = {{"schema_version", "1.0.0"},
               {"results",
                {{{"configuration", Json::object()},
                  {"times", Json::object()},
                  {"invalidity", "correct"},
                  {"correctness", 1}}}}};
  EXPECT_EQ(schema_violations(good), "");
  Json no_times = good;
  no_times["results"][0].erase("times");
  EXPECT_NE(schema_violations(no_times), "");
  Json bad_enum = good;
  bad_enum["results"][0]["invalidity"] = "ok";
  EXPECT_NE(schema_violations(bad_enum), "");
  Json bad_version = good;
  bad_version["schema_version"] = "1.0";
  EXPECT_NE(schema_violations(bad_version), "");
  Json bad_measure = good;
  bad_measure["results"][0]["measurements"] = {{{"name", "time"}, {"value", true}}};
  EXPECT_NE(schema_violations(bad_measure), "");
}

TEST(T4Export, ResultsCarryTheTrialsValues) {
  Fixture f;
  const CacheDb db = CacheDb::open(f.db_path, CacheDb::Mode::read_only);
  TrialFilter filter;
  filter.kernel = "transpose";
  const std::vector<TrialRow> rows = db.trials(filter);
  const Json doc = Json::parse(export_t4(db, filter, Objective::energy));
  ASSERT_EQ(doc["results"].size(), rows.size());
  std::size_t pruned = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Json& r = doc["results"][i];
    const TrialRecord& t = rows[i].trial;
    EXPECT_EQ(r["objectives"], Json::array({"energy"}));
    EXPECT_EQ(r["tiletune"]["problem"]["N"].get<std::int64_t>() > 0, true);
    // configuration holds the params as integers.
    std::string params;
    for (auto it = r["configuration"].begin(); it != r["configuration"].end(); ++it)
      params += (params.empty() ? "" : ";") + it.key() + "=" + std::to_string(it.value().get<std::int64_t>());
    EXPECT_EQ(params.size(), t.key.params.size());
    if (t.status == TrialStatus::ok) {
      EXPECT_EQ(r["invalidity"], "correct");
      EXPECT_EQ(r["correctness"], 1);
      EXPECT_EQ(r["times"]["runtimes"], Json::array({*t.time_ms}));
      bool energy = false;
      for (const Json& m : r["measurements"])
        if (m["name"] == "energy") energy = m["value"].get<double>() == *t.energy_mj && m["unit"] == "mJ";
      EXPECT_TRUE(energy);
    } else {
      EXPECT_EQ(r["correctness"], 0);
      EXPECT_TRUE(r["times"]["runtimes"].empty());
      if (t.status == TrialStatus::pruned) {
        EXPECT_EQ(r["invalidity"], "constraints");
        ++pruned;
      }
    }
  }
  EXPECT_GT(pruned, 0u);  // the recording has pruned configs
}

// A trial's samples are T4's runtimes (as Kernel Tuner writes its "times") and its verify_ms the
// validation time; a trial of an older cache, without samples, gives its median alone.
TEST(T4Export, RuntimesAreTheSamplesAndValidationTheVerifyTime) {
  testing::TempDir dir;
  const auto path = dir.path() / "cache.db";
  {
    auto samples = [](std::optional<std::string> times) {
      return [times](TrialRecord& t) {
        t.times_ms = times;
        t.verify_ms = 1.5;
      };
    };
    testing::CacheBuilder()
        .device("GPU-t4")
        .kernel("scale", "h", "", "")
        .trial("N=1024", "B=1", 0.2, samples(times_ms_of({0.25, 0.2, 0.125})))
        .trial("N=1024", "B=2", 0.2, samples(std::nullopt))
        .trial("N=1024", "B=3", 0.2, samples("[0.1, \"x\"]"))  // not numbers: the median alone
        .build(path);
  }
  const CacheDb db = CacheDb::open(path, CacheDb::Mode::read_only);
  const Json doc = Json::parse(export_t4(db, {}, Objective::time));
  EXPECT_EQ(schema_violations(doc), "");
  std::map<std::string, Json> times;
  for (const Json& r : doc["results"]) times[r["configuration"].dump()] = r["times"];
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[R"({"B":1})"]["runtimes"], Json::parse("[0.25, 0.2, 0.125]"));
  EXPECT_EQ(times[R"({"B":2})"]["runtimes"], Json::parse("[0.2]"));
  EXPECT_EQ(times[R"({"B":3})"]["runtimes"], Json::parse("[0.2]"));
  for (const auto& [config, t] : times) EXPECT_EQ(t["validation"], 1.5) << config;
}

TEST(T4Export, FromTheCommandLine) {
  Fixture f;
  const auto r = testing::run_command(testing::cli_path().string() + " export --format t4 --kernel matmul --db " +
                                      f.db_path.string() + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0);
  const Json doc = Json::parse(r.output);
  EXPECT_EQ(schema_violations(doc), "");
  EXPECT_GT(doc["results"].size(), 1000u);
  for (const Json& result : doc["results"]) EXPECT_EQ(result["tiletune"]["kernel"], "matmul");
}

}  // namespace
}  // namespace tiletune
