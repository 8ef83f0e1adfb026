# System mode's QEMU (docs/system.md): Debian's QEMU 7.2 source, pinned and checked by
# SHA-256 (cmake/qemu/qemu-source.env), with our patch series (cmake/qemu/patches/series,
# applied after Debian's own), built TCG-only for i386-softmmu and x86_64-softmmu by
# cmake/qemu/build-qemu.sh into a cache directory keyed by the source, the series (its
# list and every patch it names) and the C ABI header it includes. QEMU loads the models
# from libpadlock-system.so at run time, so changing them rebuilds no QEMU.
option(PADLOCK_BUILD_QEMU "Build system mode's patched QEMU (cached; docs/system.md)" OFF)
set(PADLOCK_DEPS_CACHE "$ENV{HOME}/.cache/padlock-emu" CACHE PATH
    "where downloaded and built dependencies are kept between builds")
set(PADLOCK_QEMU_TARGETS "i386-softmmu;x86_64-softmmu" CACHE STRING
    "QEMU system targets to build")

set(_q_dir "${CMAKE_CURRENT_LIST_DIR}/qemu")
set(_q_inputs "${_q_dir}/qemu-source.env" "${_q_dir}/build-qemu.sh"
              "${PROJECT_SOURCE_DIR}/emulator/system/padlock_system.h")
include("${CMAKE_CURRENT_LIST_DIR}/PadlockSeries.cmake")
padlock_read_series("${_q_dir}/patches/series" _q_patches _q_key)
# The key hashes the inputs' contents, never their paths, when CMake configures: a changed
# patch, series or header configures again, so the build never runs an older QEMU against
# a newer library.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_q_inputs}
             "${_q_dir}/patches/series" ${_q_patches})
foreach(f ${_q_inputs})
  file(SHA256 "${f}" h)
  string(APPEND _q_key "${h}")
endforeach()
# QEMU is built with this tree's C compiler (CC below), so the key also names it, by
# identity and version and never by path, as Unicorn's does.
string(APPEND _q_key "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}")
string(SHA256 _q_key "${_q_key}")
string(SUBSTRING "${_q_key}" 0 16 _q_key)
set(PADLOCK_QEMU_DIR "${PADLOCK_DEPS_CACHE}/qemu-7.2-padlock-${_q_key}")
message(STATUS "padlock-emu: QEMU's cache key ${_q_key}")

set(_q_all "")
if(PADLOCK_BUILD_QEMU)
  set(_q_all ALL)
endif()
# Build trees share the cache's one QEMU work folder (one source tree, one build tree for
# all the targets), so builders take turns on a lock there; a later one finds the binaries
# and stops.
add_custom_target(padlock-qemu ${_q_all}
  COMMAND ${CMAKE_COMMAND} -E make_directory "${PADLOCK_DEPS_CACHE}"
  COMMAND ${CMAKE_COMMAND} -E env "CC=${CMAKE_C_COMPILER}"
          flock "${PADLOCK_DEPS_CACHE}/qemu-build.lock"
          bash "${_q_dir}/build-qemu.sh" "${PADLOCK_QEMU_DIR}"
          "${PROJECT_SOURCE_DIR}/emulator/system/padlock_system.h" ${PADLOCK_QEMU_TARGETS}
  COMMENT "System mode's QEMU in ${PADLOCK_QEMU_DIR} (cached)"
  USES_TERMINAL)
