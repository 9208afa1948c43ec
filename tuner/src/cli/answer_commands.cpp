// `tiletune pin`, `unpin` and `diff`: the answers a cache gives, chosen by a person (pins) and
// compared between two caches (a release gate for programs that ship one). The answers
// themselves (tie sets, the pick rule, pins, history) come from CacheDb::best.
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <map>
#include <set>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "common/text_out.hpp"
#include "tiletune/answers.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"
#include "tiletune/printer.hpp"

namespace tiletune::cli {

namespace {

using Shown = PrintColumn::Shown;

std::filesystem::path cache_path(const std::string& db) {
  return db.empty() ? default_cache_path() : std::filesystem::path(db);
}

/// "N=8192;R=3" from repeated --size NAME=VALUE (checked by the option), sorted by name.
std::string problem_of(const std::vector<std::string>& sizes) {
  std::set<std::string> names;
  std::string text;
  for (const std::string& s : sizes) {
    if (!names.insert(s.substr(0, s.find('='))).second)
      throw UsageError(fmt::format("--size {}: {} is given twice", s, s.substr(0, s.find('='))));
    text += (text.empty() ? "" : ";") + s;
  }
  return sorted_assignments(text);
}

/// The scope and target that --device, --model and --arch name (exactly one of them).
std::pair<PinScope, std::string> pin_target(const std::string& device, const std::string& model,
                                            const std::string& arch) {
  const int given = !device.empty() + !model.empty() + !arch.empty();
  if (given != 1)
    throw UsageError("name what the pin is for with exactly one of --device UUID, --model NAME, --arch sm_XY");
  if (!device.empty()) {
    if (device.rfind("GPU-", 0) != 0 && device.rfind("MIG-", 0) != 0)
      throw UsageError(
          fmt::format("--device {}: a device pin needs a UUID (GPU-... or MIG-..., as `tiletune devices` "
                      "prints it); for every GPU of a model use --model",
                      device));
    return {PinScope::device, device};
  }
  if (!model.empty()) return {PinScope::model, model};
  return {PinScope::architecture, fmt::format("sm_{}", parse_arch(arch))};  // "9.0", "sm90" → "sm_90"
}

/// The params as the kernel's trials spell them (the space's order) when a trial has the same
/// assignments, else as given; the second is false when no trial of the kernel has them.
std::pair<std::string, bool> stored_params(const CacheDb& db, const std::string& kernel, const std::string& params) {
  TrialFilter filter;
  filter.kernel = kernel;
  filter.current_only = true;
  const std::string wanted = sorted_assignments(params);
  for (const TrialRow& r : db.trials(filter))
    if (sorted_assignments(r.trial.key.params) == wanted) return {r.trial.key.params, true};
  return {wanted, false};
}

/// --params "TILE=32;BLOCK_ROWS=8" (or with ','): NAME=INTEGER items, no name twice.
std::string checked_params(const std::string& text) {
  std::set<std::string> names;
  std::string out;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto end = rest.find_first_of(";,");
    std::string item;
    for (const char c : rest.substr(0, end))
      if (c != ' ') item += c;
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    std::int64_t v = 0;
    const char* first = item.data() + (eq == std::string::npos ? item.size() : eq + 1);
    const auto [p, ec] = std::from_chars(first, item.data() + item.size(), v);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || p != item.data() + item.size() ||
        first == item.data() + item.size())
      throw UsageError(fmt::format("--params {}: '{}' is not NAME=INTEGER", text, item));
    if (!names.insert(item.substr(0, eq)).second)
      throw UsageError(fmt::format("--params {}: {} is given twice", text, item.substr(0, eq)));
    out += (out.empty() ? "" : ";") + item;
  }
  if (out.empty()) throw UsageError("--params is empty: give the config, e.g. --params 'TILE=32;BLOCK_ROWS=8'");
  return out;
}

PrintTable pins_table(const std::vector<PinRecord>& pins) {
  PrintTable table{.name = "pins"};
  for (const char* key : {"kernel", "problem", "scope", "target", "params", "reason", "created_at"})
    table.columns.push_back({.key = key});
  for (const PinRecord& p : pins)
    table.rows.push_back(
        {p.kernel, p.problem, std::string(pin_scope_name(p.scope)), p.target, p.params, p.reason, p.created_at});
  table.footer = pins.empty() ? "no pins" : fmt::format("{} pins", pins.size());
  return table;
}

constexpr const char* target_help =
    "One GPU (--device UUID), a model (--model 'NVIDIA H200') or an architecture (--arch sm_90)";

}  // namespace

Runner add_pin_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("pin", "Pin a config: it answers lookups of a kernel and problem, above every measurement");
  struct Options {
    std::string db, kernel, params, device, model, arch, reason, format = "table";
    std::vector<std::string> sizes;
    bool list = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--db", o->db, "Result cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db)");
  cmd->add_option("--kernel", o->kernel, "The kernel (its name: a pin outlives edits of its source)")
      ->check(identifier());
  cmd->add_option("--size", o->sizes, "The problem (NAME=VALUE, repeatable; every size of the space)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false)
      ->check(size_assignment(1));
  cmd->add_option("--params", o->params, "The config, e.g. 'TILE=32;BLOCK_ROWS=8;PAD=1'")->check(plain_text(4096));
  cmd->add_option("--device", o->device, target_help)->check(plain_text(256));
  cmd->add_option("--model", o->model, "See --device")->check(plain_text(256));
  cmd->add_option("--arch", o->arch, "See --device")->check(known_arch());
  cmd->add_option("--reason", o->reason, "Why (shown with the answer, e.g. 'bitwise-identical to v1.2')")
      ->check(plain_text(1024));
  cmd->add_flag("--list", o->list, "List the pins (of --kernel, if given) instead");
  cmd->add_option("--format", o->format, "With --list: table, csv, json or markdown")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}));
  cmd->footer(help_footer("pin", R"(Examples:
  tiletune pin --kernel transpose --size N=8192 --params 'TILE=32;BLOCK_ROWS=8;PAD=1' --model 'NVIDIA H200'
  tiletune pin --list --kernel transpose)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    if (o->list) {
      CacheDb db = CacheDb::open(cache_path(o->db), CacheDb::Mode::read_only);
      const auto printer = make_printer(*parse_print_format(o->format), std::cout);
      printer->print(PrintDocument{.tables = {pins_table(db.pins(o->kernel))}});
      return exit_ok;
    }
    if (o->kernel.empty() || o->sizes.empty() || o->params.empty())
      throw UsageError("pin needs --kernel, --size (each size of the problem) and --params");
    const auto [scope, target] = pin_target(o->device, o->model, o->arch);
    const std::string params = checked_params(o->params);
    CacheDb db = CacheDb::open(cache_path(o->db));
    const auto [stored, measured] = stored_params(db, o->kernel, params);
    PinRecord pin{scope, target, o->kernel, problem_of(o->sizes), stored, o->reason, {}};
    db.pin(pin);
    std::cout << fmt::format("pinned {} for {} {} {}: {}\n", o->kernel, pin_scope_name(scope), target, pin.problem,
                             stored);
    if (!measured)
      std::cerr << fmt::format("note: no trial of {} has the config {}: check its names and values\n", o->kernel,
                               stored);
    return exit_ok;
  };
}

Runner add_unpin_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("unpin", "Remove a pin: the measurements answer again");
  struct Options {
    std::string db, kernel, device, model, arch;
    std::vector<std::string> sizes;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--db", o->db, "Result cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db)");
  cmd->add_option("--kernel", o->kernel, "The kernel")->check(identifier())->required();
  cmd->add_option("--size", o->sizes, "The problem (NAME=VALUE, repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false)
      ->check(size_assignment(1))
      ->required();
  cmd->add_option("--device", o->device, target_help)->check(plain_text(256));
  cmd->add_option("--model", o->model, "See --device")->check(plain_text(256));
  cmd->add_option("--arch", o->arch, "See --device")->check(known_arch());
  cmd->footer(help_footer("unpin", R"(Example:
  tiletune unpin --kernel transpose --size N=8192 --model 'NVIDIA H200')",
                          {exit_ok, exit_error, exit_usage, exit_no_result}));
  return [o]() {
    const auto [scope, target] = pin_target(o->device, o->model, o->arch);
    CacheDb db = CacheDb::open(cache_path(o->db));
    const std::string problem = problem_of(o->sizes);
    if (!db.unpin(scope, target, o->kernel, problem)) {
      std::cerr << fmt::format("unpin: no pin of {} {} for {} {} in {}\n", o->kernel, problem, pin_scope_name(scope),
                               target, db.path().string());
      return exit_no_result;
    }
    std::cout << fmt::format("unpinned {} {} for {} {}\n", o->kernel, problem, pin_scope_name(scope), target);
    return exit_ok;
  };
}

// --- diff ------------------------------------------------------------------------------------

namespace {

/// What --fail-on names.
struct FailOn {
  std::optional<double> slower;  ///< a relative threshold, 0.02 for "slower:2%"
  bool changed_winner = false;
  bool untied = false;
  bool missing = false;
};

FailOn parse_fail_on(const std::vector<std::string>& items) {
  FailOn f;
  for (const std::string& raw : items) {
    std::string_view item = raw;
    if (item == "changed-winner")
      f.changed_winner = true;
    else if (item == "untied")
      f.untied = true;
    else if (item == "missing")
      f.missing = true;
    else if (item.rfind("slower:", 0) == 0) {
      std::string_view number = item.substr(7);
      if (!number.empty() && number.back() == '%') number.remove_suffix(1);
      double pct = 0.0;
      const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), pct);
      if (number.empty() || ec != std::errc() || p != number.data() + number.size() || !(pct >= 0.0) || pct > 1e6)
        throw UsageError(fmt::format("--fail-on {}: slower needs a percentage, e.g. slower:2%", raw));
      f.slower = pct / 100.0;
    } else {
      throw UsageError(fmt::format("--fail-on {}: not one of slower:P%, changed-winner, untied, missing", raw));
    }
  }
  return f;
}

/// One key of either cache: its answer there.
struct Side {
  std::string params;
  std::optional<double> time_ms;
  std::vector<std::string> ties;
  std::vector<std::string> holdable;  ///< configs that would stand here as a standing answer
  std::string pin;  ///< the pin's scope, empty when none
  std::string device_name;
};

Side side_of(const BestEntry& e) {
  Side s;
  s.params = e.answer_params();
  const TrialRecord* t = e.pin ? (e.pinned_trial ? &*e.pinned_trial : nullptr) : &e.trial;
  if (t) s.time_ms = t->time_ms;
  s.ties = e.tie_params;
  s.holdable = e.holdable_params;
  if (e.pin) s.pin = std::string(pin_scope_name(e.pin->scope));
  s.device_name = e.device.device.name;
  return s;
}

using DiffKey = std::tuple<std::string, std::string, std::string>;  // kernel, device, problem

/// The answers of a cache by key; by_name keys devices by name (the first UUID of a model).
std::map<DiffKey, Side> answers_of(const std::filesystem::path& path, const std::string& kernel, bool by_name) {
  CacheDb db = CacheDb::open(path, CacheDb::Mode::read_only);
  BestFilter filter;
  if (!kernel.empty()) filter.kernel = kernel;
  std::map<DiffKey, Side> out;
  for (const BestEntry& e : db.best(filter))
    out.emplace(DiffKey{e.kernel.name, by_name ? e.device.device.name : e.device.device.uuid,
                        sorted_assignments(e.trial.key.problem)},
                side_of(e));
  return out;
}

bool same_params(const std::string& a, const std::string& b) { return sorted_assignments(a) == sorted_assignments(b); }

bool in_ties(const std::string& params, const std::vector<std::string>& ties) {
  for (const std::string& t : ties)
    if (same_params(t, params)) return true;
  return false;
}

struct DiffRow {
  DiffKey key;
  std::optional<Side> old_side, new_side;
  std::string change;                 ///< same, changed, new, missing
  std::optional<double> time_change;  ///< new / old - 1
  bool tied_change = false;           ///< changed, and the old answer would stand in the new cache
  std::vector<std::string> failures;  ///< the --fail-on items it trips
};

DiffRow compare(const DiffKey& key, const Side* old_side, const Side* new_side, const FailOn& fail_on) {
  DiffRow r;
  r.key = key;
  if (old_side) r.old_side = *old_side;
  if (new_side) r.new_side = *new_side;
  if (!new_side) {
    r.change = "missing";
    if (fail_on.missing) r.failures.push_back("missing");
    return r;
  }
  if (!old_side) {
    r.change = "new";
    return r;
  }
  const bool changed = !same_params(old_side->params, new_side->params);
  r.change = changed ? "changed" : "same";
  // The new cache's answer moved within the noise of two sweeps: had it recorded the old answer,
  // that one would stand there (held with the new fastest, answers.hpp).
  r.tied_change = changed && in_ties(old_side->params, new_side->holdable);
  if (old_side->time_ms && new_side->time_ms && *old_side->time_ms > 0)
    r.time_change = *new_side->time_ms / *old_side->time_ms - 1.0;
  if (fail_on.slower && r.time_change && *r.time_change > *fail_on.slower + 1e-12)
    r.failures.push_back(fmt::format("slower:{:g}%", *fail_on.slower * 100.0));
  if (fail_on.changed_winner && changed) r.failures.push_back("changed-winner");
  if (fail_on.untied && changed && !r.tied_change) r.failures.push_back("untied");
  return r;
}

PrintTable diff_table(const std::vector<DiffRow>& rows) {
  PrintTable table{.name = "changes"};
  auto& cols = table.columns;
  cols.push_back({.key = "kernel"});
  cols.push_back({.key = "device"});
  cols.push_back({.key = "problem"});
  cols.push_back({.key = "change"});
  cols.push_back({.key = "old_params", .heading = "old config"});
  cols.push_back({.key = "new_params", .heading = "new config"});
  cols.push_back({.key = "old_ms", .heading = "old ms", .digits = 4});
  cols.push_back({.key = "new_ms", .heading = "new ms", .digits = 4});
  cols.push_back({.key = "time_change_pct", .heading = "time %", .digits = 2});
  cols.push_back({.key = "old_ties", .heading = "old ties"});
  cols.push_back({.key = "new_ties", .heading = "new ties"});
  cols.push_back({.key = "old_tie_set", .shown = Shown::machine});
  cols.push_back({.key = "new_tie_set", .shown = Shown::machine});
  cols.push_back({.key = "tied", .heading = "old holds in new"});
  cols.push_back({.key = "old_pin", .heading = "old pin", .drop_if_empty = true});
  cols.push_back({.key = "new_pin", .heading = "new pin", .drop_if_empty = true});
  cols.push_back({.key = "fails", .heading = "fails on"});
  for (const DiffRow& r : rows) {
    const auto& [kernel, device, problem] = r.key;
    auto text = [](const std::optional<Side>& s, auto get) -> PrintCell { return s ? get(*s) : PrintCell(); };
    auto ms = [](const std::optional<Side>& s) -> PrintCell {
      return s && s->time_ms ? PrintCell(*s->time_ms) : PrintCell();
    };
    auto ties = [](const std::optional<Side>& s) -> PrintCell {
      return s && !s->ties.empty() ? PrintCell(static_cast<std::int64_t>(s->ties.size())) : PrintCell();
    };
    auto pin = [](const std::optional<Side>& s) -> PrintCell {
      return s && !s->pin.empty() ? PrintCell(s->pin) : PrintCell();
    };
    const std::string device_shown = r.new_side ? r.new_side->device_name : r.old_side ? r.old_side->device_name : "";
    table.rows.push_back(
        {kernel, device == device_shown ? device : fmt::format("{} ({})", device_shown, device.substr(0, 12)), problem,
         r.change, text(r.old_side, [](const Side& s) { return PrintCell(s.params); }),
         text(r.new_side, [](const Side& s) { return PrintCell(s.params); }), ms(r.old_side), ms(r.new_side),
         r.time_change ? PrintCell(100.0 * *r.time_change) : PrintCell(), ties(r.old_side), ties(r.new_side),
         text(r.old_side, [](const Side& s) { return PrintCell(s.ties); }),
         text(r.new_side, [](const Side& s) { return PrintCell(s.ties); }),
         r.change == "changed" ? PrintCell(r.tied_change) : PrintCell(), pin(r.old_side), pin(r.new_side), r.failures});
  }
  return table;
}

}  // namespace

Runner add_diff_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("diff", "Compare the answers of two caches; a release gate with --fail-on");
  struct Options {
    std::string old_db, new_db, kernel, format = "table", devices = "uuid";
    std::vector<std::string> fail_on;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("old", o->old_db, "The cache answers are compared against (e.g. the one shipped)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("new", o->new_db, "The cache to check (e.g. a new sweep's)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--fail-on", o->fail_on,
                  "Exit 5 when a key is slower:P%, changed-winner, untied or missing (comma-separated or repeated)")
      ->delimiter(',')
      ->type_name("CONDITION");
  cmd->add_option("--kernel", o->kernel, "Only this kernel")->check(identifier());
  cmd->add_option("--devices", o->devices, "Match devices by uuid (default) or by name (caches of other machines)")
      ->check(CLI::IsMember({"uuid", "name"}));
  cmd->add_option("--format", o->format, "Output: table, markdown or json")
      ->check(CLI::IsMember({"table", "markdown", "json"}));
  cmd->footer(help_footer("diff", R"(Example:
  tiletune diff shipped.db new.db --fail-on untied,missing,slower:2% --format markdown)",
                          {exit_ok, exit_error, exit_usage, exit_gate_failed}));
  return [o]() {
    const FailOn fail_on = parse_fail_on(o->fail_on);
    const bool by_name = o->devices == "name";
    const auto old_answers = answers_of(o->old_db, o->kernel, by_name);
    const auto new_answers = answers_of(o->new_db, o->kernel, by_name);
    std::set<DiffKey> keys;
    for (const auto& [k, _] : old_answers) keys.insert(k);
    for (const auto& [k, _] : new_answers) keys.insert(k);
    std::vector<DiffRow> rows;
    std::size_t failing = 0;
    std::map<std::string, std::size_t> counts;
    for (const DiffKey& k : keys) {
      const auto o_it = old_answers.find(k);
      const auto n_it = new_answers.find(k);
      rows.push_back(compare(k, o_it == old_answers.end() ? nullptr : &o_it->second,
                             n_it == new_answers.end() ? nullptr : &n_it->second, fail_on));
      ++counts[rows.back().change];
      if (!rows.back().failures.empty()) ++failing;
    }
    PrintTable table = diff_table(rows);
    table.footer = fmt::format("{} keys: {} same, {} changed, {} new, {} missing{}", rows.size(), counts["same"],
                               counts["changed"], counts["new"], counts["missing"],
                               o->fail_on.empty() ? "" : fmt::format("; {} fail --fail-on", failing));
    PrintDocument document{.fields = {{"old", o->old_db},
                                      {"new", o->new_db},
                                      {"fail_on", o->fail_on},
                                      {"failing", static_cast<std::int64_t>(failing)}},
                           .tables = {std::move(table)}};
    make_printer(*parse_print_format(o->format), std::cout)->print(document);
    if (failing == 0) return exit_ok;
    for (const DiffRow& r : rows)
      if (!r.failures.empty()) {
        std::string fails;
        for (const std::string& f : r.failures) fails += (fails.empty() ? "" : ",") + f;
        // Names from the caches, which may hold any bytes: shown as terminal-safe text.
        std::cerr << fmt::format("diff: {} {} {}: {}\n", text_out::terminal_text(std::get<0>(r.key)),
                                 text_out::terminal_text(std::get<1>(r.key)),
                                 text_out::terminal_text(std::get<2>(r.key)), fails);
      }
    return exit_gate_failed;
  };
}

}  // namespace tiletune::cli
