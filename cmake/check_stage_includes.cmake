# Checks the stage order of tuner/src: a file of stage X may include
#  - its own stage's private headers ("X/..."), never another stage's (common's headers are
#    shared by every stage: common/ holds what the stages share and is first in the order),
#    except those of an earlier stage that names X its friend (below);
#  - a public header (tiletune/...) of X or of a stage before X in the data flow.
# The order: common, space, compile, device, worker, process, db, query, strategy, tune,
# launch, report, interchange, cli. The GPU side is three stages by process: device (what asks
# the driver about a device), worker (what runs in a worker process) and process (the boundary
# between the parent and a worker). query is standalone: it may include only itself and common
# (header-only there: the query library links nothing of the engine). The public headers, in
# tuner/include/tiletune/, are checked as files of the stage that owns them.
#
#   cmake -DSRC=tuner/src -DINCLUDE=tuner/include/tiletune -P cmake/check_stage_includes.cmake
#
# The CMakeLists.txt of each stage folder is checked too: it builds the stage's one library
# (tiletune_stage(X ...) or add_library(tiletune_X ...); cli builds the executable) and links
# no library of a stage it may not include.
#
# Prints one line per violation ("FILE:LINE: ...") and "stage order: N violations", and fails
# when N > 0. A public header no stage owns is a violation too: add it to the list below.

cmake_minimum_required(VERSION 3.20)  # IN_LIST, in script mode too

set(order common space compile device worker process db query strategy tune launch report interchange cli)

# friends_X: the later stages that may include X's private headers. The worker drives the GPU
# through the device stage's driver layer (device/driver.hpp: the dlopen'd driver, checked calls,
# RAII owners); no other stage sees it (code after the worker reaches the driver through the
# public tiletune/cuda_kernel.hpp).
set(friends_device worker)

set(owns_common error.hpp message.hpp status.hpp objective.hpp trial_record.hpp answers.hpp physics.hpp)
set(owns_space expr.hpp python_expr.hpp space.hpp enumerate.hpp shard.hpp data_file.hpp reference.hpp reference.h)
set(owns_compile compile.hpp)
set(owns_device occupancy.hpp device.hpp cuda_kernel.hpp)
set(owns_worker measure.hpp timing.hpp energy.hpp runner.hpp)
set(owns_process worker.hpp)
set(owns_db cache_db.hpp)
set(owns_query query.hpp tiletune.h)
set(owns_strategy strategy.hpp)
set(owns_tune plan.hpp trial.hpp validate.hpp sweep.hpp replay.hpp landscape.hpp scaling.hpp physics_guard.hpp)
set(owns_launch launcher.hpp capture.hpp online.hpp)
set(owns_report report.hpp printer.hpp)
set(owns_interchange interchange.hpp)
set(owns_cli)

if(NOT SRC OR NOT INCLUDE)
  message(FATAL_ERROR "usage: cmake -DSRC=tuner/src -DINCLUDE=tuner/include/tiletune -P check_stage_includes.cmake")
endif()

# The stages a stage may include from, itself included.
function(allowed_stages stage out)
  if(stage STREQUAL "query")
    set(${out} query common PARENT_SCOPE)
    return()
  endif()
  set(allowed)
  foreach(s IN LISTS order)
    list(APPEND allowed ${s})
    if(s STREQUAL stage)
      break()
    endif()
  endforeach()
  set(${out} ${allowed} PARENT_SCOPE)
endfunction()

function(owner_of header out)
  set(${out} "" PARENT_SCOPE)
  foreach(s IN LISTS order)
    if(header IN_LIST owns_${s})
      set(${out} ${s} PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

set(violations 0)

# Checks one file of `stage`; counts into `violations` (in the caller's scope).
function(check_file stage file)
  allowed_stages(${stage} allowed)
  file(READ ${file} text)
  # One list item per line: first take out what CMake's lists treat specially (';' splits,
  # unbalanced '[' ']' glue items together); no #include line needs them.
  string(REGEX REPLACE "[][;\\]" "_" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(n 0)
  set(count ${violations})
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
      continue()
    endif()
    set(path ${CMAKE_MATCH_1})
    if(path MATCHES "^tiletune/(.+)$")
      owner_of(${CMAKE_MATCH_1} owner)
      if(owner STREQUAL "")
        message("${file}:${n}: ${path} belongs to no stage (add it to cmake/check_stage_includes.cmake)")
        math(EXPR count "${count} + 1")
      elseif(NOT owner IN_LIST allowed)
        message("${file}:${n}: stage ${stage} includes ${path} of the later stage ${owner}")
        math(EXPR count "${count} + 1")
      endif()
    elseif(path MATCHES "^([a-z_]+)/")
      set(other ${CMAKE_MATCH_1})
      if(other IN_LIST order AND NOT other STREQUAL stage AND NOT other STREQUAL "common"
         AND NOT (stage IN_LIST friends_${other} AND other IN_LIST allowed))
        message("${file}:${n}: stage ${stage} includes the private header ${path} of stage ${other}")
        math(EXPR count "${count} + 1")
      endif()
    endif()
  endforeach()
  set(violations ${count} PARENT_SCOPE)
endfunction()

# The stage's CMakeLists.txt: its own library, and links that keep the order.
function(check_cmake stage dir)
  set(count ${violations})
  set(lists ${dir}/CMakeLists.txt)
  if(NOT EXISTS ${lists})
    if(NOT stage STREQUAL "cli")
      message("${dir}: stage ${stage} has no CMakeLists.txt building its library tiletune_${stage}")
      math(EXPR count "${count} + 1")
    endif()
    set(violations ${count} PARENT_SCOPE)
    return()
  endif()
  file(READ ${lists} text)
  if(NOT stage STREQUAL "cli" AND NOT text MATCHES "tiletune_stage\\(${stage}[ \n]"
     AND NOT text MATCHES "add_library\\(tiletune_${stage}[ \n]")
    message("${lists}: stage ${stage} builds no library tiletune_${stage}")
    math(EXPR count "${count} + 1")
  endif()
  allowed_stages(${stage} allowed)
  string(REGEX MATCHALL "tiletune_[a-z_]+" tokens "${text}")
  list(REMOVE_DUPLICATES tokens)
  foreach(t IN LISTS tokens)
    string(REGEX REPLACE "^tiletune_" "" other ${t})
    if(other IN_LIST order AND NOT other IN_LIST allowed)
      message("${lists}: stage ${stage} links ${t} of the later stage ${other}")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  set(violations ${count} PARENT_SCOPE)
endfunction()

file(GLOB stage_dirs LIST_DIRECTORIES true ${SRC}/*)
foreach(dir IN LISTS stage_dirs)
  if(NOT IS_DIRECTORY ${dir})
    continue()
  endif()
  get_filename_component(stage ${dir} NAME)
  if(NOT stage IN_LIST order)
    list(JOIN order ", " stages)
    message("${dir}: folder ${stage} is no stage (the stages: ${stages})")
    math(EXPR violations "${violations} + 1")
    continue()
  endif()
  check_cmake(${stage} ${dir})
  file(GLOB_RECURSE files ${dir}/*.cpp ${dir}/*.hpp ${dir}/*.h ${dir}/*.c ${dir}/*.inc ${dir}/*.cu)
  foreach(f IN LISTS files)
    check_file(${stage} ${f})
  endforeach()
endforeach()

file(GLOB headers ${INCLUDE}/*)
foreach(h IN LISTS headers)
  get_filename_component(name ${h} NAME)
  owner_of(${name} owner)
  if(owner STREQUAL "")
    message("${h}: tiletune/${name} belongs to no stage (add it to cmake/check_stage_includes.cmake)")
    math(EXPR violations "${violations} + 1")
  else()
    check_file(${owner} ${h})
  endif()
endforeach()

message("stage order: ${violations} violations")
if(violations GREATER 0)
  message(FATAL_ERROR "the stage order is broken (see above)")
endif()
