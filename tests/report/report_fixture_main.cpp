// report_fixture OUT.db LANDSCAPE.csv... [--energy] [--seed N]: writes a fixture cache (see
// report_fixture.hpp), for the browser and Python tests and for the screenshot in docs/reference/report.md.
#include <cstdio>
#include <string>

#include "report_fixture.hpp"
#include "tiletune/error.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: report_fixture OUT.db LANDSCAPE.csv... [--energy] [--seed N]\n");
    return 2;
  }
  tiletune::testing::FixtureOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--energy")
      options.synthetic_energy = true;
    else if (a == "--seed" && i + 1 < argc)
      options.seed = std::stoull(argv[++i]);
    else
      options.landscapes.emplace_back(a);
  }
  try {
    const std::size_t n = tiletune::testing::write_fixture_cache(argv[1], options);
    std::printf("%zu trials written to %s\n", n, argv[1]);
  } catch (const tiletune::Error& e) {
    std::fprintf(stderr, "report_fixture: %s\n", e.what());
    return 1;
  }
  return 0;
}
