# Install and export rules: headers, the query and engine libraries, the CLI, a CMake package
# (find_package(tiletune) -> tiletune::query, tiletune::engine) and pkg-config files.
# Only for the top-level project, and not with TILETUNE_STATIC_DEPS (its imported static
# archives are for building binaries that travel, not for a package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(TILETUNE_STATIC_DEPS)
  message(STATUS "tiletune: install rules are off with TILETUNE_STATIC_DEPS=ON")
  return()
endif()

set(TILETUNE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tiletune)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/tuner/include/tiletune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(_tiletune_export_targets tiletune_engine tiletune_yaml tiletune_sqlite tiletune_fmt)
foreach(stage IN LISTS TILETUNE_ENGINE_STAGES)
  list(APPEND _tiletune_export_targets ${stage})
  string(REPLACE "tiletune_" "stage_" _name ${stage})
  set_target_properties(${stage} PROPERTIES EXPORT_NAME ${_name})
endforeach()
set_target_properties(tiletune_engine PROPERTIES EXPORT_NAME engine)
set_target_properties(tiletune_yaml PROPERTIES EXPORT_NAME detail_yaml)
set_target_properties(tiletune_sqlite PROPERTIES EXPORT_NAME detail_sqlite)
set_target_properties(tiletune_fmt PROPERTIES EXPORT_NAME detail_fmt)
if(TARGET tiletune_query)
  list(APPEND _tiletune_export_targets tiletune_query)
  set_target_properties(tiletune_query PROPERTIES EXPORT_NAME query)
endif()

install(TARGETS ${_tiletune_export_targets} EXPORT tiletuneTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The installed CLI finds the query library next to it, and dlopen finds NVRTC where the toolkit is.
set_target_properties(tiletune PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${CUDAToolkit_LIBRARY_DIR}")
install(TARGETS tiletune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The shipped spaces and kernels, so that `tiletune tune` with no argument works installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs ${PROJECT_SOURCE_DIR}/kernels
  DESTINATION ${CMAKE_INSTALL_DATADIR}/tiletune)
install(EXPORT tiletuneTargets NAMESPACE tiletune:: DESTINATION ${TILETUNE_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tiletuneConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tiletuneConfig.cmake INSTALL_DESTINATION ${TILETUNE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tiletuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tiletuneConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/tiletuneConfigVersion.cmake DESTINATION ${TILETUNE_CMAKE_DIR})

# pkg-config: tiletune-query needs only SQLite; tiletune-engine the whole toolchain.
if(TARGET tiletune_query)
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/tiletune-query.pc CONTENT
"prefix=${CMAKE_INSTALL_PREFIX}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: tiletune-query
Description: Read tiletune's tuning cache: the best CUDA launch config per device, kernel and problem
Version: ${PROJECT_VERSION}
Requires.private: sqlite3
Cflags: -I\${includedir}
Libs: -L\${libdir} -l$<TARGET_FILE_BASE_NAME:tiletune_query> -lsqlite3 -lstdc++ -lpthread -ldl
")
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tiletune-query.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
set(_engine_libs "")
# Later stages first, as a static link needs them.
foreach(stage interchange report launch query tune strategy db process worker device compile space common)
  string(APPEND _engine_libs " -l$<TARGET_FILE_BASE_NAME:tiletune_${stage}>")
endforeach()
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/tiletune-engine.pc CONTENT
"prefix=${CMAKE_INSTALL_PREFIX}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: tiletune-engine
Description: tiletune's engine: YAML spaces, NVRTC compilation, GPU measurement, search, the cache
Version: ${PROJECT_VERSION}
Requires.private: sqlite3 yaml-cpp fmt zlib
Cflags: -I\${includedir} -I${CUDAToolkit_INCLUDE_DIRS}
Libs: -L\${libdir}${_engine_libs} -lyaml-cpp -lsqlite3 -lfmt -lz -lstdc++ -lpthread -ldl
")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tiletune-engine.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
