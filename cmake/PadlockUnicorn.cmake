# Unicorn 2.1.4, built from its PyPI source distribution with our patch series
# (cmake/unicorn/patches/series: one change per patch, each with a DEP-3 header; the list,
# with each patch's size, is docs/emulator.md "Unicorn", and docs/upstreaming.md says which
# could go upstream). Among them: no exit check after each guest load and store, an inline
# one at the start of each block, block costs and a block log in generated code, direct
# guest memory, the PadLock helper, chaining across pages, QEMU's i386 target for 32-bit
# guests, whole REP strings, the pending stop, SSE2 operations and pinned registers.
# The wheel's prebuilt library has none of these; with it, plain x86 code ran 3.6x slower
# than qemu-i386 (the goal is 1.3x, docs/emulator.md).
#
# The sdist comes from PyPI (pip download, or PADLOCK_UNICORN_SDIST), is checked against a
# pinned SHA-256, patched with the series in order (no fuzz: each patch must apply as
# made) and built for x86 only as a static library with two targets: QEMU's x86-64 one
# for 64-bit guests and its i386 one (UNICORN_X86_I386, added by i386-target.patch) for
# 32-bit guests, whose registers then need no zero extension after each write. The library
# and its public header are kept in PADLOCK_DEPS_CACHE under a key of the sdist, the
# series' contents (its list and every patch it names), the C compiler's identity and
# version and the build options, so another build tree (a fresh clone, scripts/demo.sh) with the same key links
# that one instead of building Unicorn again (about four minutes of a two-core machine).
set(PADLOCK_UNICORN_VERSION 2.1.4)
set(PADLOCK_UNICORN_SHA256 00567a70e323f749b419cd86bee4f9115beab7ebba32194581c090cbb7c59cff)
set(PADLOCK_UNICORN_SDIST "" CACHE FILEPATH
    "unicorn-${PADLOCK_UNICORN_VERSION}.tar.gz from PyPI (downloaded with pip when empty)")
set(PADLOCK_DEPS_CACHE "$ENV{HOME}/.cache/padlock-emu" CACHE PATH
    "where the Unicorn sdist is kept between builds")

set(_uc_name "unicorn-${PADLOCK_UNICORN_VERSION}")
set(_uc_series "${CMAKE_CURRENT_LIST_DIR}/unicorn/patches/series")
set(_uc_sdist "${PADLOCK_UNICORN_SDIST}")
if(NOT _uc_sdist)
  set(_uc_sdist "${PADLOCK_DEPS_CACHE}/${_uc_name}.tar.gz")
endif()

function(_padlock_unicorn_hash_ok file out)
  set(${out} FALSE PARENT_SCOPE)
  if(EXISTS "${file}")
    file(SHA256 "${file}" h)
    if(h STREQUAL PADLOCK_UNICORN_SHA256)
      set(${out} TRUE PARENT_SCOPE)
    endif()
  endif()
endfunction()

_padlock_unicorn_hash_ok("${_uc_sdist}" _uc_ok)
if(NOT _uc_ok AND NOT PADLOCK_UNICORN_SDIST)
  message(STATUS "padlock-emu: downloading ${_uc_name}.tar.gz from PyPI")
  get_filename_component(_uc_dir "${_uc_sdist}" DIRECTORY)
  file(MAKE_DIRECTORY "${_uc_dir}")
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -m pip download --quiet --no-deps --no-binary :all:
            "unicorn==${PADLOCK_UNICORN_VERSION}" -d "${_uc_dir}"
    RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "padlock-emu: could not download ${_uc_name}.tar.gz from PyPI "
                        "(pip download exit ${rc}); pass -DPADLOCK_UNICORN_SDIST=FILE")
  endif()
  _padlock_unicorn_hash_ok("${_uc_sdist}" _uc_ok)
endif()
if(NOT _uc_ok)
  message(FATAL_ERROR "padlock-emu: ${_uc_sdist} is missing or is not the pinned "
                      "${_uc_name}.tar.gz (SHA-256 ${PADLOCK_UNICORN_SHA256})")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/PadlockSeries.cmake")
padlock_read_series("${_uc_series}" _uc_patches _uc_series_hash)
set(_uc_want "${PADLOCK_UNICORN_SHA256} ${_uc_series_hash}")

# Another padlock-emu build tree's Unicorn can be reused (worktrees, packaging), but only
# when it was built from the same sdist and the same series: its stamp must match ours.
set(PADLOCK_UNICORN_FROM "" CACHE PATH
    "a padlock-emu build directory whose patched Unicorn to reuse instead of building it")
if(PADLOCK_UNICORN_FROM)
  set(_uc_from_stamp "${PADLOCK_UNICORN_FROM}/_deps/${_uc_name}/.padlock-patched")
  set(_uc_from_have "")
  if(EXISTS "${_uc_from_stamp}")
    file(READ "${_uc_from_stamp}" _uc_from_have)
  endif()
  set(_uc_from_lib "${PADLOCK_UNICORN_FROM}/_deps/${_uc_name}-build/libunicorn.a")
  if(NOT _uc_from_have STREQUAL _uc_want OR NOT EXISTS "${_uc_from_lib}")
    message(FATAL_ERROR "padlock-emu: PADLOCK_UNICORN_FROM=${PADLOCK_UNICORN_FROM} has no "
                        "Unicorn built from this sdist and cmake/unicorn/patches/series")
  endif()
  padlock_shared_include(unicorn "${PADLOCK_UNICORN_FROM}/_deps/${_uc_name}/public-include"
                         _uc_include)
  add_library(padlock_unicorn STATIC IMPORTED GLOBAL)
  set_target_properties(padlock_unicorn PROPERTIES
    IMPORTED_LOCATION "${_uc_from_lib}"
    INTERFACE_INCLUDE_DIRECTORIES "${_uc_include}"
    INTERFACE_LINK_LIBRARIES "pthread;m;dl")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_uc_series}" ${_uc_patches})
  return()
endif()

set(_uc_options -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON
                -DUNICORN_ARCH=x86 -DBUILD_SHARED_LIBS=OFF -DUNICORN_LEGACY_STATIC_ARCHIVE=ON
                -DUNICORN_BUILD_TESTS=OFF -DUNICORN_INSTALL=OFF -DUNICORN_X86_I386=ON)
set(_uc_args -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} ${_uc_options})
# The key names the compiler by what it is (identity and version), not where it is:
# /usr/bin/cc, /usr/bin/gcc and a pip build's path to the same GCC share one build.
string(SHA256 _uc_key
       "${_uc_want} ${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION} ${_uc_options}")
string(SUBSTRING "${_uc_key}" 0 16 _uc_key)
set(_uc_cached "${PADLOCK_DEPS_CACHE}/${_uc_name}-padlock-${_uc_key}")
message(STATUS "padlock-emu: Unicorn's cache key ${_uc_key} (${CMAKE_C_COMPILER_ID} "
               "${CMAKE_C_COMPILER_VERSION})")

# Extract and patch at configure time, once per (sdist, series) pair.
set(_uc_root "${CMAKE_BINARY_DIR}/_deps/${_uc_name}")
set(_uc_stamp "${_uc_root}/.padlock-patched")
set(_uc_have "")
if(EXISTS "${_uc_stamp}")
  file(READ "${_uc_stamp}" _uc_have)
endif()
set(_uc_build "${CMAKE_BINARY_DIR}/_deps/${_uc_name}-build")
set(_uc_prefix "${CMAKE_BINARY_DIR}/_deps/${_uc_name}-ep")
if(NOT _uc_have STREQUAL _uc_want)
  # A fresh tree and a fresh build: extraction restores the archive's file times, which
  # could be older than objects compiled from an earlier series.
  file(REMOVE_RECURSE "${_uc_root}" "${_uc_build}" "${_uc_prefix}")
  file(ARCHIVE_EXTRACT INPUT "${_uc_sdist}" DESTINATION "${CMAKE_BINARY_DIR}/_deps")
  find_program(PADLOCK_PATCH_EXE patch REQUIRED)
  foreach(p IN LISTS _uc_patches)
    execute_process(COMMAND ${PADLOCK_PATCH_EXE} -p1 --forward --fuzz=0 --quiet -i "${p}"
                    WORKING_DIRECTORY "${_uc_root}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "padlock-emu: ${p} does not apply to ${_uc_name} after the "
                          "patches before it in ${_uc_series}")
    endif()
  endforeach()
  # Only the public header goes on our include path, not Unicorn's internal ones.
  file(COPY "${_uc_root}/src/include/unicorn" DESTINATION "${_uc_root}/public-include")
  file(WRITE "${_uc_stamp}" "${_uc_want}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_uc_series}" ${_uc_patches})
padlock_shared_include(unicorn "${_uc_root}/public-include" _uc_include)

if(EXISTS "${_uc_cached}/libunicorn.a")
  # Built before with the same key: link the cached library. It also goes where
  # PADLOCK_UNICORN_FROM looks for it, so this tree can lend it to others too.
  message(STATUS "padlock-emu: Unicorn from ${_uc_cached}")
  if(NOT EXISTS "${_uc_build}/libunicorn.a")
    file(MAKE_DIRECTORY "${_uc_build}")
    file(CREATE_LINK "${_uc_cached}/libunicorn.a" "${_uc_build}/libunicorn.a" SYMBOLIC)
  endif()
  add_library(padlock_unicorn STATIC IMPORTED GLOBAL)
  set_target_properties(padlock_unicorn PROPERTIES
    IMPORTED_LOCATION "${_uc_cached}/libunicorn.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_uc_include}"
    INTERFACE_LINK_LIBRARIES "pthread;m;dl")
  return()
endif()

include(ExternalProject)
set(_uc_lib "${_uc_build}/libunicorn.a")
ExternalProject_Add(padlock_unicorn_build
  PREFIX "${_uc_prefix}"
  SOURCE_DIR "${_uc_root}/src"
  BINARY_DIR "${_uc_build}"
  CMAKE_ARGS ${_uc_args}
  # Into the cache: copied under a temporary name and renamed, so that a build tree never
  # links a half-written library (another build that got there first wins).
  INSTALL_COMMAND ${CMAKE_COMMAND} -DLIB=${_uc_lib} -DDEST=${_uc_cached}
                  -P ${CMAKE_CURRENT_LIST_DIR}/unicorn/cache-unicorn.cmake
  # Let Unicorn's own build decide what to recompile (a no-op when nothing changed).
  BUILD_ALWAYS ON
  BUILD_BYPRODUCTS "${_uc_lib}")

add_library(padlock_unicorn STATIC IMPORTED GLOBAL)
add_dependencies(padlock_unicorn padlock_unicorn_build)
set_target_properties(padlock_unicorn PROPERTIES
  IMPORTED_LOCATION "${_uc_lib}"
  INTERFACE_INCLUDE_DIRECTORIES "${_uc_include}"
  INTERFACE_LINK_LIBRARIES "pthread;m;dl")
