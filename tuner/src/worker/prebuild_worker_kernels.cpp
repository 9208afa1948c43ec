// Build-time tool: compiles the worker's kernels (worker/worker_kernels_compile.cpp) for each arch
// named that this NVRTC supports, and writes them as a C++ source of string literals, which the
// worker stage compiles in (worker/prebuilt_worker_kernels.hpp). A worker on one of those archs then
// starts without NVRTC: on the H200's host that compile was 0.6-0.8 s of a 0.9 s start.
//
//   tiletune_prebuild_worker_kernels OUTPUT.cpp ARCH...     (ARCH: 90, or sm_90)
//
// OUTPUT is replaced only when its text changes, so an unchanged image recompiles nothing.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "worker/worker_kernels_compile.hpp"
#include "tiletune/error.hpp"

namespace {

using tiletune::CompiledKernel;

// The bytes as adjacent literals of octal escapes: exact for every byte (NULs included) and
// quick for the compiler, where a brace list of numbers is slow at this size.
void write_literal(std::ostream& out, std::string_view bytes) {
  constexpr std::size_t kPerLine = 40;
  for (std::size_t i = 0; i < bytes.size(); i += kPerLine) {
    out << "    \"";
    for (std::size_t j = i; j < std::min(bytes.size(), i + kPerLine); ++j)
      out << fmt::format("\\{:03o}", static_cast<unsigned char>(bytes[j]));
    out << "\"\n";
  }
}

std::string generated_source(const std::vector<std::pair<int, std::string>>& images) {
  std::ostringstream out;
  out << "// Generated at build time by tiletune_prebuild_worker_kernels (worker/prebuild_worker_kernels.cpp).\n"
         "#include \"worker/prebuilt_worker_kernels.hpp\"\n\nnamespace tiletune {\nnamespace {\n\n";
  for (const auto& [arch, cubin] : images) {
    out << fmt::format("constexpr char kSm{}[] =\n", arch);
    write_literal(out, cubin);
    out << "    ;\n\n";
  }
  if (!images.empty()) {
    out << "constexpr PrebuiltImage kImages[] = {\n";
    for (const auto& [arch, cubin] : images) out << fmt::format("    {{{0}, {{kSm{0}, sizeof kSm{0} - 1}}}},\n", arch);
    out << "};\n\n";
  }
  out << "}  // namespace\n\nstd::span<const PrebuiltImage> prebuilt_worker_kernel_images() noexcept {\n"
      << (images.empty() ? "  return {};  // none asked for (TILETUNE_PREBUILT_ARCHS)\n" : "  return kImages;\n")
      << "}\n\n}  // namespace tiletune\n";
  return out.str();
}

int parse_arch(std::string text) {
  if (text.rfind("sm_", 0) == 0) text.erase(0, 3);
  std::size_t end = 0;
  const int arch = std::stoi(text, &end);
  if (end != text.size() || arch <= 0) throw tiletune::Error(fmt::format("'{}' is not an arch (90, sm_90)", text));
  return arch;
}

void write_if_changed(const std::filesystem::path& path, const std::string& text) {
  std::ifstream old(path, std::ios::binary);
  if (old) {
    const std::string have((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
    if (have == text) return;
  }
  const std::filesystem::path temp = path.string() + ".tmp";
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw tiletune::Error(fmt::format("cannot write {}", temp.string()));
  std::filesystem::rename(temp, path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: tiletune_prebuild_worker_kernels OUTPUT.cpp ARCH...\n";
    return 2;
  }
  try {
    const std::vector<int> supported = tiletune::nvrtc_supported_archs();
    std::vector<int> archs;
    for (int i = 2; i < argc; ++i) {
      const int arch = parse_arch(argv[i]);
      if (std::find(supported.begin(), supported.end(), arch) == supported.end()) {
        std::cerr << fmt::format(
            "tiletune_prebuild_worker_kernels: NVRTC {} has no sm_{}: not prebuilt (a worker "
            "on it compiles its kernels at start)\n",
            tiletune::nvrtc_version(), arch);
        continue;
      }
      if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
    }
    std::sort(archs.begin(), archs.end());
    // One thread per arch: NVRTC compiles in parallel up to about three threads.
    std::vector<std::future<CompiledKernel>> compiles;
    for (const int arch : archs)
      compiles.push_back(
          std::async(std::launch::async, [arch] { return tiletune::compile_worker_kernels(arch, -1, nullptr); }));
    std::vector<std::pair<int, std::string>> images;
    for (std::size_t i = 0; i < archs.size(); ++i) images.emplace_back(archs[i], compiles[i].get().cubin);
    write_if_changed(argv[1], generated_source(images));
  } catch (const std::exception& e) {
    std::cerr << "tiletune_prebuild_worker_kernels: " << e.what()
              << "\n(configure with -DTILETUNE_PREBUILT_ARCHS= to build without prebuilt worker kernels)\n";
    return 1;
  }
  return 0;
}
