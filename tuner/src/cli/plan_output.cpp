// Printing a plan (one row per config) through the printers of tiletune/printer.hpp: an aligned
// table with the summary under it, Markdown, CSV (the rows), or JSON (the kernel, device and
// problem, the rows with their params as an object, and the summary).
#include "cli/plan_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <ostream>

#include "common/text_out.hpp"
#include "tiletune/printer.hpp"

namespace tiletune::cli {

namespace {

using Shown = PrintColumn::Shown;

// "1234", or "~1234 (estimated, +-3.1 %)" for a count the domain estimated.
std::string count_text(std::uint64_t count, bool exact, double relative_error) {
  if (exact) return std::to_string(count);
  return fmt::format("~{} (estimated, +-{:.1f} %)", count, 100 * relative_error);
}

std::string summary_text(const Space& space, const Plan& plan) {
  const PlanSummary& s = plan.summary;
  const std::string planned =
      s.sampled_by_default ? fmt::format(" (planned a uniform sample: {})", plan.rows.size())
      : s.sample_every == 1 ? ""
      : s.sampled_uniformly
          ? fmt::format(" (planned a uniform sample of 1 in {}: {})", s.sample_every, plan.rows.size())
          : fmt::format(" (planned every {}th: {})", s.sample_every, plan.rows.size());
  std::string text = fmt::format("{} for {}{}{}\n", space.kernel, plan.device.name,
                                 plan.problem.sizes.empty() ? "" : ", ", format_problem(space, plan.problem));
  text +=
      fmt::format("points {}, after constraints {}{}{}, ok {}, pruned {}, compile failures {}\n", s.points,
                  count_text(s.valid, s.valid_exact, s.valid_relative_error),
                  s.shard.whole() ? ""
                                  : fmt::format(" (shard {}: {})", format_shard(s.shard),
                                                count_text(s.in_shard, s.in_shard_exact, s.in_shard_relative_error)),
                  planned, s.ok, s.pruned, s.compile_failed);
  if (s.with_warnings > 0)
    text += fmt::format("{} configs compiled with warnings (--logs shows them)\n", s.with_warnings);
  if (s.compiled == 0) {
    text += fmt::format("compiled nothing: {} cache hits, {:.2f} s wall", s.cache_hits, s.wall_seconds);
  } else {
    text += fmt::format(
        "compiled {} configs in {:.2f} s wall with {} threads ({:.1f} s of NVRTC, {:.0f} ms per config); "
        "{} cache hits",
        s.compiled, s.wall_seconds, s.threads, s.compile_seconds, 1000.0 * s.compile_seconds / double(s.compiled),
        s.cache_hits);
  }
  return text;
}

// Counts, sizes and bytes of every integer type, as the printers' integer.
PrintCell count(auto v) { return static_cast<std::int64_t>(v); }

// kernel, space, device, problem and summary: what JSON has around the rows.
std::vector<PrintField> plan_fields(const Space& space, const Plan& plan) {
  std::vector<PrintField> f = {{"kernel", space.kernel},
                               {"space", space.yaml_path.string()},
                               {"name", plan.device.name, "device"},
                               {"arch", fmt::format("sm_{}", plan.device.arch()), "device"},
                               {"sm_count", count(plan.device.sm_count), "device"}};
  for (std::size_t i = 0; i < space.problem.size(); ++i)
    f.push_back({space.problem[i].name, count(plan.problem.sizes[i]), "problem"});
  const PlanSummary& s = plan.summary;
  const std::pair<const char*, PrintCell> summary[] = {{"points", count(s.points)},
                                                       {"after_constraints", count(s.valid)},
                                                       {"ok", count(s.ok)},
                                                       {"pruned", count(s.pruned)},
                                                       {"compile_failed", count(s.compile_failed)},
                                                       {"compiled", count(s.compiled)},
                                                       {"compiled_ok", count(s.compiled_ok)},
                                                       {"with_warnings", count(s.with_warnings)},
                                                       {"cache_hits", count(s.cache_hits)},
                                                       {"compile_seconds", s.compile_seconds},
                                                       {"wall_seconds", s.wall_seconds},
                                                       {"threads", count(s.threads)},
                                                       {"sample_every", count(s.sample_every)},
                                                       {"planned", count(plan.rows.size())},
                                                       {"shard", format_shard(s.shard)},
                                                       {"in_shard", count(s.in_shard)},
                                                       {"after_constraints_exact", s.valid_exact},
                                                       {"after_constraints_relative_error", s.valid_relative_error},
                                                       {"in_shard_exact", s.in_shard_exact},
                                                       {"in_shard_relative_error", s.in_shard_relative_error},
                                                       {"sampled_uniformly", s.sampled_uniformly},
                                                       {"sampled_by_default", s.sampled_by_default}};
  for (const auto& [key, value] : summary) f.push_back({key, value, "summary"});
  return f;
}

std::vector<PrintColumn> plan_columns(const Space& space) {
  std::vector<PrintColumn> c;
  for (const Axis& a : space.params) c.push_back({.key = a.name, .group = "params"});
  c.push_back({.key = "grid", .shown = Shown::machine});
  c.push_back({.key = "block", .shown = Shown::machine});
  c.push_back({.key = "registers", .heading = "regs"});
  c.push_back({.key = "smem", .shown = Shown::human});  // static + dynamic
  c.push_back({.key = "spill", .heading = "spill st/ld", .shown = Shown::human});
  for (const char* key : {"static_shared_bytes", "dynamic_shared_bytes", "spill_store_bytes", "spill_load_bytes",
                          "stack_frame_bytes", "barriers"})
    c.push_back({.key = key, .shown = Shown::machine});
  c.push_back({.key = "threads", .shown = Shown::human});  // also of a config that cannot launch
  c.push_back({.key = "threads_per_block", .shown = Shown::machine});
  c.push_back({.key = "blocks_per_sm", .heading = "blk/SM"});
  c.push_back({.key = "warps_per_sm", .shown = Shown::machine});
  c.push_back({.key = "occupancy", .shown = Shown::machine});
  c.push_back({.key = "occupancy_percent", .heading = "occ%", .digits = 0, .shown = Shown::human});
  c.push_back({.key = "limiter"});
  c.push_back({.key = "waves", .digits = 2});
  c.push_back({.key = "status"});
  c.push_back({.key = "detail", .max_width = 90});
  c.push_back({.key = "warnings", .shown = Shown::machine});
  c.push_back({.key = "compile_seconds", .shown = Shown::machine});
  c.push_back({.key = "cache_hit", .shown = Shown::machine});
  return c;
}

std::vector<PrintCell> plan_cells(const Space& space, const PlanRow& row) {
  std::vector<PrintCell> cells;
  for (std::size_t i = 0; i < space.params.size(); ++i) {
    const Axis& axis = space.params[i];
    const std::int64_t v = row.config.values[i];
    if (axis.kind == AxisKind::integer)
      cells.push_back(v);
    else if (axis.kind == AxisKind::real)
      cells.push_back(axis.real_of(v));
    else
      cells.push_back(axis.text_of(v));
  }
  auto three = [](const long long(&v)[3]) { return PrintCell(std::vector<std::int64_t>{v[0], v[1], v[2]}); };
  cells.push_back(row.launch ? three(row.launch->grid) : PrintCell());
  cells.push_back(row.launch ? three(row.launch->block) : PrintCell());
  const long long dynamic = row.launch ? row.launch->shared_bytes : 0;
  if (const auto& r = row.resources) {
    cells.insert(cells.end(), {count(r->registers), count(static_cast<long long>(r->static_shared_bytes) + dynamic),
                               fmt::format("{}/{}", r->spill_store_bytes, r->spill_load_bytes),
                               count(r->static_shared_bytes), count(dynamic), count(r->spill_store_bytes),
                               count(r->spill_load_bytes), count(r->stack_frame_bytes), count(r->barriers)});
  } else {
    cells.insert(cells.end(),
                 {PrintCell(), PrintCell(), PrintCell(), PrintCell(), row.launch ? count(dynamic) : PrintCell()});
    cells.insert(cells.end(), 4, PrintCell());
  }
  const Occupancy& o = row.occupancy;
  cells.push_back(count(o.launchable ? o.threads_per_block : row.launch ? row.launch->threads_per_block() : 0));
  if (o.launchable) {
    cells.insert(cells.end(), {count(o.threads_per_block), count(o.blocks_per_sm), count(o.warps_per_sm), o.occupancy,
                               100.0 * o.occupancy, std::string(limiter_name(o.limiter)), o.waves});
  } else {
    cells.insert(cells.end(), 7, PrintCell());
  }
  cells.push_back(std::string(status_name(row.status)));
  cells.push_back(row.detail);
  cells.push_back(row.warnings);
  cells.push_back(row.compile_seconds);
  cells.push_back(row.cache_hit);
  return cells;
}

}  // namespace

void print_plan(std::ostream& out, const Space& space, const Plan& plan, Format format) {
  const PrintFormat printed = format == Format::json  ? PrintFormat::json
                              : format == Format::csv ? PrintFormat::csv
                                                      : PrintFormat::table;
  PrintTable rows{.name = "rows", .columns = plan_columns(space), .footer = summary_text(space, plan)};
  for (const PlanRow& row : plan.rows) rows.rows.push_back(plan_cells(space, row));
  const auto printer = make_printer(printed, out);
  printer->print(PrintDocument{.fields = plan_fields(space, plan), .tables = {std::move(rows)}});
  // A compiler's message may quote a source line that is not UTF-8: said once, as every JSON output does.
  if (printer->replaced_bytes() > 0)
    std::cerr << text_out::replaced_warning(space.yaml_path.string(), printer->replaced_bytes()) << '\n';
}

void print_compile_logs(std::ostream& out, const Space& space, const Plan& plan) {
  // Warnings: each distinct one once, with how many configs gave it and the first of them.
  std::vector<std::pair<std::string, std::pair<const PlanRow*, std::size_t>>> warnings;
  for (const PlanRow& row : plan.rows) {
    if (row.status == TrialStatus::compile_failed) {
      out << fmt::format("--- {} ({}): NVRTC log\n{}\n", space.kernel, format_config(space, row.config),
                         text_out::terminal_text(row.compile_log, /*keep_lines=*/true));
      continue;
    }
    for (const std::string& w : row.warnings) {
      auto it = std::find_if(warnings.begin(), warnings.end(), [&](const auto& e) { return e.first == w; });
      if (it == warnings.end())
        warnings.push_back({w, {&row, 1}});
      else
        ++it->second.second;
    }
  }
  for (const auto& [text, where] : warnings)
    out << fmt::format("--- {} ({}{}): warning: {}\n", space.kernel, format_config(space, where.first->config),
                       where.second > 1 ? fmt::format(" and {} more configs", where.second - 1) : "",
                       text_out::terminal_text(text, /*keep_lines=*/true));
}

}  // namespace tiletune::cli
