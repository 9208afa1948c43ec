// .npy and raw data files: every element type round-trips, the header's dtype, shape and order
// are read and checked, and each kind of bad file is refused with its path and what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "test_support.hpp"
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
    const auto hand = hand_npy(dir, "h.npy", std::string("{'descr': '") + dtype + "', 'fortran_order': False, 'shape': (3,), }",
                               3 * element_size(type));
    EXPECT_EQ(inspect_data_file(hand).type, type) << dtype;
  }
}

TEST(DataFile, OneByteTypesTakeAnyByteOrderAndBoolReadsAsUint8) {
  testing::TempDir dir;
  for (const auto& [dtype, type] : std::initializer_list<std::pair<const char*, ElementType>>{
           {"|b1", ElementType::u8}, {"<b1", ElementType::u8}, {">i1", ElementType::i8},
           {"<i1", ElementType::i8}, {">u1", ElementType::u8}, {"=u2", ElementType::u16}}) {
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
  const auto fortran =
      hand_npy(dir, "f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }", 48);
  expect_error([&] { (void)inspect_data_file(fortran); }, {"f.npy", "Fortran order", "ascontiguousarray"});
  // Fortran order of a vector is the same as C order.
  const auto fortran_vector =
      hand_npy(dir, "fv.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (12,), }", 48);
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
