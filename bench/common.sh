# Sourced by bench/profile_overhead.sh and bench/run_vs_qemu.sh (after `set -euo pipefail`)
# as `source "$(dirname "$0")/common.sh" NAME "$@"`, NAME naming the script in errors.
# Sets: here (bench/), repo, emu (padlock-emu: the first argument, else $PADLOCK_EMU_BIN,
# else build*/emulator/padlock-emu), rounds (the second argument, default 16: compute's
# work factor), repeat ($REPEAT, default 3: timed runs each), and work, a scratch
# directory removed on exit that holds compute, bench/guest/compute.c built with
# gcc -m32 -static -O2 (gcc-multilib).

bench_name=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
emu=${1:-${PADLOCK_EMU_BIN:-}}
if [[ -z "$emu" ]]; then
  for cand in "$repo"/build*/emulator/padlock-emu; do
    [[ -x "$cand" ]] && emu=$cand && break
  done
fi
rounds=${2:-16}
repeat=${REPEAT:-3}
[[ -x "${emu:-}" ]] || { echo "$bench_name: padlock-emu not found (pass its path)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -m32 -static -O2 -o "$work/compute" "$here/guest/compute.c"
