// Printing a plan as an aligned table, CSV (one row per config) or JSON.
#include "cli/plan_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

namespace tiletune::cli {

namespace {

std::string summary_text(const Space& space, const Plan& plan) {
  const PlanSummary& s = plan.summary;
  std::string text = fmt::format("{} for {}{}{}\n", space.kernel, plan.device.name,
                                 plan.problem.sizes.empty() ? "" : ", ", format_problem(space, plan.problem));
  text += fmt::format("points {}, after constraints {}{}{}, ok {}, pruned {}, compile failures {}\n", s.points, s.valid,
                      s.shard.whole() ? "" : fmt::format(" (shard {}: {})", format_shard(s.shard), s.in_shard),
                      s.sample_every > 1 ? fmt::format(" (planned every {}th: {})", s.sample_every, plan.rows.size()) : "",
                      s.ok, s.pruned, s.compile_failed);
  if (s.with_warnings > 0)
    text += fmt::format("{} configs compiled with warnings (--logs shows them)\n", s.with_warnings);
  if (s.compiled == 0) {
    text += fmt::format("compiled nothing: {} cache hits, {:.2f} s wall\n", s.cache_hits, s.wall_seconds);
  } else {
    text += fmt::format(
        "compiled {} configs in {:.2f} s wall with {} threads ({:.1f} s of NVRTC, {:.0f} ms per config); "
        "{} cache hits\n",
        s.compiled, s.wall_seconds, s.threads, s.compile_seconds, 1000.0 * s.compile_seconds / double(s.compiled),
        s.cache_hits);
  }
  return text;
}

std::string shorten(std::string s, std::size_t n) {
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

nlohmann::json row_json(const Space& space, const PlanRow& row) {
  nlohmann::json j;
  nlohmann::json params = nlohmann::json::object();
  for (std::size_t i = 0; i < space.params.size(); ++i) {
    const Axis& axis = space.params[i];
    if (axis.kind == AxisKind::integer) {
      params[axis.name] = row.config.values[i];
    } else if (axis.kind == AxisKind::real) {
      params[axis.name] = axis.real_of(row.config.values[i]);
    } else {
      params[axis.name] = axis.text_of(row.config.values[i]);
    }
  }
  j["params"] = params;
  j["status"] = std::string(status_name(row.status));
  j["detail"] = row.detail;
  if (row.launch) {
    j["grid"] = {row.launch->grid[0], row.launch->grid[1], row.launch->grid[2]};
    j["block"] = {row.launch->block[0], row.launch->block[1], row.launch->block[2]};
    j["dynamic_shared_bytes"] = row.launch->shared_bytes;
  }
  if (row.resources) {
    j["registers"] = row.resources->registers;
    j["static_shared_bytes"] = row.resources->static_shared_bytes;
    j["spill_store_bytes"] = row.resources->spill_store_bytes;
    j["spill_load_bytes"] = row.resources->spill_load_bytes;
    j["stack_frame_bytes"] = row.resources->stack_frame_bytes;
    j["barriers"] = row.resources->barriers;
  }
  if (row.occupancy.launchable) {
    j["threads_per_block"] = row.occupancy.threads_per_block;
    j["blocks_per_sm"] = row.occupancy.blocks_per_sm;
    j["warps_per_sm"] = row.occupancy.warps_per_sm;
    j["occupancy"] = row.occupancy.occupancy;
    j["limiter"] = limiter_name(row.occupancy.limiter);
    j["waves"] = row.occupancy.waves;
  }
  j["warnings"] = row.warnings;
  j["compile_seconds"] = row.compile_seconds;
  j["cache_hit"] = row.cache_hit;
  return j;
}

}  // namespace

void print_plan(std::ostream& out, const Space& space, const Plan& plan, Format format) {
  if (format == Format::json) {
    nlohmann::json j;
    j["kernel"] = space.kernel;
    j["space"] = space.yaml_path.string();
    j["device"] = {{"name", plan.device.name}, {"arch", fmt::format("sm_{}", plan.device.arch())},
                   {"sm_count", plan.device.sm_count}};
    nlohmann::json problem = nlohmann::json::object();
    for (std::size_t i = 0; i < space.problem.size(); ++i) problem[space.problem[i].name] = plan.problem.sizes[i];
    j["problem"] = problem;
    j["rows"] = nlohmann::json::array();
    for (const PlanRow& row : plan.rows) j["rows"].push_back(row_json(space, row));
    const PlanSummary& s = plan.summary;
    j["summary"] = {{"points", s.points},           {"after_constraints", s.valid},
                    {"ok", s.ok},                   {"pruned", s.pruned},
                    {"compile_failed", s.compile_failed}, {"compiled", s.compiled},
                    {"compiled_ok", s.compiled_ok},   {"with_warnings", s.with_warnings},
                    {"cache_hits", s.cache_hits},   {"compile_seconds", s.compile_seconds},
                    {"wall_seconds", s.wall_seconds}, {"threads", s.threads},
                    {"sample_every", s.sample_every}, {"planned", plan.rows.size()},
                    {"shard", format_shard(s.shard)}, {"in_shard", s.in_shard}};
    out << j.dump(2) << '\n';
    return;
  }
  if (format == Format::csv) {
    for (const Axis& a : space.params) out << a.name << ',';
    out << "status,registers,static_shared_bytes,dynamic_shared_bytes,spill_store_bytes,spill_load_bytes,"
           "stack_frame_bytes,threads_per_block,blocks_per_sm,occupancy,limiter,waves,compile_ms,cache_hit,detail\n";
    for (const PlanRow& row : plan.rows) {
      for (std::size_t i = 0; i < space.params.size(); ++i) out << space.params[i].text_of(row.config.values[i]) << ',';
      out << status_name(row.status) << ',';
      if (row.resources) {
        out << fmt::format("{},{},{},{},{},{},", row.resources->registers, row.resources->static_shared_bytes,
                           row.launch ? row.launch->shared_bytes : 0, row.resources->spill_store_bytes,
                           row.resources->spill_load_bytes, row.resources->stack_frame_bytes);
      } else {
        out << ",,,,,,";
      }
      if (row.occupancy.launchable) {
        out << fmt::format("{},{},{:.4f},{},{:.3f},", row.occupancy.threads_per_block, row.occupancy.blocks_per_sm,
                           row.occupancy.occupancy, limiter_name(row.occupancy.limiter), row.occupancy.waves);
      } else {
        out << ",,,,,";
      }
      std::string detail = shorten(row.detail, 200);
      for (char& c : detail)
        if (c == '"') c = '\'';
      out << fmt::format("{:.1f},{},\"{}\"\n", row.compile_seconds * 1000.0, row.cache_hit ? 1 : 0, detail);
    }
    return;
  }
  // Table.
  std::string header;
  // A param's column fits its name and its longest value (a word such as "double").
  auto width = [](const Axis& a) {
    std::size_t w = std::max<std::size_t>(a.name.size(), 4);
    for (const std::string& label : a.labels) w = std::max(w, label.size());
    return w;
  };
  for (const Axis& a : space.params) header += fmt::format("{:>{}} ", a.name, width(a));
  header += fmt::format("{:>5} {:>7} {:>11} {:>7} {:>6} {:>6} {:>13} {:>6}  {}", "regs", "smem", "spill st/ld",
                        "threads", "blk/SM", "occ%", "limiter", "waves", "status");
  out << header << '\n';
  for (const PlanRow& row : plan.rows) {
    std::string line;
    for (std::size_t i = 0; i < space.params.size(); ++i)
      line += fmt::format("{:>{}} ", space.params[i].text_of(row.config.values[i]), width(space.params[i]));
    if (row.resources) {
      const long long smem = row.resources->static_shared_bytes + (row.launch ? row.launch->shared_bytes : 0);
      line += fmt::format("{:>5} {:>7} {:>11} ", row.resources->registers, smem,
                          fmt::format("{}/{}", row.resources->spill_store_bytes, row.resources->spill_load_bytes));
    } else {
      line += fmt::format("{:>5} {:>7} {:>11} ", "-", "-", "-");
    }
    if (row.occupancy.launchable) {
      line += fmt::format("{:>7} {:>6} {:>5.0f}% {:>13} {:>6.2f}", row.occupancy.threads_per_block,
                          row.occupancy.blocks_per_sm, 100.0 * row.occupancy.occupancy,
                          limiter_name(row.occupancy.limiter), row.occupancy.waves);
    } else {
      line += fmt::format("{:>7} {:>6} {:>6} {:>13} {:>6}", row.launch ? row.launch->threads_per_block() : 0, "-", "-",
                          "-", "-");
    }
    line += fmt::format("  {}", status_name(row.status));
    if (!row.detail.empty()) line += ": " + shorten(row.detail, 90);
    out << line << '\n';
  }
  out << summary_text(space, plan);
}

void print_compile_logs(std::ostream& out, const Space& space, const Plan& plan) {
  // Warnings: each distinct one once, with how many configs gave it and the first of them.
  std::vector<std::pair<std::string, std::pair<const PlanRow*, std::size_t>>> warnings;
  for (const PlanRow& row : plan.rows) {
    if (row.status == TrialStatus::compile_failed) {
      out << fmt::format("--- {} ({}): NVRTC log\n{}\n", space.kernel, format_config(space, row.config),
                         row.compile_log);
      continue;
    }
    for (const std::string& w : row.warnings) {
      auto it = std::find_if(warnings.begin(), warnings.end(), [&](const auto& e) { return e.first == w; });
      if (it == warnings.end()) warnings.push_back({w, {&row, 1}});
      else ++it->second.second;
    }
  }
  for (const auto& [text, where] : warnings)
    out << fmt::format("--- {} ({}{}): warning: {}\n", space.kernel, format_config(space, where.first->config),
                       where.second > 1 ? fmt::format(" and {} more configs", where.second - 1) : "", text);
}

}  // namespace tiletune::cli
