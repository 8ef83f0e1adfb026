# ccache, when it is installed (Debian's ccache): a build of the same sources in another
# tree (pip's temporary build tree, a second clone) takes its objects from the cache
# instead of compiling them again (docs/python.md, "Installing": a warm `pip install .`).
# Paths are hashed relative to the compiling directory (base_dir "/"), so two trees at the
# same depth share objects; a Release build has no debug information that would name the
# directory, so the directory is not hashed there. A launcher given by the user
# (CMAKE_CXX_COMPILER_LAUNCHER) is kept; -DPADLOCK_CCACHE=OFF compiles directly.
option(PADLOCK_CCACHE "Compile through ccache when it is installed" ON)
find_program(PADLOCK_CCACHE_EXE ccache)
if(PADLOCK_CCACHE AND PADLOCK_CCACHE_EXE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(_cc_env CCACHE_BASEDIR=/)
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    list(APPEND _cc_env CCACHE_NOHASHDIR=true)
  endif()
  set(CMAKE_C_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env ${_cc_env} ${PADLOCK_CCACHE_EXE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env ${_cc_env} ${PADLOCK_CCACHE_EXE})
  message(STATUS "padlock-emu: compiling through ${PADLOCK_CCACHE_EXE}")
endif()
