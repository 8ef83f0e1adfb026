#!/usr/bin/env bash
# Cost of --profile (docs/profiling.md: at most 2x the run time with profiling off), of --mix
# (docs/debugging.md: at most 1.3x), and of --trace for comparison, on a compute-bound static i386 program without PadLock instructions
# (bench/guest/compute.c): every translated block pays the profiler, the worst case.
# Measured with the timing model on (the default) and with --timing off; in both, --profile
# adds Unicorn's block log (docs/emulator.md, "Unicorn") and its replay.
# Prints, in one run, the best of REPEAT times for each configuration: wall-clock time
# and CPU time (user + system; steadier on a loaded machine), and the ratios to "off".
#
# usage: bench/profile_overhead.sh [PADLOCK_EMU_BINARY] [ROUNDS]
#   PADLOCK_EMU_BINARY defaults to $PADLOCK_EMU_BIN, then build*/emulator/padlock-emu;
#   ROUNDS (default 16) is compute's work factor. REPEAT (env, default 3) timed runs each.
set -euo pipefail
source "$(dirname "$0")/common.sh" profile_overhead "$@"

# measure NAME ARGS...: best wall and best CPU seconds over $repeat runs -> "wall cpu"
measure() {
  local best_wall="" best_cpu="" out
  for ((i = 0; i < repeat; i++)); do
    out=$( { TIMEFORMAT='%R %U %S'; time "$emu" run "$@" "$work/compute" "$rounds" >/dev/null; } 2>&1 )
    read -r wall user sys <<<"$out"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
    if [[ -z "$best_wall" ]] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
      best_wall=$wall
    fi
    if [[ -z "$best_cpu" ]] || awk -v a="$cpu" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then
      best_cpu=$cpu
    fi
  done
  echo "$best_wall $best_cpu"
}

# The profile must be complete and callgrind_annotate-readable, or the timing means nothing.
"$emu" run --profile "$work/check.out" "$work/compute" "$rounds" >/dev/null
grep -q '^totals: ' "$work/check.out" || { echo "profile_overhead: no totals line" >&2; exit 1; }

read -r off_wall off_cpu <<<"$(measure)"
read -r prof_wall prof_cpu <<<"$(measure --profile "$work/p.out")"
read -r trace_wall trace_cpu <<<"$(measure --trace "$work/t.jsonl" --chrome-trace "$work/c.json")"
read -r toff_wall toff_cpu <<<"$(measure --timing off)"
read -r tprof_wall tprof_cpu <<<"$(measure --timing off --profile "$work/p2.out")"
read -r mix_wall mix_cpu <<<"$(measure --mix "$work/m.txt")"
read -r tmix_wall tmix_cpu <<<"$(measure --timing off --mix "$work/m2.txt")"

awk -v r="$rounds" -v k="$repeat" \
    -v ow="$off_wall" -v oc="$off_cpu" -v pw="$prof_wall" -v pc="$prof_cpu" \
    -v tw="$trace_wall" -v tc="$trace_cpu" -v fw="$toff_wall" -v fc="$toff_cpu" \
    -v gw="$tprof_wall" -v gc="$tprof_cpu" -v mw="$mix_wall" -v mc="$mix_cpu" \
    -v nw="$tmix_wall" -v nc="$tmix_cpu" 'BEGIN {
  printf "compute (static i386, %s rounds, best of %d)         wall s    cpu s   wall x   cpu x\n", r, k
  printf "  timing model on (default), profiling off     %8.3f %8.3f\n", ow, oc
  printf "  ... --profile                                %8.3f %8.3f %7.2fx %7.2fx  (goal <= 2x)\n", pw, pc, pw / ow, pc / oc
  printf "  ... --mix                                    %8.3f %8.3f %7.2fx %7.2fx  (goal <= 1.3x)\n", mw, mc, mw / ow, mc / oc
  printf "  ... --trace --chrome-trace                   %8.3f %8.3f %7.2fx %7.2fx\n", tw, tc, tw / ow, tc / oc
  printf "  --timing off, profiling off (no block hook)  %8.3f %8.3f\n", fw, fc
  printf "  --timing off --profile                       %8.3f %8.3f %7.2fx %7.2fx  (goal <= 2x)\n", gw, gc, gw / fw, gc / fc
  printf "  --timing off --mix                           %8.3f %8.3f %7.2fx %7.2fx  (goal <= 1.3x)\n", nw, nc, nw / fw, nc / fc
}'
