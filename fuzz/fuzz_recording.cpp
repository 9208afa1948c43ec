// libFuzzer harness of the recording reader (tiletune/landscape.hpp): any bytes as a recording
// file through load_landscape, and what it reads written back with write_landscape and read
// again, which must give the same problems and trials (a recording that does not round-trip
// would make a replay believe rows the cache never held), and written once more, the same text
// (the writer makes a detail one printable line, so the first write may change a detail, and
// after it nothing may). tiletune::Error is the reader refusing the file; anything else that
// escapes, a crash, a sanitizer report or a round trip that differs is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "scratch_file.hpp"
#include "tiletune/error.hpp"
#include "tiletune/landscape.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tiletune::fuzz::ScratchFiles dir;
  const auto path = dir.write("recording.csv", data, size);
  tiletune::Landscape first;
  try {
    first = tiletune::load_landscape(path);
  } catch (const tiletune::Error&) { return 0; }
  std::ostringstream again;
  try {
    tiletune::write_landscape(again, first);
  } catch (const tiletune::Error&) {
    return 0;  // a value the writer refuses before writing anything
  }
  const std::string text = again.str();
  const auto copy = dir.write("again.csv", reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  const tiletune::Landscape second = tiletune::load_landscape(copy);  // must not throw
  if (second.kernel != first.kernel || second.problems.size() != first.problems.size()) std::abort();
  for (std::size_t p = 0; p < first.problems.size(); ++p) {
    const auto& a = first.problems[p];
    const auto& b = second.problems[p];
    if (a.problem != b.problem || a.trials.size() != b.trials.size()) std::abort();
    for (std::size_t i = 0; i < a.trials.size(); ++i)
      if (a.trials[i].params != b.trials[i].params || a.trials[i].status != b.trials[i].status) std::abort();
  }
  std::ostringstream twice;
  tiletune::write_landscape(twice, second);  // must not throw: it wrote this landscape once
  if (twice.str() != text) std::abort();
  return 0;
}
