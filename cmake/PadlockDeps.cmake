# Dependencies. Unicorn 2.1.x and Capstone 5 come from their PyPI wheels, which ship
# headers and libraries; GMP, OpenSSL and GoogleTest come from Debian.
find_package(PkgConfig REQUIRED)
pkg_check_modules(GMP REQUIRED IMPORTED_TARGET gmp)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
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

if(PADLOCK_BUILD_EMULATOR)
  padlock_find_wheel(unicorn UNICORN_WHEEL_DIR)
  padlock_find_wheel(capstone CAPSTONE_WHEEL_DIR)
  # Link Unicorn statically (the wheel ships libunicorn.a) so the CLI does not depend on
  # the Python site-packages at run time.
  add_library(padlock_unicorn STATIC IMPORTED GLOBAL)
  set_target_properties(padlock_unicorn PROPERTIES
    IMPORTED_LOCATION "${UNICORN_WHEEL_DIR}/lib/libunicorn.a"
    INTERFACE_INCLUDE_DIRECTORIES "${UNICORN_WHEEL_DIR}/include"
    INTERFACE_LINK_LIBRARIES "pthread;m;dl")
  file(GLOB CAPSTONE_SO "${CAPSTONE_WHEEL_DIR}/lib/libcapstone.so*")
  list(GET CAPSTONE_SO 0 CAPSTONE_SO)
  add_library(padlock_capstone SHARED IMPORTED GLOBAL)
  set_target_properties(padlock_capstone PROPERTIES
    IMPORTED_LOCATION "${CAPSTONE_SO}"
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${CAPSTONE_WHEEL_DIR}/include")
  set(PADLOCK_CAPSTONE_LIBDIR "${CAPSTONE_WHEEL_DIR}/lib" CACHE INTERNAL "")
endif()
