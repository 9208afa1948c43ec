// Online tuning's decisions (see tiletune/online.hpp): candidates in the space's enumeration
// order, one trial per call at most, none once the budget or the share of wall time is spent.
#include "tiletune/online.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "tiletune/capture.hpp"

namespace tiletune {

const char* online_verdict_name(OnlineVerdict verdict) noexcept {
  switch (verdict) {
    case OnlineVerdict::faster: return "faster";
    case OnlineVerdict::slower: return "slower";
    case OnlineVerdict::wrong: return "wrong";
    case OnlineVerdict::failed: return "failed";
  }
  return "?";
}

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

template <typename T>
std::optional<T> parse_number(const std::string& text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

OnlineOptions OnlineOptions::from_environment(std::ostream& diagnostics) {
  OnlineOptions o;
  const auto patterns = env("TILETUNE_ONLINE");
  if (!patterns) return o;
  auto off = [&](const char* name, const std::string& value, const char* expected) {
    diagnostics << fmt::format("tiletune: online tuning off: {}='{}' is not {}\n", name, value.substr(0, 40), expected);
    return OnlineOptions{};
  };
  if (auto v = env("TILETUNE_ONLINE_BUDGET")) {
    auto n = parse_number<std::uint64_t>(*v);
    if (!n) return off("TILETUNE_ONLINE_BUDGET", *v, "a count of candidates");
    o.budget = *n;
  }
  if (auto v = env("TILETUNE_ONLINE_SHARE")) {
    auto x = parse_number<double>(*v);
    if (!x || !(*x > 0 && *x <= 1)) return off("TILETUNE_ONLINE_SHARE", *v, "a share in (0, 1]");
    o.share = *x;
  }
  if (auto v = env("TILETUNE_ONLINE_SAMPLES")) {
    auto n = parse_number<std::uint64_t>(*v);
    if (!n || *n < 1 || *n > 100) return off("TILETUNE_ONLINE_SAMPLES", *v, "a count from 1 to 100");
    o.samples = *n;
  }
  o.patterns = kernel_patterns(*patterns);
  return o;
}

bool OnlineOptions::matches(std::string_view kernel) const { return kernel_matches(patterns, kernel); }

OnlineSchedule::OnlineSchedule(const Space& space, OnlineOptions options, double opened_s)
    : space_(space), options_(std::move(options)), opened_s_(opened_s) {}

std::optional<Config> OnlineSchedule::next(const Problem& problem, const Config& current, double now_s) {
  PerProblem& p = problems_[problem.sizes];
  if (p.exhausted || p.tried.size() >= options_.budget) return std::nullopt;
  if (spent_s_ > options_.share * std::max(0.0, now_s - opened_s_)) return std::nullopt;
  if (!p.candidates) p.candidates.emplace(space_, problem);
  // A config that was in use is measured in every trial: it is never a candidate itself.
  if (std::find(p.known.begin(), p.known.end(), current) == p.known.end()) p.known.push_back(current);
  auto known = [&](const Config& c) {
    return std::find(p.known.begin(), p.known.end(), c) != p.known.end() ||
           std::find(p.tried.begin(), p.tried.end(), c) != p.tried.end();
  };
  while (auto c = p.candidates->next()) {
    if (!known(*c)) return c;
  }
  p.exhausted = true;
  return std::nullopt;
}

void OnlineSchedule::record(const Problem& problem, const Config& candidate, OnlineVerdict verdict, double cost_s) {
  PerProblem& p = problems_[problem.sizes];
  p.tried.push_back(candidate);
  spent_s_ += std::max(0.0, cost_s);
  if (verdict == OnlineVerdict::faster) p.best = candidate;  // wrong and failed configs never are
}

void OnlineSchedule::skip(const Problem& problem, const std::vector<Config>& configs) {
  PerProblem& p = problems_[problem.sizes];
  p.known.insert(p.known.end(), configs.begin(), configs.end());
}

std::optional<Config> OnlineSchedule::best(const Problem& problem) const {
  auto it = problems_.find(problem.sizes);
  return it == problems_.end() ? std::nullopt : it->second.best;
}

std::uint64_t OnlineSchedule::tried(const Problem& problem) const {
  auto it = problems_.find(problem.sizes);
  return it == problems_.end() ? 0 : it->second.tried.size();
}

}  // namespace tiletune
