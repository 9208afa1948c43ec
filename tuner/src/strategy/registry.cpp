// The strategies by name, for the CLI's --strategy and the replay benchmarks.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strategy/common.hpp"
#include "tiletune/error.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"exhaustive", "random", "local", "genetic", "forest"};
  return names;
}

std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, const SearchDomain& domain, std::uint64_t seed) {
  using namespace strategy_detail;
  if (name == "exhaustive") return make_exhaustive(domain);
  if (name == "random") return make_random(domain, seed);
  if (name == "local") return make_local(domain, seed);
  if (name == "genetic") return make_genetic(domain, seed);
  if (name == "forest") return make_forest(domain, seed);
  throw Error(fmt::format("unknown search strategy '{}' (known: {})", name, fmt::join(strategy_names(), ", ")));
}

}  // namespace tiletune
