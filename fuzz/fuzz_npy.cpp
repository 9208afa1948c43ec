// libFuzzer harness of the .npy reader (tiletune/data_file.hpp): any bytes as the start of an
// .npy file through parse_npy_header, and as a whole file through inspect_data_file,
// check_data_file and read_data_file, the path an input or expected-output file takes. A header
// may announce any shape: nothing may be allocated past what the file holds, no size may wrap,
// and what is read must be exactly the bytes the header says. tiletune::Error is the reader
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
  } catch (const tiletune::Error&) {
  }
  const auto path = dir.write("data.npy", data, size);
  try {
    const tiletune::DataFileInfo info = tiletune::inspect_data_file(path);
    if (!info.type) return 0;
    const auto elements = tiletune::read_data_file(path, *info.type, std::nullopt, "input 'x'");
    if (elements.size() > size) std::abort();  // never more bytes than the file holds
  } catch (const tiletune::Error&) {
  }
  return 0;
}
