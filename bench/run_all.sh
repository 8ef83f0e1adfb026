#!/usr/bin/env bash
# Every speed figure of padlock-emu beside its baseline, in one run: bench/run_all.py.
# usage: bench/run_all.sh [--build DIR] [--only plain,mix,bulk,short,openssl,harness,check]
set -euo pipefail
exec python3 "$(dirname "$0")/run_all.py" "$@"
