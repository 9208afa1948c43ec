// The escaping layer (common/text_out.hpp, issue 22): JSON valid and counted, terminal text shown
// not obeyed, CSV written and read back as RFC 4180 says, XML escaped, cuts on characters. CPU only.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/text_out.hpp"

namespace tiletune::text_out {
namespace {

// Hostile texts every escaper is run on: Latin-1, ESC sequences, C1, DEL, NUL, line breaks,
// quotes, commas, truncated and overlong UTF-8, surrogates, long runs.
const std::vector<std::string> kHostile = {
    "caf\xe9",             // Latin-1 é
    "\x1b[31mred\x1b[0m",  // ANSI colour
    "\x1b]0;title\x07",    // OSC: set the terminal's title
    "\xc2\x9b"
    "31m",  // C1 CSI in UTF-8
    "a\x7f"
    "b",                             // DEL
    std::string("nul\0byte", 8),     // NUL
    "line1\nline2\r\nline3",         // line breaks
    "\"quoted\", with, commas",      // CSV separators
    "\xe2\x82",                      // truncated € sequence
    "\xc0\xaf",                      // overlong '/'
    "\xed\xa0\x80",                  // a UTF-16 surrogate
    "\xf4\x90\x80\x80",              // past U+10FFFF
    "\xff\xfe\xfd",                  // never UTF-8
    "plain ascii",                   // nothing to do
    "日本語 ✓ €",                    // valid multibyte text, kept
    std::string(5000, '\x80'),       // a long run of stray bytes
    "back\\slash \"and\" quote",     // JSON metacharacters
    "<script>alert('x')</script>&",  // HTML
    "\t\v\f\b",                      // other C0
    "\xef\xbf\xbe\xef\xbf\xbf",      // U+FFFE U+FFFF (not XML characters)
};

class HostileText : public ::testing::TestWithParam<std::string> {};

TEST_P(HostileText, JsonStringIsValidAndCounted) {
  std::size_t replaced = 0;
  const std::string json = json_string(GetParam(), &replaced);
  EXPECT_TRUE(is_valid_utf8(json));
  nlohmann::json parsed;
  ASSERT_NO_THROW(parsed = nlohmann::json::parse(json)) << json;
  const std::string back = parsed.get<std::string>();
  EXPECT_EQ(back, valid_utf8(GetParam()));  // the same text, bad bytes as U+FFFD
  std::size_t expected = 0;
  (void)valid_utf8(GetParam(), &expected);
  EXPECT_EQ(replaced, expected);
  for (const char c : json) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << json;
  EXPECT_EQ(json.find("\xc2\x9b"), std::string::npos);
}

TEST_P(HostileText, TerminalTextHasNoControlAndIsUtf8) {
  const std::string shown = terminal_text(GetParam());
  EXPECT_TRUE(is_valid_utf8(shown));
  for (std::size_t i = 0; i < shown.size(); i += utf8_length(shown, i)) {
    const std::uint32_t c = code_point(shown, i, utf8_length(shown, i));
    EXPECT_FALSE(c < 0x20 || (c >= 0x7f && c <= 0x9f)) << shown;
  }
  EXPECT_EQ(display_width(shown), char_count(shown) + (shown.find("日") != std::string::npos ? 3 : 0));
}

TEST_P(HostileText, CsvFieldReadsBackExactly) {
  const std::string line = csv_field(GetParam()) + "," + csv_field("second") + "\n";
  CsvReader reader(line);
  std::vector<CsvField> fields;
  ASSERT_FALSE(reader.record(fields).has_value());
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].text, GetParam());
  EXPECT_EQ(fields[1].text, "second");
  EXPECT_TRUE(reader.at_end());
}

TEST_P(HostileText, XmlTextIsValidUtf8WithoutMarkup) {
  const std::string xml = xml_text(GetParam());
  EXPECT_TRUE(is_valid_utf8(xml));
  EXPECT_EQ(xml.find_first_of("<>\"'"), std::string::npos) << xml;
  for (std::size_t i = 0; i < xml.size(); i += utf8_length(xml, i)) {
    const std::uint32_t c = code_point(xml, i, utf8_length(xml, i));
    EXPECT_FALSE((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xFFFE || c == 0xFFFF) << xml;
  }
}

TEST_P(HostileText, CutsFallOnCharacters) {
  for (std::size_t n = 0; n < 12; ++n) {
    const std::string cut = cut_chars(GetParam(), n);
    EXPECT_LE(char_count(cut), n);
    if (is_valid_utf8(GetParam())) EXPECT_TRUE(is_valid_utf8(cut)) << n;
    const std::size_t b = utf8_boundary(GetParam(), n);
    EXPECT_LE(b, n);
    if (is_valid_utf8(GetParam())) EXPECT_TRUE(is_valid_utf8(GetParam().substr(0, b)));
  }
}

INSTANTIATE_TEST_SUITE_P(TextOut, HostileText, ::testing::ValuesIn(kHostile));

TEST(TextOut, JsonEscapes) {
  EXPECT_EQ(json_string("a\"b\\c\n\x1b"), "\"a\\\"b\\\\c\\n\\u001b\"");
  EXPECT_EQ(json_string("\x7f\xc2\x85"), "\"\\u007f\\u0085\"");
  std::size_t n = 0;
  EXPECT_EQ(json_string("caf\xe9", &n), "\"caf\xef\xbf\xbd\"");
  EXPECT_EQ(n, 1u);
}

TEST(TextOut, DumpJsonRepairsKeysAndValuesAndCounts) {
  nlohmann::ordered_json doc = {{"k\xe9y", "v\xff\xfe"},
                                {"list",
                                 {"ok",
                                  "\xc2\x9b"
                                  "x"}},
                                {"n", 1.5}};
  std::size_t replaced = 0;
  const std::string text = dump_json(doc, 2, &replaced);
  EXPECT_EQ(replaced, 3u);
  const auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed.at("k\xef\xbf\xbdy"), "v\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(parsed.at("list")[1], "\xc2\x9bx");  // the same character, written as \u009b
  EXPECT_NE(text.find("\\u009b"), std::string::npos);
  EXPECT_EQ(replaced_warning("c.db", 0), "");
  EXPECT_EQ(replaced_warning("c.db", 3),
            "tiletune: c.db: warning: 3 bytes that are not UTF-8 written as U+FFFD in the JSON output");
}

TEST(TextOut, JsonNumbersAreFiniteOrNull) {
  std::string out;
  append_json_number(out, std::numeric_limits<double>::infinity());
  out += ',';
  append_json_number(out, std::nan(""));
  out += ',';
  append_json_number(out, 0.1);
  EXPECT_EQ(out, "null,null,0.10000000000000001");
}

TEST(TextOut, TerminalTextShowsWhatItHides) {
  EXPECT_EQ(terminal_text("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(terminal_text("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(terminal_text("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(terminal_text("\xc2\x9b"), "\\u009b");
  EXPECT_EQ(terminal_text("é日"), "é日");
  EXPECT_EQ(display_width("é日"), 3u);
  EXPECT_EQ(padded("é", 3, false), "é  ");
  EXPECT_EQ(padded("日", 3, true), " 日");
}

TEST(TextOut, CsvQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(TextOut, CsvReaderReadsRecordsAndCountsLines) {
  const std::string text = "a,\"b\nc\",d\r\n\"e\"\"f\",,\n\nlast";
  CsvReader r(text);
  std::vector<CsvField> f;
  ASSERT_FALSE(r.record(f));
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1].text, "b\nc");
  EXPECT_TRUE(f[1].quoted);
  EXPECT_EQ(f[2].text, "d");
  EXPECT_EQ(r.line(), 3);
  ASSERT_FALSE(r.record(f));
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].text, "e\"f");
  EXPECT_EQ(f[2].text, "");
  EXPECT_EQ(r.line(), 4);
  EXPECT_TRUE(r.peek_line().empty());
  r.skip_line();
  ASSERT_FALSE(r.record(f));
  EXPECT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].text, "last");
  EXPECT_TRUE(r.at_end());
}

TEST(TextOut, CsvReaderRefusesBrokenQuotes) {
  std::vector<CsvField> f;
  CsvReader open("\"never closed,\nrow\n");
  EXPECT_EQ(open.record(f).value_or(""), "a quoted field is not closed");
  CsvReader after("\"a\"b,c\n");
  EXPECT_TRUE(after.record(f).has_value());
  CsvReader literal("a\"b,c\n");  // a quote inside an unquoted field is literal
  EXPECT_FALSE(literal.record(f).has_value());
  EXPECT_EQ(f[0].text, "a\"b");
}

TEST(TextOut, XmlEscapes) {
  EXPECT_EQ(xml_text("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  std::size_t n = 0;
  EXPECT_EQ(xml_text("\xe9\x01", &n), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(n, 1u);
}

TEST(TextOut, CutsNeverSplitACharacter) {
  EXPECT_EQ(cut_chars("ééééé", 4), "é...");
  EXPECT_EQ(cut_chars("ééééé", 5), "ééééé");
  EXPECT_EQ(cut_chars("日本語日本語", 3, ""), "日本語");
  EXPECT_EQ(utf8_boundary("é", 1), 0u);
  EXPECT_EQ(utf8_boundary("aé", 2), 1u);
  EXPECT_EQ(utf8_boundary("aé", 3), 3u);
}

}  // namespace
}  // namespace tiletune::text_out
