# CMake toolchain file for building the store's engine (LadybugDB) from
# source: a "unity" build, which compiles its ~1,100 C++ files in batches of
# eight, each batch one compiler run. The engine's headers are heavy and
# shared by every file, so a batch costs little more than one of its files:
# on 2 cores the engine builds in about half the time (45 core-minutes
# against 100), which is what lets `.ci/run` fit in 90 minutes on a new
# machine. `scripts/env.sh` names this file in CMAKE_TOOLCHAIN_FILE, which
# the `cmake` crate passes on; it is read when a build directory is first
# configured.
#
# Batching puts files in one scope, so two files that each define a static
# function of the same name (or whose `using` declarations collide) cannot
# share a batch. Those found by building LadybugDB 0.22.1 with clang 19 are
# listed below: whole directories where many files collide, single files
# elsewhere. A new engine version may bring new collisions; the compiler
# then names the file ("redefinition of ..."), and it goes in a list.

set(CMAKE_UNITY_BUILD ON)

# Directories (relative to the engine's source root) whose targets are not
# batched.
set(DIFFIDX_UNITY_OFF_DIRS
  third_party/brotli
  src/function/aggregate
  src/function/export
  src/function/list
  src/function/map
  src/function/path
  src/function/pattern
  src/function/string
  src/function/table
  src/function/union
  src/function/utility
)

# Files compiled on their own.
set(DIFFIDX_UNITY_ALONE
  src/binder/bind_expression/bind_property_expression.cpp
  src/catalog/catalog_entry/rel_group_catalog_entry.cpp
  src/common/types/uint128_t.cpp
  src/optimizer/order_by_push_down_optimizer.cpp
  src/processor/operator/order_by/order_by_key_encoder.cpp
  src/processor/operator/order_by/radix_sort.cpp
  src/processor/operator/persistent/reader/csv/serial_csv_reader.cpp
  src/storage/table/arrow_rel_table.cpp
  src/storage/wal/checksum_writer.cpp
  third_party/re2/nfa.cpp
)

# Applies the two lists to every target under `dir`, once all are defined.
function(diffidx_unity_exceptions dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(target_dir ${target} SOURCE_DIR)
    cmake_path(RELATIVE_PATH target_dir BASE_DIRECTORY ${CMAKE_SOURCE_DIR}
      OUTPUT_VARIABLE target_relative)
    foreach(off IN LISTS DIFFIDX_UNITY_OFF_DIRS)
      cmake_path(IS_PREFIX off "${target_relative}" NORMALIZE off_here)
      if(off_here)
        set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
      endif()
    endforeach()
    get_target_property(sources ${target} SOURCES)
    if(NOT sources)
      continue()
    endif()
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${target_dir} NORMALIZE
        OUTPUT_VARIABLE absolute)
      cmake_path(RELATIVE_PATH absolute BASE_DIRECTORY ${CMAKE_SOURCE_DIR}
        OUTPUT_VARIABLE relative)
      if(relative IN_LIST DIFFIDX_UNITY_ALONE)
        set_source_files_properties(${absolute} TARGET_DIRECTORY ${target}
          PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    diffidx_unity_exceptions(${subdir})
  endforeach()
endfunction()

# A toolchain file is read more than once (per language, per try_compile):
# the exceptions are scheduled once, for the end of the top directory.
get_property(scheduled GLOBAL PROPERTY DIFFIDX_UNITY_SCHEDULED)
if(NOT scheduled)
  set_property(GLOBAL PROPERTY DIFFIDX_UNITY_SCHEDULED ON)
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR}
    CALL diffidx_unity_exceptions ${CMAKE_SOURCE_DIR})
endif()
