// `tiletune devices`, `show`, `best`, `export` and `merge`: reading the machine and the result
// cache. The trials' columns come from the column table (tiletune/trial_record.hpp), the output
// formats from the printers (tiletune/printer.hpp): a command builds its tables once.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "common/text_out.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/printer.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/device.hpp"
#include "tiletune/error.hpp"
#include "tiletune/interchange.hpp"
#include "tiletune/physics.hpp"
#include "tiletune/query.hpp"

namespace tiletune::cli {

namespace {
/// The one warning of a JSON output that replaced bytes that were not UTF-8 (see text_out.hpp).
void warn_replaced(std::string_view what, std::size_t replaced) {
  if (replaced > 0) std::cerr << text_out::replaced_warning(what, replaced) << '\n';
}
}  // namespace

void print_devices(std::ostream& out, const std::vector<DeviceInfo>& devices, Format format) {
  const std::string nvrtc = nvrtc_version();
  if (format == Format::json) {
    nlohmann::json j = nlohmann::json::array();
    for (const DeviceInfo& d : devices) {
      j.push_back({{"index", d.ordinal},
                   {"name", d.name},
                   {"uuid", d.uuid},
                   {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
                   {"sm_count", d.sm_count},
                   {"memory_bytes", d.total_memory},
                   {"l2_bytes", d.l2_bytes},
                   {"shared_per_block", d.shared_per_block},
                   {"shared_per_block_optin", d.shared_per_block_optin},
                   {"shared_per_sm", d.shared_per_sm},
                   {"regs_per_sm", d.regs_per_sm},
                   {"max_threads_per_sm", d.max_threads_per_sm},
                   {"sm_clock_mhz", d.sm_clock_khz / 1000},
                   {"memory_clock_mhz", d.memory_clock_khz / 1000},
                   {"memory_bus_width", d.memory_bus_width},
                   {"driver", format_driver_version(d.driver_version)},
                   {"nvrtc", nvrtc}});
    }
    std::size_t replaced = 0;
    out << text_out::dump_json(j, 2, &replaced) << '\n';
    warn_replaced("devices", replaced);
    return;
  }
  for (const DeviceInfo& d : devices) {
    out << fmt::format("{}: {} ({})\n", d.ordinal, text_out::terminal_text(d.name), text_out::terminal_text(d.uuid));
    out << fmt::format("   compute capability {}.{}, {} SMs, {:.1f} GiB, L2 {} MiB, memory bus {} bits\n", d.cc_major,
                       d.cc_minor, d.sm_count, double(d.total_memory) / double(1ull << 30), d.l2_bytes >> 20,
                       d.memory_bus_width);
    out << fmt::format("   shared memory {} KiB per block ({} KiB opt-in), {} KiB per SM; {} registers per SM\n",
                       d.shared_per_block >> 10, d.shared_per_block_optin >> 10, d.shared_per_sm >> 10, d.regs_per_sm);
    out << fmt::format("   clocks: SM {} MHz, memory {} MHz; driver {} (CUDA), NVRTC {}\n", d.sm_clock_khz / 1000,
                       d.memory_clock_khz / 1000, format_driver_version(d.driver_version), nvrtc);
  }
}

namespace {

// Every status's name, for --status (tiletune/status.hpp is the list).
std::vector<std::string> status_names() {
  std::vector<std::string> names;
  for (const TrialStatus s : all_trial_statuses) names.emplace_back(status_name(s));
  return names;
}

std::string params_text(std::string s) {
  for (char& c : s)
    if (c == ';') c = ' ';
  return s;
}

std::filesystem::path cache_path(const std::string& db) {
  return db.empty() ? default_cache_path() : std::filesystem::path(db);
}

/// The cache named by --db, else the default one, opened read-only (reading creates nothing).
CacheDb open_for_reading(const std::string& db) { return CacheDb::open(cache_path(db), CacheDb::Mode::read_only); }

using Shown = PrintColumn::Shown;

PrintCell cell(const TrialValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* text = std::get_if<std::string>(&v)) return *text;
  return {};
}

/// The measurements that the human formats of `show` print (the others are in CSV and JSON);
/// drop_if_empty: only when some trial has the value.
struct HumanMeasurement {
  std::string_view name;
  bool drop_if_empty;
};
constexpr HumanMeasurement human_measurements[] = {
    {"time_ms", false}, {"gbps", false}, {"energy_mj", true}, {"power_w", true}, {"throttled_samples", true}};

/// A column for each measurement of the column table (tiletune/trial_record.hpp), named, headed
/// and rounded as the table says.
void add_measurement_columns(std::vector<PrintColumn>& columns) {
  for (const TrialColumn& c : trial_columns) {
    PrintColumn column{
        .key = std::string(c.name), .heading = std::string(c.heading), .digits = c.digits, .shown = Shown::machine};
    for (const HumanMeasurement& h : human_measurements)
      if (h.name == c.name) {
        column.shown = Shown::everywhere;
        column.drop_if_empty = h.drop_if_empty;
      }
    columns.push_back(std::move(column));
  }
}

void add_measurement_cells(std::vector<PrintCell>& row, const TrialRecord& t) {
  for (const TrialColumn& c : trial_columns) row.push_back(cell(c.get(t)));
}

/// The trials of `show` and `export`: the key, every measurement, the flags and the detail.
/// with_version adds the kernel version (what `export` writes, so that a file names every key).
PrintTable trials_table(const std::vector<TrialRow>& rows, bool with_version) {
  PrintTable table{.name = "trials"};
  auto& cols = table.columns;
  cols.push_back({.key = "id", .shown = Shown::machine});
  cols.push_back({.key = "kernel"});
  if (with_version)
    for (const char* key : {"source_hash", "options", "nvrtc_version"})
      cols.push_back({.key = key, .shown = Shown::machine});
  cols.push_back({.key = "device", .shown = Shown::machine});
  cols.push_back({.key = "device_uuid", .shown = Shown::machine});
  cols.push_back({.key = "problem"});
  cols.push_back({.key = "params", .shown = Shown::machine});
  cols.push_back({.key = "config", .heading = "params", .shown = Shown::human});
  cols.push_back({.key = "status"});
  add_measurement_columns(cols);
  cols.push_back({.key = "best"});
  cols.push_back({.key = "current", .shown = Shown::machine});
  cols.push_back({.key = "created_at", .shown = Shown::machine});
  cols.push_back({.key = "detail", .max_width = 70});
  for (const TrialRow& r : rows) {
    const TrialRecord& t = r.trial;
    std::vector<PrintCell> row{r.id, r.kernel.name};
    if (with_version) row.insert(row.end(), {r.kernel.source_hash, r.kernel.options, r.kernel.nvrtc_version});
    row.insert(row.end(), {r.device_name, r.device_uuid, t.key.problem, t.key.params, params_text(t.key.params),
                           std::string(status_name(t.status))});
    add_measurement_cells(row, t);
    row.insert(row.end(), {r.is_best, r.current, r.created_at, t.detail});
    table.rows.push_back(std::move(row));
  }
  table.footer = fmt::format("{} trials", rows.size());
  return table;
}

/// The devices of a cache, for `export`: the identity, then each described field of the devices
/// table (device_columns), then last_seen.
PrintTable devices_table(const std::vector<DeviceRow>& devices) {
  PrintTable table{.name = "devices"};
  for (const char* key : {"uuid", "name", "compute_capability"}) table.columns.push_back({.key = key});
  for (const DeviceColumn& c : device_columns)
    if (c.description) table.columns.push_back({.key = std::string(c.name)});
  table.columns.push_back({.key = "last_seen"});
  for (const DeviceRow& d : devices) {
    std::vector<PrintCell> row{d.device.uuid, d.device.name, d.device.compute_capability()};
    for (const DeviceColumn& c : device_columns)
      if (c.description) row.push_back(cell(c.get(d.device)));
    row.push_back(d.last_seen);
    table.rows.push_back(std::move(row));
  }
  return table;
}

/// The answers of `best`: one row per device, kernel version and problem,
/// the pin's config where a pin answers, else the tie set's pick.
PrintTable best_table(const std::vector<BestEntry>& entries) {
  PrintTable table{.name = "best"};
  auto& cols = table.columns;
  cols.push_back({.key = "kernel"});
  cols.push_back({.key = "device", .shown = Shown::machine});
  cols.push_back({.key = "device_label", .heading = "device", .shown = Shown::human});
  cols.push_back({.key = "device_uuid", .shown = Shown::machine});
  cols.push_back({.key = "problem"});
  cols.push_back({.key = "params", .shown = Shown::machine});
  cols.push_back({.key = "config", .heading = "best config", .shown = Shown::human});
  // The measurements of the answer; gflops and energy only where some answer has them.
  constexpr std::string_view measurements[] = {"time_ms", "gbps", "gflops", "energy_mj"};
  for (std::string_view name : measurements) {
    const TrialColumn& c = trial_column(name);
    cols.push_back({.key = std::string(c.name),
                    .heading = std::string(c.heading),
                    .digits = c.digits,
                    .drop_if_empty = name == "gflops" || name == "energy_mj"});
  }
  // How far the answer is from its ceiling (the physics guard's, recorded with the trial).
  cols.push_back({.key = "headroom_pct", .heading = "headroom %", .digits = 1, .drop_if_empty = true});
  cols.push_back({.key = "bound", .drop_if_empty = true});
  cols.push_back({.key = "ties", .drop_if_empty = true});
  cols.push_back({.key = "tie_spread_pct", .heading = "spread %", .digits = 2, .drop_if_empty = true});
  cols.push_back({.key = "tie_set", .shown = Shown::machine});
  cols.push_back({.key = "fastest_params", .shown = Shown::machine});
  cols.push_back({.key = "fastest_ms", .shown = Shown::machine});
  cols.push_back({.key = "winner_changes", .heading = "changes", .drop_if_empty = true});
  cols.push_back({.key = "runs", .drop_if_empty = true});
  cols.push_back({.key = "pinned", .heading = "pin", .drop_if_empty = true});
  cols.push_back({.key = "pin_reason", .shown = Shown::machine});
  // Several GPUs of one model (`tune --devices`) have one name: the table tells them apart by
  // the start of their UUIDs.
  std::map<std::string, std::set<std::string>> uuids_of_name;
  for (const BestEntry& e : entries) uuids_of_name[e.device.device.name].insert(e.device.device.uuid);
  const auto label = [&](const DeviceRecord& d) {
    return uuids_of_name[d.name].size() > 1 ? fmt::format("{} ({})", d.name, d.uuid.substr(0, 12)) : d.name;
  };
  for (const BestEntry& e : entries) {
    // A pin answers with its config, measured here or not.
    const TrialRecord* shown = e.pin ? (e.pinned_trial ? &*e.pinned_trial : nullptr) : &e.trial;
    std::vector<PrintCell> row{
        e.kernel.name,       e.device.device.name, label(e.device.device),        e.device.device.uuid,
        e.trial.key.problem, e.answer_params(),    params_text(e.answer_params())};
    for (std::string_view name : measurements)
      row.push_back(shown ? cell(trial_column(name).get(*shown)) : PrintCell());
    const auto share =
        shown ? ceiling_share(shown->gbps, shown->gflops, shown->ceiling_gbps, shown->ceiling_gflops) : std::nullopt;
    row.push_back(share ? PrintCell(share->headroom_percent()) : PrintCell());
    row.push_back(share ? PrintCell(std::string(share->compute_bound ? "arithmetic" : "bandwidth")) : PrintCell());
    const bool tied = !e.tie_params.empty();
    row.push_back(tied ? PrintCell(static_cast<std::int64_t>(e.tie_params.size())) : PrintCell());
    row.push_back(tied ? PrintCell(100.0 * e.tie_spread) : PrintCell());
    row.push_back(e.tie_params);
    row.push_back(e.fastest_params);
    row.push_back(e.fastest_ms);
    row.push_back(e.runs > 0 ? PrintCell(std::int64_t{e.winner_changes}) : PrintCell());
    row.push_back(e.runs > 0 ? PrintCell(std::int64_t{e.runs}) : PrintCell());
    row.push_back(e.pin ? PrintCell(std::string(pin_scope_name(e.pin->scope))) : PrintCell());
    row.push_back(e.pin ? PrintCell(e.pin->reason) : PrintCell());
    table.rows.push_back(std::move(row));
  }
  if (entries.empty())
    table.footer = "no results yet: run `tiletune tune SPACE.yaml` first";
  else
    table.footer = fmt::format(
        "ties: configs within the noise of the fastest (answer: highest occupancy, then fewest "
        "registers, then config order); changes: runs whose answer differed from the run before");
  return table;
}

/// Prints a document of the cache --db names; a JSON one that replaced bytes says so once.
void print(PrintFormat format, const PrintDocument& document, const std::string& db) {
  const auto printer = make_printer(format, std::cout);
  printer->print(document);
  warn_replaced(cache_path(db).string(), printer->replaced_bytes());
}

}  // namespace

Runner add_show_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("show", "List the trials in the result cache");
  struct Options {
    std::string db, kernel, device, status, problem, format = "table";
    bool all_versions = false;
    std::int64_t limit = 0;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--db", o->db, "Result cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db)");
  cmd->add_option("--kernel", o->kernel, "Only this kernel")->check(identifier());
  cmd->add_option("--device", o->device, "Only this device (UUID or name)")->check(plain_text(256));
  cmd->add_option("--status", o->status,
                  "Only this status: ok pruned compile_failed launch_failed runtime_fault timeout wrong_result "
                  "suspect")
      ->check(CLI::IsMember(status_names()));
  cmd->add_option("--problem", o->problem, "Only this problem, as stored: N=8192 (several sizes: M=1;N=2)")
      ->check(plain_text(4096));
  cmd->add_flag("--all-versions", o->all_versions, "Include trials of earlier versions of a kernel's source");
  cmd->add_option("--limit", o->limit, "At most this many rows (1 or more)")->check(whole_number_in(1, INT64_MAX));
  cmd->add_option("--format", o->format, "Output: table, csv, json or markdown (csv and json: every column)")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}));
  cmd->footer(help_footer("show", R"(Examples:
  tiletune show --kernel transpose --status ok --format csv > transpose.csv
  tiletune show --status wrong_result          what failed verification, and where)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    CacheDb db = open_for_reading(o->db);
    TrialFilter filter;
    if (!o->kernel.empty()) filter.kernel = o->kernel;
    if (!o->device.empty()) filter.device = o->device;
    if (!o->status.empty()) filter.status = parse_status(o->status);
    if (!o->problem.empty()) filter.problem = o->problem;
    filter.current_only = !o->all_versions;
    if (o->limit > 0) filter.limit = o->limit;
    print(*parse_print_format(o->format), PrintDocument{.tables = {trials_table(db.trials(filter), false)}}, o->db);
    return exit_ok;
  };
}

namespace {

bool is_param_name(std::string_view s) {
  return !s.empty() && s.size() <= 64 && !std::isdigit(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// `best --kernel K --size N=...`: one lookup through the query library, with its fallbacks.
int print_lookup(const std::string& db_path, const std::string& kernel, const std::vector<std::string>& sizes,
                 const std::string& device_spec, const std::string& format, Objective objective) {
  QueryRequest request;
  request.kernel = kernel;
  request.objective = objective;
  for (const std::string& s : sizes) {
    const auto eq = s.find('=');
    std::int64_t v = 0;  // the option's check has made sure of the form
    (void)std::from_chars(s.data() + eq + 1, s.data() + s.size(), v);
    if (!request.sizes.emplace(s.substr(0, eq), v).second)
      throw UsageError(fmt::format("--size {}: {} is given twice", s, s.substr(0, eq)));
  }
  if (!device_spec.empty()) {
    request.device = QueryDevice::parse(device_spec);
  } else if (auto live = QueryDevice::detect(0)) {
    request.device = *live;
  }
  QueryError open_error;
  auto cache =
      QueryCache::try_open(db_path.empty() ? QueryCache::default_path() : std::filesystem::path(db_path), &open_error);
  if (!cache) throw Error(open_error.message);
  const QueryResult r = cache->lookup(request);
  if (r.status == QueryStatus::unknown_kernel) {
    // Never tuned here: like a miss, the caller uses its defaults.
    std::cerr << fmt::format("{}: {}: use your defaults\n", kernel, r.message);
    if (format == "env") std::cout << "TILETUNE_MATCH=none\n";
    if (format == "cmake") std::cout << "set(TILETUNE_MATCH none)\n";
    if (format == "json")
      std::cout << text_out::dump_json(nlohmann::json{{"kernel", kernel}, {"match", "none"}}, 2, nullptr) << '\n';
    return exit_no_result;
  }
  if (!r.ok()) throw Error(r.message);
  const std::string level(match_level_name(r.match));
  if (format == "json") {
    nlohmann::json params = nlohmann::json::object();
    for (const QueryParam& p : r.params) params[p.name] = p.value;
    nlohmann::json j = {{"kernel", kernel}, {"match", level}, {"params", params}};
    if (!r.problem.empty()) j["problem"] = r.problem;
    if (r.time_ms >= 0) j["time_ms"] = r.time_ms;
    if (r.energy_mj >= 0) j["energy_mj"] = r.energy_mj;
    if (!r.device_name.empty()) j["device"] = r.device_name;
    if (!r.device_uuid.empty()) j["device_uuid"] = r.device_uuid;
    if (r.tie_count > 0) {
      j["tie_count"] = r.tie_count;
      j["tie_spread"] = r.tie_spread;
      j["fastest_ms"] = r.fastest_ms;
    }
    if (r.headroom_percent >= 0) {
      j["headroom_pct"] = r.headroom_percent;
      j["bound"] = r.bound;
    }
    if (r.match == MatchLevel::pinned) {
      j["pin_scope"] = r.pin_scope;
      j["pin_reason"] = r.pin_reason;
    }
    std::size_t replaced = 0;
    std::cout << text_out::dump_json(j, 2, &replaced) << '\n';
    warn_replaced(cache_path(db_path).string(), replaced);
  } else if (format == "env" || format == "cmake") {
    // Code that a shell or CMake runs: a name from the cache must be a name (values are integers).
    for (const QueryParam& p : r.params)
      if (!is_param_name(p.name))
        throw Error(fmt::format("{}: param name '{}' of {} is not a name (letters, digits, _); not printed as {}",
                                cache_path(db_path).string(), escaped_excerpt(p.name, 40), kernel, format));
    for (const QueryParam& p : r.params)
      std::cout << (format == "env" ? fmt::format("{}={}\n", p.name, p.value)
                                    : fmt::format("set({} {})\n", p.name, p.value));
    std::cout << (format == "env" ? fmt::format("TILETUNE_MATCH={}\nTILETUNE_TIES={}\n", level, r.tie_count)
                                  : fmt::format("set(TILETUNE_MATCH {})\nset(TILETUNE_TIES {})\n", level, r.tie_count));
  } else {
    using text_out::terminal_text;
    if (r.found()) {
      std::string how;
      if (r.match == MatchLevel::pinned)
        how = fmt::format(" by {} pin{}", r.pin_scope, r.pin_reason.empty() ? "" : ": " + terminal_text(r.pin_reason));
      else if (r.tie_count > 1)
        how = fmt::format("; {} configs tied within {:.2f} %; this one by the tie rules", r.tie_count,
                          100.0 * r.tie_spread);
      if (r.headroom_percent >= 0) how += fmt::format("; headroom {:.1f} % ({})", r.headroom_percent, r.bound);
      std::cout << fmt::format("{}: {} ({}{}{}{})\n", kernel, terminal_text(r.params_text), level,
                               r.problem.empty() ? "" : ", measured at " + terminal_text(r.problem),
                               r.device_name.empty() ? "" : " on " + terminal_text(r.device_name), how);
    } else {
      std::cout << fmt::format("{}: nothing tuned that fits ({}): use your defaults\n", kernel,
                               r.message.empty() ? "no match" : terminal_text(r.message));
    }
  }
  return r.found() ? exit_ok : exit_no_result;
}

}  // namespace

Runner add_best_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("best", "Print the best config per device, kernel and problem, or look one up");
  struct Options {
    std::string db, kernel, device, format = "table", objective = "time";
    std::vector<std::string> sizes;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--objective", o->objective, "Best by time (default), energy (per run) or edp (energy x time)")
      ->check(CLI::IsMember({"time", "energy", "edp"}));
  cmd->add_option("--db", o->db, "Result cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db)");
  cmd->add_option("--kernel", o->kernel, "Only this kernel")->check(identifier());
  cmd->add_option("--device", o->device,
                  "A device UUID (GPU-...), name or sm_90; with --size the default is the first GPU")
      ->check(plain_text(256));
  cmd->add_option("--size", o->sizes, "With --kernel: look up the config for this problem (NAME=VALUE, repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false)
      ->check(size_assignment(1));
  cmd->add_option("--format", o->format, "Output: table, csv, json or markdown; with --size: table, json, env or cmake")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown", "env", "cmake"}));
  cmd->footer(help_footer("best", R"HELP(Examples:
  tiletune best                                     every answer in the cache, with its tie set
  tiletune best --kernel transpose --size N=8192    the config a program should use here
  eval "$(tiletune best --kernel transpose --size N=8192 --format env)")HELP",
                          {exit_ok, exit_error, exit_usage, exit_no_result}));
  return [o]() {
    if (!o->sizes.empty()) {
      if (o->kernel.empty()) throw UsageError("--size needs --kernel: tiletune best --kernel transpose --size N=8192");
      if (o->format == "csv" || o->format == "markdown")
        throw UsageError(
            fmt::format("--format {} lists the winners; a lookup with --size prints table, json, env or "
                        "cmake",
                        o->format));
      return print_lookup(o->db, o->kernel, o->sizes, o->device, o->format, *parse_objective(o->objective));
    }
    if (o->format == "env" || o->format == "cmake")
      throw UsageError(fmt::format("--format {} needs --kernel and --size (one config to print)", o->format));
    CacheDb db = open_for_reading(o->db);
    BestFilter filter;
    if (!o->kernel.empty()) filter.kernel = o->kernel;
    if (!o->device.empty()) filter.device = o->device;
    filter.objective = *parse_objective(o->objective);
    const std::vector<BestEntry> entries = db.best(filter);
    print(*parse_print_format(o->format), PrintDocument{.tables = {best_table(entries)}}, o->db);
    return entries.empty() ? exit_no_result : exit_ok;
  };
}

Runner add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Write every trial of the result cache as CSV or JSON");
  struct Options {
    std::string db, kernel, device, format = "json";
    bool current_only = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--db", o->db, "Result cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db)");
  cmd->add_option("--kernel", o->kernel, "Only this kernel")->check(identifier());
  cmd->add_option("--device", o->device,
                  "Only this device (UUID or name); a landscape needs one if the kernel ran on several")
      ->check(plain_text(256));
  cmd->add_flag("--current-only", o->current_only, "Only the latest version of each kernel's source");
  cmd->add_option("--format", o->format,
                  "Output: csv, json (default), landscape (needs --kernel) or t4 (Kernel Tuner / KTT)")
      ->check(CLI::IsMember({"csv", "json", "landscape", "t4"}));
  cmd->footer(help_footer("export", R"(Examples:
  tiletune export --format csv > trials.csv
  tiletune export --format landscape --kernel matmul > matmul.csv    a recording for `tune --replay`)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    if (o->format == "landscape" && o->kernel.empty())
      throw UsageError("export --format landscape: name the kernel with --kernel");
    CacheDb db = open_for_reading(o->db);
    if (o->format == "landscape") {
      write_landscape(std::cout, landscape_from_cache(db, o->kernel, o->device));
      return exit_ok;
    }
    TrialFilter filter;
    if (!o->kernel.empty()) filter.kernel = o->kernel;
    if (!o->device.empty()) filter.device = o->device;
    filter.current_only = o->current_only;
    if (o->format == "t4") {
      std::size_t replaced = 0;
      std::cout << export_t4(db, filter, Objective::time, &replaced);
      warn_replaced(cache_path(o->db).string(), replaced);
      return exit_ok;
    }
    // JSON: {schema_version, devices, trials}; CSV: the trials table alone (one table per file).
    PrintDocument document{.fields = {{"schema_version", std::int64_t{db.schema_version()}}},
                           .tables = {trials_table(db.trials(filter), true), devices_table(db.devices())}};
    print(*parse_print_format(o->format), document, o->db);
    return exit_ok;
  };
}

Runner add_merge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("merge", "Merge result caches from several machines into one");
  struct Options {
    std::string into;
    std::vector<std::string> sources;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("into", o->into, "The cache to merge into (created if missing)")->required();
  cmd->add_option("sources", o->sources, "Caches to read (never written)")->required()->check(CLI::ExistingFile);
  cmd->footer(help_footer("merge", R"(Example:
  tiletune merge all.db h200.db a100.db l4.db     per key the better trial; pins too)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    for (const std::string& source : o->sources)
      if (same_file(source, o->into))
        throw UsageError(fmt::format("merge: {} is the target {} itself (the same file)", source, o->into));
    // A directory, a socket or a dangling link, before any source is read (SQLite writes a cache in place).
    (void)checked_output(o->into);
    const std::vector<std::filesystem::path> sources(o->sources.begin(), o->sources.end());
    const std::vector<MergeStats> stats = merge_cache_files(o->into, sources);
    for (std::size_t i = 0; i < stats.size(); ++i)
      std::cout << fmt::format("{}: {} trials read, {} added, {} replaced by a better one, {} kept; {} pins copied\n",
                               o->sources[i], stats[i].trials_read, stats[i].added, stats[i].replaced, stats[i].kept,
                               stats[i].pins_copied);
    return exit_ok;
  };
}

}  // namespace tiletune::cli
