// libFuzzer harness of the .npy reader (tiletune/data_file.hpp): any bytes as the start of an
// .npy file through parse_npy_header, and as a whole file through inspect_data_file,
// check_data_file and read_data_file, the path an input or expected-output file takes. A header
// may announce any shape: nothing may be allocated past what the file holds, no size may wrap,
// and what is read must be exactly the bytes the header says. The same bytes as an .npy.gz file
// take the gzip path: nothing inflated past deflate's largest ratio (1032:1) of what the file
// holds, whatever the header announces. tiletune::Error is the reader
// refusing the file; anything else that escapes, a crash, a sanitizer report or an allocation
// past the limit is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "scratch_file.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tiletune::fuzz::ScratchFiles dir;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const tiletune::NpyHeader h = tiletune::parse_npy_header(bytes);
    if (h.data_offset > size) std::abort();  // a header is never longer than what it was given
  } catch (const tiletune::Error&) {}
  for (const char* name : {"data.npy", "data.npy.gz"}) {
    const auto path = dir.write(name, data, size);
    const std::uint64_t most = path.extension() == ".gz" ? 1032 * std::uint64_t{size} : size;
    try {
      const tiletune::DataFileInfo info = tiletune::inspect_data_file(path);
      if (!info.type) continue;
      const auto elements = tiletune::read_data_file(path, *info.type, std::nullopt, "input 'x'");
      if (elements.size() > most) std::abort();  // never more bytes than the file holds
    } catch (const tiletune::Error&) {}
  }
  return 0;
}
