#!/usr/bin/env bash
# Regenerates the golden traces under tests/golden/ (one --trace file per run listed in
# tests/golden/runs.txt) with the padlock-emu and guest programs of a build. Run it on
# purpose, when a change of results or cycles is intended, and review the diff like code:
#     scripts/update_golden_traces.sh && git diff --stat tests/golden
# `padlock-emu trace diff OLD NEW` shows the first divergence of one file.
#
# usage: scripts/update_golden_traces.sh [RUN_NAME...]
#   BUILD_DIR (default build) selects the build: $BUILD_DIR/emulator/padlock-emu and
#   $BUILD_DIR/tests/guest; PADLOCK_EMU_BIN / PADLOCK_GUEST_DIR override them.
#   Without names every run is recorded again. --check compares instead of writing.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
export PADLOCK_EMU_BIN=${PADLOCK_EMU_BIN:-$PWD/$BUILD_DIR/emulator/padlock-emu}
export PADLOCK_GUEST_DIR=${PADLOCK_GUEST_DIR:-$PWD/$BUILD_DIR/tests/guest}
[[ -x "$PADLOCK_EMU_BIN" ]] || { echo "update_golden_traces: no $PADLOCK_EMU_BIN (build first)" >&2; exit 2; }
[[ -d "$PADLOCK_GUEST_DIR" ]] || { echo "update_golden_traces: no $PADLOCK_GUEST_DIR (build padlock_guests)" >&2; exit 2; }
mode=--update
if [[ "${1:-}" == "--check" ]]; then
  mode=
  shift
fi
exec python3 tests/integration/golden_traces.py $mode "$@"
