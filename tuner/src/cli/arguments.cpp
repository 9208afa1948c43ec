// The checks of command-line values (see arguments.hpp). Messages quote a value as a short escaped
// excerpt (tiletune::quoted), so a hostile argument cannot flood or steer the terminal.
#include "cli/arguments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "tiletune/compile.hpp"
#include "tiletune/message.hpp"
#include "tiletune/occupancy.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/sweep.hpp"
#include "tiletune/worker.hpp"

namespace tiletune::cli {

namespace {

// A command-line value in a message: a short escaped excerpt (tiletune::quoted).
std::string shown_value(const std::string& value) { return quote(value); }

std::optional<std::uint64_t> parse_whole(const std::string& s) {
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

CLI::Validator whole_number_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const auto v = parse_whole(s);
        if (!v) {
          if (s.find_first_not_of("0123456789") == std::string::npos && !s.empty())
            return fmt::format("{} is out of range (at most {})", shown_value(s), hi);
          return fmt::format("{} is not a whole number (expected {} to {})", shown_value(s), lo, hi);
        }
        // s is digits only here: shown as it is.
        if (*v < lo || *v > hi) return fmt::format("{} is out of range (expected {} to {})", s, lo, hi);
        return {};
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

CLI::Validator finite_in(double lo, double hi, bool lo_open) {
  return CLI::Validator(
      [lo, hi, lo_open](std::string& s) -> std::string {
        double v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
          return fmt::format("{} is not a finite number", shown_value(s));
        if ((lo_open ? v <= lo : v < lo) || v > hi)
          return fmt::format("{} is out of range (expected {}{} to {})", s, lo_open ? "more than " : "", lo, hi);
        return {};
      },
      fmt::format("NUMBER in {}{}, {}]", lo_open ? "(" : "[", lo, hi));
}

CLI::Validator size_assignment(std::int64_t min_value) {
  return CLI::Validator(
      [min_value](std::string& s) -> std::string {
        const auto eq = s.find('=');
        const std::string name = s.substr(0, eq);
        const bool identifier =
            !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
            name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                std::string::npos;
        if (eq == std::string::npos || !identifier)
          return fmt::format("{}: expected NAME=VALUE with a name such as N, e.g. N=8192", shown_value(s));
        const auto v = parse_whole(s.substr(eq + 1));
        if (!v || *v > static_cast<std::uint64_t>(INT64_MAX) || static_cast<std::int64_t>(*v) < min_value)
          return fmt::format("{}: the value is not a whole number from {} to {}", shown_value(s), min_value, INT64_MAX);
        return {};
      },
      "NAME=VALUE");
}

CLI::Validator identifier(std::size_t max_length) {
  return CLI::Validator(
      [max_length](std::string& s) -> std::string {
        const bool ok = !s.empty() && s.size() <= max_length && !std::isdigit(static_cast<unsigned char>(s[0])) &&
                        std::all_of(s.begin(), s.end(),
                                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
        if (ok) return {};
        return fmt::format("{} is not a name (letters, digits and _, at most {} characters)", shown_value(s),
                           max_length);
      },
      "NAME");
}

CLI::Validator plain_text(std::size_t max_length) {
  return CLI::Validator(
      [max_length](std::string& s) -> std::string {
        const bool control =
            std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
        if (!control && s.size() <= max_length) return {};
        return fmt::format("{} is not {} characters or fewer without control characters", shown_value(s), max_length);
      },
      "TEXT");
}

CLI::Validator known_arch() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::string known;
        for (int a : builtin_archs()) known += fmt::format("{}sm_{}", known.empty() ? "" : ", ", a);
        int arch = 0;
        try {
          arch = parse_arch(s);
        } catch (const Error&) {
          return fmt::format("{} is not a GPU architecture (known: {})", shown_value(s), known);
        }
        if (!builtin_device_limits(arch))
          return fmt::format("{}: no device limits for sm_{} (known: {})", shown_value(s), arch, known);
        return {};
      },
      "ARCH");
}

namespace {

// Accepts what `parse` accepts; otherwise the parser's message, less the "--option " it starts
// with (CLI11 names the option itself).
template <class Parse>
CLI::Validator parsed_by(const std::string& option, const std::string& what, Parse parse,
                         const std::string& type_name) {
  return CLI::Validator(
      [option, what, parse](std::string& s) -> std::string {
        if (s.size() > 40) return fmt::format("{} is not {}", shown_value(s), what);
        try {
          parse(s);
        } catch (const Error& e) {
          std::string why = one_line(e.what());
          if (why.starts_with(option + " ")) why.erase(0, option.size() + 1);
          return why;
        }
        return {};
      },
      type_name);
}

}  // namespace

CLI::Validator budget_text() {
  return parsed_by(
      "--budget", "a budget (200, 25%, 90s, 10m)",
      [](const std::string& s) {
        // An empty text is the library's "no budget given"; written out, it is a mistake.
        if (s.empty()) throw Error("--budget '': expected a count (200), a share of the space (25%) or a time (90s, 10m)");
        (void)parse_budget(s);
      },
      "N|N%|Ns|Nm|Nh");
}

double parse_percent(const std::string& text) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == '%') digits.pop_back();
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || !(value > 0 && value <= 100))
    throw UsageError(fmt::format("{} is not a percentage in (0, 100] (for example 90%)", shown_value(text)));
  return value;
}

CLI::Validator percent_text() {
  return parsed_by(
      "--good-enough", "a percentage", [](const std::string& s) { (void)parse_percent(s); }, "P%");
}

CLI::Validator shard_text() {
  return parsed_by(
      "--shard", "a shard (I/N or auto)",
      [](const std::string& s) {
        if (s != "auto") (void)parse_shard(s);
      },
      "I/N|auto");
}

Shard resolve_shard(const std::string& text) {
  if (text.empty()) return Shard{};
  if (text != "auto") return parse_shard(text);
  if (auto shard = shard_from_environment([](const char* name) { return std::getenv(name); })) return *shard;
  throw UsageError(
      "--shard auto: no launcher said which shard this is (none of SLURM_ARRAY_TASK_ID, OMPI_COMM_WORLD_RANK, "
      "PMIX_RANK, SLURM_PROCID is set); give --shard I/N");
}

Problem checked_problem(const Space& space, const std::vector<std::string>& sizes) {
  try {
    return select_problem(space, sizes);
  } catch (const Error& e) { throw UsageError(e.what()); }
}

CompilerFactory compile_workers() {
  return [argv = default_compile_worker_argv()] { return make_worker_compiler(argv); };
}

}  // namespace tiletune::cli
