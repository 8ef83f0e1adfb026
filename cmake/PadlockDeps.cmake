# Dependencies. Capstone 5 comes from its PyPI wheel, which ships headers and the library;
# Unicorn 2.1.4 is built from its PyPI sdist with our patch (PadlockUnicorn.cmake); GMP,
# OpenSSL, GoogleTest and nlohmann-json (trace files read back, the checker's JSON Lines
# and SARIF) come from Debian.
find_package(PkgConfig REQUIRED)
pkg_check_modules(GMP REQUIRED IMPORTED_TARGET gmp)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# Ask the Python that will run the tests where the wheels put their files.
function(padlock_find_wheel module out_dir)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import ${module}, os; print(os.path.dirname(${module}.__file__))"
    OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${dir}")
    message(FATAL_ERROR "padlock-emu: the Python package '${module}' is not installed for "
                        "${Python3_EXECUTABLE}; run scripts/setup.sh (pip install -r requirements.txt)")
  endif()
  set(${out_dir} "${dir}" PARENT_SCOPE)
endfunction()

# The SONAME of the shared library `file` (readelf -d), else its file name: binaries record
# the SONAME, so that is the name the library must have where they look for it.
function(padlock_soname file out_name)
  set(name "")
  find_program(PADLOCK_READELF NAMES readelf)
  if(PADLOCK_READELF)
    execute_process(COMMAND ${PADLOCK_READELF} -d ${file} OUTPUT_VARIABLE dyn ERROR_QUIET)
    string(REGEX MATCH "Library soname: \\[([^]]+)\\]" m "${dyn}")
    set(name "${CMAKE_MATCH_1}")
  endif()
  if(NOT name)
    get_filename_component(name ${file} NAME)
  endif()
  set(${out_name} "${name}" PARENT_SCOPE)
endfunction()

if(PADLOCK_BUILD_EMULATOR)
  include(${CMAKE_CURRENT_LIST_DIR}/PadlockUnicorn.cmake)
  padlock_find_wheel(capstone CAPSTONE_WHEEL_DIR)
  file(GLOB CAPSTONE_SO "${CAPSTONE_WHEEL_DIR}/lib/libcapstone.so*")
  list(GET CAPSTONE_SO 0 CAPSTONE_SO)
  padlock_shared_include(capstone "${CAPSTONE_WHEEL_DIR}/include" CAPSTONE_INCLUDE_DIR)
  add_library(padlock_capstone SHARED IMPORTED GLOBAL)
  set_target_properties(padlock_capstone PROPERTIES
    IMPORTED_LOCATION "${CAPSTONE_SO}"
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${CAPSTONE_INCLUDE_DIR}")
  set(PADLOCK_CAPSTONE_LIBDIR "${CAPSTONE_WHEEL_DIR}/lib" CACHE INTERNAL "")
endif()
