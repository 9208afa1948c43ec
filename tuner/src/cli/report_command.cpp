// `tiletune report`: the HTML report of a result cache, or one plot as SVG or PNG. Thin: parse
// the options, open the cache read-only, call the report stage, write the file whole.
#include <fmt/format.h>

#include <iostream>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "tiletune/error.hpp"
#include "tiletune/message.hpp"
#include "tiletune/report.hpp"

namespace tiletune::cli {

namespace {

struct ReportCommandOptions {
  std::string db, kernel, device, problem, objective = "time", format = "html", plot, output, default_config;
  std::vector<std::string> heatmaps;
  std::size_t top = 10;
  bool all_versions = false, list_plots = false;
};

ReportOptions report_options(const ReportCommandOptions& o) {
  ReportOptions r;
  if (!o.kernel.empty()) r.kernel = o.kernel;
  if (!o.device.empty()) r.device = o.device;
  if (!o.problem.empty()) r.problem = o.problem;
  r.all_versions = o.all_versions;
  r.objective = *parse_objective(o.objective);
  r.top = o.top;
  for (const std::string& h : o.heatmaps) {
    const auto comma = h.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == h.size())
      throw UsageError(fmt::format("--heatmap {}: expected two params, A,B (e.g. TILE,BLOCK_ROWS)", quote(h)));
    r.heatmaps.emplace_back(h.substr(0, comma), h.substr(comma + 1));
  }
  if (!o.default_config.empty()) r.default_config = o.default_config;
  return r;
}

// The combinations of options that cannot work, before the cache is opened: usage errors (exit 2).
void check_report_arguments(const ReportCommandOptions& o) {
  if (o.list_plots) return;
  if (o.format == "html" && !o.plot.empty())
    throw UsageError("--plot needs --format svg or png (the HTML report has every plot)");
  if (o.format != "html" && o.plot.empty())
    throw UsageError(
        fmt::format("--format {} writes one plot: name it with --plot (tiletune report --list-plots shows "
                    "them)",
                    o.format));
  if (o.format == "png" && o.output == "-")
    throw UsageError("--format png cannot write to stdout: name a file with -o");
}

}  // namespace

OutputTarget checked_output(const std::string& path, const OutputRules& rules) {
  if (path == "-") return OutputTarget::stream;
  try {
    return check_output(path, rules);
  } catch (const OutputIsInputError& e) { throw UsageError(e.what()); }
}

void write_whole_file(const std::string& path, const std::string& text, const OutputRules& rules) {
  if (path == "-") {
    std::cout << text;  // checked when the command returns (main)
    return;
  }
  write_output(path, text, rules);
}

Runner add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Write an HTML report of the result cache, or one plot as SVG or PNG");
  auto o = std::make_shared<ReportCommandOptions>();
  cmd->add_option("--db", o->db, "Result cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db)");
  cmd->add_option("--kernel", o->kernel, "Only this kernel")->check(identifier());
  cmd->add_option("--device", o->device, "Only this device (UUID or name)")->check(plain_text(256));
  cmd->add_option("--problem", o->problem, "Only this problem, as stored: N=8192 (several sizes: M=1;N=2)")
      ->check(plain_text(4096));
  cmd->add_flag("--all-versions", o->all_versions, "Include trials of earlier versions of a kernel's source");
  cmd->add_option("--objective", o->objective, "Rank and plot by time (default), energy or edp")
      ->check(CLI::IsMember({"time", "energy", "edp"}));
  cmd->add_option("--top", o->top, "Configs in each top table, 1 to 10^6 (default 10)")
      ->check(whole_number_in(1, 1'000'000));
  cmd->add_option("--heatmap", o->heatmaps,
                  "Heatmap of these two params, A,B (repeatable; default: every pair, at most 15)")
      ->type_name("A,B")
      ->check(plain_text(512));
  cmd->add_option("--default", o->default_config,
                  "The speedups' baseline, TILE=32;BLOCK_ROWS=8 (default: the space's `default:`)")
      ->check(plain_text(4096));
  cmd->add_option("--format", o->format, "html (default), svg or png (one plot: name it with --plot)")
      ->check(CLI::IsMember({"html", "svg", "png"}));
  cmd->add_option("--plot", o->plot, "With --format svg|png: the plot (see --list-plots)")->check(plain_text(512));
  cmd->add_flag("--list-plots", o->list_plots, "List the plots --plot knows for these filters");
  cmd->add_option("-o,--output", o->output, "Output file (default report.html, or PLOT.svg / PLOT.png; - : stdout)");
  cmd->footer(help_footer("report", R"(Examples:
  tiletune report -o report.html                       every kernel, device and problem
  tiletune report --kernel transpose --problem N=8192 --format svg --plot heatmap:TILE,BLOCK_ROWS -o heat.svg)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    check_report_arguments(*o);
    ReportOptions options = report_options(*o);
    const std::string path = o->db.empty() ? default_cache_path().string() : o->db;
    CacheDb db = CacheDb::open(path, CacheDb::Mode::read_only);
    options.source_name = path;
    if (o->list_plots) {
      for (const std::string& n : plot_names(db, options)) std::cout << n << '\n';
      return exit_ok;
    }
    const OutputRules rules{{path}};  // never the cache it reports on
    if (o->format == "html") {
      const std::string out = o->output.empty() ? "report.html" : o->output;
      (void)checked_output(out, rules);
      write_whole_file(out, render_report(db, options), rules);
      if (out != "-") std::cerr << fmt::format("report: wrote {}\n", out);
      return exit_ok;
    }
    std::string stem = o->plot;
    for (char& c : stem)
      if (c == ':' || c == ',') c = '-';
    const std::string out = o->output.empty() ? stem + "." + o->format : o->output;
    (void)checked_output(out, rules);
    const std::string svg = render_plot(db, options, o->plot);
    if (o->format == "svg")
      write_whole_file(out, svg, rules);
    else
      write_whole_file(out, render_png(svg), rules);
    if (out != "-") std::cerr << fmt::format("report: wrote {}\n", out);
    return exit_ok;
  };
}

}  // namespace tiletune::cli
