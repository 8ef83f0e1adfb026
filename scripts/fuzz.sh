#!/usr/bin/env bash
# One fuzz campaign (docs/reliability.md, "Fuzzing"): runs fuzz target TARGET for SECONDS
# under libFuzzer with ASan and UBSan, one process at the lowest CPU priority, keeping its
# corpus between runs (build-fuzz/corpus/TARGET, grown from the seeds of fuzz/seeds.py).
# Prints the executions, coverage (edges and features) and corpus size of the run.
# Every crash, timeout or out-of-memory input is minimised into tests/regressions/TARGET/
# as hex text (fuzz/regressions.py: the repository holds no binaries), which CTest replays
# (fuzz/CMakeLists.txt), and the run fails.
#
# usage: scripts/fuzz.sh TARGET SECONDS      TARGET: decoder, elf_loader, object_loader,
#                                            memory_syscalls, path_syscalls, cli, trace_reader,
#                                            xsha_vs_openssl, xcrypt_vs_openssl, montmul_vs_gmp,
#                                            xsha512_vs_openssl, sm3_vs_openssl, sm4_vs_openssl,
#                                            sm2_verify_vs_openssl
#        scripts/fuzz.sh --list
#        scripts/fuzz.sh --build     builds every target and seeds every corpus, no campaign
#                                    (scripts/test.sh does this beside the tests, docs/ci.md)
# Needs clang with libFuzzer (Debian: clang, libclang-rt-14-dev; scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS="decoder elf_loader object_loader memory_syscalls path_syscalls cli trace_reader xsha_vs_openssl
xcrypt_vs_openssl montmul_vs_gmp xsha512_vs_openssl sm3_vs_openssl sm4_vs_openssl sm2_verify_vs_openssl"
TARGETS=$(echo $TARGETS)
if [ "${1:-}" = "--list" ]; then echo "$TARGETS"; exit 0; fi
[ $# = 2 ] || [ "${1:-}" = --build ] || { sed -n '2,18p' "$0" >&2; exit 2; }
target=$1 seconds=${2:-}
case " $TARGETS --build " in *" $target "*) ;; *) echo "fuzz.sh: unknown target '$target' ($TARGETS)" >&2; exit 2 ;; esac

BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
# Campaigns may run side by side (scripts/test.sh runs two at a time): the configure, the
# build and the seeding of a new corpus are serialised on a lock in the build folder, so
# one ninja at a time works in it.
mkdir -p "$BUILD"
exec 9>"$BUILD/.fuzz.lock"
flock 9
if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPython3_EXECUTABLE="$(command -v python3)" -DPADLOCK_FUZZ=ON -DPADLOCK_BUILD_PYTHON=OFF \
    -DPADLOCK_BUILD_TESTS=OFF -DPADLOCK_BUILD_BENCH=OFF ${PADLOCK_UNICORN_FROM:+-DPADLOCK_UNICORN_FROM="$PADLOCK_UNICORN_FROM"} >/dev/null
fi
build() {  # LOG TARGET...: one ninja for them all, so its two jobs stay busy
  local log=$1
  shift
  if ! nice -n 19 cmake --build "$BUILD" -j2 --target "$@" >"$log" 2>&1; then
    grep -m5 -E 'error|undefined reference' "$log" >&2 || true
    echo "fuzz.sh: $* does not build (log: $log)" >&2
    exit 1
  fi
}
seed() {  # TARGET: a new corpus starts from fuzz/seeds.py's seeds
  local corpus="$PWD/$BUILD/corpus/$1"
  if [ ! -d "$corpus" ]; then
    [ -d "$PWD/$BUILD/seeds/$1" ] || python3 fuzz/seeds.py "$PWD/$BUILD/seeds"
    mkdir -p "$corpus"
    cp "$PWD/$BUILD/seeds/$1"/* "$corpus"/
  fi
}
if [ "$target" = --build ]; then
  build "$BUILD/fuzz_all.build.log" $(for t in $TARGETS; do echo "fuzz_$t"; done)
  for t in $TARGETS; do seed "$t"; done
  exit 0
fi
build "$BUILD/fuzz_$target.build.log" "fuzz_$target"
bin="$PWD/$BUILD/fuzz/fuzz_$target"
corpus="$PWD/$BUILD/corpus/$target"
seed "$target"
flock -u 9
crashes="$PWD/$BUILD/crashes/$target"
mkdir -p "$crashes"
dict=()
[ -f "fuzz/$target.dict" ] && dict=(-dict="$PWD/fuzz/$target.dict")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set +e
(cd "$work" && nice -n 19 "$bin" "$corpus" "${dict[@]}" -max_total_time="$seconds" \
  -jobs=1 -workers=1 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$crashes/" >/dev/null 2>&1)
set -e
log="$work/fuzz-0.log"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
echo "fuzz $target: ${runs:-0} executions in ${seconds} s, coverage ${cov:-?} edges, ${ft:-?} features, corpus $(ls "$corpus" | wc -l) inputs"

status=0
shopt -s nullglob
for crash in "$crashes"/crash-* "$crashes"/timeout-* "$crashes"/oom-* "$crashes"/leak-*; do
  # Bounded: a timeout input takes the full -timeout on every try.
  (cd "$work" && nice -n 19 "$bin" -minimize_crash=1 -max_total_time=120 -timeout=10 \
    -exact_artifact_path="$PWD/min" "$crash" >/dev/null 2>&1) || true
  [ -f "$work/min" ] && mv "$work/min" "$crash"
  out=$(python3 fuzz/regressions.py add "$target" "$crash")
  rm -f "$crash"
  echo "fuzz $target: FINDING $(basename "$crash") minimised into $out (a regression input: fix it, keep it)"
  status=1
done
[ "$status" = 0 ] || grep -m5 -E 'ERROR|SUMMARY|runtime error' "$log" >&2 || true
exit $status
