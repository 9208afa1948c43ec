# Script mode (cmake -P), run by tuner/src/space/CMakeLists.txt: writes OUTPUT, a C++ file
# holding the name and the text of every shipped kernel family (KERNELS_DIR/*.cu), so that the
# loader can tell a space that reuses a shipped family's name with another source.
set(delim "tiletune_cu")
file(GLOB files ${KERNELS_DIR}/*.cu)
list(SORT files)
set(entries "")
foreach(f IN LISTS files)
  get_filename_component(name ${f} NAME_WE)
  file(READ ${f} text)
  string(FIND "${text}" ")${delim}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} contains the raw-string delimiter )${delim}\"")
  endif()
  string(APPEND entries "    {\"${name}\", R\"${delim}(${text})${delim}\"},\n")
endforeach()
file(WRITE ${OUTPUT} "// Generated from kernels/*.cu by tuner/src/space/embed_kernels.cmake. Do not edit.
#include \"space/loader.hpp\"

namespace tiletune::detail {
namespace {
constexpr ShippedFamily kFamilies[] = {
${entries}};
}  // namespace

std::span<const ShippedFamily> shipped_families() { return kFamilies; }

}  // namespace tiletune::detail
")
