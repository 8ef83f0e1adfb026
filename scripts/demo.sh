#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the bundled demo: a static i386 PadLock
# program (AES, SHA, MONTMUL, XSTORE) under padlock-emu on the Esther model, with --stats.
# It builds only the CLI and the demo's guests, and keeps the build output in a log.
set -euo pipefail
cd "$(dirname "$0")/.."
SETUP_TARGETS="padlock-emu padlock_demo_guests" SETUP_QUIET=1 bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
EMU="$BUILD_DIR/emulator/padlock-emu"
DEMO="$BUILD_DIR/tests/guest/guest_demo_i386"
echo "\$ padlock-emu cpus"
"$EMU" cpus
echo
echo "\$ padlock-emu run --cpu esther --stats $(basename "$DEMO")"
"$EMU" run --cpu esther --stats "$DEMO"
