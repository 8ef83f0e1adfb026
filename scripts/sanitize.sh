#!/usr/bin/env bash
# The unit and integration tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/reliability.md, "Sanitizers"): builds the project with -DPADLOCK_SANITIZE=ON in its
# own directory (build-asan; every library, the padlock-emu CLI, the unit tests; the Python
# module is left out, since a sanitized extension needs the runtime preloaded into Python),
# then runs the unit tests through CTest and the integration tests with pytest against the
# sanitized padlock-emu. Any sanitizer report fails the run: ASan aborts the process, UBSan
# is made fatal (halt_on_error), and the emulator's stderr is checked by the tests.
# Unicorn is the patched one of another build when PADLOCK_UNICORN_FROM names it (it is C
# and not instrumented; the sanitizers check everything around it), else built here.
#
# usage: scripts/sanitize.sh [PYTEST ARGS...]   default: tests/integration
#        SANITIZE_BUILD_DIR=dir  SANITIZE_JOBS=N (default 2)  SANITIZE_UNIT=0 (skip CTest)
#        SANITIZE_TARGETS="..." (build only these)  SANITIZE_CTEST="-R regex" (some unit tests)
# Prints the figures: unit tests passed/failed, integration tests passed/failed/skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD_DIR:-build-asan}
JOBS=${SANITIZE_JOBS:-2}
if [ ! -f "$BUILD/build.ninja" ]; then
  # clang, as for the fuzz targets (gcc works too: SANITIZE_CC=gcc SANITIZE_CXX=g++).
  CC=${SANITIZE_CC:-clang} CXX=${SANITIZE_CXX:-clang++} \
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPython3_EXECUTABLE="$(command -v python3)" -DPADLOCK_SANITIZE=ON \
    -DPADLOCK_BUILD_PYTHON=OFF -DPADLOCK_BUILD_BENCH=OFF \
    ${PADLOCK_UNICORN_FROM:+-DPADLOCK_UNICORN_FROM="$PADLOCK_UNICORN_FROM"} >/dev/null
fi
# SANITIZE_TARGETS: only these build targets (e.g. "padlock-emu padlock_guests test_isa").
nice -n 10 cmake --build "$BUILD" -j"$JOBS" ${SANITIZE_TARGETS:+--target $SANITIZE_TARGETS}

# Fatal on the first report, with a stack; leaks are reported (LeakSanitizer) at exit.
# Every report also goes to a file in $BUILD/sanitizer-logs/, so that one in a process whose
# stderr no test reads (a forked or execve'd guest, a tolerated failure) still counts.
logs="$PWD/$BUILD/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allow_user_segv_handler=1:log_path=$logs/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan}

status=0
if [ "${SANITIZE_UNIT:-1}" != 0 ]; then
  ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure ${SANITIZE_CTEST:-} 2>&1 |
    tee "$BUILD/sanitize-unit.log" |
    tail -n 30 || true
  grep -q "100% tests passed" "$BUILD/sanitize-unit.log" || status=1
fi

export PADLOCK_EMU_BIN="$PWD/$BUILD/emulator/padlock-emu"
export PADLOCK_GUEST_DIR="$PWD/$BUILD/tests/guest"
export PADLOCK_BUILD_DIR="$PWD/$BUILD"
[ $# -gt 0 ] || set -- tests/integration
set +e
python3 -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$BUILD/sanitize-integration.log" | tail -n 30
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || status=1
reports=$(find "$logs" -type f | wc -l)
if [ "$reports" != 0 ]; then
  echo "sanitize.sh: $reports sanitizer report(s) in $logs:" >&2
  grep -h -m1 -E "ERROR: |runtime error:" "$logs"/* | sort | uniq -c >&2 || true
  status=1
fi
echo "sanitize.sh: unit $(grep -o '[0-9]*% tests passed, [0-9]* tests failed out of [0-9]*' \
  "$BUILD/sanitize-unit.log" 2>/dev/null || echo skipped); integration $(tail -n 1 \
  "$BUILD/sanitize-integration.log"); sanitizer reports: $reports"
exit $status
