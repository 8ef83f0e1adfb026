# Keeps a built Unicorn library in the dependency cache (PadlockUnicorn.cmake):
#   cmake -DLIB=<libunicorn.a> -DDEST=<cache directory> -P cache-unicorn.cmake
# The library is copied beside DEST and the directory renamed into place; when DEST
# already exists (another build stored it first) the copy is dropped. Nothing here fails
# the build: a cache that cannot be written only costs the next build tree its own
# Unicorn build.
if(EXISTS "${DEST}/libunicorn.a")
  return()
endif()
string(RANDOM LENGTH 8 tag)
set(tmp "${DEST}.tmp-${tag}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E make_directory "${tmp}" RESULT_VARIABLE rc)
if(rc EQUAL 0)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E copy "${LIB}" "${tmp}/libunicorn.a"
                  RESULT_VARIABLE rc)
endif()
if(rc EQUAL 0)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E rename "${tmp}" "${DEST}" RESULT_VARIABLE rc)
endif()
if(NOT rc EQUAL 0)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E rm -rf "${tmp}")
endif()
