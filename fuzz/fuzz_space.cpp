// libFuzzer harness of the space loader: any text, parsed and validated as a search space. A
// SpaceError (or any tiletune::Error) is the loader doing its job; anything else that escapes, a
// crash, a sanitizer report, a hang past -timeout or memory past -rss_limit_mb is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tiletune/error.hpp"
#include "tiletune/space.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)tiletune::parse_space(text, TILETUNE_SOURCE_DIR "/configs/fuzz.yaml");
  } catch (const tiletune::Error&) {}
  return 0;
}
