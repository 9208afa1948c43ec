// libFuzzer harness of the T1 importer (tiletune/interchange.hpp): any bytes as a T1 file through
// import_t1_text, which parses the JSON, evaluates its Python values, conditions and sizes with
// the bounded interpreter, and loads the space it maps to. The text is anchored where the test T1
// files live (tests/interchange/t1), so the seeds' KernelFile resolves and inputs get past the
// kernel to the params, conditions and arguments; nothing is written. tiletune::Error
// (InterchangeError, a space that does not load) is the importer refusing the file; anything else
// that escapes (a JSON library exception, std::bad_alloc, ...), a crash or a sanitizer report is
// a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "tiletune/error.hpp"
#include "tiletune/interchange.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = std::filesystem::path(TILETUNE_SOURCE_DIR) / "tests" / "interchange" / "t1";
  const std::string json(reinterpret_cast<const char*>(data), size);
  try {
    (void)tiletune::import_t1_text(json, dir / "fuzz.json", dir / "fuzz.yaml");
  } catch (const tiletune::Error&) {}
  return 0;
}
