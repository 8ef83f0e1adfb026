# ccache, when it is installed (Debian's ccache): a build of the same sources in another
# tree (pip's temporary build tree, the build tree scripts/setup.sh makes) takes its objects
# from the cache instead of compiling them again (docs/python.md, "Installing": a warm
# `pip install .`). Paths stay absolute (no base_dir): the sources' are the same from every
# build tree of one checkout, and the headers that would otherwise sit inside a build tree
# come from one shared folder (padlock_shared_include below); a Release build has no debug
# information that would name the build tree, so its directory is not hashed. A launcher
# given by the user (CMAKE_CXX_COMPILER_LAUNCHER) is kept; -DPADLOCK_CCACHE=OFF compiles
# directly.
option(PADLOCK_CCACHE "Compile through ccache when it is installed" ON)
set(PADLOCK_DEPS_CACHE "$ENV{HOME}/.cache/padlock-emu" CACHE PATH
    "where downloaded and built dependencies are kept between builds")
find_program(PADLOCK_CCACHE_EXE ccache)
if(PADLOCK_CCACHE AND PADLOCK_CCACHE_EXE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(_cc_env "")
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    list(APPEND _cc_env CCACHE_NOHASHDIR=true)
  endif()
  # ccache hashes the compiler's name, and scikit-build-core names it after Python's
  # sysconfig (g++, x86_64-linux-gnu-g++) where CMake alone finds c++: the compiler's real
  # file is the name in every tree.
  foreach(_lang C CXX)
    file(REAL_PATH "${CMAKE_${_lang}_COMPILER}" _real)
    set(CMAKE_${_lang}_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env ${_cc_env} CCACHE_COMPILER=${_real}
      ${PADLOCK_CCACHE_EXE})
  endforeach()
  message(STATUS "padlock-emu: compiling through ${PADLOCK_CCACHE_EXE}")
endif()

# Headers from a folder named by their contents, the same for every build tree: pip's
# isolated build puts Capstone and pybind11 under a new /tmp/pip-build-env-XXXXXXXX each time
# and Unicorn's public header lies in each build tree, and those folders in -I flags made
# every unit that includes them miss the cache (docs/python.md, "Installing"). The copy goes
# to PADLOCK_DEPS_CACHE/include/NAME-KEY, KEY hashing each file's name and bytes, under a
# temporary name renamed into place, so a build never reads a half-made copy.
function(padlock_shared_include name dir out_var)
  file(GLOB_RECURSE files RELATIVE "${dir}" "${dir}/*")
  list(SORT files)
  set(listing "")
  foreach(f IN LISTS files)
    file(SHA256 "${dir}/${f}" h)
    string(APPEND listing "${f} ${h}\n")
  endforeach()
  string(SHA256 key "${listing}")
  string(SUBSTRING "${key}" 0 16 key)
  set(copy "${PADLOCK_DEPS_CACHE}/include/${name}-${key}")
  if(NOT IS_DIRECTORY "${copy}")
    string(RANDOM LENGTH 8 tmp)
    file(COPY "${dir}/" DESTINATION "${copy}.tmp-${tmp}")
    file(RENAME "${copy}.tmp-${tmp}" "${copy}" RESULT rename_failed)
    if(rename_failed)  # another build got there first with the same bytes
      file(REMOVE_RECURSE "${copy}.tmp-${tmp}")
    endif()
  endif()
  set(${out_var} "${copy}" PARENT_SCOPE)
endfunction()
