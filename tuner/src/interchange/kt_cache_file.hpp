// Private to the interchange stage: the bytes of a Kernel Tuner cache file as JSON text that
// nlohmann's parser takes. Read only from a regular file, bounded (KtCacheLimits), gunzipped when
// it starts with gzip's magic (zlib, stopping at the cap: a gzip bomb allocates no more than
// max_text_bytes), closed as Kernel Tuner closes a cache that an interrupted run left open, and
// with Python's bare NaN / Infinity / -Infinity (json.dumps writes them) turned into marked strings.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "tiletune/interchange.hpp"

namespace tiletune::interchange_detail {

/// A bare NaN becomes the JSON string "\u0001NaN" (Infinity, -Infinity likewise): a string no
/// Kernel Tuner value holds (its values with control characters are refused), read back as a
/// non-finite number by the importer.
inline constexpr std::string_view kNonFiniteMark = "\x01";

struct KtCacheText {
  std::string json;
  bool gzip = false;
  bool was_open = false;       ///< an interrupted run's file, closed here
  std::size_t non_finite = 0;  ///< bare NaN / Infinity / -Infinity tokens made strings
};

/// Throws InterchangeError "FILE: reason" (not a regular file, too large, a truncated or corrupt
/// gzip stream, more text than max_text_bytes).
[[nodiscard]] KtCacheText read_kt_cache_text(const std::filesystem::path& path, const KtCacheLimits& limits);

/// Closes text as Kernel Tuner's read_cache closes a cache that a run left open: the trailing ','
/// of its last entry is dropped and "}\n}" appended. Open means ending (blanks aside) in ',' (the
/// last entry's) or '{' (no entry yet): what Kernel Tuner leaves; its own test, "the last three
/// characters are not }\n} or }}}", agrees on every file it writes but would also "close" a
/// closed file written in another layout ("cache": {}}). Returns whether it was open.
bool close_open_cache(std::string& text);

/// Turns the bare NaN, Infinity and -Infinity outside strings into marked strings; returns how
/// many. Throws InterchangeError (naming path) when the result would exceed max_bytes.
std::size_t mark_non_finite(std::string& text, std::size_t max_bytes, const std::filesystem::path& path);

}  // namespace tiletune::interchange_detail
