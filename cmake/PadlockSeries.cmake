# Reads a patch series as Debian's quilt does (cmake/unicorn/patches/series,
# cmake/qemu/patches/series): a patch name a line, in the order they apply; blank lines and
# '#' comments are skipped, as is anything after the name. Sets OUT_PATCHES to the
# patches' paths and OUT_HASH to the SHA-256 of the contents of the series file and of
# every patch it lists, in order, never of their paths: a cache keyed by it follows the
# patches, not where the checkout is.
function(padlock_read_series series out_patches out_hash)
  get_filename_component(dir "${series}" DIRECTORY)
  file(STRINGS "${series}" lines)
  file(SHA256 "${series}" hash)
  set(patches "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "#.*" "" line "${line}")
    string(STRIP "${line}" line)
    string(REGEX REPLACE "[ \t].*" "" line "${line}")
    if(line STREQUAL "")
      continue()
    endif()
    if(NOT EXISTS "${dir}/${line}")
      message(FATAL_ERROR "padlock-emu: ${series} lists ${line}, which does not exist")
    endif()
    list(APPEND patches "${dir}/${line}")
    file(SHA256 "${dir}/${line}" h)
    string(APPEND hash " ${h}")
  endforeach()
  string(SHA256 hash "${hash}")
  set(${out_patches} "${patches}" PARENT_SCOPE)
  set(${out_hash} "${hash}" PARENT_SCOPE)
endfunction()
