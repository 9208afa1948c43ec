// Reading a Kernel Tuner cache file's bytes: bounded, gunzipped with zlib, closed when an
// interrupted run left it open, Python's non-finite numbers made strings (kt_cache_file.hpp).
#include "interchange/kt_cache_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "common/input_file.hpp"

namespace tiletune::interchange_detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kChunk = std::size_t{1} << 16;

std::string mib(std::uint64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

/// Appends n bytes unless text would then hold more than max; grows the capacity by doubling but
/// never past max, so that the cap bounds the allocation too.
bool append_bounded(std::string& text, const char* data, std::size_t n, std::uint64_t max) {
  if (text.size() + n > max) return false;
  if (text.size() + n > text.capacity())
    text.reserve(
        static_cast<std::size_t>(std::min<std::uint64_t>(max, std::max(2 * text.capacity(), text.size() + n))));
  text.append(data, n);
  return true;
}

/// The gzip stream (one member or several, as `cat a.gz b.gz` makes) whose first bytes are in
/// first[0, first_n), the rest still in file.
std::string inflate_gzip(InputFile& file, const char* first, std::size_t first_n, const fs::path& path,
                         const KtCacheLimits& limits) {
  auto fail = [&path](const std::string& why) { return InterchangeError(fmt::format("{}: {}", path.string(), why)); };
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw fail("zlib could not start inflating");
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  std::array<char, kChunk> in{};
  std::vector<char> out(4 * kChunk);
  std::copy(first, first + first_n, in.begin());
  zs.next_in = reinterpret_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(first_n);
  std::uint64_t read_bytes = first_n;
  bool input_done = false, member_ended = false;
  std::string text;
  for (;;) {
    if (zs.avail_in == 0 && !input_done) {
      const std::size_t n = file.read(in.data(), in.size());
      read_bytes += n;
      if (read_bytes > limits.max_gzip_bytes)
        throw fail(
            fmt::format("the file grew past the {} a gzip'd Kernel Tuner cache can be", mib(limits.max_gzip_bytes)));
      input_done = n == 0;
      zs.next_in = reinterpret_cast<Bytef*>(in.data());
      zs.avail_in = static_cast<uInt>(n);
    }
    if (zs.avail_in == 0 && input_done) {
      if (member_ended) return text;
      throw fail("a truncated gzip file: it ends inside the compressed data");
    }
    if (member_ended) {  // what follows a gzip member can only be another
      if (static_cast<unsigned char>(*zs.next_in) != 0x1f) throw fail("bytes after the end of the gzip data");
      inflateReset(&zs);
      member_ended = false;
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t produced = out.size() - zs.avail_out;
    if (!append_bounded(text, out.data(), produced, limits.max_text_bytes))
      throw fail(fmt::format("it inflates to more than {}, more than a Kernel Tuner cache can be (a gzip bomb?)",
                             mib(limits.max_text_bytes)));
    if (rc == Z_STREAM_END)
      member_ended = true;
    else if (rc == Z_BUF_ERROR && zs.avail_in == 0)
      continue;  // needs more input
    else if (rc != Z_OK)
      throw fail(fmt::format("not valid gzip data ({})", zs.msg ? zs.msg : "zlib error " + std::to_string(rc)));
  }
}

}  // namespace

bool close_open_cache(std::string& text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (text.empty() || (text.back() != ',' && text.back() != '{')) return false;
  if (text.back() == ',') text.pop_back();
  text += "}\n}";
  return true;
}

std::size_t mark_non_finite(std::string& text, std::size_t max_bytes, const fs::path& path) {
  static constexpr std::string_view tokens[] = {"NaN", "Infinity", "-Infinity"};
  std::string out;
  std::size_t count = 0, copied = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != 'N' && c != 'I' && c != '-') continue;
    const auto token = std::find_if(std::begin(tokens), std::end(tokens),
                                    [&](std::string_view t) { return text.compare(i, t.size(), t) == 0; });
    if (token == std::end(tokens)) continue;
    out.append(text, copied, i - copied);
    out += "\"\\u0001";
    out += *token;
    out += '"';
    if (out.size() > max_bytes)
      throw InterchangeError(
          fmt::format("{}: more than {} of JSON once its NaN and Infinity are read", path.string(), mib(max_bytes)));
    copied = i + token->size();
    i = copied - 1;
    ++count;
  }
  if (count == 0) return 0;
  out.append(text, copied, std::string::npos);
  if (out.size() > max_bytes)
    throw InterchangeError(
        fmt::format("{}: more than {} of JSON once its NaN and Infinity are read", path.string(), mib(max_bytes)));
  text.swap(out);
  return count;
}

KtCacheText read_kt_cache_text(const fs::path& path, const KtCacheLimits& limits) {
  KtCacheText r;
  try {
    InputFile file(path, "a Kernel Tuner cache");
    char first[kChunk];
    const std::size_t n = file.read(first, sizeof first);
    if (n == 0) throw Error("the file is empty");
    r.gzip = n >= 2 && static_cast<unsigned char>(first[0]) == 0x1f && static_cast<unsigned char>(first[1]) == 0x8b;
    if (r.gzip) {
      if (file.size() > limits.max_gzip_bytes)
        throw Error(fmt::format("{} bytes, more than a gzip'd Kernel Tuner cache can be ({})", file.size(),
                                mib(limits.max_gzip_bytes)));
      r.json = inflate_gzip(file, first, n, path, limits);
    } else {
      if (file.size() > limits.max_text_bytes)
        throw Error(fmt::format("{} bytes, more than a Kernel Tuner cache can be ({})", file.size(),
                                mib(limits.max_text_bytes)));
      r.json.reserve(static_cast<std::size_t>(file.size()));
      r.json.assign(first, n);
      char buf[kChunk];
      while (const std::size_t got = file.read(buf, sizeof buf))
        if (!append_bounded(r.json, buf, got, limits.max_text_bytes))
          throw Error(fmt::format("the file grew past the {} a Kernel Tuner cache can be", mib(limits.max_text_bytes)));
    }
  } catch (const InterchangeError&) { throw; } catch (const Error& e) {
    throw InterchangeError(fmt::format("{}: {}", path.string(), e.what()));
  }
  r.was_open = close_open_cache(r.json);
  r.non_finite = mark_non_finite(r.json, static_cast<std::size_t>(limits.max_text_bytes), path);
  return r;
}

}  // namespace tiletune::interchange_detail
