// libFuzzer harness of the Kernel Tuner cache importer (tiletune/interchange.hpp): any bytes as a
// cache file (plain or gzip'd JSON, open or closed) through import_kt_cache, which reads it
// bounded, maps it to a recording and a space and checks that both load and replay. Small limits,
// so a finding is work past them. tiletune::Error is the importer refusing the file; anything
// else that escapes, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>

#include "scratch_file.hpp"
#include "tiletune/error.hpp"
#include "tiletune/interchange.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tiletune::fuzz::ScratchFiles dir;
  const auto path = dir.write("cache.json", data, size);
  tiletune::KtCacheImportOptions options;
  options.limits.max_gzip_bytes = 1 << 20;
  options.limits.max_text_bytes = 8 << 20;
  options.limits.max_entries = 10'000;
  try {
    (void)tiletune::import_kt_cache(path, options);
  } catch (const tiletune::Error&) {}
  return 0;
}
