// A space built in code for the space-stage tests: problem axes, integer params and
// constraints (parsed and bound to the space's names), nothing else.
#pragma once

#include <string>
#include <vector>

#include "tiletune/space.hpp"

namespace tiletune::testing {

[[nodiscard]] inline Space make_space(std::vector<Axis> problem, std::vector<Axis> params,
                                      const std::vector<std::string>& constraints) {
  Space s;
  s.kernel = "k";
  s.problem = std::move(problem);
  s.params = std::move(params);
  const auto names = s.variable_names();
  for (const auto& text : constraints) {
    Constraint c;
    c.condition.expr = Expr::parse(text);
    c.condition.expr.bind(names);
    s.constraints.push_back(std::move(c));
  }
  return s;
}

}  // namespace tiletune::testing
