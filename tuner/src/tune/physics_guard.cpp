// The physics guard applied to a space's trials (tiletune/physics_guard.hpp).
#include "tiletune/physics_guard.hpp"

#include <fmt/format.h>

#include <charconv>

#include "tiletune/replay.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

namespace {

template <class Number>
std::optional<Number> header_number(const Landscape& landscape, const char* key) {
  const std::optional<std::string> text = landscape.header_value(key);
  if (!text) return std::nullopt;
  Number value{};
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

/// The weak spot of one output's check, or "" when it compares every element.
std::string weak_check(const OutputCheck& check) {
  const std::string where = check.where.line > 0 ? fmt::format(" ({})", check.where.str()) : "";
  switch (check.compare) {
    case OutputCheck::Compare::none:
      return fmt::format("'{}' is not compared{}: compare it with the reference", check.buffer, where);
    case OutputCheck::Compare::sum:
      return fmt::format("verification compares only the sum of '{}'{}: compare it element by element", check.buffer,
                         where);
    case OutputCheck::Compare::elements: break;
  }
  if (check.count)
    return fmt::format("verification compares only the first `count` elements of '{}'{}: compare the whole buffer",
                       check.buffer, where);
  return {};
}

}  // namespace

CeilingInputs ceiling_inputs(const DeviceLimits& device, std::optional<double> copy_gbps) {
  CeilingInputs in;
  in.cc_major = device.cc_major;
  in.cc_minor = device.cc_minor;
  in.sm_count = device.sm_count;
  in.sm_clock_khz = device.sm_clock_khz;
  in.l2_bytes = static_cast<std::int64_t>(device.l2_bytes);
  in.copy_gbps = copy_gbps;
  return in;
}

CeilingInputs ceiling_inputs(const Landscape& landscape) {
  CeilingInputs in;
  if (const std::optional<std::string> cc = landscape.header_value("compute_capability")) {
    const std::size_t dot = cc->find('.');
    if (dot != std::string::npos) {
      std::from_chars(cc->data(), cc->data() + dot, in.cc_major);
      std::from_chars(cc->data() + dot + 1, cc->data() + cc->size(), in.cc_minor);
    }
  }
  in.sm_count = header_number<int>(landscape, "sm_count").value_or(0);
  in.sm_clock_khz = header_number<int>(landscape, "sm_clock_khz").value_or(0);
  in.l2_bytes = header_number<std::int64_t>(landscape, "l2_bytes").value_or(0);
  in.copy_gbps = header_number<double>(landscape, "copy_gbps");
  return in;
}

Ceilings trial_ceilings(const Space& space, const Problem& problem, const Config& config, const CeilingInputs& device) {
  const RunMetrics metrics = evaluate_metrics(space, problem, config);
  Ceilings c = ceilings_for(device, metrics.bytes, space.metric_flop_type);
  if (!metrics.bytes) c.gbps.reset();  // nothing declared: nothing to hold against it
  if (!metrics.flops) c.gflops.reset();
  return c;
}

std::string suspect_hint(const Space& space) {
  if (space.verify.reference == VerifySpec::Reference::none && space.verify.command.empty())
    return "the space checks nothing (verify: none): add a check: the outputs must match a reference";
  std::string weak;
  for (const OutputCheck& check : space.verify.outputs)
    if (std::string w = weak_check(check); !w.empty()) weak += (weak.empty() ? "" : "; ") + w;
  if (!weak.empty()) return weak;
  return "every compared output matched: make sure the kernel writes every output element (an output that "
         "already holds the expected values passes a kernel that skips its work) and that metrics.bytes and "
         "metrics.flops count what one run does";
}

std::optional<std::string> suspect_detail(const Space& space, const Ceilings& ceilings, std::optional<double> gbps,
                                          std::optional<double> gflops) {
  const std::optional<std::string> why = physics_violation(ceilings, gbps, gflops);
  if (!why) return std::nullopt;
  return fmt::format("faster than the GPU can: {}; the check passed it: {}", *why, suspect_hint(space));
}

std::function<bool(const Evaluation&)> good_enough_check(const Space& space, const Problem& problem,
                                                         const SpaceDomain& domain,
                                                         std::function<CeilingInputs()> device, double share) {
  if (!space.metric_bytes && !space.metric_flops) return {};
  return [&space, problem, &domain, device = std::move(device), share](const Evaluation& e) {
    if (!e.time) return false;
    const Config config = domain.config(e.point);
    const RunMetrics metrics = evaluate_metrics(space, problem, config);
    const Ceilings c = trial_ceilings(space, problem, config, device());
    const double seconds = *e.time * 1e-3;
    const auto rate = [&](std::optional<double> amount) {
      return amount ? std::optional(*amount / seconds / 1e9) : std::nullopt;
    };
    const std::optional<CeilingShare> reached =
        ceiling_share(rate(metrics.bytes), rate(metrics.flops), c.gbps, c.gflops);
    // A rate over the guard's margin is a suspect trial, not a good one.
    return reached && reached->fraction >= share && !physics_violation(c, rate(metrics.bytes), rate(metrics.flops));
  };
}

}  // namespace tiletune
