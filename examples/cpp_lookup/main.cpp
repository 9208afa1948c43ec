// example_cpp_lookup: the best config of a kernel from a tiletune cache, through query.hpp.
//
//   example_cpp_lookup DB KERNEL SIZES [DEVICE]
//     DB      the cache file, or "-" for the default ($TILETUNE_DB, ~/.cache/tiletune/tiletune.db)
//     SIZES   e.g. "N=8192" or "M=4096,K=1024"
//     DEVICE  a UUID ("GPU-..."), "sm_90", "9.0" or a name; the live device when left out
//
// Prints NAME=VALUE lines and the match level. Exit status: 0 found, 2 nothing tuned (the
// program would use its own defaults), 1 an error.
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "tiletune/query.hpp"

namespace {

// "N=8192,R=3" → {N: 8192, R: 3}; false on a malformed item.
bool parse_sizes(std::string_view text, std::map<std::string, std::int64_t>& out) {
  while (!text.empty()) {
    auto comma = text.find_first_of(",;");
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    std::int64_t v = 0;
    auto value = item.substr(eq + 1);
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size()) return false;
    out[std::string(item.substr(0, eq))] = v;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s DB KERNEL SIZES [DEVICE]\n", argv[0]);
    return 1;
  }
  std::filesystem::path db =
      std::string_view(argv[1]) == "-" ? tiletune::QueryCache::default_path() : std::filesystem::path(argv[1]);
  tiletune::QueryError error;
  auto cache = tiletune::QueryCache::try_open(db, &error);
  if (!cache) {
    std::fprintf(stderr, "cannot open the cache: %s\n", error.message.c_str());
    return 1;
  }

  tiletune::QueryRequest request;
  request.kernel = argv[2];
  if (!parse_sizes(argv[3], request.sizes)) {
    std::fprintf(stderr, "bad sizes '%s' (expected N=8192,R=3)\n", argv[3]);
    return 1;
  }
  if (argc == 5) {
    request.device = tiletune::QueryDevice::parse(argv[4]);
  } else {
    std::string why;
    auto live = tiletune::QueryDevice::detect(0, &why);
    if (!live) {
      std::fprintf(stderr, "no live device (give one as the 4th argument): %s\n", why.c_str());
      return 1;
    }
    request.device = *live;
  }

  tiletune::QueryResult best = cache->lookup(request);
  if (!best.ok()) {
    std::fprintf(stderr, "lookup failed (%s): %s\n", std::string(tiletune::query_status_name(best.status)).c_str(),
                 best.message.c_str());
    return 1;
  }
  if (!best.found()) {
    std::printf("no tuned config for %s: using the defaults\n", request.kernel.c_str());
    return 2;
  }
  for (const auto& p : best.params) std::printf("%s=%lld\n", p.name.c_str(), static_cast<long long>(p.value));
  std::printf("# match: %s", std::string(tiletune::match_level_name(best.match)).c_str());
  if (best.time_ms >= 0)
    std::printf(", measured %.4f ms on %s for %s", best.time_ms, best.device_name.c_str(), best.problem.c_str());
  std::printf("\n");
  return 0;
}
