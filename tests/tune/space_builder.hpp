// Spaces built in code for the tests of the search stage: each piece gets a line of its own
// in a pretend YAML file, so that a test can assert which place an error points to.
#pragma once

#include <string>

#include "tiletune/space.hpp"

namespace tiletune::testing {

struct SpaceBuilder {
  Space space;
  int next_line = 1;

  SpaceBuilder(std::string kernel, std::filesystem::path source) {
    space.yaml_path = "/spaces/" + kernel + ".yaml";
    space.kernel = std::move(kernel);
    space.source = std::move(source);
    space.entry = space.kernel;
  }

  SourceLocation at(int line) const { return {space.yaml_path.string(), line, 3}; }
  SourceLocation line() { return at(next_line++); }

  Axis& problem(const std::string& name, std::vector<std::int64_t> values) {
    space.problem.push_back({name, std::move(values), line()});
    return space.problem.back();
  }
  Axis& param(const std::string& name, std::vector<std::int64_t> values) {
    space.params.push_back({name, std::move(values), line()});
    return space.params.back();
  }
  Axis& text_param(const std::string& name, std::vector<std::string> labels, AxisKind kind = AxisKind::text) {
    Axis a{name, {}, line(), kind, std::move(labels)};
    for (std::size_t i = 0; i < a.labels.size(); ++i) a.values.push_back(static_cast<std::int64_t>(i));
    space.params.push_back(std::move(a));
    return space.params.back();
  }

  /// An expression bound to the space's slots (problem sizes and params so far).
  LocatedExpr expr(const std::string& text, std::vector<std::string> names = {}) {
    LocatedExpr e{Expr::parse(text), line()};
    if (names.empty()) names = space.variable_names();
    e.expr.bind(names);
    return e;
  }
  NumberSpec number(double v) {
    NumberSpec n;
    n.real = v;
    n.where = line();
    return n;
  }
  NumberSpec integer(const std::string& text) {
    NumberSpec n;
    n.expr = expr(text);
    n.where = n.expr.where;
    return n;
  }

  BufferSpec& buffer(const std::string& name, ElementType type, const std::string& count, BufferInit init,
                     bool output = false) {
    BufferSpec b;
    b.name = name;
    b.type = type;
    b.where = line();
    b.count = expr(count);
    b.init.kind = init;
    if (init != BufferInit::zero) b.init.where = line();  // written in the YAML
    b.output = output;
    space.buffers.push_back(std::move(b));
    return space.buffers.back();
  }
  GlobalSpec& global(const std::string& name, ElementType type, const std::string& count, BufferInit init) {
    GlobalSpec g;
    g.name = name;
    g.type = type;
    g.where = line();
    g.count = expr(count);
    g.init.kind = init;
    g.init.where = line();
    space.globals.push_back(std::move(g));
    return space.globals.back();
  }
  void arg_buffer(const std::string& name) {
    ArgSpec a;
    a.kind = ArgSpec::Kind::buffer;
    a.buffer = name;
    a.where = line();
    space.args.push_back(std::move(a));
  }
  ArgSpec& arg_scalar(NumberSpec value, ElementType type = ElementType::i32) {
    ArgSpec a;
    a.value = std::move(value);
    a.scalar_type = type;
    a.where = line();
    space.args.push_back(std::move(a));
    return space.args.back();
  }
  void launch(const std::string& grid, const std::string& block) {
    space.launch.grid[0] = expr(grid);
    space.launch.block[0] = expr(block);
    for (int d = 1; d < 3; ++d) {
      space.launch.grid[d] = expr("1");
      space.launch.block[d] = expr("1");
    }
    space.launch.shared_bytes = expr("0");
  }
  /// verify with one check per output buffer (elements, whole buffer, exact).
  VerifySpec& verify(VerifySpec::Reference reference) {
    space.verify.reference = reference;
    space.verify.where = line();
    space.verify.outputs.clear();
    for (const BufferSpec& b : space.buffers) {
      if (!b.output) continue;
      OutputCheck c;
      c.buffer = b.name;
      c.where = line();
      space.verify.outputs.push_back(std::move(c));
    }
    return space.verify;
  }
  OutputCheck& check(const std::string& buffer) {
    for (OutputCheck& c : space.verify.outputs)
      if (c.buffer == buffer) return c;
    throw Error("no check of " + buffer);
  }
};

}  // namespace tiletune::testing
