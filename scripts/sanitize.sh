#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer (docs/reliability.md,
# "Sanitizers"): builds the project with -DPADLOCK_SANITIZE=ON in its own directory
# (build-asan: every library, the padlock-emu CLI, the Python module, system mode's library,
# the unit tests, the benchmarks and their guests), then runs what scripts/test.sh runs, in
# its environment (the i386 sysroot, the Linux drivers, PADLOCK_REQUIRE_*): the unit tests
# through CTest, then each pytest suite in turn against the sanitized build. Any sanitizer
# report fails the run: ASan aborts the process, UBSan is made fatal (halt_on_error),
# LeakSanitizer runs at each exit.
# Processes that are not instrumented get the runtime preloaded where they load sanitized
# code: Python (scripts/sanitize/sitecustomize.py.in) and system mode's QEMU (padlock-emu
# preloads it there itself). Unicorn is the patched one of another build when
# PADLOCK_UNICORN_FROM names it (C, not instrumented; the sanitizers check everything
# around it), else built here.
#
# usage: scripts/sanitize.sh                  the unit tests and every pytest suite
#        scripts/sanitize.sh PYTEST ARGS...   the unit tests and one pytest run of these
#        SANITIZE_BUILD_DIR=dir  SANITIZE_JOBS=N (build and CTest; default 2)
#        SANITIZE_PYTEST_JOBS=N (pytest -n; default 2, 0 for none)  SANITIZE_UNIT=0 (no CTest)
#        SANITIZE_TARGETS="..." (build only these)  SANITIZE_CTEST="-R regex" (some unit tests)
# Prints the figures: unit tests passed/failed, each suite's pytest summary, wall times and
# the number of sanitizer reports.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD_DIR:-build-asan}
JOBS=${SANITIZE_JOBS:-2}
PYTEST_JOBS=${SANITIZE_PYTEST_JOBS:-2}
if [ ! -f "$BUILD/build.ninja" ]; then
  # clang, as for the fuzz targets (gcc works too: SANITIZE_CC=gcc SANITIZE_CXX=g++).
  CC=${SANITIZE_CC:-clang} CXX=${SANITIZE_CXX:-clang++} \
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPython3_EXECUTABLE="$(command -v python3)" -DPADLOCK_SANITIZE=ON \
    ${PADLOCK_UNICORN_FROM:+-DPADLOCK_UNICORN_FROM="$PADLOCK_UNICORN_FROM"} >/dev/null
fi
# SANITIZE_TARGETS: only these build targets (e.g. "padlock-emu padlock_guests test_isa").
nice -n 10 cmake --build "$BUILD" -j"$JOBS" ${SANITIZE_TARGETS:+--target $SANITIZE_TARGETS}

# scripts/test.sh's environment: Debian's i386 clients, the Linux drivers, and the pieces
# whose absence fails a test there instead of skipping it.
export PADLOCK_SYSROOT_I386="$PWD/.sysroot-i386"
bash scripts/make-sysroot.sh -o "$PADLOCK_SYSROOT_I386" >/dev/null
bash tests/drivers/linux/fetch.sh >/dev/null
export PADLOCK_REQUIRE_REAL_CLIENTS=1 PADLOCK_REQUIRE_TOOLS=1 PADLOCK_REQUIRE_SYSTEM=1

# Fatal on the first report, with a stack; leaks are reported (LeakSanitizer) at exit.
# Every report also goes to a file in $BUILD/sanitizer-logs/, so that one in a process whose
# stderr no test reads (a forked or execve'd guest, a tolerated failure) still counts.
logs="$PWD/$BUILD/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allow_user_segv_handler=1:log_path=$logs/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan}
# What Python and its libraries leave allocated at exit (the file says which, and why).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/sanitize/lsan-python.supp:print_suppressions=0}
# Every Python process preloads the runtime: the build's python/ holds the package and a
# sitecustomize.py that does it (scripts/sanitize/sitecustomize.py.in).
export PYTHONPATH="$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export PADLOCK_EMU_BIN="$PWD/$BUILD/emulator/padlock-emu"
export PADLOCK_GUEST_DIR="$PWD/$BUILD/tests/guest"
export PADLOCK_BUILD_DIR="$PWD/$BUILD"

status=0
figures=()
if [ "${SANITIZE_UNIT:-1}" != 0 ]; then
  start=$SECONDS
  ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure ${SANITIZE_CTEST:-} 2>&1 |
    tee "$BUILD/sanitize-unit.log" |
    tail -n 30 || true
  grep -q "100% tests passed" "$BUILD/sanitize-unit.log" || status=1
  figures+=("unit: $(grep -o '[0-9]*% tests passed, [0-9]* tests failed out of [0-9]*' \
    "$BUILD/sanitize-unit.log" || echo 'no summary') ($((SECONDS - start)) s)")
fi

# One pytest run: its summary line joins the figures; a failure fails the whole run.
run_pytest() {
  local name=$1 start=$SECONDS rc
  shift
  local log="$BUILD/sanitize-$name.log"
  [ "$PYTEST_JOBS" = 0 ] || set -- -n "$PYTEST_JOBS" "$@"
  set +e
  nice -n 10 python3 -m pytest -q -rs -p no:cacheprovider "$@" 2>&1 | tee "$log" | tail -n 30
  rc=${PIPESTATUS[0]}
  set -e
  [ "$rc" = 0 ] || status=1
  figures+=("$name: $(tail -n 1 "$log" | tr -d '=') ($((SECONDS - start)) s)")
}
if [ $# -gt 0 ]; then
  run_pytest pytest "$@"
else
  for suite in tests/repo tests/integration tests/python tests/drivers/linux; do
    run_pytest "$(basename "$suite")" "$suite"
  done
fi

# A file holds a report when a sanitizer found something; warnings alone (ASan's about
# QEMU's coroutines, makecontext/swapcontext) are counted apart.
shopt -s nullglob
files=("$logs"/*)
report='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:'
found=()
[ ${#files[@]} = 0 ] || mapfile -t found < <(grep -l -E "$report" "${files[@]}" || true)
reports=${#found[@]}
if [ "$reports" != 0 ]; then
  echo "sanitize.sh: $reports sanitizer report(s) in $logs:" >&2
  grep -h -m1 -E "ERROR: |runtime error:" "${found[@]}" | sort | uniq -c >&2 || true
  status=1
fi
warned=$((${#files[@]} - reports))
for f in "${figures[@]}"; do echo "sanitize.sh: $f"; done
echo "sanitize.sh: sanitizer reports: $reports (files with warnings only: $warned)"
exit $status
