// Where the corpus of kernels written elsewhere lives, for its CPU and GPU tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace tiletune::testing {

[[nodiscard]] inline std::filesystem::path corpus_dir() { return source_dir() / "tests" / "corpus"; }

/// The names of the corpus spaces (NAME.yaml), sorted.
[[nodiscard]] inline std::vector<std::string> corpus_spaces() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(corpus_dir()))
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Corpus spaces of a published tuner's size (Kernel Tuner's convolution: 1404 configs), kept for
/// benchmarks and recordings on the GPU: the CPU test plans a sample of them, the GPU test a budget.
[[nodiscard]] inline bool benchmark_sized(const std::string& name) { return name == "convolution_kt"; }

}  // namespace tiletune::testing
