#!/usr/bin/env bash
# Speed of padlock-emu on ordinary x86 code, against qemu-i386 (Debian qemu-user):
#   1. a compute-bound static i386 program without PadLock (bench/guest/compute.c):
#      the best of N wall-clock times under each, and the ratios: with --timing off
#      (goal: <= 1.3x) and with the timing model on (goal: <= 2.0x),
#      both with the default direct memory, and --timing off with --memory tlb (Unicorn's
#      softmmu TLB) for comparison (docs/emulator.md, "Direct memory");
#   2. the start-up time of a static hello-world (goal: < 50 ms).
# Both programs are built here with gcc -m32 -static -O2 (gcc-multilib).
#
# usage: bench/run_vs_qemu.sh [PADLOCK_EMU_BINARY] [ROUNDS]
#   PADLOCK_EMU_BINARY defaults to $PADLOCK_EMU_BIN, then build*/emulator/padlock-emu;
#   ROUNDS (default 16) is compute's work factor. REPEAT (env, default 3) timed runs each.
set -euo pipefail
command -v qemu-i386 >/dev/null || { echo "run_vs_qemu: qemu-i386 not installed (apt install qemu-user)" >&2; exit 2; }
source "$(dirname "$0")/common.sh" run_vs_qemu "$@"
gcc -m32 -static -O2 -o "$work/hello" "$here/guest/hello.c"

now_ns() { date +%s%N; }
# time_ns CMD...: the wall time of one run in nanoseconds (output discarded)
time_ns() {
  local t0 t1
  t0=$(now_ns)
  "$@" >/dev/null
  t1=$(now_ns)
  echo $((t1 - t0))
}
# best_of N CMD...: the smallest wall time in nanoseconds over N runs
best_of() {
  local n=$1 best="" dt
  shift
  for ((i = 0; i < n; i++)); do
    dt=$(time_ns "$@")
    if [[ -z "$best" || $dt -lt $best ]]; then best=$dt; fi
  done
  echo "$best"
}
min() { if [[ -z "$1" || $2 -lt $1 ]]; then echo "$2"; else echo "$1"; fi; }

out_q=$(qemu-i386 "$work/compute" "$rounds")
out_e=$("$emu" run "$work/compute" "$rounds")
if [[ "$out_q" != "$out_e" ]]; then
  echo "run_vs_qemu: outputs differ: qemu '$out_q', padlock-emu '$out_e'" >&2
  exit 1
fi

# Interleaved rounds, so that a change in the machine's load or clock hits all alike.
t_native="" t_qemu="" t_off="" t_emu="" t_tlb=""
for ((r = 0; r < repeat; r++)); do
  t_native=$(min "$t_native" "$(time_ns "$work/compute" "$rounds")")
  t_qemu=$(min "$t_qemu" "$(time_ns qemu-i386 "$work/compute" "$rounds")")
  t_off=$(min "$t_off" "$(time_ns "$emu" run --timing off "$work/compute" "$rounds")")
  t_emu=$(min "$t_emu" "$(time_ns "$emu" run "$work/compute" "$rounds")")
  t_tlb=$(min "$t_tlb" "$(time_ns "$emu" run --timing off --memory tlb "$work/compute" "$rounds")")
done
s_qemu=$(best_of 20 qemu-i386 "$work/hello")
s_emu=$(best_of 20 "$emu" run "$work/hello")

awk -v n="$t_native" -v q="$t_qemu" -v o="$t_off" -v e="$t_emu" -v t="$t_tlb" \
    -v sq="$s_qemu" -v se="$s_emu" \
    -v r="$rounds" -v k="$repeat" -v cs="$out_e" 'BEGIN {
  printf "compute (static i386, %s rounds, best of %d; %s)\n", r, k, cs
  printf "  native                    %8.3f s\n", n / 1e9
  printf "  qemu-i386                 %8.3f s\n", q / 1e9
  printf "  padlock-emu --timing off  %8.3f s   %.2fx qemu-i386 (goal <= 1.3x)\n", o / 1e9, o / q
  printf "  padlock-emu (timing on)   %8.3f s   %.2fx qemu-i386 (goal <= 2.0x)\n", e / 1e9, e / q
  printf "  --timing off --memory tlb %8.3f s   %.2fx qemu-i386 (the softmmu TLB)\n", t / 1e9, t / q
  printf "start-up (static i386 hello world, best of 20)\n"
  printf "  qemu-i386    %8.1f ms\n", sq / 1e6
  printf "  padlock-emu  %8.1f ms (goal < 50 ms)\n", se / 1e6
}'
