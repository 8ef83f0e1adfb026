#!/usr/bin/env bash
# Installs everything padlock-emu needs on Debian 12 (as root), from Debian and PyPI only,
# then configures and builds into build/. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libgmp-dev libssl-dev
  zlib1g-dev                         # gzip-compressed traces and profiles (*.gz)
  libdw-dev                          # the profiler reads separate debug info (elfutils)
  nlohmann-json3-dev                 # trace files read back; the checker's JSON Lines and SARIF
  gcc-multilib g++-multilib          # i386 guest programs (gcc -m32 -static)
  qemu-user                          # the speed baseline for plain x86 code
  patch                              # applies cmake/{unicorn,qemu}/patches/series
  ccache                             # rebuilds in other trees (pip's) reuse objects (cmake/PadlockCcache.cmake)
  openssl coreutils python3 python3-pip
  gnutls-bin                         # gnutls-cli: a second real PadLock client (tests)
  libgcrypt20 libmbedcrypto7         # two more real PadLock clients, loaded by tests/guest/client_aes.c
  clang-format                       # scripts/check-format.sh (14, as .clang-format expects)
  valgrind binutils                  # callgrind_annotate, objdump: tests/integration/test_profile.py
  clang libclang-rt-14-dev           # libFuzzer with ASan/UBSan: scripts/fuzz.sh
  # system mode (docs/system.md): QEMU's build from Debian's source, its firmware, and
  # the initramfs of Debian's kernel
  meson libglib2.0-dev libpixman-1-dev libfdt-dev dpkg-dev curl xz-utils
  seabios qemu-system-data cpio
)

need_apt=0
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || { need_apt=1; break; }
done
if [ "$need_apt" = 1 ]; then
  if [ "$(id -u)" != 0 ]; then echo "setup.sh: Debian packages missing; run as root" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${DEBIAN_PACKAGES[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if ! "$PY" -c "import capstone, pybind11, pytest, numpy, matplotlib, jsonschema" 2>/dev/null; then
  "$PY" -m pip install -q -r requirements.txt 2>/dev/null ||
    "$PY" -m pip install -q --break-system-packages -r requirements.txt
fi

# SETUP_BUILD=0: stop here, with the packages installed (scripts/test.sh starts its downloads
# before the build, docs/ci.md).
[ "${SETUP_BUILD:-1}" = 0 ] && exit 0

# SETUP_TARGETS: build only these targets (default: everything). SETUP_QUIET=1: the
# configure and build output (Unicorn's configure among it) goes to a log, shown only when
# something fails (scripts/demo.sh).
BUILD_DIR=${BUILD_DIR:-build}
# PADLOCK_BUILD_QEMU: system mode's QEMU, built once into ~/.cache/padlock-emu (one tree for
# both targets, about 14 minutes of CPU: docs/ci.md) and reused while its source, patch
# and ABI header stay the same. A targeted build (SETUP_TARGETS, the demo) leaves it out.
QEMU=ON
[ -n "${SETUP_TARGETS:-}" ] && QEMU=OFF
TARGETS=(${SETUP_TARGETS:-})
LOG="$BUILD_DIR/setup.log"
mkdir -p "$BUILD_DIR"
build() {
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v "$PY")" \
    -DPADLOCK_BUILD_QEMU="$QEMU" >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)" ${TARGETS[@]+--target "${TARGETS[@]}"}
}
if [ "${SETUP_QUIET:-0}" = 1 ]; then
  echo "setup.sh: building ${TARGETS[*]:-everything} in $BUILD_DIR (log: $LOG)"
  if ! build >"$LOG" 2>&1; then
    tail -n 40 "$LOG" >&2
    echo "setup.sh: the build failed; the whole log is $LOG" >&2
    exit 1
  fi
else
  build
fi
