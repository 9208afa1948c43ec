// .npy, .npy.gz and raw data files: every element type round-trips, the header's dtype, shape and order
// are read and checked, and each kind of bad file is refused with its path and what is wrong.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "test_support.hpp"
#include "worker/generators.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/error.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

std::vector<std::byte> pattern(std::size_t bytes) {
  std::vector<std::byte> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>((i * 37 + 11) & 0xFF);
  return v;
}

template <class Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "no Error thrown";
  } catch (const Error& e) {
    for (const std::string& needle : needles)
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "'" << needle << "' not in: " << e.what();
  }
}

// An .npy file with a header written by hand (the way NumPy writes one), for files our writer
// never makes.
std::filesystem::path hand_npy(const testing::TempDir& dir, const std::string& name, const std::string& dict,
                               std::size_t data_bytes, int version = 1) {
  std::string header = dict;
  const std::size_t prefix = version == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string file = "\x93NUMPY";
  file += static_cast<char>(version);
  file += '\0';
  file += static_cast<char>(header.size() & 0xFF);
  file += static_cast<char>((header.size() >> 8) & 0xFF);
  if (version != 1) file += std::string(2, '\0');
  file += header;
  file += std::string(data_bytes, '\x01');
  return dir.write(name, file);
}

TEST(DataFile, NpyRoundTripsEveryElementType) {
  testing::TempDir dir;
  for (const ElementType type : kElementTypes) {
    SCOPED_TRACE(element_type_name(type));
    const std::vector<std::byte> data = pattern(12 * element_size(type));
    const auto path = dir.path() / (std::string(element_type_name(type)) + ".npy");
    write_npy(path, type, data, {3, 4});
    const DataFileInfo info = inspect_data_file(path);
    EXPECT_TRUE(info.npy);
    ASSERT_TRUE(info.type.has_value());
    EXPECT_EQ(*info.type, type);
    EXPECT_EQ(info.shape, (std::vector<std::uint64_t>{3, 4}));
    EXPECT_EQ(info.count(type), 12u);
    EXPECT_EQ(info.data_offset % 64, 0u);  // NumPy aligns the data
    EXPECT_EQ(read_data_file(path, type, 12, "buffer 'x'"), data);
    EXPECT_EQ(read_data_file(path, type, std::nullopt, "buffer 'x'"), data);
  }
  // One dimension is written as a tuple of one, and read back.
  write_npy(dir.path() / "v.npy", ElementType::f32, pattern(20));
  EXPECT_EQ(inspect_data_file(dir.path() / "v.npy").shape, (std::vector<std::uint64_t>{5}));
  EXPECT_NE(testing::read_file(dir.path() / "v.npy").find("'shape': (5,)"), std::string::npos);
}

// The dtypes NumPy writes for each element type (numpy.dtype(...).str on a little-endian machine).
TEST(DataFile, EachElementTypeHasNumPysDtype) {
  const std::pair<ElementType, const char*> dtypes[] = {
      {ElementType::f32, "<f4"}, {ElementType::f64, "<f8"}, {ElementType::f16, "<f2"}, {ElementType::i8, "|i1"},
      {ElementType::i16, "<i2"}, {ElementType::i32, "<i4"}, {ElementType::i64, "<i8"}, {ElementType::u8, "|u1"},
      {ElementType::u16, "<u2"}, {ElementType::u32, "<u4"}, {ElementType::u64, "<u8"}};
  ASSERT_EQ(std::size(dtypes), kElementTypeCount);
  testing::TempDir dir;
  for (const auto& [type, dtype] : dtypes) {
    EXPECT_STREQ(npy_dtype(type), dtype);
    const auto path = dir.path() / "t.npy";
    write_npy(path, type, pattern(element_size(type)));
    EXPECT_NE(testing::read_file(path).find(std::string("'descr': '") + dtype + "'"), std::string::npos) << dtype;
    // And a file NumPy wrote with that dtype reads as the type.
    const auto hand =
        hand_npy(dir, "h.npy", std::string("{'descr': '") + dtype + "', 'fortran_order': False, 'shape': (3,), }",
                 3 * element_size(type));
    EXPECT_EQ(inspect_data_file(hand).type, type) << dtype;
  }
}

TEST(DataFile, OneByteTypesTakeAnyByteOrderAndBoolReadsAsUint8) {
  testing::TempDir dir;
  for (const auto& [dtype, type] :
       std::initializer_list<std::pair<const char*, ElementType>>{{"|b1", ElementType::u8},
                                                                  {"<b1", ElementType::u8},
                                                                  {">i1", ElementType::i8},
                                                                  {"<i1", ElementType::i8},
                                                                  {">u1", ElementType::u8},
                                                                  {"=u2", ElementType::u16}}) {
    const auto path =
        hand_npy(dir, "b.npy", std::string("{'descr': '") + dtype + "', 'fortran_order': False, 'shape': (4,), }",
                 4 * element_size(type));
    const DataFileInfo info = inspect_data_file(path);
    EXPECT_EQ(info.type, type) << dtype;
    EXPECT_EQ(info.count(type), 4u) << dtype;
  }
  // A bool file fills a uint8 buffer (its bytes are 0 and 1); any other type is told the dtype.
  const auto flags = hand_npy(dir, "flags.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", 5);
  EXPECT_EQ(read_data_file(flags, ElementType::u8, 5, "buffer 'mask'"), std::vector<std::byte>(5, std::byte{1}));
  expect_error([&] { (void)read_data_file(flags, ElementType::i8, 5, "buffer 'mask'"); },
               {"flags.npy", "buffer 'mask' is int8", "uint8"});
  // Written, uint8 stays |u1: bool is only read.
  EXPECT_STREQ(npy_dtype(ElementType::u8), "|u1");
  const auto big = hand_npy(dir, "big.npy", "{'descr': '>u2', 'fortran_order': False, 'shape': (4,), }", 8);
  expect_error([&] { (void)inspect_data_file(big); }, {"big.npy", "big-endian", "<u2"});
  const auto wide = hand_npy(dir, "w.npy", "{'descr': '<i16', 'fortran_order': False, 'shape': (1,), }", 16);
  expect_error([&] { (void)inspect_data_file(wide); }, {"w.npy", "no tiletune element type", "int8 int16"});
}

TEST(DataFile, RawFilesAreTheirBytes) {
  testing::TempDir dir;
  const std::vector<std::byte> data = pattern(40);
  const auto path = dir.write("x.bin", std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  EXPECT_EQ(read_data_file(path, ElementType::f32, 10, "buffer 'x'"), data);
  EXPECT_EQ(read_data_file(path, ElementType::f64, std::nullopt, "buffer 'x'").size(), 40u);
  expect_error([&] { (void)read_data_file(path, ElementType::f32, 11, "buffer 'x'"); },
               {"x.bin", "buffer 'x'", "11 x float = 44 bytes", "40 bytes"});
  const auto odd = dir.write("odd.bin", std::string(42, 'x'));
  expect_error([&] { (void)read_data_file(odd, ElementType::i64, std::nullopt, "buffer 'k'"); },
               {"odd.bin", "42 bytes are not a whole number of 8-byte elements"});
}

TEST(DataFile, TypeAndCountMismatchesNameTheBufferAndTheFile) {
  testing::TempDir dir;
  const auto path = dir.path() / "in.npy";
  write_npy(path, ElementType::f64, pattern(80));
  expect_error([&] { (void)read_data_file(path, ElementType::f32, 10, "buffer 'in'"); },
               {"in.npy", "buffer 'in' is float", "double", "<f8"});
  expect_error([&] { (void)read_data_file(path, ElementType::f64, 11, "buffer 'in'"); },
               {"in.npy", "buffer 'in' has 11 elements", "holds 10"});
}

TEST(DataFile, BadNpyFilesAreRefusedWithTheReason) {
  testing::TempDir dir;
  expect_error([&] { (void)inspect_data_file(dir.path() / "missing.npy"); }, {"missing.npy", "no such file"});
  expect_error([&] { (void)inspect_data_file(dir.path()); }, {"directory"});
  const auto not_npy = dir.write("raw.npy", std::string(100, 'x'));
  expect_error([&] { (void)inspect_data_file(not_npy); }, {"raw.npy", "not an .npy file"});
  const auto fortran = hand_npy(dir, "f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }", 48);
  expect_error([&] { (void)inspect_data_file(fortran); }, {"f.npy", "Fortran order", "ascontiguousarray"});
  // Fortran order of a vector is the same as C order.
  const auto fortran_vector = hand_npy(dir, "fv.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (12,), }", 48);
  EXPECT_EQ(inspect_data_file(fortran_vector).count(ElementType::f32), 12u);
  const auto big = hand_npy(dir, "b.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (12,), }", 48);
  expect_error([&] { (void)inspect_data_file(big); }, {"b.npy", "big-endian", "<f4"});
  const auto complex = hand_npy(dir, "c.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16);
  expect_error([&] { (void)inspect_data_file(complex); }, {"c.npy", "'<c8'", "no tiletune element type"});
  const auto structured =
      hand_npy(dir, "s.npy", "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8);
  expect_error([&] { (void)inspect_data_file(structured); }, {"s.npy", "not a simple type"});
  const auto truncated = hand_npy(dir, "t.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }", 79);
  expect_error([&] { (void)inspect_data_file(truncated); }, {"t.npy", "announces 80 bytes", "holds 79"});
  const auto version2 = hand_npy(dir, "v2.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", 6, 2);
  EXPECT_EQ(*inspect_data_file(version2).type, ElementType::u8);
  EXPECT_EQ(inspect_data_file(version2).count(ElementType::u8), 6u);
  const auto native = hand_npy(dir, "n.npy", "{'descr': '=i4', 'fortran_order': False, 'shape': (), }", 4);
  EXPECT_EQ(*inspect_data_file(native).type, ElementType::i32);
  EXPECT_EQ(inspect_data_file(native).count(ElementType::i32), 1u);  // a scalar
}

TEST(DataFile, HostBuffersReadTheirFile) {
  testing::TempDir dir;
  const std::vector<std::byte> data = pattern(64);
  write_npy(dir.path() / "w.npy", ElementType::f32, data);
  BufferPlan p;
  p.name = "w";
  p.type = ElementType::f32;
  p.count = 16;
  p.init.kind = BufferInit::file;
  p.init.file = (dir.path() / "w.npy").string();
  EXPECT_EQ(make_host_buffer(p, 1).bytes, data);
  p.count = 17;
  expect_error([&] { (void)make_host_buffer(p, 1); }, {"w.npy", "buffer 'w' has 17 elements"});
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// The start of an .npy file (version 1 unless told) around a hand-written header dict.
std::string npy_bytes(const std::string& dict, int version = 1) {
  std::string header = dict + "\n";
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  if (version != 1) out += std::string(2, '\0');
  return out + header;
}

std::string parse_error(std::string_view bytes) {
  try {
    (void)parse_npy_header(bytes);
  } catch (const Error& e) { return e.what(); }
  return "(no error)";
}

TEST(NpyHeader, ParsesWhatNumPyWrites) {
  const NpyHeader h = parse_npy_header(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }"));
  EXPECT_EQ(h.type, ElementType::f64);
  EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(h.count, 12u);
  EXPECT_EQ(h.data_bytes, 96u);
  EXPECT_EQ(h.data_offset, npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }").size());
  // Keys in any order, double quotes, no trailing comma, a scalar, a Python 2 long.
  const NpyHeader s = parse_npy_header(npy_bytes("{\"shape\": (), \"descr\": \"|u1\", \"fortran_order\": True}", 3));
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(parse_npy_header(npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (5L,), }")).count, 5u);
  // A zero dimension: no elements, whatever the others say.
  EXPECT_EQ(
      parse_npy_header(npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 18446744073709551615), }"))
          .data_bytes,
      0u);
}

struct BadHeader {
  std::string name;
  std::string bytes;
  std::string reason;  ///< in the message
};

std::ostream& operator<<(std::ostream& out, const BadHeader& c) { return out << c.name; }

class NpyHeaderRefused : public ::testing::TestWithParam<BadHeader> {};

TEST_P(NpyHeaderRefused, WithOneShortLine) {
  const std::string message = parse_error(GetParam().bytes);
  EXPECT_NE(message.find(GetParam().reason), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u) << message;
}

std::string big_header(std::uint32_t announced) {
  std::string out = "\x93NUMPY\x02";
  out += '\0';
  for (int i = 0; i < 4; ++i) out += static_cast<char>((announced >> (8 * i)) & 0xFF);
  return out + "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n";
}

const std::string kOk = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";

INSTANTIATE_TEST_SUITE_P(
    DataFile, NpyHeaderRefused,
    ::testing::Values(
        BadHeader{"empty", "", "not an .npy file"},
        BadHeader{"bad_magic", "\x93NUMPZ\x01" + std::string(50, ' '), "no \\x93NUMPY magic"},
        BadHeader{"version_9", "\x93NUMPY\x09" + std::string(50, ' '), "version 9 is not supported"},
        BadHeader{"version_0", std::string("\x93NUMPY\x00\x00\x10\x00", 10), "version 0 is not supported"},
        BadHeader{"short_v2_prefix", std::string("\x93NUMPY\x02\x00\x10\x00", 10), "runs past the end"},
        BadHeader{"header_past_end", std::string("\x93NUMPY\x01\x00\xff\x00{}", 12), "runs past the end"},
        BadHeader{"header_4_gib", big_header(0xFFFFFFFFu), "announces 4294967295 bytes, more than the 65536"},
        BadHeader{"header_65537", big_header(65537), "more than the 65536"},
        BadHeader{"not_a_dict", npy_bytes("['descr', '<f4']"), "no '{'"},
        BadHeader{"unclosed", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)"), "no ',' or '}'"},
        BadHeader{"unknown_key", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"),
                  "an unknown key 'x'"},
        BadHeader{"key_twice", npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"),
                  "'descr' twice"},
        BadHeader{"no_shape", npy_bytes("{'descr': '<f4', 'fortran_order': False}"), "no 'shape'"},
        BadHeader{"text_after", npy_bytes(kOk + " junk"), "text after the dict"},
        BadHeader{"fortran_maybe", npy_bytes("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}"),
                  "neither True nor False"},
        BadHeader{"shape_list", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}"), "not a tuple"},
        BadHeader{"shape_negative", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}"),
                  "not a tuple of sizes"},
        BadHeader{"shape_garbage", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2x,)}"),
                  "not a tuple of sizes"},
        BadHeader{"shape_float", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}"),
                  "not a tuple of sizes"},
        BadHeader{"size_past_2_64",
                  npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,)}"), "past 2^64"},
        BadHeader{"count_overflows",
                  npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
                  "more than 2^64 elements"},
        BadHeader{"bytes_overflow",
                  npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}"),
                  "more than 2^64 bytes"},
        BadHeader{"fortran_matrix", npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}"),
                  "Fortran order"},
        BadHeader{"big_endian", npy_bytes("{'descr': '>f8', 'fortran_order': False, 'shape': (2,)}"), "big-endian"},
        BadHeader{"complex", npy_bytes("{'descr': '<c16', 'fortran_order': False, 'shape': (2,)}"),
                  "no tiletune element type"},
        BadHeader{"structured", npy_bytes("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,)}"),
                  "not a simple type"},
        BadHeader{"escape_in_string", npy_bytes("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}"),
                  "an escape in a string"},
        BadHeader{"esc_byte_quoted", npy_bytes("{'descr': '\x1b[31m<f4', 'fortran_order': False, 'shape': (2,)}"),
                  "\\x1b[31m"},
        BadHeader{"latin1_key", npy_bytes("{'d\xe9scr': '<f4', 'fortran_order': False, 'shape': (2,)}"), "d\\xe9scr"},
        BadHeader{"long_garbage", npy_bytes("{" + std::string(60000, '\x07') + "}"), "... (60003 bytes)"}),
    [](const auto& info) { return info.param.name; });

TEST(NpyHeader, AHugeAnnouncedArrayInASmallFileIsRefusedBeforeAllocating) {
  testing::TempDir dir;
  // 2^40 floats (4 TiB) announced, 8 bytes present: refused by the size check, nothing allocated.
  const auto path =
      hand_npy(dir, "huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 8);
  expect_error([&] { (void)read_data_file(path, ElementType::f32, std::nullopt, "buffer 'x'"); },
               {"huge.npy: the .npy header announces 4398046511104 bytes of data, the file holds 8"});
  // A raw file and a count whose byte size wraps: refused, never read as a small buffer.
  const auto raw = dir.write("x.bin", std::string(16, '\0'));
  expect_error([&] { (void)read_data_file(raw, ElementType::f32, std::uint64_t{1} << 62, "buffer 'x'"); },
               {"x.bin", "more than 2^64 bytes"});
}

TEST(NpyHeader, SpecialFilesAreRefusedAtOnce) {
  testing::TempDir dir;
  const auto fifo = dir.path() / "f.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error([&] { (void)inspect_data_file(fifo); }, {"f.npy: not a regular file (a FIFO)"});
  expect_error([&] { (void)read_data_file("/dev/zero", ElementType::u8, 4, "buffer 'z'"); },
               {"/dev/zero: not a regular file (a character device)"});
  // A control byte in the file's name is shown escaped.
  expect_error([&] { (void)inspect_data_file(dir.path() / "a\x1b[2Jb.npy"); }, {"a\\x1b[2Jb.npy: no such file"});
}

// `content` gzip'd into dir/name (as gzip(1) or Python's gzip module writes it).
std::filesystem::path gzip_file(const testing::TempDir& dir, const std::string& name, const std::string& content) {
  const auto path = dir.path() / name;
  gzFile out = gzopen(path.c_str(), "wb9");
  EXPECT_NE(out, nullptr);
  EXPECT_EQ(gzwrite(out, content.data(), static_cast<unsigned>(content.size())), static_cast<int>(content.size()));
  EXPECT_EQ(gzclose(out), Z_OK);
  return path;
}

TEST(NpyGz, RoundTripsAndIsGzipOnDisk) {
  testing::TempDir dir;
  const std::vector<std::byte> data = pattern(48);
  const auto path = dir.path() / "x.npy.gz";
  write_npy(path, ElementType::f32, data, {3, 4});
  const std::string disk = testing::read_file(path);
  ASSERT_GE(disk.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(disk[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(disk[1]), 0x8b);
  const DataFileInfo info = inspect_data_file(path);
  EXPECT_TRUE(info.npy);
  EXPECT_TRUE(info.gzip);
  EXPECT_EQ(info.type, ElementType::f32);
  EXPECT_EQ(info.shape, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(info.data_bytes, 48u);
  EXPECT_EQ(read_data_file(path, ElementType::f32, 12, "buffer 'x'"), data);
  EXPECT_EQ(read_data_file(path, ElementType::f32, std::nullopt, "buffer 'x'"), data);
  expect_error([&] { (void)read_data_file(path, ElementType::f32, 13, "buffer 'x'"); },
               {"x.npy.gz", "buffer 'x' has 13 elements, the file holds 12"});
  // Another .gz name is a raw file, as before: its bytes are the elements.
  const auto raw = dir.write("r.gz", std::string(8, '\x02'));
  EXPECT_EQ(read_data_file(raw, ElementType::u8, 8, "buffer 'r'").size(), 8u);
  // A header NumPy wrote by hand, gzip'd by another writer (level 9), reads the same.
  const auto hand = hand_npy(dir, "h.npy", "{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }", 10);
  const auto hand_gz = gzip_file(dir, "h.npy.gz", testing::read_file(hand));
  EXPECT_EQ(read_data_file(hand_gz, ElementType::i16, 5, "buffer 'h'"), read_data_file(hand, ElementType::i16, 5, "h"));
}

TEST(NpyGz, ABombStopsAtTheAnnouncedSize) {
  testing::TempDir dir;
  // 4 floats announced, 64 MiB after them: a few tens of KiB on disk.
  const std::string npy = testing::read_file(
      hand_npy(dir, "b.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::size_t{64} << 20));
  const auto bomb = gzip_file(dir, "bomb.npy.gz", npy);
  EXPECT_LT(std::filesystem::file_size(bomb), std::uintmax_t{1} << 20);
  EXPECT_EQ(inspect_data_file(bomb).count(ElementType::f32), 4u) << "the header alone is inflated";
  for (const std::optional<std::uint64_t> count : {std::optional<std::uint64_t>{4}, std::optional<std::uint64_t>{}})
    expect_error([&] { (void)read_data_file(bomb, ElementType::f32, count, "buffer 'x'"); },
                 {"bomb.npy.gz: the gzip data inflate past the 16 bytes the .npy header announces (a gzip bomb?)"});
  // A header that announces 2^40 floats over 8 bytes of data: refused against the buffer's count
  // before anything is inflated, and, with no count, when the data end (no 4 TiB allocation).
  const auto liar =
      gzip_file(dir, "liar.npy.gz",
                testing::read_file(hand_npy(
                    dir, "l.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 8)));
  expect_error([&] { (void)read_data_file(liar, ElementType::f32, 4, "buffer 'x'"); },
               {"liar.npy.gz", "buffer 'x' has 4 elements, the file holds 1099511627776"});
  expect_error([&] { (void)read_data_file(liar, ElementType::f32, std::nullopt, "buffer 'x'"); },
               {"liar.npy.gz: the .npy header announces 4398046511104 bytes of data, the gzip data hold fewer"});
}

// Bytes that deflate does not shrink much (an LCG), so that the middle of the file is data.
std::vector<std::byte> noise(std::size_t bytes) {
  std::vector<std::byte> v(bytes);
  std::uint32_t x = 12345;
  for (std::byte& b : v) b = static_cast<std::byte>((x = x * 1664525u + 1013904223u) >> 24);
  return v;
}

TEST(NpyGz, CorruptAndTruncatedFilesAreOneLocatedError) {
  testing::TempDir dir;
  const auto good = dir.path() / "g.npy.gz";
  write_npy(good, ElementType::f64, noise(8 * 4000));
  const std::string bytes = testing::read_file(good);
  ASSERT_GT(bytes.size(), 200u);

  const auto truncated = dir.write("t.npy.gz", bytes.substr(0, bytes.size() / 2));
  expect_error([&] { (void)read_data_file(truncated, ElementType::f64, 4000, "buffer 'x'"); },
               {"t.npy.gz: a truncated .gz file: it ends inside the compressed data"});
  std::string flipped = bytes;
  for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 40; ++i) flipped[i] = static_cast<char>(~flipped[i]);
  const auto corrupt = dir.write("c.npy.gz", flipped);
  try {  // what zlib finds first depends on the bytes: the message is one of the gzip ones
    (void)read_data_file(corrupt, ElementType::f64, 4000, "buffer 'x'");
    ADD_FAILURE() << "a corrupt .gz was read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(corrupt.string() + ": ", 0), 0u) << what;
    const auto has = [&what](const char* text) { return what.find(text) != std::string::npos; };
    EXPECT_TRUE(has("not valid gzip data (") || has("gzip data hold fewer") || has("inflate past")) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  std::string bad_crc = bytes;
  bad_crc[bad_crc.size() - 6] = static_cast<char>(~bad_crc[bad_crc.size() - 6]);
  const auto crc = dir.write("crc.npy.gz", bad_crc);
  expect_error([&] { (void)read_data_file(crc, ElementType::f64, 4000, "buffer 'x'"); },
               {"crc.npy.gz: not valid gzip data (incorrect data check)"});
  const auto trailing = dir.write("tr.npy.gz", bytes + "xyz");
  expect_error([&] { (void)read_data_file(trailing, ElementType::f64, 4000, "buffer 'x'"); },
               {"tr.npy.gz: bytes after the end of the gzip data"});
  const auto plain = dir.write(
      "p.npy.gz",
      testing::read_file(hand_npy(dir, "p.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8)));
  expect_error([&] { (void)inspect_data_file(plain); }, {"p.npy.gz: not valid gzip data (incorrect header check)"});
  const auto not_npy = gzip_file(dir, "n.npy.gz", "just some text, not an array");
  expect_error([&] { (void)inspect_data_file(not_npy); }, {"n.npy.gz: not an .npy file"});
  const auto short_header = gzip_file(dir, "s.npy.gz", bytes.substr(0, 4));
  expect_error([&] { (void)inspect_data_file(short_header); }, {"s.npy.gz: the gzip data end inside the .npy header"});
  EXPECT_EQ(read_data_file(good, ElementType::f64, 4000, "buffer 'x'"), noise(8 * 4000)) << "the good one reads";
}

}  // namespace
}  // namespace tiletune
