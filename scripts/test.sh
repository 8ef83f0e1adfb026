#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite: the GoogleTest
# unit tests through CTest, then the pytest suites (integration, CLI, Python package),
# both on every core (ctest -j, pytest-xdist -n).
set -euo pipefail
cd "$(dirname "$0")/.."
SETUP_BUILD=0 bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
export PADLOCK_EMU_BIN="$PWD/$BUILD_DIR/emulator/padlock-emu"
export PADLOCK_GUEST_DIR="$PWD/$BUILD_DIR/tests/guest"
export PADLOCK_BUILD_DIR="$PWD/$BUILD_DIR"

# The downloads wait on the network more than they use a core (docs/ci.md), so they run
# beside the build:
# - Debian's own i386 openssl (and gnutls-bin) for the real-client tests
#   (tests/integration/test_openssl_*.py): an i386 sysroot from Debian's packages. The
#   x86-64 clients are the host's (openssl is in setup.sh's list). Those tests must run
#   here, not skip: PADLOCK_REQUIRE_REAL_CLIENTS=1 turns a missing piece into a failure.
# - the Linux PadLock drivers and their test vectors (tests/drivers/linux), cached;
# - every Debian kernel of emulator/system/debian-kernels.txt with its test initramfs, in
#   the directories the boot tests use (`padlock-emu system --debian-kernel`), which then
#   find them built.
export PADLOCK_SYSROOT_I386="$PWD/.sysroot-i386"
mkdir -p "$BUILD_DIR"
(
  set -e
  bash scripts/make-sysroot.sh -o "$PADLOCK_SYSROOT_I386"
  bash tests/drivers/linux/fetch.sh
  cache=${PADLOCK_DEPS_CACHE:-$HOME/.cache/padlock-emu}
  grep -v '^#' emulator/system/debian-kernels.txt | awk 'NF { print $1, $2 }' | sort -u |
    while read -r suite arch; do
      dir=$cache/system-$arch
      [ "$suite" = bookworm ] || dir=$dir-$suite
      bash emulator/system/make-initramfs.sh --suite "$suite" "$arch" "$dir"
    done
) >"$BUILD_DIR/downloads.log" 2>&1 &
downloads=$!
if ! bash scripts/setup.sh; then
  wait "$downloads" || true
  exit 1
fi

# The fuzz build (clang, ASan, UBSan) runs beside the downloads and the tests at the lowest
# priority, on the cycles they leave idle, and links the Unicorn this build made instead of
# building its own (Unicorn is not instrumented either way).
mkdir -p build-fuzz
PADLOCK_UNICORN_FROM="$PWD/$BUILD_DIR" nice -n 19 bash scripts/fuzz.sh --build \
  >build-fuzz/fuzz_build.out 2>&1 &
fuzz_build=$!
if ! wait "$downloads"; then
  cat "$BUILD_DIR/downloads.log" >&2
  echo "test.sh: a download failed (log: $BUILD_DIR/downloads.log)" >&2
  wait "$fuzz_build" || true
  exit 1
fi
export PADLOCK_REQUIRE_REAL_CLIENTS=1
# Likewise the tools setup.sh installs (valgrind's callgrind_annotate, binutils' objdump):
# here a missing one fails the tests that need it instead of skipping them.
export PADLOCK_REQUIRE_TOOLS=1
# System mode's boot tests (tests/integration/test_system_boot.py) need the QEMU setup.sh
# built into the cache and Debian's kernel (apt-get download): here they fail, not skip.
export PADLOCK_REQUIRE_SYSTEM=1
# tests/integration/test_installed.py's two `pip install .` into fresh venvs, the second
# held to 3 minutes of two cores; the build above has filled ccache (docs/python.md).
export PADLOCK_TEST_PIP=1

status=0
# The sources must be formatted by .clang-format (drift fails the run, after the tests).
bash scripts/check-format.sh || status=1
ctest --test-dir "$BUILD_DIR" -j "$(nproc)" --output-on-failure || status=1

PY=${PYTHON:-python3}
if ls tests/integration/test_*.py tests/python/test_*.py tests/repo/test_*.py >/dev/null 2>&1; then
  set +e
  "$PY" -m pytest -q -n "$(nproc)" tests/repo tests/integration tests/python tests/drivers/linux
  rc=$?
  set -e
  # pytest exit 5 means no tests were collected: that is a failure of the suite.
  [ "$rc" = 0 ] || status=1
fi
# A short run of every fuzz target (scripts/fuzz.sh, docs/reliability.md): each target for
# PADLOCK_FUZZ_SECONDS (default 60), PADLOCK_FUZZ_JOBS (default: the cores, at most 2) at a
# time, plus the fuzz build, well inside CI's 45 minutes. A finding fails the run and
# leaves its minimised input in tests/regressions/.
wait "$fuzz_build" || { cat build-fuzz/fuzz_build.out >&2; status=1; }
jobs=${PADLOCK_FUZZ_JOBS:-$(nproc)}
[ "$jobs" -le 2 ] || jobs=2
bash scripts/fuzz.sh --list | tr ' ' '\n' |
  xargs -P "$jobs" -I '{}' bash scripts/fuzz.sh '{}' "${PADLOCK_FUZZ_SECONDS:-60}" || status=1
exit $status
