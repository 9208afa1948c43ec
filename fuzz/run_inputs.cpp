// Runs a harness's LLVMFuzzerTestOneInput once on each file given, without libFuzzer, in the
// ordinary (uninstrumented) build, and fails when one input takes longer than the limit or lets
// anything but a tiletune::Error escape: `RUNNER [--limit SECONDS] FILE...` (default 5 s). The
// ctest test_fuzz_large_inputs runs it on 1 MiB inputs of the shapes that once were slow.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  double limit = 5;
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--limit" && i + 1 < argc) {
      limit = std::atof(argv[++i]);
      continue;
    }
    std::ifstream in(arg, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot open the file\n", arg.c_str());
      ++failures;
      continue;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto start = std::chrono::steady_clock::now();
    try {
      (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: escaped: %s\n", arg.c_str(), e.what());
      ++failures;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool slow = seconds > limit;
    std::printf("%s: %zu bytes in %.3f s%s\n", arg.c_str(), bytes.size(), seconds, slow ? " (over the limit)" : "");
    failures += slow ? 1 : 0;
  }
  return failures == 0 ? 0 : 1;
}
