// The space loader on hostile input: every kind of input must end quickly, in bounded memory,
// with a located one-line error (or load, where the input is valid but unusual: byte-order
// marks, UTF-16). Times are CPU seconds of this process (not wall time, which other work on
// the machine stretches), and bounds with a wide margin, not benchmarks: they tell linear work
// from quadratic or endless work, which would take minutes or forever here.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <string>

#include "test_support.hpp"
#include "tiletune/space.hpp"

namespace fs = std::filesystem;

namespace tiletune {
namespace {

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

std::string transpose_text() { return testing::read_file(testing::source_dir() / "configs/transpose.yaml"); }

fs::path configs_dir() { return testing::source_dir() / "configs"; }

// The error of parsing `text` as configs/hostile.yaml, and how long it took.
struct Outcome {
  std::string message;
  SourceLocation where;
  double seconds = 0;
};
Outcome parse_failure(const std::string& text) {
  const double start = cpu_seconds();
  Outcome o;
  try {
    (void)parse_space(text, configs_dir() / "hostile.yaml");
    ADD_FAILURE() << "no error";
  } catch (const SpaceError& e) {
    o.message = e.what();
    o.where = e.where();
  }
  o.seconds = cpu_seconds() - start;
  return o;
}

// A message is one error line and one hint line, short enough to read.
void expect_short(const Outcome& o) {
  EXPECT_LT(o.message.size(), 700u) << o.message.substr(0, 1000);
  EXPECT_LE(std::count(o.message.begin(), o.message.end(), '\n'), 1) << o.message.substr(0, 1000);
}

TEST(Hostile, ByteOrderMarksAndUtf16Load) {
  const std::string text = transpose_text();
  const Space plain = parse_space(text, configs_dir() / "a.yaml");
  const Space bom = parse_space("\xEF\xBB\xBF" + text, configs_dir() / "a.yaml");
  EXPECT_EQ(bom.launch.grid[1].where.column, plain.launch.grid[1].where.column);
  EXPECT_EQ(bom.params.size(), plain.params.size());
  for (bool big_endian : {false, true}) {
    std::string utf16 = big_endian ? std::string("\xFE\xFF") : std::string("\xFF\xFE");
    for (const char c : text) {
      utf16 += big_endian ? '\0' : c;
      utf16 += big_endian ? c : '\0';
    }
    const Space s = parse_space(utf16, configs_dir() / "a.yaml");
    EXPECT_EQ(s.kernel, "transpose");
    EXPECT_EQ(s.launch.grid[1].where.line, plain.launch.grid[1].where.line);
  }
  // UTF-16 without a mark is mostly NUL bytes: refused with a reason, not misread.
  std::string bare;
  for (const char c : text) (bare += c) += '\0';
  EXPECT_NE(parse_failure(bare).message.find("UTF-16 or UTF-32 without a byte-order mark"), std::string::npos);
}

TEST(Hostile, CommaDocumentsEndAtOnce) {
  for (const std::string text : {",", ", a", "\n# c\n,", "kernel: k\n---\n,", "--- ,"}) {
    const Outcome o = parse_failure(text);
    EXPECT_NE(o.message.find("unexpected ','"), std::string::npos) << text << ": " << o.message;
    EXPECT_LT(o.seconds, 2.0) << text;
  }
}

TEST(Hostile, ControlCharactersAndInvalidUtf8AreLocated) {
  std::string text = transpose_text();
  const std::size_t entry = text.find("entry: transpose") + 10;
  Outcome o = parse_failure(text.substr(0, entry) + std::string(1, '\0') + text.substr(entry));
  EXPECT_NE(o.message.find("NUL byte"), std::string::npos) << o.message;
  EXPECT_GT(o.where.line, 1);
  o = parse_failure(text.substr(0, entry) + "\x01" + text.substr(entry));
  EXPECT_NE(o.message.find("control character 1"), std::string::npos) << o.message;
  o = parse_failure(text.substr(0, entry) + "\xC3\x28" + text.substr(entry));
  EXPECT_NE(o.message.find("not valid UTF-8"), std::string::npos) << o.message;
  EXPECT_EQ(o.where.column, 11);
}

TEST(Hostile, OversizedTextIsRefusedBeforeParsing) {
  const std::string huge = "# " + std::string(5u << 20, 'x') + "\n";
  const Outcome o = parse_failure(huge);
  EXPECT_NE(o.message.find("more than a search space may have (4 MiB)"), std::string::npos) << o.message.substr(0, 300);
  EXPECT_LT(o.seconds, 2.0);
}

TEST(Hostile, LongValueListsAreCheckedInLinearTime) {
  // 150,000 distinct values (1 MB), then a repeat at the very end: a quadratic check would
  // compare 10^10 pairs.
  std::string values;
  for (int i = 0; i < 150000; ++i) values += (i ? "," : "") + std::to_string(i + 1);
  std::string text = transpose_text();
  const std::size_t at = text.find("  TILE: [16, 32, 64]");
  ASSERT_NE(at, std::string::npos);
  std::string with = text;
  with.replace(at, 20, "  TILE: [" + values + ",7]");
  const Outcome o = parse_failure(with);
  EXPECT_NE(o.message.find("duplicate value 7"), std::string::npos) << o.message.substr(0, 300);
  EXPECT_LT(o.seconds, 5.0);
  expect_short(o);
}

TEST(Hostile, HugeNamesGetNoSlowSuggestion) {
  // A key of 1000 characters: refused by length, with no did-you-mean over it.
  std::string text = transpose_text();
  text.replace(text.find("kernel: transpose"), 6, std::string(1000, 'K'));
  Outcome o = parse_failure(text);
  EXPECT_NE(o.message.find("longer than 128 characters"), std::string::npos) << o.message.substr(0, 300);
  EXPECT_LT(o.seconds, 2.0);
  expect_short(o);
  // A key of a million: YAML itself refuses implicit keys over 1024 characters.
  text = transpose_text();
  text.replace(text.find("kernel: transpose"), 6, std::string(1u << 20, 'K'));
  o = parse_failure(text);
  EXPECT_NE(o.message.find("YAML syntax error"), std::string::npos) << o.message.substr(0, 300);
  EXPECT_LT(o.seconds, 2.0);
  expect_short(o);
  // A param value that is a million-character word: refused by length.
  text = transpose_text();
  text.replace(text.find("[16, 32, 64]"), 12, "[" + std::string(1u << 20, 'w') + "]");
  o = parse_failure(text);
  EXPECT_NE(o.message.find("at most 128 characters"), std::string::npos) << o.message.substr(0, 300);
  EXPECT_LT(o.seconds, 2.0);
  expect_short(o);
}

TEST(Hostile, LongExpressionsAreQuotedShortly) {
  std::string sum;
  for (int i = 0; i < 200000; ++i) sum += "N+";
  sum += "UNKNOWN";
  std::string text = transpose_text();
  const std::size_t metrics = text.find("metrics: {bytes: 2*N*N*4}");
  ASSERT_NE(metrics, std::string::npos);
  text.replace(metrics, 25, "metrics: {bytes: " + sum + "}");
  const Outcome o = parse_failure(text);
  EXPECT_NE(o.message.find("unknown name 'UNKNOWN'"), std::string::npos) << o.message.substr(0, 300);
  EXPECT_LT(o.seconds, 5.0);
  expect_short(o);
}

TEST(Hostile, SpecialFilesAreNotRead) {
  testing::TempDir dir;
  const fs::path fifo = dir.path() / "space.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const double start = cpu_seconds();
  try {
    (void)load_space(fifo);
    FAIL() << "a FIFO loaded";
  } catch (const SpaceError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file (a FIFO)"), std::string::npos) << e.what();
  }
  EXPECT_LT(cpu_seconds() - start, 2.0);  // a blocked open would hang the test itself
  EXPECT_THROW((void)load_space("/dev/zero"), SpaceError);
  // A FIFO or /dev/zero as the kernel source: refused at load, before anything reads it.
  std::string text = transpose_text();
  text.replace(text.find("../kernels/transpose.cu"), 23, fifo.string());
  EXPECT_NE(parse_failure(text).message.find("is not a regular file"), std::string::npos);
}

TEST(Hostile, UpgradeRewritesEarlierSpacesAndIsIdempotent) {
  const std::string old_text =
      "# an earlier space\n"
      "kernel: transpose\n"
      "source: ../kernels/transpose.cu\n"
      "entry: transpose\n"
      "problem: {N: [1024]}\n"
      "params: {TILE: [16, 32], BLOCK_ROWS: [4, 8], PAD: [0, 1], VEC: [1]}\n"
      "launch:\n"
      "  grid: [ceil_div(N, TILE), ceil_div(N, TILE)]   # keep this comment\n"
      "  block: [TILE / VEC, BLOCK_ROWS]\n"
      "buffers:\n"
      "  in:  {type: float, count: N*N, init: random}\n"
      "  out: {type: float, count: max(N*N, 1), output: true}\n"
      "args: [in, out, N]\n"
      "verify: {reference: cpu, rtol: 0}\n";
  // The earlier text no longer loads, and says how to fix it.
  EXPECT_NE(parse_failure(old_text).message.find("was split by YAML at its comma"), std::string::npos);
  const SpaceUpgrade up = upgrade_space_text(old_text, configs_dir() / "old.yaml");
  ASSERT_EQ(up.changes.size(), 4u);
  EXPECT_NE(up.changes[0].find("8:10: quoted the expression \"ceil_div(N, TILE)\""), std::string::npos)
      << up.changes[0];
  EXPECT_NE(up.text.find("grid: [\"ceil_div(N, TILE)\", \"ceil_div(N, TILE)\"]   # keep this comment"),
            std::string::npos)
      << up.text;
  EXPECT_NE(up.text.find("count: \"max(N*N, 1)\""), std::string::npos) << up.text;
  EXPECT_NE(up.text.find("verify: {reference: {builtin: transpose}, rtol: 0}"), std::string::npos) << up.text;
  EXPECT_EQ(up.text.rfind("# an earlier space\n", 0), 0u);
  const Space s = parse_space(up.text, configs_dir() / "old.yaml");
  EXPECT_EQ(s.verify.reference, VerifySpec::Reference::builtin);
  EXPECT_EQ(s.verify.builtin, "transpose");
  EXPECT_EQ(s.launch.grid[1].expr.text(), "ceil_div(N, TILE)");
  const SpaceUpgrade again = upgrade_space_text(up.text, configs_dir() / "old.yaml");
  EXPECT_TRUE(again.changes.empty());
  EXPECT_EQ(again.text, up.text);
}

TEST(Hostile, UpgradeAddsTheImplicitCheckAndWrapsAReferenceConfig) {
  const std::string no_verify =
      "kernel: transpose\nsource: ../kernels/transpose.cu\nentry: transpose\nproblem: {N: [64]}\n"
      "params: {TILE: [16], BLOCK_ROWS: [4], PAD: [0], VEC: [1]}\nlaunch: {grid: 1, block: 1}\n"
      "buffers: {in: {count: N}, out: {count: N, output: true}}\nargs: [in, out, N]";
  const SpaceUpgrade up = upgrade_space_text(no_verify, configs_dir() / "old.yaml");
  ASSERT_EQ(up.changes.size(), 1u);
  EXPECT_NE(up.text.find("\nverify: {reference: {builtin: transpose}}\n"), std::string::npos) << up.text;
  EXPECT_EQ(parse_space(up.text, configs_dir() / "old.yaml").verify.builtin, "transpose");

  const std::string config = no_verify + "\nverify: {reference: {TILE: 16, BLOCK_ROWS: 4, PAD: 0, VEC: 1}}\n";
  const SpaceUpgrade wrapped = upgrade_space_text(config, configs_dir() / "old.yaml");
  EXPECT_NE(wrapped.text.find("reference: {config: {TILE: 16, BLOCK_ROWS: 4, PAD: 0, VEC: 1}}"), std::string::npos);
  EXPECT_EQ(parse_space(wrapped.text, configs_dir() / "old.yaml").verify.reference, VerifySpec::Reference::config);

  // A family with no built-in reference: nothing is invented, the user is told.
  std::string foreign = no_verify;
  foreign.replace(foreign.find("kernel: transpose"), 17, "kernel: mine");
  const SpaceUpgrade note = upgrade_space_text(foreign, configs_dir() / "old.yaml");
  EXPECT_TRUE(note.changes.empty());
  ASSERT_EQ(note.notes.size(), 1u);
  EXPECT_NE(note.notes[0].find("add 'verify: {reference: ...}'"), std::string::npos) << note.notes[0];
}

}  // namespace
}  // namespace tiletune
