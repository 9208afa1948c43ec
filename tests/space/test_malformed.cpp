// Malformed search spaces: every file under tests/spaces/bad/ holds one mistake, and its first
// line says exactly where and what the error is: "# expect: LINE:COL: SUBSTRING". Loading
// each must throw a SpaceError whose message contains "<file>:LINE:COL:" and SUBSTRING. The
// CLI tests reuse the same headers, so the format is checked here too. Good fixtures under
// tests/spaces/good/ must load, and damaged copies of a real space must never crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tiletune/space.hpp"

namespace fs = std::filesystem;
using tiletune::SpaceError;

namespace {

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> bad_files() { return yaml_files(tiletune::testing::test_data_dir() / "spaces/bad"); }

struct Expectation {
  int line = 0;
  int column = 0;
  std::string substring;
};

// Parses the first line, "# expect: LINE:COL: SUBSTRING".
std::optional<Expectation> read_expectation(const fs::path& file) {
  const std::string text = tiletune::testing::read_file(file);
  const std::string first = text.substr(0, text.find('\n'));
  static const std::regex header(R"(^# expect: (\d+):(\d+): (.*\S)\s*$)");
  std::smatch m;
  if (!std::regex_match(first, m, header)) return std::nullopt;
  return Expectation{std::stoi(m[1]), std::stoi(m[2]), m[3]};
}

class Malformed : public ::testing::TestWithParam<fs::path> {};

TEST_P(Malformed, FailsAtTheExpectedPlaceWithTheExpectedMessage) {
  const fs::path& file = GetParam();
  const auto expect = read_expectation(file);
  ASSERT_TRUE(expect) << file << ": first line must be '# expect: LINE:COL: SUBSTRING'";
  try {
    (void)tiletune::load_space(file);
    FAIL() << file << " loaded without an error";
  } catch (const SpaceError& e) {
    const std::string message = e.what();
    const std::string position =
        file.string() + ":" + std::to_string(expect->line) + ":" + std::to_string(expect->column) + ":";
    EXPECT_NE(message.find(position), std::string::npos) << "expected " << position << " in:\n" << message;
    EXPECT_NE(message.find(expect->substring), std::string::npos) << "expected '" << expect->substring << "' in:\n"
                                                                  << message;
    EXPECT_EQ(message.rfind(file.string() + ":", 0), 0u) << "the message starts with the file:\n" << message;
    EXPECT_NE(message.find(": error: "), std::string::npos) << message;
    EXPECT_FALSE(e.remedy().empty()) << "every error in a file carries a hint:\n" << message;
    EXPECT_EQ(e.where().line, expect->line);
    EXPECT_EQ(e.where().column, expect->column);
  } catch (const std::exception& e) { FAIL() << file << " threw something other than a SpaceError: " << e.what(); }
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(BadSpaces, Malformed, ::testing::ValuesIn(bad_files()), test_name);

TEST(MalformedCorpus, HasAtLeastThirtyDistinctSmallCases) {
  const auto files = bad_files();
  EXPECT_GE(files.size(), 30u);
  std::vector<std::string> substrings;
  for (const fs::path& f : files) {
    EXPECT_LE(fs::file_size(f), 8192u) << f;
    const auto expect = read_expectation(f);
    ASSERT_TRUE(expect) << f;
    EXPECT_GT(expect->line, 0) << f;
    EXPECT_GT(expect->column, 0) << f;
    substrings.push_back(std::to_string(expect->line) + ":" + std::to_string(expect->column) + ":" + expect->substring);
  }
  // Distinct mistakes: no two files expect the same error at the same place.
  std::sort(substrings.begin(), substrings.end());
  EXPECT_EQ(std::adjacent_find(substrings.begin(), substrings.end()), substrings.end());
}

TEST(GoodSpaces, EveryFixtureLoads) {
  const auto files = yaml_files(tiletune::testing::test_data_dir() / "spaces/good");
  EXPECT_FALSE(files.empty());
  for (const fs::path& f : files) {
    try {
      const tiletune::Space s = tiletune::load_space(f);
      EXPECT_FALSE(s.params.empty()) << f;
    } catch (const std::exception& e) { ADD_FAILURE() << f << ": " << e.what(); }
  }
}

// Whatever is cut off or scrambled, loading either succeeds or throws SpaceError.
void expect_no_crash(const std::string& text, const fs::path& where) {
  try {
    (void)tiletune::parse_space(text, where);
  } catch (const SpaceError&) {
  } catch (const std::exception& e) { ADD_FAILURE() << "non-SpaceError " << e.what() << " for:\n" << text; }
}

TEST(Robustness, EveryPrefixOfARealSpaceLoadsOrFailsCleanly) {
  const fs::path yaml = tiletune::testing::source_dir() / "configs/transpose.yaml";
  const std::string text = tiletune::testing::read_file(yaml);
  for (std::size_t n = 0; n <= text.size(); ++n) expect_no_crash(text.substr(0, n), yaml);
}

TEST(Robustness, RandomDamageLoadsOrFailsCleanly) {
  const fs::path yaml = tiletune::testing::source_dir() / "configs/transpose.yaml";
  const std::string text = tiletune::testing::read_file(yaml);
  const std::string alphabet = "[]{}:,-#&*!|>'\"\t\n ?%@`0123456789.NTILE()";
  std::mt19937 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    std::string damaged = text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const std::size_t pos = rng() % damaged.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: damaged[pos] = c; break;
        case 1: damaged.insert(damaged.begin() + static_cast<std::ptrdiff_t>(pos), c); break;
        default: damaged.erase(pos, 1); break;
      }
    }
    expect_no_crash(damaged, yaml);
  }
}

TEST(Robustness, DeepNestingIsAnErrorNotAStackOverflow) {
  const fs::path where = tiletune::testing::source_dir() / "configs/deep.yaml";
  EXPECT_THROW((void)tiletune::parse_space("params: " + std::string(100000, '['), where), SpaceError);
  EXPECT_THROW((void)tiletune::parse_space("a: " + std::string(100000, '{'), where), SpaceError);
}

}  // namespace
