// Data files for inputs (`init: {file: ...}`) and expected outputs (`verify: {files: ...}`):
// NumPy .npy files (named *.npy: the dtype and shape are read from the header and checked;
// C order, little-endian, versions 1 to 3), the same gzip'd (named *.npy.gz: inflated as read,
// never past what the header announces and the buffer takes) and raw binary files (any other
// name: the bytes of the elements, little-endian, their number checked). Host code only, no CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tiletune/space.hpp"

namespace tiletune {

/// What a data file holds, from its header.
struct DataFileInfo {
  std::filesystem::path path;
  bool npy = false;                  ///< named *.npy or *.npy.gz
  bool gzip = false;                 ///< named *.npy.gz: the offset and bytes are of the inflated data
  std::optional<ElementType> type;   ///< npy: the dtype
  std::vector<std::uint64_t> shape;  ///< npy: the shape (empty for a scalar)
  std::uint64_t data_offset = 0;     ///< where the elements start
  std::uint64_t data_bytes = 0;      ///< bytes after the header (gzip: what the header announces)
  /// Elements of `type` the file holds: npy, the product of the shape; raw, data_bytes / size.
  [[nodiscard]] std::uint64_t count(ElementType as) const;
};

/// The longest .npy header tiletune reads (NumPy's own limit on reading is smaller).
inline constexpr std::size_t kMaxNpyHeaderBytes = std::size_t{64} << 10;

/// What an .npy file's header says.
struct NpyHeader {
  ElementType type = ElementType::f32;  ///< the dtype
  std::vector<std::uint64_t> shape;     ///< empty for a scalar
  std::uint64_t data_offset = 0;        ///< magic, version, length and header: where the data start
  std::uint64_t count = 0;              ///< elements: the product of the shape
  std::uint64_t data_bytes = 0;         ///< count x element size (both checked, never wrapped)
};

/// Parses the start of an .npy file: `bytes` holds at least its first data_offset bytes (what
/// follows is not looked at). Pure, for fuzzing. Throws Error with the reason alone, one line,
/// quoting the header only as a short escaped excerpt: no magic, a version other than 1 to 3, a
/// header longer than kMaxNpyHeaderBytes or than `bytes`, a dict that is not exactly 'descr',
/// 'fortran_order' and 'shape', a dtype tiletune has no type for, big-endian or Fortran-order
/// data, a shape that is not a tuple of sizes, or an element count or byte size past 2^64.
[[nodiscard]] NpyHeader parse_npy_header(std::string_view bytes);

/// Reads the header of an .npy file or the size of a raw one. Throws Error "PATH: what is
/// wrong" for a missing or unreadable file or one that is not a regular file (a FIFO or device
/// is refused without blocking), an .npy header parse_npy_header refuses, or fewer bytes than
/// the header announces (checked before anything is allocated). An .npy.gz file: only its header
/// is inflated; "not valid gzip data (...)", "the gzip data end inside the .npy header".
[[nodiscard]] DataFileInfo inspect_data_file(const std::filesystem::path& path);

/// Throws Error naming `what` (a buffer, "expected output 'y'"), the file and the mismatch
/// unless the file holds exactly `count` elements of `type` (.npy: its dtype is `type`; raw:
/// count x element size bytes).
void check_data_file(const DataFileInfo& info, ElementType type, std::uint64_t count, std::string_view what);

/// The elements of the file, checked by check_data_file (count: every element the file holds
/// when nullopt; a raw file must then be a whole number of elements). An .npy.gz file is inflated
/// no further than count elements after its header: "PATH: the gzip data inflate past the N bytes
/// the .npy header announces (a gzip bomb?)", "PATH: a truncated .gz file: it ends inside the
/// compressed data", "PATH: not valid gzip data (invalid distance too far back)".
[[nodiscard]] std::vector<std::byte> read_data_file(const std::filesystem::path& path, ElementType type,
                                                    std::optional<std::uint64_t> count, std::string_view what);

/// The .npy dtype of an element type: "<f4", "<f8", "<f2", "|i1", "<i2", "<i4", "<i8", "|u1",
/// "<u2", "<u4", "<u8". Reading also takes "|b1" (NumPy's bool) as uint8.
[[nodiscard]] const char* npy_dtype(ElementType type) noexcept;

/// Writes an .npy file (version 1.0, C order, little-endian) of `data`, elements of `type`,
/// with `shape` (empty: one dimension of all the elements); gzip'd when path ends in .npy.gz. Throws Error when the
/// shape does not hold data.size() / element size elements or the file cannot be written.
void write_npy(const std::filesystem::path& path, ElementType type, std::span<const std::byte> data,
               std::vector<std::uint64_t> shape = {});

}  // namespace tiletune
