#!/usr/bin/env python3
"""Every speed figure of padlock-emu beside its baseline, measured in one run
(bench/run_all.sh is the entry point; docs/emulator.md, "Speed").

Rows (CPU time of whole runs, best of REPEAT, the runs of one row interleaved so that a
change of the machine's load hits baseline and emulator alike):
  plain i386 / x86-64 code   bench/guest/compute.c under qemu-i386 / qemu-x86_64 and under
                             padlock-emu with --timing off and on
  bulk REP XCRYPTECB         bench/guest/xcrypt_loop.c in each stream shape (in place over
                             8 KiB and 64 MiB; from one 64 MiB buffer into another in one
                             instruction per pass, and in 1 MiB steps), timing off and on,
                             against bench/host_stream.c: the host's OpenSSL (AES-NI) over
                             the same buffers in the same shape, whose output must match;
                             each loop's time is the run's minus a run doing the set-up only
  bulk REP XSHA256           the same guest over one buffer against host `openssl speed`
                             sha256 of the same size
  short REP XCRYPTECB        single-block instructions, host time per instruction
  openssl speed              Debian's i386 openssl with the padlock engine (nehemiah,
                             1.2 GHz, --chip-check warn: the engine's PXOR is SSE2, which a
                             Nehemiah lacks): wall and CPU time for `-seconds 1` (skipped
                             without the sysroot)
  harness calls              Machine::call of a small PadLock function against raw Unicorn
                             emu_start of the same code (bench_harness)
  --mix                      compute.c (i386) with --mix FILE against without, timing on
                             and off
  --check overhead           the same run with and without --check (docs/checker.md,
                             "Cost"): the demo guest (esther), Debian's i386 openssl with
                             the padlock engine (esther): `speed -seconds 1 -evp
                             aes-128-cbc` and `enc -aes-128-cbc` of CHECK_ENC_BYTES

usage: bench/run_all.py [--build DIR] [--before EMU] [--only ROW[,ROW...]]
  --before EMU: another padlock-emu binary (an earlier build) run interleaved with this
  one in the plain, bulk, short and openssl rows, printed as a "before" column
  rows: plain, mix, bulk, short, openssl, harness, check
  env: REPEAT (default 3), ROUNDS (compute's work factor, default 16),
       SHORT_N (single-block instructions, default 10000000),
       BULK_BYTES (bytes per bulk run, default 8 GiB: 128 passes over the 64 MiB buffer,
       so that the set-up run subtracted is small beside them), PADLOCK_SYSROOT_I386,
       CHECK_REPEAT (runs per --check row, default 11, 3 for openssl speed: the median
       is shown),
       CHECK_ENC_BYTES (default 4 MiB)
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
REPEAT = int(os.environ.get("REPEAT", "3"))
ROUNDS = os.environ.get("ROUNDS", "16")
SHORT_N = int(os.environ.get("SHORT_N", "10000000"))
BULK_BYTES = int(os.environ.get("BULK_BYTES", str(8 << 30)))
BEFORE: Path | None = None  # --before
CHECK_REPEAT = int(os.environ.get("CHECK_REPEAT", "11"))
SPEED_REPEAT = 3  # openssl speed runs 12 s of CPU each
LABEL_W = 48  # width of the rows' labels
CHECK_ENC_BYTES = int(os.environ.get("CHECK_ENC_BYTES", str(4 << 20)))


class Timer:
    """CPU time of child processes, from RUSAGE_CHILDREN before and after each run."""

    @staticmethod
    def run(cmd: list[str], env: dict | None = None) -> tuple[float, float, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, env=env)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"run_all: {' '.join(map(str, cmd))} failed ({p.returncode}):\n"
                     f"{p.stderr.decode(errors='replace')[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return cpu, wall, p.stdout.decode(errors="replace")


def best_interleaved(cmds: dict[str, list[str]], repeat: int = REPEAT) -> dict[str, float]:
    """Best CPU time of each command over `repeat` interleaved rounds."""
    best: dict[str, float] = {}
    outs: dict[str, str] = {}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            cpu, _, out = Timer.run(cmd)
            best[name] = min(best.get(name, cpu), cpu)
            outs[name] = out
    first = next(iter(outs.values()))
    for name, out in outs.items():
        if out != first:
            sys.exit(f"run_all: outputs differ: {name}: {out!r} vs {first!r}")
    return best


def build_guests(work: Path) -> dict[str, Path]:
    cc = shutil.which("gcc") or sys.exit("run_all: gcc not found")
    out = work / "host_stream"
    subprocess.run([cc, "-O2", f"-I{HERE}", "-o", out, HERE / "host_stream.c", "-lcrypto"],
                   check=True)
    guests = {"host_stream": out}
    for bits in ("32", "64"):
        out = work / f"compute{bits}"
        subprocess.run([cc, f"-m{bits}", "-static", "-O2", "-o", out, HERE / "guest/compute.c"],
                       check=True)
        guests[f"compute{bits}"] = out
    out = work / "xcrypt_loop"
    subprocess.run([cc, "-m32", "-march=i686", "-static", "-fno-pie", "-no-pie", "-O2",
                    f"-I{REPO / 'tests/guest'}", f"-I{HERE}", "-o", out,
                    HERE / "guest/xcrypt_loop.c"],
                   check=True)
    guests["xcrypt_loop"] = out
    return guests


def row(label: str, emu: float, base: float | None, base_label: str, unit: str = "s",
        goal: str = "", before: float | None = None) -> None:
    ratio = f"{emu / base:6.2f}x {base_label}" if base else ""
    base_s = f"{base:9.3f} {unit}" if base is not None else " " * 11
    if before is not None:
        ratio += f"  (before: {before:.3f} {unit}" + (f", {before / base:.2f}x)" if base else ")")
    print(f"  {label:<{LABEL_W}} {emu:9.3f} {unit}  {base_s}  {ratio}  {goal}".rstrip())


def plain_code(emu: Path, guests: dict[str, Path]) -> None:
    print("plain code (bench/guest/compute.c, CPU time, best of %d)" % REPEAT)
    print(f"  {'':<{LABEL_W}} {'padlock-emu':>11}  {'baseline':>11}")
    for bits, qemu in (("32", "qemu-i386"), ("64", "qemu-x86_64")):
        prog = str(guests[f"compute{bits}"])
        if shutil.which(qemu) is None:
            print(f"  {qemu} not installed: skipped")
            continue
        cpu = ["--cpu", "esther" if bits == "32" else "nano"]  # nano: the one with long mode
        cmds = {
            "qemu": [qemu, prog, ROUNDS],
            "off": [str(emu), "run", *cpu, "--timing", "off", prog, ROUNDS],
            "on": [str(emu), "run", *cpu, prog, ROUNDS],
        }
        if BEFORE is not None:
            cmds["b_off"] = [str(BEFORE), "run", *cpu, "--timing", "off", prog, ROUNDS]
            cmds["b_on"] = [str(BEFORE), "run", *cpu, prog, ROUNDS]
        t = best_interleaved(cmds)
        arch = "i386" if bits == "32" else "x86-64"
        goal_off, goal_on = ("0.8", "0.9") if bits == "32" else ("0.8", "0.95")
        row(f"{arch}, --timing off", t["off"], t["qemu"], qemu, goal=f"(goal <= {goal_off}x)",
            before=t.get("b_off"))
        row(f"{arch}, timing on", t["on"], t["qemu"], qemu, goal=f"(goal <= {goal_on}x)",
            before=t.get("b_on"))


def host_speed(mode: str, size: int) -> float:
    """Host OpenSSL's bytes/s for `mode` ("aes-128-ecb", "sha256") at `size`-byte buffers."""
    args = ["openssl", "speed", "-seconds", "1", "-bytes", str(size)]
    args += ["-evp", mode]
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    m = re.search(r"^\S+\s+([\d.]+)k\s*$", p.stdout, re.M)
    if not m:
        sys.exit(f"run_all: cannot read openssl speed output:\n{p.stdout}")
    return float(m.group(1)) * 1000


def loop_time(emu: Path, prog: Path, mode: str, size: int, count: int,
              before: Path | None = None, shape: str = "inplace",
              host: Path | None = None) -> dict[str, float]:
    """Host seconds of `count` passes (set-up subtracted), timing off and on; with
    `before`, also "b_off" and "b_on" for that binary; with `host` (bench/host_stream.c),
    also "host", whose output must equal the emulator's; all interleaved."""
    cmds = {}
    emus = {"": emu} if before is None else {"": emu, "b_": before}
    for tag, binary in emus.items():
        for timing in ("off", "on"):
            for n in (0, count):
                cmds[f"{tag}{timing}{n}"] = [str(binary), "run", "--cpu", "esther", "--timing",
                                             timing, str(prog), mode, str(size), str(n), shape]
    tags = [f"{tag}{t}" for tag in emus for t in ("off", "on")]
    if host is not None:
        for n in (0, count):
            cmds[f"host{n}"] = [str(host), str(size), str(n), shape]
        tags.append("host")
    best: dict[str, float] = {}
    outs: dict[str, str] = {}
    for _ in range(REPEAT):
        for name, cmd in cmds.items():
            cpu, _, out = Timer.run(cmd)
            best[name] = min(best.get(name, cpu), cpu)
            outs[name] = out
    if host is not None and outs[f"host{count}"] != outs[f"off{count}"]:
        sys.exit(f"run_all: host and emulator outputs differ: {outs[f'host{count}']!r} vs "
                 f"{outs[f'off{count}']!r}")
    return {t: max(best[f"{t}{count}"] - best[f"{t}0"], 1e-9) for t in tags}


def bulk(emu: Path, guests: dict[str, Path]) -> None:
    print(f"bulk data, esther, {BULK_BYTES >> 20} MiB per run (MB/s from CPU time; baseline: "
          "host OpenSSL over the same buffers (ECB), openssl speed of the same size (SHA))")
    print(f"  {'':<{LABEL_W}} {'padlock-emu':>11}  {'baseline':>11}")

    def show(label: str, t: dict[str, float], count: int, size: int, host: float) -> None:
        mb = {k: count * size / v / 1e6 for k, v in t.items()}
        row(f"{label}, --timing off", mb["off"], host, "host", "MB/s", before=mb.get("b_off"))
        row(f"{label}, timing on", mb["on"], host, "host", "MB/s", goal="(goal >= 0.8x)",
            before=mb.get("b_on"))
        was = f" (before: {t['b_on'] / t['b_off']:.2f}x)" if "b_on" in t else ""
        print(f"  {'':<{LABEL_W}} timing on / off: {t['on'] / t['off']:.2f}x time{was} (goal <= 1.25x)")

    # ECB in every stream shape, the host doing the same passes over the same buffers.
    for shape, size, label in (("inplace", 8192, "8 KiB in place"),
                               ("inplace", 64 << 20, "64 MiB in place"),
                               ("separate", 64 << 20, "64 MiB -> 64 MiB"),
                               ("steps", 64 << 20, "64 MiB in 1 MiB steps")):
        count = max(1, BULK_BYTES // size)
        t = loop_time(emu, guests["xcrypt_loop"], "ecb", size, count, BEFORE, shape=shape,
                      host=guests["host_stream"])
        show(f"REP XCRYPTECB {label}", t, count, size, count * size / t["host"] / 1e6)
    for size in (8192, 64 << 20):
        count = max(1, BULK_BYTES // size)
        t = loop_time(emu, guests["xcrypt_loop"], "sha256", size, count, BEFORE)
        sz = f"{size >> 10} KiB" if size < (1 << 20) else f"{size >> 20} MiB"
        show(f"REP XSHA256 {sz}", t, count, size, host_speed("sha256", size) / 1e6)


def short(emu: Path, guests: dict[str, Path]) -> None:
    print(f"short PadLock instructions: {SHORT_N} single-block REP XCRYPTECB, esther")
    t = loop_time(emu, guests["xcrypt_loop"], "ecb", 16, SHORT_N, BEFORE)
    for timing in ("off", "on"):
        goal = "(goal <= 90 ns)" if timing == "on" else ""
        before = f"(before: {t['b_' + timing] / SHORT_N * 1e9:.1f} ns)  " if BEFORE else ""
        print(f"  timing {timing:<3} {t[timing] / SHORT_N * 1e9:9.1f} ns per instruction  "
              f"{before}{goal}".rstrip())


def openssl_speed(emu: Path) -> None:
    root = sysroot_i386()
    print("openssl speed -seconds 1 -engine padlock -evp aes-128-cbc (i386, nehemiah, 1.2 GHz)")
    if not (root / "usr/bin/openssl").is_file():
        print(f"  no i386 sysroot at {root}: skipped (scripts/make-sysroot.sh)")
        return
    env = client_env()
    args = ["run", "--cpu", "nehemiah", "--mhz", "1200", "--chip-check", "warn", "-L", str(root),
            "/usr/bin/openssl", "speed", "-seconds", "1", "-engine", "padlock", "-evp",
            "aes-128-cbc"]
    emus = {"": emu} if BEFORE is None else {"": emu, "before: ": BEFORE}
    best: dict[str, tuple[float, float]] = {}
    for _ in range(REPEAT):
        for tag, binary in emus.items():
            cpu, wall, _ = Timer.run([str(binary), *args], env=env)
            if tag not in best or cpu < best[tag][0]:
                best[tag] = (cpu, wall)
    for tag, (cpu, wall) in best.items():
        goal = "" if tag else " (goal <= 5 s wall)"
        print(f"  {tag}{wall:7.1f} s wall, {cpu:7.1f} s CPU{goal}")


def mix(emu: Path, guests: dict[str, Path]) -> None:
    """--mix against the same run without it (docs/debugging.md: goal <= 1.3x), on compute:
    short blocks and no PadLock, the worst case for a per-block count."""
    print("--mix cost (bench/guest/compute.c i386, CPU time, best of %d)" % REPEAT)
    print(f"  {'':<{LABEL_W}} {'--mix':>11}  {'without':>11}")
    prog = str(guests["compute32"])
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "mix.txt")
        for label, extra in (("timing on", []), ("--timing off", ["--timing", "off"])):
            t = best_interleaved({
                "plain": [str(emu), "run", "--cpu", "esther", *extra, prog, ROUNDS],
                "mix": [str(emu), "run", "--cpu", "esther", *extra, "--mix", out, prog, ROUNDS],
            })
            row(f"compute, {label}", t["mix"], t["plain"], "without", goal="(goal <= 1.3x)")


def sysroot_i386() -> Path:
    return Path(os.environ.get("PADLOCK_SYSROOT_I386", REPO / ".sysroot-i386"))


def client_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PADLOCK_EMU_", "OPENSSL_"))}


def check_overhead(emu: Path, build: Path) -> None:
    """Median CPU and wall time of each run without and with --check, interleaved; the
    outputs of the two must be the same (the checker only observes)."""
    print(f"--check overhead (median of {CHECK_REPEAT} interleaved runs each, {SPEED_REPEAT} for "
          "openssl speed; goal <= 1.2x)")
    print(f"  {'':<40} {'without':>16}  {'with --check':>16}  {'ratio':>12}")
    print(f"  {'':<40} {'CPU s':>7} {'wall s':>8}  {'CPU s':>7} {'wall s':>8}  {'CPU':>5} {'wall':>6}")
    cases: list[tuple[str, list[str], dict | None, bool, int]] = []
    demo = build / "tests/guest/guest_demo_i386"
    if demo.is_file():
        cases.append(("demo (guest_demo_i386, esther)",
                      [str(emu), "run", "--cpu", "esther", "CHECK", str(demo)], None, True,
                      CHECK_REPEAT))
    else:
        print(f"  no {demo}: demo skipped (build target padlock_guests)")
    root = sysroot_i386()
    tmp = Path(tempfile.mkdtemp())
    if (root / "usr/bin/openssl").is_file():
        base = [str(emu), "run", "--cpu", "esther", "-L", str(root), "CHECK", "/usr/bin/openssl"]
        cases.append(("openssl speed -seconds 1 aes-128-cbc",
                      base + ["speed", "-seconds", "1", "-engine", "padlock", "-evp",
                              "aes-128-cbc"], client_env(), False, SPEED_REPEAT))
        data = tmp / "in.bin"
        data.write_bytes(os.urandom(CHECK_ENC_BYTES))
        cases.append((f"openssl enc -aes-128-cbc, {CHECK_ENC_BYTES >> 20} MiB",
                      base + ["enc", "-engine", "padlock", "-aes-128-cbc", "-K", "00" * 16,
                              "-iv", "01" * 16, "-in", str(data), "-out", "-"],
                      client_env(), True, CHECK_REPEAT))
    else:
        print(f"  no i386 sysroot at {root}: openssl skipped (scripts/make-sysroot.sh)")
    for label, cmd, env, same_output, repeat in cases:
        runs: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
        outs: dict[str, str] = {}
        for _ in range(repeat):
            for name, flag in (("off", []), ("on", ["--check"])):
                i = cmd.index("CHECK")
                cpu, wall, out = Timer.run(cmd[:i] + flag + cmd[i + 1:], env=env)
                runs[name].append((cpu, wall))
                outs[name] = out
        if same_output and outs["off"] != outs["on"]:
            sys.exit(f"run_all: {label}: the output differs with --check")
        med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
               for k, v in runs.items()}
        (c0, w0), (c1, w1) = med["off"], med["on"]
        print(f"  {label:<40} {c0:7.3f} {w0:8.3f}  {c1:7.3f} {w1:8.3f}  "
              f"{c1 / c0:5.2f}x {w1 / w0:5.2f}x")
    shutil.rmtree(tmp, ignore_errors=True)


def harness(build: Path) -> None:
    exe = build / "bench/bench_harness"
    print("harness: calls of a small PadLock function (one REP XCRYPTECB) per second")
    if not exe.is_file():
        print(f"  {exe} not built: skipped")
        return
    p = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    print(p.stdout.rstrip())


ROWS = {"plain": plain_code, "mix": mix, "bulk": bulk, "short": short,
        "openssl": openssl_speed, "harness": harness, "check": check_overhead}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--only", default=",".join(ROWS))
    ap.add_argument("--before", type=Path, help="an earlier padlock-emu, run interleaved")
    a = ap.parse_args()
    global BEFORE
    BEFORE = a.before
    emu = Path(os.environ.get("PADLOCK_EMU_BIN", a.build / "emulator/padlock-emu"))
    if not emu.is_file():
        sys.exit(f"run_all: no {emu} (build first or set PADLOCK_EMU_BIN)")
    print(f"padlock-emu {emu}; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} "
          "(ratios are within this run)")
    with tempfile.TemporaryDirectory() as tmp:
        guests = build_guests(Path(tmp))
        for name in a.only.split(","):
            fn = ROWS[name]
            if name == "harness":
                fn(a.build)
            elif name == "openssl":
                fn(emu)
            elif name == "check":
                fn(emu, a.build)
            else:
                fn(emu, guests)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
