// End-to-end tests of the `tiletune` executable: malformed spaces fail cleanly with a
// location, plan compiles the transpose space and a second plan compiles nothing,
// tune without a GPU falls back to plan, and every command answers --help.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli_fixture.hpp"
#include "device/driver.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"

namespace tiletune::testing {
namespace {

std::string quote(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

/// Runs the CLI inside `dir` with its caches pointed into `dir`.
CommandResult tiletune_in(const TempDir& dir, const std::string& args) {
  return run_command("cd " + quote(dir.path()) + " && TILETUNE_CUBIN_CACHE=" + quote(dir.path() / "cubin") +
                     " TILETUNE_DB=" + quote(dir.path() / "cache.db") + " " + quote(cli_path()) + " " + args);
}

struct Expectation {
  int line = 0, column = 0;
  std::string substring;
};

Expectation read_expectation(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  std::smatch m;
  static const std::regex re(R"(^# expect: (\d+):(\d+): (.*)$)");
  if (!std::regex_match(first, m, re)) return {};
  return {std::stoi(m[1]), std::stoi(m[2]), m[3]};
}

TEST(Cli, MalformedSpacesFailWithALocationAndLeaveNothingBehind) {
  const auto bad_dir = test_data_dir() / "spaces" / "bad";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(bad_dir)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const Expectation want = read_expectation(entry.path());
    ASSERT_GT(want.line, 0) << "no '# expect: LINE:COL: text' header";
    TempDir dir;
    const auto before = std::distance(std::filesystem::directory_iterator(dir.path()), {});
    CommandResult r = tiletune_in(dir, "plan --arch sm_90 " + quote(entry.path()));
    EXPECT_EQ(r.signal, 0) << r.output;
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.exit_code, -1) << r.output;
    const std::string location =
        entry.path().string() + ":" + std::to_string(want.line) + ":" + std::to_string(want.column) + ":";
    EXPECT_NE(r.output.find(location), std::string::npos) << "want " << location << " in:\n" << r.output;
    EXPECT_NE(r.output.find(want.substring), std::string::npos) << r.output;
    const auto after = std::distance(std::filesystem::directory_iterator(dir.path()), {});
    EXPECT_EQ(before, after) << "the command left a file behind";
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

TEST(Cli, PlanTransposeThenASecondPlanCompilesNothing) {
  TempDir dir;
  const auto space = source_dir() / "configs" / "transpose.yaml";
  CommandResult first = tiletune_in(dir, "plan --arch sm_90 --size N=8192 --format json " + quote(space));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto j1 = nlohmann::json::parse(first.output);
  EXPECT_EQ(j1["summary"]["points"], 162);
  EXPECT_EQ(j1["summary"]["after_constraints"], 138);
  EXPECT_EQ(j1["summary"]["compile_failed"], 0);
  EXPECT_EQ(j1["summary"]["pruned"], 3);  // TILE=64 BLOCK_ROWS=32 VEC=1: 2048 threads per block, each PAD
  EXPECT_EQ(j1["summary"]["ok"], 135);
  EXPECT_EQ(j1["summary"]["compiled"], 135);
  EXPECT_EQ(j1["summary"]["cache_hits"], 0);
  EXPECT_EQ(j1["problem"]["N"], 8192);
  for (const auto& row : j1["rows"]) {
    if (row["status"] != "ok") {
      EXPECT_EQ(row["status"], "pruned");
      EXPECT_NE(row["detail"].get<std::string>().find("2048"), std::string::npos) << row.dump();
      continue;
    }
    const int tile = row["params"]["TILE"], pad = row["params"]["PAD"];
    // PAD=2 swizzles the columns instead of padding them.
    EXPECT_EQ(row["static_shared_bytes"], tile * (tile + (pad == 2 ? 0 : pad)) * 4) << row.dump();
    EXPECT_GT(row["registers"].get<int>(), 0);
    EXPECT_GT(row["blocks_per_sm"].get<int>(), 0);
  }

  CommandResult second = tiletune_in(dir, "plan --arch sm_90 --size N=8192 " + quote(space));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("compiled nothing: 135 cache hits"), std::string::npos) << second.output;

  CommandResult csv = tiletune_in(dir, "plan --arch sm_80 --format csv " + quote(space));
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(std::count(csv.output.begin(), csv.output.end(), '\n'), 1 + 138);  // header + one line per config
}

TEST(Cli, TuneWithoutAGpuSaysSoAndPlans) {
  if (cu::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  TempDir dir;
  CommandResult r = tiletune_in(dir, "tune --arch sm_90");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no CUDA device present"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("transpose"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("after constraints 138"), std::string::npos) << r.output;
}

// `tune FOLDER`: each capture of a capture folder in turn (here planned: no GPU); a folder without
// captures and a replay of a folder are argument errors.
TEST(Cli, TuneOfACaptureFolderTakesEachCaptureInTurn) {
  if (cu::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  TempDir dir;
  const std::string space = "source: " + (source_dir() / "kernels" / "transpose.cu").string() + "\n";
  std::string yaml;
  {
    std::ifstream in(source_dir() / "configs" / "transpose.yaml");
    for (std::string line; std::getline(in, line);) yaml += line.rfind("source:", 0) == 0 ? space : line + "\n";
  }
  for (const char* name : {"b_second", "a_first"}) {
    std::filesystem::create_directories(dir.path() / "captures" / name);
    std::ofstream(dir.path() / "captures" / name / "space.yaml") << yaml;
  }
  std::filesystem::create_directories(dir.path() / "captures" / "not_a_capture");
  CommandResult r = tiletune_in(dir, "tune captures --arch sm_90");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto first = r.output.find("== capture 1/2: captures/a_first/space.yaml");
  const auto second = r.output.find("== capture 2/2: captures/b_second/space.yaml");
  ASSERT_NE(first, std::string::npos) << r.output;
  ASSERT_NE(second, std::string::npos) << r.output;
  EXPECT_LT(first, second);
  EXPECT_NE(r.output.find("after constraints 138", second), std::string::npos) << r.output;

  std::filesystem::create_directories(dir.path() / "empty");
  r = tiletune_in(dir, "tune empty");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is a folder without captures"), std::string::npos) << r.output;
  std::ofstream(dir.path() / "x.csv") << "";
  r = tiletune_in(dir, "tune captures --replay x.csv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a replay takes one space"), std::string::npos) << r.output;
}

TEST(Cli, BadArgumentsAreReported) {
  TempDir dir;
  const auto space = quote(source_dir() / "configs" / "transpose.yaml");
  CommandResult r = tiletune_in(dir, "plan --size M=3 " + space);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'M' is not a problem size"), std::string::npos) << r.output;
  r = tiletune_in(dir, "plan --size N=abc " + space);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not a whole number"), std::string::npos) << r.output;
  r = tiletune_in(dir, "plan --arch sm_42 " + space);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sm_42"), std::string::npos) << r.output;
  r = tiletune_in(dir, "plan does-not-exist.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = tiletune_in(dir, "frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("tiletune: unknown command 'frobnicate' (commands: plan, tune,"), std::string::npos)
      << r.output;
}

/// The commands the main --help lists under "Subcommands:", in its order.
std::vector<std::string> listed_commands(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream lines(help.substr(std::min(help.size(), help.find("Subcommands:"))));
  std::string line;
  std::getline(lines, line);  // the heading
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

/// The lines of a text (a last line without '\n' counts).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Every `--flag` a help text names (its options and its examples), in order, each once.
std::vector<std::string> flags_in(const std::string& text) {
  std::vector<std::string> flags;
  static const std::regex flag(R"((^|[^A-Za-z0-9_-])(--[a-z][a-z0-9-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    if (std::find(flags.begin(), flags.end(), (*it)[2].str()) == flags.end()) flags.push_back((*it)[2].str());
  return flags;
}

/// True when `text` holds `flag` not as the start of a longer one (--device is not --devices).
bool names_flag(const std::string& text, const std::string& flag) {
  for (std::size_t at = text.find(flag); at != std::string::npos; at = text.find(flag, at + 1)) {
    const std::size_t end = at + flag.size();
    if (end == text.size() ||
        !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-' || text[end] == '_'))
      return true;
  }
  return false;
}

// Generated from the commands tiletune lists, so that a new command cannot miss its help or its
// page: each answers `COMMAND --help` with its own usage (never the main help), examples and the
// exit statuses it can return, in at most help_max_lines lines, ending with the address of its
// page in docs/reference/; the page exists and names every option the help names. The list is
// the one an unknown command is told.
TEST(Cli, EveryCommandAnswersHelpWithExamplesAndItsDocsPage) {
  TempDir dir;
  const CommandResult main_help = tiletune_in(dir, "--help");
  ASSERT_EQ(main_help.exit_code, 0) << main_help.output;
  const std::vector<std::string> commands = listed_commands(main_help.output);
  ASSERT_GE(commands.size(), 15u) << main_help.output;
  EXPECT_NE(main_help.output.find("docs/reference/"), std::string::npos) << main_help.output;
  std::string joined;
  for (const std::string& c : commands) joined += (joined.empty() ? "" : ", ") + c;
  const CommandResult unknown = tiletune_in(dir, "frobnicate --help");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown command 'frobnicate' (commands: " + joined + ";"), std::string::npos)
      << unknown.output;
  for (const std::string& c : commands) {
    const CommandResult r = tiletune_in(dir, c + " --help");
    EXPECT_EQ(r.exit_code, 0) << c << r.output;
    EXPECT_NE(r.output.find("Usage: tiletune " + c + " "), std::string::npos) << c << r.output;
    EXPECT_EQ(r.output.find("Subcommands:"), std::string::npos) << c << ": the main help instead of its own";
    EXPECT_NE(r.output.find("Example"), std::string::npos) << c << r.output;
    EXPECT_NE(r.output.find("Exit status: 0 done"), std::string::npos) << c << r.output;
    const std::vector<std::string> lines = lines_of(r.output);
    EXPECT_LE(lines.size(), 40u) << c << " --help has " << lines.size() << " lines:\n" << r.output;
    const std::string page = "docs/reference/" + c + ".md";
    ASSERT_FALSE(lines.empty()) << c;
    EXPECT_EQ(lines.back(), "Docs: " + page) << c << ": --help does not end with its docs page";
    const std::filesystem::path file = source_dir() / page;
    ASSERT_TRUE(std::filesystem::is_regular_file(file)) << c << ": " << page << " does not exist";
    const std::string text = read_file(file);
    EXPECT_NE(text.find("tiletune " + c), std::string::npos) << page << " does not name `tiletune " << c << "`";
    for (const std::string& flag : flags_in(r.output))
      EXPECT_TRUE(names_flag(text, flag)) << c << " --help names " << flag << ", " << page << " does not";
  }
}

/// GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces as '-'.
std::string heading_anchor(const std::string& heading) {
  std::string anchor;
  for (const unsigned char ch : heading) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch >= 0x80)
      anchor += static_cast<char>(std::tolower(ch));
    else if (ch == ' ')
      anchor += '-';
  }
  return anchor;
}

/// The anchors of a Markdown file's headings (outside code blocks).
std::set<std::string> anchors_of(const std::filesystem::path& file) {
  std::set<std::string> anchors;
  bool code = false;
  for (const std::string& line : lines_of(read_file(file))) {
    if (line.rfind("```", 0) == 0) code = !code;
    static const std::regex heading(R"(^#{1,6} +(.*?) *$)");
    std::smatch m;
    if (!code && std::regex_match(line, m, heading)) anchors.insert(heading_anchor(m[1]));
  }
  return anchors;
}

/// The relative links of a Markdown file that do not resolve: a missing file or folder, or an
/// anchor that is none of the target's headings. Links to a site (https:, mailto:) are not
/// followed; code blocks and code spans are not links.
std::vector<std::string> broken_links(const std::filesystem::path& file) {
  std::vector<std::string> broken;
  bool code = false;
  int number = 0;
  for (std::string line : lines_of(read_file(file))) {
    ++number;
    if (line.rfind("```", 0) == 0) code = !code;
    if (code) continue;
    line = std::regex_replace(line, std::regex("`[^`]*`"), "");
    static const std::regex link(R"(\]\(([^)\s]+)\))");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), link); it != std::sregex_iterator(); ++it) {
      const std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      const std::size_t hash = target.find('#');
      const std::string path = target.substr(0, hash);
      const std::filesystem::path resolved = path.empty() ? file : file.parent_path() / path;
      const std::string where = "line " + std::to_string(number) + ": " + target;
      if (!std::filesystem::exists(resolved)) {
        broken.push_back(where + " (no such file)");
      } else if (hash != std::string::npos && resolved.extension() == ".md" &&
                 !anchors_of(resolved).contains(target.substr(hash + 1))) {
        broken.push_back(where + " (no such heading)");
      }
    }
  }
  return broken;
}

// The README stays a front page, and no link of it or of docs/ leads nowhere.
TEST(Cli, ReadmeIsShortAndEveryDocsLinkResolves) {
  const std::filesystem::path root = source_dir();
  const std::vector<std::string> readme = lines_of(read_file(root / "README.md"));
  EXPECT_LE(readme.size(), 250u) << "README.md has " << readme.size() << " lines";
  std::vector<std::filesystem::path> files{root / "README.md"};
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "docs"))
    if (entry.is_regular_file() && entry.path().extension() == ".md") files.push_back(entry.path());
  EXPECT_GE(files.size(), 20u);
  for (const std::filesystem::path& file : files)
    for (const std::string& b : broken_links(file))
      ADD_FAILURE() << std::filesystem::relative(file, root).string() << ": " << b;
}

TEST(Cli, DevicesWithoutAGpu) {
  if (cu::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  TempDir dir;
  CommandResult r = tiletune_in(dir, "devices");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no CUDA device present"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tiletune::testing

namespace tiletune::testing {
namespace {

TEST(Cli, ShowBestExportAndMergeReadTheCache) {
  TempDir dir;
  write_cache(dir.path() / "cache.db", "GPU-11111111-0000-0000-0000-000000000000", 0.15);
  write_cache(dir.path() / "other.db", "GPU-22222222-0000-0000-0000-000000000000", 0.2);

  CommandResult show = tiletune_in(dir, "show --status wrong_result");
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("out[12]: got nan"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("1 trials"), std::string::npos) << show.output;

  CommandResult best = tiletune_in(dir, "best --format json");
  ASSERT_EQ(best.exit_code, 0) << best.output;
  const auto b = nlohmann::json::parse(best.output);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0]["params"], "TILE=64;BLOCK_ROWS=2;PAD=1");

  CommandResult csv = tiletune_in(dir, "export --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(std::count(csv.output.begin(), csv.output.end(), '\n'), 3) << csv.output;  // header + 2 trials
  EXPECT_NE(csv.output.find("hash1"), std::string::npos);

  CommandResult merge =
      tiletune_in(dir, "merge " + quote(dir.path() / "cache.db") + " " + quote(dir.path() / "other.db"));
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  EXPECT_NE(merge.output.find("2 trials read, 2 added"), std::string::npos) << merge.output;
  const auto exported = nlohmann::json::parse(tiletune_in(dir, "export").output);
  EXPECT_EQ(exported["devices"].size(), 2u);
  EXPECT_EQ(exported["trials"].size(), 4u);
  // Two GPUs of one model: the table tells them apart by their UUIDs' start; JSON keeps the name.
  CommandResult both = tiletune_in(dir, "best");
  ASSERT_EQ(both.exit_code, 0) << both.output;
  EXPECT_NE(both.output.find("NVIDIA H200 (GPU-11111111)"), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("NVIDIA H200 (GPU-22222222)"), std::string::npos) << both.output;
  const auto both_json = nlohmann::json::parse(tiletune_in(dir, "best --format json").output);
  ASSERT_EQ(both_json.size(), 2u);
  EXPECT_EQ(both_json[0]["device"], "NVIDIA H200");
  EXPECT_FALSE(both_json[0].contains("device_label"));

  CommandResult self =
      tiletune_in(dir, "merge " + quote(dir.path() / "cache.db") + " " + quote(dir.path() / "cache.db"));
  EXPECT_EQ(self.exit_code, 2) << self.output;

  // A file that is not a cache is refused and left alone.
  const auto foreign = dir.write("notes.txt", "not a database at all, just some text that is long enough");
  CommandResult refused = tiletune_in(dir, "show --db " + quote(foreign));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("not a tiletune cache"), std::string::npos) << refused.output;
  EXPECT_EQ(read_file(foreign), "not a database at all, just some text that is long enough");
}

}  // namespace
}  // namespace tiletune::testing

namespace tiletune::testing {
namespace {

TEST(Cli, BestLooksUpOneConfigWithFallbacks) {
  TempDir dir;
  write_cache(dir.path() / "cache.db", "GPU-11111111-0000-0000-0000-000000000000", 0.15);
  CommandResult env = tiletune_in(
      dir, "best --kernel transpose --size N=8192 --device GPU-11111111-0000-0000-0000-000000000000 --format env");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  EXPECT_EQ(env.output, "TILE=64\nBLOCK_ROWS=2\nPAD=1\nTILETUNE_MATCH=exact\nTILETUNE_TIES=1\n");
  CommandResult cmake = tiletune_in(
      dir, "best --kernel transpose --size N=6000 --device GPU-11111111-0000-0000-0000-000000000000 --format cmake");
  ASSERT_EQ(cmake.exit_code, 0) << cmake.output;
  EXPECT_NE(cmake.output.find("set(TILE 64)\n"), std::string::npos) << cmake.output;
  EXPECT_NE(cmake.output.find("set(TILETUNE_MATCH nearest_problem)"), std::string::npos) << cmake.output;
  CommandResult json = tiletune_in(dir, "best --kernel transpose --size N=8192 --device sm_90 --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["params"]["TILE"], 64);
  EXPECT_EQ(j["match"], "same_architecture");
  CommandResult none = tiletune_in(dir, "best --kernel reduction --size N=100 --device sm_90");
  EXPECT_EQ(none.exit_code, 4) << none.output;
  EXPECT_NE(none.output.find("use your defaults"), std::string::npos) << none.output;
  CommandResult bad = tiletune_in(dir, "best --kernel transpose --size N=abc");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  CommandResult no_kernel = tiletune_in(dir, "best --size N=8192");
  EXPECT_EQ(no_kernel.exit_code, 2) << no_kernel.output;
}

}  // namespace
}  // namespace tiletune::testing
