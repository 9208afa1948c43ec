// .npy and raw data files: the header of an .npy file parsed by hand (a Python dict literal
// with 'descr', 'fortran_order' and 'shape'), checked against what a buffer needs, and the
// elements read. Every error names the file and says what to do about it.
#include "tiletune/data_file.hpp"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string>

#include "tiletune/error.hpp"

namespace tiletune {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

struct DtypeName {
  ElementType type;
  const char* little;  // as NumPy writes it on a little-endian machine
};
constexpr DtypeName kDtypes[] = {{ElementType::f32, "<f4"}, {ElementType::f64, "<f8"}, {ElementType::f16, "<f2"},
                                 {ElementType::i8, "|i1"},  {ElementType::i16, "<i2"}, {ElementType::i32, "<i4"},
                                 {ElementType::i64, "<i8"}, {ElementType::u8, "|u1"},  {ElementType::u16, "<u2"},
                                 {ElementType::u32, "<u4"}, {ElementType::u64, "<u8"}};
static_assert(std::size(kDtypes) == kElementTypeCount, "a dtype for every element type");
// Read, never written: NumPy's bool is one byte, 0 or 1, and reads as uint8.
constexpr DtypeName kReadAlso[] = {{ElementType::u8, "|b1"}};

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw Error(fmt::format("{}: {}", path.string(), what));
}

bool is_npy_path(const std::filesystem::path& path) { return path.extension() == ".npy"; }

// The text of `key`'s value in the header dict: "'<f4'", "False", "(3, 4)".
std::string dict_value(const std::filesystem::path& path, const std::string& header, const std::string& key) {
  const std::string quoted = "'" + key + "'";
  auto at = header.find(quoted);
  if (at == std::string::npos) fail(path, fmt::format("the .npy header has no {} (header: {})", quoted, header));
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) fail(path, "the .npy header is malformed: " + header);
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  std::size_t end = at;
  if (at < header.size() && header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos) fail(path, "the .npy header's shape is not closed: " + header);
    ++end;
  } else if (at < header.size() && header[at] == '\'') {
    end = header.find('\'', at + 1);
    if (end == std::string::npos) fail(path, "the .npy header is malformed: " + header);
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  return header.substr(at, end - at);
}

std::optional<ElementType> parse_dtype(const std::filesystem::path& path, std::string descr) {
  if (descr.size() < 2 || descr.front() != '\'' || descr.back() != '\'')
    fail(path, fmt::format("the .npy dtype {} is not a simple type (a structured array?)", descr));
  descr = descr.substr(1, descr.size() - 2);
  const bool one_byte = descr.size() == 3 && descr[2] == '1';  // i1 u1 b1: any byte order
  if (descr.size() >= 2 && descr[0] == '>' && !one_byte)
    fail(path, fmt::format("the data are big-endian ('{}'): save them little-endian, e.g. "
                           "numpy.save(path, array.astype('<{}'))", descr, descr.substr(1)));
  // '=' is native (little-endian on every machine CUDA runs on); one-byte types take any order.
  if (!descr.empty() && (descr[0] == '=' || descr[0] == '|' || descr[0] == '>')) descr[0] = '<';
  for (const auto& table : {std::span<const DtypeName>(kDtypes), std::span<const DtypeName>(kReadAlso)})
    for (const DtypeName& d : table) {
      std::string little = d.little;
      little[0] = '<';
      if (descr == little) return d.type;
    }
  return std::nullopt;
}

std::vector<std::uint64_t> parse_shape(const std::filesystem::path& path, const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    fail(path, fmt::format("the .npy shape {} is not a tuple", text));
  std::vector<std::uint64_t> shape;
  std::size_t at = 1;
  while (at < text.size() - 1) {
    while (at < text.size() - 1 && (text[at] == ' ' || text[at] == ',')) ++at;
    if (at >= text.size() - 1) break;
    std::uint64_t v = 0;
    std::size_t digits = 0;
    while (at < text.size() - 1 && text[at] >= '0' && text[at] <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(text[at] - '0');
      ++at;
      ++digits;
    }
    if (digits == 0 || digits > 18) fail(path, fmt::format("the .npy shape {} is not a tuple of sizes", text));
    if (at < text.size() - 1 && text[at] == 'L') ++at;  // Python 2 long
    shape.push_back(v);
  }
  return shape;
}

std::uint64_t checked_file_size(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) fail(path, "no such file");
  if (std::filesystem::is_directory(status)) fail(path, "is a directory, not a data file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read its size: " + ec.message());
  return size;
}

}  // namespace

std::uint64_t DataFileInfo::count(ElementType as) const {
  if (npy) {
    std::uint64_t n = 1;
    for (const std::uint64_t d : shape) n *= d;
    return n;
  }
  return data_bytes / element_size(as);
}

const char* npy_dtype(ElementType type) noexcept {
  for (const DtypeName& d : kDtypes)
    if (d.type == type) return d.little;
  return "?";
}

DataFileInfo inspect_data_file(const std::filesystem::path& path) {
  DataFileInfo info;
  info.path = path;
  const std::uint64_t size = checked_file_size(path);
  if (!is_npy_path(path)) {
    info.data_bytes = size;
    return info;
  }
  info.npy = true;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open the file");
  char head[10] = {};
  in.read(head, sizeof head);
  if (in.gcount() < static_cast<std::streamsize>(sizeof head) || std::memcmp(head, kMagic, kMagicBytes) != 0)
    fail(path, "not an .npy file (no \\x93NUMPY magic); a file that holds raw bytes must not be named .npy");
  const int major = static_cast<unsigned char>(head[6]);
  std::uint64_t header_bytes = 0;
  std::uint64_t prefix = 10;
  if (major == 1) {
    header_bytes = static_cast<unsigned char>(head[8]) | (static_cast<std::uint64_t>(static_cast<unsigned char>(head[9])) << 8);
  } else if (major == 2 || major == 3) {
    char more[2] = {};
    in.read(more, 2);
    header_bytes = static_cast<unsigned char>(head[8]) | (static_cast<std::uint64_t>(static_cast<unsigned char>(head[9])) << 8) |
                   (static_cast<std::uint64_t>(static_cast<unsigned char>(more[0])) << 16) |
                   (static_cast<std::uint64_t>(static_cast<unsigned char>(more[1])) << 24);
    prefix = 12;
  } else {
    fail(path, fmt::format(".npy format version {} is not supported (1, 2 or 3)", major));
  }
  if (prefix + header_bytes > size) fail(path, "the .npy header runs past the end of the file");
  std::string header(header_bytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_bytes));
  if (!in) fail(path, "cannot read the .npy header");
  const std::string fortran = dict_value(path, header, "fortran_order");
  info.shape = parse_shape(path, dict_value(path, header, "shape"));
  std::size_t non_trivial = 0;
  for (const std::uint64_t d : info.shape) non_trivial += d > 1 ? 1 : 0;
  if (fortran.rfind("True", 0) == 0 && non_trivial > 1)
    fail(path, "the array is in Fortran order: save it in C order, e.g. numpy.save(path, numpy.ascontiguousarray(a))");
  const std::string descr = dict_value(path, header, "descr");
  info.type = parse_dtype(path, descr);
  if (!info.type)
    fail(path, fmt::format("dtype {} has no tiletune element type (float32 float64 float16 int8 int16 int32 int64 "
                           "uint8 uint16 uint32 uint64 bool)",
                           descr));
  info.data_offset = prefix + header_bytes;
  info.data_bytes = size - info.data_offset;
  const std::uint64_t need = info.count(*info.type) * element_size(*info.type);
  if (info.data_bytes < need)
    fail(path, fmt::format("the .npy header announces {} bytes of data, the file holds {}", need, info.data_bytes));
  return info;
}

void check_data_file(const DataFileInfo& info, ElementType type, std::uint64_t count, std::string_view what) {
  const std::size_t size = element_size(type);
  if (info.npy) {
    if (*info.type != type)
      throw Error(fmt::format("{}: {} is {}, the file holds {} ({}): convert one to the other", info.path.string(), what,
                              element_type_name(type), element_type_name(*info.type), npy_dtype(*info.type)));
    if (info.count(type) != count)
      throw Error(fmt::format("{}: {} has {} elements, the file holds {}", info.path.string(), what, count,
                              info.count(type)));
    return;
  }
  if (info.data_bytes != count * size)
    throw Error(fmt::format("{}: {} is {} x {} = {} bytes, the raw file holds {} bytes", info.path.string(), what, count,
                            element_type_name(type), count * size, info.data_bytes));
}

std::vector<std::byte> read_data_file(const std::filesystem::path& path, ElementType type,
                                      std::optional<std::uint64_t> count, std::string_view what) {
  const DataFileInfo info = inspect_data_file(path);
  const std::size_t size = element_size(type);
  if (!count) {
    if (!info.npy && info.data_bytes % size != 0)
      throw Error(fmt::format("{}: {} is {}, but the raw file's {} bytes are not a whole number of {}-byte elements",
                              path.string(), what, element_type_name(type), info.data_bytes, size));
    count = info.count(type);
  }
  check_data_file(info, type, *count, what);
  std::vector<std::byte> bytes(*count * size);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(info.data_offset));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) fail(path, fmt::format("cannot read the {} bytes of {}", bytes.size(), what));
  return bytes;
}

void write_npy(const std::filesystem::path& path, ElementType type, std::span<const std::byte> data,
               std::vector<std::uint64_t> shape) {
  const std::size_t size = element_size(type);
  if (data.size() % size != 0)
    fail(path, fmt::format("{} bytes are not a whole number of {} elements", data.size(), element_type_name(type)));
  if (shape.empty()) shape.push_back(data.size() / size);
  std::uint64_t elements = 1;
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    elements *= shape[i];
    dims += fmt::format("{}{}", i ? ", " : "", shape[i]);
  }
  if (shape.size() == 1) dims += ',';  // "(12,)", a tuple of one
  if (elements * size != data.size())
    fail(path, fmt::format("the shape holds {} elements, the data {}", elements, data.size() / size));
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", npy_dtype(type), dims);
  // Pad with spaces to a multiple of 64 bytes, ending in a newline (NumPy's layout).
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, "cannot create the file");
  const char prefix[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(header.size() & 0xFF),
                           static_cast<char>(header.size() >> 8)};
  out.write(prefix, sizeof prefix);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) fail(path, "cannot write the file");
}

}  // namespace tiletune
