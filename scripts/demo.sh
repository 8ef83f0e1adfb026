#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the bundled demo: a static i386 PadLock
# program (AES, SHA, MONTMUL, XSTORE) under padlock-emu on the Esther model, with --stats.
# It builds only the CLI and the demo's guests, and keeps the build output in a log. It
# links the CLI into /usr/local/bin (PADLOCK_LINK_DIR), so that README's commands run as
# written; a padlock-emu there that is not a link (a `cmake --install`) is left alone.
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
echo
LINK_DIR=${PADLOCK_LINK_DIR:-/usr/local/bin}
LINK="$LINK_DIR/padlock-emu"
if [ -w "$LINK_DIR" ] && { [ -L "$LINK" ] || [ ! -e "$LINK" ]; }; then
  ln -sfn "$(realpath "$EMU")" "$LINK"
  echo "padlock-emu is on PATH: $LINK -> $(realpath "$EMU")"
else
  echo "padlock-emu is $(realpath "$EMU") (not linked into $LINK_DIR: add $(realpath "$(dirname "$EMU")") to PATH)"
fi
