// .npy and raw data files: the header of an .npy file parsed by hand and strictly (a Python dict
// literal of exactly 'descr', 'fortran_order' and 'shape', at most 64 KiB, sizes multiplied with
// overflow checks), checked against the file's size and what a buffer needs before anything is
// allocated, and the elements read through one descriptor (InputFile: a FIFO or device is
// refused at once). An .npy.gz file is inflated with zlib as it is read, never further than
// its header announces (a gzip bomb stops there). Every error names the file and says what to do
// about it.
#include "tiletune/data_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <span>
#include <string>

#include "common/input_file.hpp"
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
  throw Error(fmt::format("{}: {}", shown_path(path), what));
}

bool is_npy_gz_path(const std::filesystem::path& path) {
  return path.extension() == ".gz" && path.stem().extension() == ".npy";
}
bool is_npy_path(const std::filesystem::path& path) { return path.extension() == ".npy" || is_npy_gz_path(path); }

// Bytes of a header or a dtype quoted in a message: enough to recognise it, never the whole.
constexpr std::size_t kQuotedChars = 60;

std::optional<ElementType> element_type_of(std::string descr) {
  const bool one_byte = descr.size() == 3 && descr[2] == '1';  // i1 u1 b1: any byte order
  // '=' is native (little-endian on every machine CUDA runs on); one-byte types take any order.
  if (!descr.empty() && (descr[0] == '=' || descr[0] == '|' || (descr[0] == '>' && one_byte))) descr[0] = '<';
  for (const auto& table : {std::span<const DtypeName>(kDtypes), std::span<const DtypeName>(kReadAlso)})
    for (const DtypeName& d : table) {
      std::string little = d.little;
      little[0] = '<';
      if (descr == little) return d.type;
    }
  return std::nullopt;
}

ElementType parse_dtype(const std::string& descr) {
  const std::string shown = escaped_excerpt(descr, 20);
  if (descr.size() >= 2 && descr[0] == '>' && !(descr.size() == 3 && descr[2] == '1'))
    throw Error(
        fmt::format("the data are big-endian ('{}'): save them little-endian, e.g. "
                    "numpy.save(path, array.astype('<{}'))",
                    shown, escaped_excerpt(descr.substr(1), 20)));
  if (const auto type = element_type_of(descr)) return *type;
  throw Error(
      fmt::format("dtype '{}' has no tiletune element type (float32 float64 float16 int8 int16 int32 int64 "
                  "uint8 uint16 uint32 uint64 bool)",
                  shown));
}

// The header's dict, read strictly: a Python literal of exactly 'descr' (a string),
// 'fortran_order' (True or False) and 'shape' (a tuple of sizes), then only whitespace.
class NpyDict {
 public:
  explicit NpyDict(std::string_view text) : text_(text) {}

  void parse(NpyHeader& out, bool& fortran) {
    bool seen[3] = {};
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      const auto k = static_cast<std::size_t>(std::find(std::begin(kKeys), std::end(kKeys), key) - std::begin(kKeys));
      if (k == std::size(kKeys)) malformed("an unknown key '" + escaped_excerpt(key, 20) + "'");
      if (seen[k]) malformed("'" + key + "' twice");
      seen[k] = true;
      expect(':');
      skip_space();
      if (k == 0) out.type = descr();
      if (k == 1) fortran = boolean();
      if (k == 2) out.shape = shape();
      skip_space();
      if (peek() == ',')
        ++at_;
      else if (peek() != '}')
        malformed("no ',' or '}' after '" + key + "'");
    }
    ++at_;
    while (at_ < text_.size() && is_space(text_[at_])) ++at_;
    if (at_ != text_.size()) malformed("text after the dict");
    for (std::size_t k = 0; k < std::size(kKeys); ++k)
      if (!seen[k]) malformed("no '" + std::string(kKeys[k]) + "'");
  }

 private:
  static constexpr std::string_view kKeys[] = {"descr", "fortran_order", "shape"};
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  [[nodiscard]] char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip_space() {
    while (at_ < text_.size() && is_space(text_[at_])) ++at_;
  }
  [[noreturn]] void malformed(const std::string& what) const {
    throw Error(fmt::format("the .npy header is not a dict of 'descr', 'fortran_order' and 'shape' ({} at byte {}): {}",
                            what, at_, escaped_excerpt(text_, kQuotedChars)));
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) malformed(std::string("no '") + c + "'");
    ++at_;
  }
  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') malformed("no quoted string");
    const std::size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos) malformed("a string not closed");
    const std::string_view body = text_.substr(at_ + 1, end - at_ - 1);
    if (body.find('\\') != std::string_view::npos) malformed("an escape in a string");
    at_ = end + 1;
    return std::string(body);
  }
  ElementType descr() {
    if (peek() == '[' || peek() == '{')
      throw Error(fmt::format("the .npy dtype {} is not a simple type (a structured array?)",
                              escaped_excerpt(text_.substr(at_), 30)));
    return parse_dtype(string_literal());
  }
  bool boolean() {
    for (const auto& [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    malformed("'fortran_order' is neither True nor False");
  }
  std::vector<std::uint64_t> shape() {
    if (peek() != '(') malformed("'shape' is not a tuple");
    ++at_;
    std::vector<std::uint64_t> dims;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      dims.push_back(size());
      skip_space();
      if (peek() == ',')
        ++at_;
      else if (peek() != ')')
        malformed("'shape' is not a tuple of sizes");
    }
    ++at_;
    return dims;
  }
  std::uint64_t size() {
    if (peek() < '0' || peek() > '9') malformed("'shape' is not a tuple of sizes");
    std::uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, static_cast<unsigned>(peek() - '0'), &v))
        malformed("a size in 'shape' past 2^64");
      ++at_;
    }
    if (peek() == 'L') ++at_;  // Python 2's long
    return v;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

std::uint64_t little_endian(std::string_view bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

// The inflated bytes of a gzip file (one member, nothing after it), read as they are wanted.
// Throws Error with the reason alone when the data are not gzip, are corrupt or end early.
class GzipStream {
 public:
  explicit GzipStream(InputFile& file) : file_(file) {
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) throw Error("zlib could not start inflating");
  }
  ~GzipStream() { inflateEnd(&zs_); }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  /// Up to n inflated bytes into out; fewer only where the gzip data end.
  std::size_t read(char* out, std::size_t n) {
    std::size_t produced = 0;
    while (produced < n && !ended_) {
      if (zs_.avail_in == 0) refill();
      if (zs_.avail_in == 0) throw Error("a truncated .gz file: it ends inside the compressed data");
      zs_.next_out = reinterpret_cast<Bytef*>(out + produced);
      zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(n - produced, kChunk));
      const uInt wanted = zs_.avail_out;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      produced += wanted - zs_.avail_out;
      if (rc == Z_STREAM_END)
        ended_ = true;
      else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs_.avail_in == 0))
        throw Error(fmt::format("not valid gzip data ({})", zs_.msg ? zs_.msg : "zlib error " + std::to_string(rc)));
    }
    return produced;
  }

  /// Throws unless the gzip data end here: no more inflated bytes (`announced` names what the
  /// header announced, for the message) and nothing after the gzip member.
  void expect_end(std::uint64_t announced) {
    char extra = 0;
    if (read(&extra, 1) != 0)
      throw Error(
          fmt::format("the gzip data inflate past the {} bytes the .npy header announces (a gzip bomb?)", announced));
    if (zs_.avail_in == 0) refill();
    if (zs_.avail_in != 0) throw Error("bytes after the end of the gzip data (one gzip member is read)");
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 16;
  void refill() {
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(file_.read(in_.data(), in_.size()));
  }

  InputFile& file_;
  z_stream zs_{};
  std::array<char, kChunk> in_{};
  bool ended_ = false;
};

// Exactly n inflated bytes appended to text; `what` names them for the message when fewer come.
void read_exactly(GzipStream& gz, std::string& text, std::size_t n, std::string_view what) {
  const std::size_t at = text.size();
  text.resize(at + n);
  const std::size_t got = gz.read(text.data() + at, n);
  if (got < n) throw Error(fmt::format("the gzip data end inside the {}", what));
}

// The header of an .npy.gz file: its prefix, then exactly the header its prefix announces (at
// most kMaxNpyHeaderBytes), inflated and parsed; the data are not read. data_bytes is what the
// header announces: the data are checked against it when they are read.
DataFileInfo inspect_gzip(GzipStream& gz, const std::filesystem::path& path) {
  std::string head;
  read_exactly(gz, head, 10, ".npy header");
  if (head.compare(0, kMagicBytes, std::string_view(kMagic, kMagicBytes)) == 0 && (head[6] == 2 || head[6] == 3))
    read_exactly(gz, head, 2, ".npy header");
  const std::uint64_t header_bytes = little_endian(std::string_view(head).substr(8));
  if (head.compare(0, kMagicBytes, std::string_view(kMagic, kMagicBytes)) == 0 && head[6] >= 1 && head[6] <= 3 &&
      header_bytes <= kMaxNpyHeaderBytes)
    read_exactly(gz, head, static_cast<std::size_t>(header_bytes), ".npy header");
  const NpyHeader h = parse_npy_header(head);  // throws for what was not read above
  DataFileInfo info;
  info.path = path;
  info.npy = info.gzip = true;
  info.type = h.type;
  info.shape = h.shape;
  info.data_offset = h.data_offset;
  info.data_bytes = h.data_bytes;
  return info;
}

// The elements of an .npy.gz file after its header: `bytes` of them, the buffer grown as they are
// inflated (a header that announces more than the stream holds costs at most twice what it holds,
// plus 1 MiB), then the end of the gzip data.
std::vector<std::byte> read_gzip_data(GzipStream& gz, std::uint64_t bytes) {
  constexpr std::uint64_t kFirstStep = std::uint64_t{1} << 20;
  std::vector<std::byte> data;
  while (data.size() < bytes) {
    const std::uint64_t left = bytes - data.size();
    const auto step =
        static_cast<std::size_t>(std::min<std::uint64_t>(left, std::max<std::uint64_t>(data.size(), kFirstStep)));
    const std::size_t at = data.size();
    data.resize(at + step);
    if (gz.read(reinterpret_cast<char*>(data.data() + at), step) < step)
      throw Error(fmt::format("the .npy header announces {} bytes of data, the gzip data hold fewer", bytes));
  }
  gz.expect_end(bytes);
  return data;
}

// The header of the open file at path, checked against the file's size before anything else is
// read or allocated.
DataFileInfo inspect_open(InputFile& file, const std::filesystem::path& path) {
  if (is_npy_gz_path(path)) {
    GzipStream gz(file);
    return inspect_gzip(gz, path);
  }
  DataFileInfo info;
  info.path = path;
  if (!is_npy_path(path)) {
    info.data_bytes = file.size();
    return info;
  }
  info.npy = true;
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), 12 + kMaxNpyHeaderBytes)), '\0');
  file.read_at(0, head.data(), head.size());
  const NpyHeader h = parse_npy_header(head);
  info.type = h.type;
  info.shape = h.shape;
  info.data_offset = h.data_offset;
  info.data_bytes = file.size() - h.data_offset;
  if (info.data_bytes < h.data_bytes)
    throw Error(
        fmt::format("the .npy header announces {} bytes of data, the file holds {}", h.data_bytes, info.data_bytes));
  return info;
}

// "PATH: reason" for every Error of fn (which reads the file at path).
template <class Fn>
auto located(const std::filesystem::path& path, Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) { fail(path, e.what()); }
}

// Writes parts, one after the other, as one gzip member. Level 1: a capture is written while the
// application runs, and its floats gain little from a slower level.
void write_gzip(const std::filesystem::path& path, std::span<const std::span<const char>> parts) {
  gzFile out = gzopen(path.c_str(), "wb1");
  if (out == nullptr) fail(path, "cannot create the file");
  bool written = true;
  for (const auto& part : parts)
    for (std::size_t at = 0; written && at < part.size();) {
      const auto n = static_cast<unsigned>(std::min<std::size_t>(part.size() - at, std::size_t{1} << 30));
      written = gzwrite(out, part.data() + at, n) == static_cast<int>(n);
      at += n;
    }
  if (gzclose(out) != Z_OK || !written) fail(path, "cannot write the file");
}

}  // namespace

NpyHeader parse_npy_header(std::string_view bytes) {
  if (bytes.size() < 10 || bytes.compare(0, kMagicBytes, std::string_view(kMagic, kMagicBytes)) != 0)
    throw Error("not an .npy file (no \\x93NUMPY magic); a file that holds raw bytes must not be named .npy");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) throw Error(fmt::format(".npy format version {} is not supported (1, 2 or 3)", major));
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (bytes.size() < prefix) throw Error("the .npy header runs past the end of the file");
  const std::uint64_t header_bytes = little_endian(bytes.substr(8, prefix - 8));
  if (header_bytes > kMaxNpyHeaderBytes)
    throw Error(fmt::format("the .npy header announces {} bytes, more than the {} tiletune reads", header_bytes,
                            kMaxNpyHeaderBytes));
  if (prefix + header_bytes > bytes.size()) throw Error("the .npy header runs past the end of the file");
  NpyHeader h;
  bool fortran = false;
  NpyDict(bytes.substr(prefix, static_cast<std::size_t>(header_bytes))).parse(h, fortran);
  h.data_offset = prefix + header_bytes;
  std::size_t non_trivial = 0;
  h.count = 1;
  for (const std::uint64_t d : h.shape) {
    non_trivial += d > 1 ? 1 : 0;
    if (__builtin_mul_overflow(h.count, d, &h.count))
      throw Error(fmt::format("the .npy shape announces more than 2^64 elements ({} dimensions)", h.shape.size()));
  }
  if (fortran && non_trivial > 1)
    throw Error("the array is in Fortran order: save it in C order, e.g. numpy.save(path, numpy.ascontiguousarray(a))");
  if (__builtin_mul_overflow(h.count, std::uint64_t{element_size(h.type)}, &h.data_bytes))
    throw Error(fmt::format("the .npy shape announces {} elements, more than 2^64 bytes", h.count));
  return h;
}

std::uint64_t DataFileInfo::count(ElementType as) const {
  if (!npy) return data_bytes / element_size(as);
  std::uint64_t n = 1;
  for (const std::uint64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return UINT64_MAX;  // parse_npy_header refuses such a shape
  return n;
}

const char* npy_dtype(ElementType type) noexcept {
  for (const DtypeName& d : kDtypes)
    if (d.type == type) return d.little;
  return "?";
}

DataFileInfo inspect_data_file(const std::filesystem::path& path) {
  return located(path, [&] {
    InputFile file(path, "a data file");
    return inspect_open(file, path);
  });
}

void check_data_file(const DataFileInfo& info, ElementType type, std::uint64_t count, std::string_view what) {
  const std::size_t size = element_size(type);
  const std::string path = shown_path(info.path);
  if (info.npy) {
    if (*info.type != type)
      throw Error(fmt::format("{}: {} is {}, the file holds {} ({}): convert one to the other", path, what,
                              element_type_name(type), element_type_name(*info.type), npy_dtype(*info.type)));
    if (info.count(type) != count)
      throw Error(fmt::format("{}: {} has {} elements, the file holds {}", path, what, count, info.count(type)));
    return;
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, std::uint64_t{size}, &bytes))
    throw Error(fmt::format("{}: {} is {} x {}, more than 2^64 bytes; the raw file holds {} bytes", path, what, count,
                            element_type_name(type), info.data_bytes));
  if (info.data_bytes != bytes)
    throw Error(fmt::format("{}: {} is {} x {} = {} bytes, the raw file holds {} bytes", path, what, count,
                            element_type_name(type), bytes, info.data_bytes));
}

std::vector<std::byte> read_data_file(const std::filesystem::path& path, ElementType type,
                                      std::optional<std::uint64_t> count, std::string_view what) {
  InputFile file = located(path, [&] { return InputFile(path, "a data file"); });
  std::optional<GzipStream> gz;
  if (is_npy_gz_path(path)) located(path, [&] { gz.emplace(file); });
  const DataFileInfo info = located(path, [&] { return gz ? inspect_gzip(*gz, path) : inspect_open(file, path); });
  const std::size_t size = element_size(type);
  if (!count) {
    if (!info.npy && info.data_bytes % size != 0)
      throw Error(fmt::format("{}: {} is {}, but the raw file's {} bytes are not a whole number of {}-byte elements",
                              shown_path(path), what, element_type_name(type), info.data_bytes, size));
    count = info.count(type);
  }
  // Checked before the allocation: what is allocated is what the file holds, no more.
  check_data_file(info, type, *count, what);
  // Compressed: inflated no further than the count checked above allows (a gzip bomb stops there).
  if (gz) return located(path, [&] { return read_gzip_data(*gz, *count * size); });
  std::vector<std::byte> bytes(*count * size);
  located(path, [&] { file.read_at(info.data_offset, reinterpret_cast<char*>(bytes.data()), bytes.size()); });
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
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", npy_dtype(type), dims);
  // Pad with spaces to a multiple of 64 bytes, ending in a newline (NumPy's layout).
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  const char prefix[10] = {'\x93',
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<char>(header.size() & 0xFF),
                           static_cast<char>(header.size() >> 8)};
  header.insert(0, prefix, sizeof prefix);
  const std::span<const char> parts[] = {header, {reinterpret_cast<const char*>(data.data()), data.size()}};
  if (is_npy_gz_path(path)) return write_gzip(path, parts);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, "cannot create the file");
  for (const auto& part : parts) out.write(part.data(), static_cast<std::streamsize>(part.size()));
  if (!out) fail(path, "cannot write the file");
}

}  // namespace tiletune
