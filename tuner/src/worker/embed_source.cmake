# Script mode (cmake -P), run by worker/CMakeLists.txt: writes OUTPUT, the text of INPUT as one C++
# raw string literal, so that a source compiled as C++ on the host is also handed to NVRTC as it
# stands (worker/input_generators.h).
set(delim "tiletune_source")
file(READ ${INPUT} text)
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delim}\"")
endif()
file(WRITE ${OUTPUT}.tmp "// Generated from ${INPUT} by worker/embed_source.cmake; edit that file.\nR\"${delim}(${text})${delim}\"\n")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
