// Prints a YAML file as yaml-cpp reads it (maps as lists of [key, value] pairs, every scalar
// as its text, null as null) in JSON, for yaml_interop.py to compare with another YAML reader.
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <nlohmann/json.hpp>

namespace {

nlohmann::json dump(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json pairs = nlohmann::json::array();
    for (auto it = node.begin(); it != node.end(); ++it) pairs.push_back({dump(it->first), dump(it->second)});
    return {{"map", pairs}};
  }
  if (node.IsSequence()) {
    nlohmann::json items = nlohmann::json::array();
    for (const YAML::Node& item : node) items.push_back(dump(item));
    return items;
  }
  if (node.IsScalar()) return node.Scalar();
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) std::cout << dump(YAML::LoadFile(argv[i])).dump() << "\n";
  return 0;
}
