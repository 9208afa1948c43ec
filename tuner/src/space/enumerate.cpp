// Lazy enumeration of a space: an odometer over the param axes (last param fastest), each
// point checked against the constraints with values in a reused slot array, so walking
// 10^6 points allocates nothing per point.
#include "tiletune/enumerate.hpp"

#include <limits>

#include <fmt/format.h>

namespace tiletune {

std::string format_config(const Space& space, const Config& config) {
  std::string s;
  for (std::size_t i = 0; i < space.params.size() && i < config.values.size(); ++i) {
    if (i) s += ' ';
    s += space.params[i].name + '=' + space.params[i].text_of(config.values[i]);
  }
  return s;
}

ElementType resolved_type(const Space& space, ElementType type, int type_param, const Config& config) {
  if (type_param < 0) return type;
  const Axis& axis = space.params.at(static_cast<std::size_t>(type_param));
  const std::string label = axis.text_of(config.values.at(static_cast<std::size_t>(type_param)));
  if (auto t = element_type_from_name(label)) return *t;
  throw Error(fmt::format("{}: param {} = '{}' is not an element type", axis.where.str(), axis.name, label));
}

double eval_number(const Space& space, const NumberSpec& number, std::span<const std::int64_t> slots) {
  if (number.real) return *number.real;
  if (number.real_param >= 0) {
    const auto index = static_cast<std::size_t>(number.real_param);
    return space.params.at(index).real_of(slots[space.problem.size() + index]);
  }
  try {
    return static_cast<double>(number.expr.expr.eval(slots));
  } catch (const EvalError& e) {
    throw EvalError(fmt::format("{}: '{}': {}", number.expr.where.str(), number.expr.expr.text(), e.what()));
  }
}

std::filesystem::path expand_path(const Space& space, const std::string& path_template,
                                  const std::filesystem::path& dir, const Problem& problem) {
  std::string out;
  for (std::size_t i = 0; i < path_template.size(); ++i) {
    const std::size_t close = path_template[i] == '{' ? path_template.find('}', i) : std::string::npos;
    const int size = close == std::string::npos ? -1 : space.problem_index(path_template.substr(i + 1, close - i - 1));
    if (size < 0) {
      out += path_template[i];
      continue;
    }
    out += std::to_string(problem.sizes.at(static_cast<std::size_t>(size)));
    i = close;
  }
  std::filesystem::path p(out);
  return (p.is_relative() ? dir / p : p).lexically_normal();
}

std::optional<std::string> buffer_size_problem(const Space& space, const Problem& problem, const Config& config) {
  const std::vector<std::int64_t> slots = slot_values(problem, config);
  std::uint64_t total = 0;
  auto check = [&](const std::string& what, const LocatedExpr& count, ElementType type,
                   int type_param) -> std::optional<std::string> {
    std::int64_t n = 0;
    try {
      n = count.expr.eval(slots);
    } catch (const EvalError& e) {
      return fmt::format("{}: the count of {} '{}': {}", count.where.str(), what, count.expr.text().substr(0, 80),
                         e.what());
    }
    if (n < 1) return fmt::format("{}: {} has {} elements; it needs at least one", count.where.str(), what, n);
    const std::uint64_t size = element_size(resolved_type(space, type, type_param, config));
    const auto elements = static_cast<std::uint64_t>(n);
    if (elements > max_buffer_bytes / size)
      return fmt::format("{}: {} has {} elements of {} bytes, more than the {} GiB a config may allocate",
                         count.where.str(), what, elements, size, max_buffer_bytes >> 30);
    total += elements * size;
    if (total > max_buffer_bytes)
      return fmt::format("{}: with {} the buffers take {} bytes, more than the {} GiB a config may allocate",
                         count.where.str(), what, total, max_buffer_bytes >> 30);
    return std::nullopt;
  };
  for (const BufferSpec& b : space.buffers)
    if (auto why = check("buffer " + b.name, b.count, b.type, b.type_param)) return why;
  for (const GlobalSpec& g : space.globals)
    if (auto why = check("global " + g.name, g.count, g.type, g.type_param)) return why;
  return std::nullopt;
}

std::string expand_option(const OptionTemplate& option, std::span<const std::int64_t> slots) {
  std::string out = option.pieces.empty() ? option.text : option.pieces.front();
  for (std::size_t i = 0; i < option.exprs.size(); ++i) {
    const LocatedExpr& e = option.exprs[i];
    try {
      out += std::to_string(e.expr.eval(slots));
    } catch (const EvalError& err) {
      throw EvalError(fmt::format("{}: option '{}': '{}': {}", e.where.str(), option.text, e.expr.text(), err.what()));
    }
    out += option.pieces.at(i + 1);
  }
  return out;
}

std::vector<Problem> all_problems(const Space& space) {
  std::vector<Problem> problems;
  std::vector<std::size_t> index(space.problem.size(), 0);
  for (const Axis& a : space.problem)
    if (a.values.empty()) return problems;
  while (true) {
    Problem p;
    for (std::size_t i = 0; i < index.size(); ++i) p.sizes.push_back(space.problem[i].values[index[i]]);
    problems.push_back(std::move(p));
    std::size_t k = index.size();
    while (k > 0) {
      --k;
      if (++index[k] < space.problem[k].values.size()) break;
      index[k] = 0;
      if (k == 0) return problems;
    }
    if (index.empty()) return problems;
  }
}

std::vector<std::int64_t> slot_values(const Problem& problem, const Config& config) {
  std::vector<std::int64_t> v(problem.sizes);
  v.insert(v.end(), config.values.begin(), config.values.end());
  return v;
}

Enumerator::Enumerator(const Space& space, Problem problem)
    : space_(&space), problem_(std::move(problem)), odometer_(space.params.size(), 0) {
  slots_ = problem_.sizes;
  slots_.resize(space.problem.size() + space.params.size(), 0);
  product_size_ = 1;
  for (const Axis& a : space.params) {
    const std::uint64_t n = a.values.size();
    if (n == 0) {
      product_size_ = 0;
      break;
    }
    if (product_size_ > std::numeric_limits<std::uint64_t>::max() / n) {
      product_size_ = std::numeric_limits<std::uint64_t>::max();
    } else {
      product_size_ *= n;
    }
  }
  if (space.allowed) product_size_ = space.allowed->size();
  done_ = product_size_ == 0;
}

std::optional<Rejection> Enumerator::check(const Config& config) const {
  if (space_->allowed && !space_->allowed->contains(config.values))
    return Rejection{space_->constraints.size(),
                     "not listed in the allowed configs (" + space_->allowed->file.filename().string() + ")"};
  std::vector<std::int64_t> values = slot_values(problem_, config);
  for (std::size_t i = 0; i < space_->constraints.size(); ++i) {
    const LocatedExpr& c = space_->constraints[i].condition;
    try {
      if (c.expr.eval(values) == 0) return Rejection{i, c.expr.text() + " is false"};
    } catch (const EvalError& e) { return Rejection{i, c.where.str() + ": " + e.what()}; }
  }
  return std::nullopt;
}

std::optional<Config> Enumerator::next() {
  const std::size_t base = space_->problem.size();
  const std::size_t n = space_->params.size();
  while (!done_) {
    if (space_->allowed) {
      const auto listed = space_->allowed->config(allowed_next_);
      std::copy(listed.begin(), listed.end(), slots_.begin() + static_cast<std::ptrdiff_t>(base));
      done_ = ++allowed_next_ == space_->allowed->size();
    } else {
      for (std::size_t i = 0; i < n; ++i) slots_[base + i] = space_->params[i].values[odometer_[i]];
      // Advance the odometer now so that a `return` below leaves it on the next point.
      std::size_t k = n;
      done_ = true;
      while (k > 0) {
        --k;
        if (++odometer_[k] < space_->params[k].values.size()) {
          done_ = false;
          break;
        }
        odometer_[k] = 0;
      }
    }
    ++visited_;
    bool keep = true;
    for (const Constraint& c : space_->constraints) {
      try {
        if (c.condition.expr.eval(slots_) == 0) {
          keep = false;
          break;
        }
      } catch (const EvalError&) {
        ++errored_;
        keep = false;
        break;
      }
    }
    if (keep) {
      ++kept_;
      return Config{std::vector<std::int64_t>(slots_.begin() + static_cast<std::ptrdiff_t>(base), slots_.end())};
    }
  }
  return std::nullopt;
}

SpaceCounts count_configs(const Space& space, const Problem& problem) {
  Enumerator e(space, problem);
  while (e.next()) {}
  return SpaceCounts{e.visited(), e.kept()};
}

}  // namespace tiletune
