// The space of a capture (see tiletune/capture.hpp): the application's space file rewritten for
// one launch. The YAML is edited as a tree (yaml-cpp) rather than printed from the loaded Space,
// so that every expression, constraint and param reaches the capture exactly as its author wrote
// it; only what a capture decides is replaced.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "tiletune/capture.hpp"
#include "tiletune/error.hpp"
#include "tiletune/plan.hpp"

namespace tiletune {
namespace {

/// The params the expression `e` uses.
std::vector<std::string> params_used(const Space& space, const Expr& e) {
  std::vector<std::string> used;
  for (const std::string& v : e.variables())
    if (space.param_index(v) >= 0) used.push_back(v);
  return used;
}

/// The text params some buffer's or argument's element type follows: a capture holds the data of
/// one type, so those params keep the launched value only.
std::set<int> type_params(const Space& space) {
  std::set<int> out;
  for (const BufferSpec& b : space.buffers)
    if (b.type_param >= 0) out.insert(b.type_param);
  for (const ArgSpec& a : space.args)
    if (a.type_param >= 0) out.insert(a.type_param);
  return out;
}

/// A scalar node that is written quoted (a path, whatever characters it holds).
YAML::Node quoted(const std::string& text) {
  YAML::Node n(text);
  n.SetTag("!");
  return n;
}

/// Emits `node` in block style, keeping the quoting of its scalars: a scalar quoted in the
/// application's file (tag "!") stays quoted, a plain one stays plain (the loader tells words
/// from numbers by it).
void emit(YAML::Emitter& out, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: out << YAML::Null; break;
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!")
        out << YAML::DoubleQuoted << node.Scalar();
      else
        out << node.Scalar();
      break;
    case YAML::NodeType::Sequence:
      out << YAML::BeginSeq;
      for (const YAML::Node& item : node) emit(out, item);
      out << YAML::EndSeq;
      break;
    case YAML::NodeType::Map:
      out << YAML::BeginMap;
      for (const auto& kv : node) {
        out << YAML::Key;
        emit(out, kv.first);
        out << YAML::Value;
        emit(out, kv.second);
      }
      out << YAML::EndMap;
      break;
  }
}

const char* compare_name(OutputCheck::Compare c) {
  switch (c) {
    case OutputCheck::Compare::elements: return "elements";
    case OutputCheck::Compare::sum: return "sum";
    case OutputCheck::Compare::none: return "none";
  }
  return "elements";
}

std::string number_text(double v) { return fmt::format("{}", v); }

/// `verify:` of the capture: the launch's outputs as expected files, with the space's checks.
YAML::Node capture_verify(const Space& space) {
  const VerifySpec& v = space.verify;
  if (v.reference == VerifySpec::Reference::none && v.command.empty()) return YAML::Node("none");
  YAML::Node verify;
  if (v.reference == VerifySpec::Reference::none) {
    verify["reference"] = "none";
  } else {
    YAML::Node files;
    for (const BufferSpec& b : space.buffers)
      if (b.output) files[b.name] = quoted("expected/" + b.name + ".npy.gz");
    verify["reference"]["files"] = files;
  }
  YAML::Node outputs;
  for (const OutputCheck& c : v.outputs) {
    YAML::Node o;
    o["compare"] = compare_name(c.compare);
    if (c.count) {
      if (c.count->expr.is_python())
        o["count"]["python"] = quoted(c.count->expr.text());
      else
        o["count"] = quoted(c.count->expr.text());
    }
    o["rtol"] = number_text(c.rtol);
    o["atol"] = number_text(c.atol);
    outputs[c.buffer] = o;
  }
  if (outputs.size() > 0) verify["outputs"] = outputs;
  if (!v.command.empty()) {
    // The program as found from the application's folder; it runs in the capture's folder.
    YAML::Node argv;
    argv.push_back(quoted(v.command.program));
    for (std::size_t i = 1; i < v.command.argv.size(); ++i) argv.push_back(quoted(v.command.argv[i]));
    verify["command"] = argv;
  }
  return verify;
}

}  // namespace

std::optional<std::string> capture_refusal(const Space& space) {
  if (!space.globals.empty())
    return fmt::format(
        "kernel '{}' has module globals (`globals:` {}): the Launcher does not fill them, so a "
        "capture could not reproduce the launch",
        space.kernel, space.globals.front().name);
  for (const BufferSpec& b : space.buffers) {
    const std::vector<std::string> used = params_used(space, b.count.expr);
    if (!used.empty())
      return fmt::format(
          "kernel '{}': the count of buffer '{}' ({}) depends on the param '{}': a capture holds "
          "one size per buffer",
          space.kernel, b.name, b.count.expr.text(), used.front());
  }
  return std::nullopt;
}

std::string capture_space_yaml(const Space& space, const Problem& problem, const Config& config,
                               const std::vector<std::string>& scalars) {
  if (auto why = capture_refusal(space)) throw Error(*why);
  if (scalars.size() != space.args.size())
    throw Error(fmt::format("capture_space_yaml: kernel '{}': {} scalar texts for {} arguments", space.kernel,
                            scalars.size(), space.args.size()));
  YAML::Node root = YAML::Load(read_space_file(space.yaml_path));

  // The kernel version of the application's space: the same source file and options (its -I as
  // absolute directories, which the version records by their role, not their place).
  root["source"] = quoted(space.source.string());
  if (!space.compile_options.empty()) {
    YAML::Node options;
    for (const std::string& o : space_options(space)) options.push_back(quoted(o));
    root["options"] = options;
  }
  if (space.allowed) root["allowed"]["file"] = quoted(space.allowed->file.string());

  // The launch's problem, one value per size.
  if (!space.problem.empty()) {
    YAML::Node sizes;
    for (std::size_t i = 0; i < space.problem.size(); ++i) sizes[space.problem[i].name].push_back(problem.sizes.at(i));
    root["problem"] = sizes;
  }

  // Params: as declared, but a text param a buffer's or scalar's type follows keeps the launched
  // value (the files hold that type).
  for (int p : type_params(space)) {
    const Axis& axis = space.params[static_cast<std::size_t>(p)];
    YAML::Node one;
    one.push_back(axis.text_of(config.values.at(static_cast<std::size_t>(p))));
    root["params"][axis.name] = one;
  }
  YAML::Node chosen;
  for (std::size_t i = 0; i < space.params.size(); ++i)
    chosen[space.params[i].name] = space.params[i].text_of(config.values.at(i));
  root["default"] = chosen;  // the config the application launched: the speedups' baseline

  // Inputs from the files; an output the kernel writes whole keeps its init (it is poisoned
  // before the checked launch, so an element a config leaves unwritten fails).
  for (const BufferSpec& b : space.buffers) {
    const bool written_whole = b.output && (b.init.kind == BufferInit::zero || b.init.kind == BufferInit::none);
    if (written_whole) continue;
    YAML::Node init;
    init["file"] = quoted("inputs/" + b.name + ".npy.gz");
    root["buffers"][b.name]["init"] = init;
  }

  // Scalars that do not depend on params: the values the application passed.
  for (std::size_t i = 0; i < space.args.size(); ++i) {
    if (scalars[i].empty()) continue;
    YAML::Node arg;
    arg["value"] = scalars[i];
    arg["type"] = element_type_name(space.args[i].scalar_type);
    root["args"][i] = arg;
  }

  root["verify"] = capture_verify(space);

  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, root);
  if (!out.good()) throw Error(fmt::format("capture_space_yaml: kernel '{}': {}", space.kernel, out.GetLastError()));
  return std::string(out.c_str()) + "\n";
}

}  // namespace tiletune
