// The strategies by name, for the CLI's --strategy and the replay benchmarks.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>

#include "strategy/common.hpp"
#include "tiletune/error.hpp"
#include "tiletune/message.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"exhaustive", "random", "local", "genetic", "forest"};
  return names;
}

namespace strategy_detail {

namespace {

double share_setting(std::string_view key, std::string_view value, double low, double high) {
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v) || v < low || v > high)
    throw Error(fmt::format("forest setting {}={}: not a number in [{}, {}]", key, quote(value), low, high));
  return v;
}

/// The keys parse_forest_settings reads, for its errors.
constexpr std::string_view kForestKeys = "explore, local, kappa, bases, joint, alignment, poll";

/// A count or a switch: a whole number in [low, high].
std::size_t whole_setting(std::string_view key, std::string_view value, double low, double high) {
  const double v = share_setting(key, value, low, high);
  if (v != std::floor(v))
    throw Error(fmt::format("forest setting {}={}: not a whole number in [{}, {}]", key, quote(value), low, high));
  return static_cast<std::size_t>(v);
}

}  // namespace

ForestSettings parse_forest_settings(std::string_view text) {
  ForestSettings settings;
  while (!text.empty()) {
    const std::string_view item = text.substr(0, text.find(':'));
    text.remove_prefix(std::min(text.size(), item.size() + 1));
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error(fmt::format("forest setting {}: expected key=value (keys: {})", quote(item), kForestKeys));
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (key == "explore")
      settings.explore = share_setting(key, value, 0, 1);
    else if (key == "local")
      settings.local = share_setting(key, value, 0, 1);
    else if (key == "kappa")
      settings.kappa = share_setting(key, value, 0, 100);
    else if (key == "bases")
      settings.bases = whole_setting(key, value, 1, 64);
    else if (key == "joint")
      settings.joint = whole_setting(key, value, 0, 1) != 0;
    else if (key == "alignment")
      settings.alignment = whole_setting(key, value, 0, 1) != 0;
    else if (key == "poll")
      settings.poll = whole_setting(key, value, 0, 1) != 0;
    else
      throw Error(fmt::format("unknown forest setting {} (keys: {})", quote(key), kForestKeys));
  }
  return settings;
}

}  // namespace strategy_detail

std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, const SearchDomain& domain, std::uint64_t seed,
                                              std::size_t lag) {
  using namespace strategy_detail;
  if (name == "exhaustive") return make_exhaustive(domain);
  if (name == "random") return make_random(domain, seed);
  // The strategies that learn see what the lag allows, so that they search the same at any width up to it.
  if (name == "local") return make_lagged(make_local(domain, seed), domain, lag);
  if (name == "genetic") return make_lagged(make_genetic(domain, seed), domain, lag);
  if (name == "forest") return make_lagged(make_forest(domain, seed), domain, lag);
  if (name.starts_with("forest:"))
    return make_lagged(make_forest(domain, seed, parse_forest_settings(name.substr(7))), domain, lag);
  throw Error(fmt::format("unknown search strategy {} (known: {})", quote(name), fmt::join(strategy_names(), ", ")));
}

}  // namespace tiletune
