#!/usr/bin/env python3
"""Runs our modetest-method guest (bench/guest/modetest.c) under padlock-emu and compares its
cycles/byte with Gladman's published 1.2 GHz C3 tables (tests/vectors/timing/
gladman_c3_1200.tsv; docs/timing.md, "Second source: Gladman's ACE tables").

The published figures are the yardstick only: the emulator never sees them.

usage: scripts/gladman_compare.py [--build DIR] [--emu PATH] [--guest PATH]
                                  [--samples N1,N2] [--emu-arg ARG]... [--guest-arg ARG]...
                                  [--markdown] [--fits]

Importable (the calibration scripts reuse it):
    from gladman_compare import run_modetest, compare, summarise
    run = run_modetest(emu, guest)     # run.cells: {(align, mode, dir, blocks): Cell}
    rows = compare(load_gladman_c3(), run.cells)  # one Row per published cell
    summarise(rows)                               # {"aligned": Summary, "unaligned": ...}
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from silicon_tables import GLADMAN_BLOCKS, Key, PublishedTable, load_gladman_c3  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CPU, MHZ = "nehemiah-c5p", 1200  # the published tables' chip: a 1.2 GHz C3 with ACE
GUEST = "guest_modetest_i386"


@dataclass(frozen=True)
class Cell:
    """One `cell` record of the guest."""

    cpb: float       # as printed: truncated to 2 decimals, like the method
    cpb_raw: float   # (mean - baseline) / bytes, unrounded
    mean: float      # filtered mean cycles of one call
    base: float      # filtered mean cycles of the empty interval
    converged: bool


@dataclass(frozen=True)
class Run:
    """A guest run: its cells and the settings line (samples, offset, iv_offset, affinity)."""

    cells: dict[Key, Cell]
    settings: dict[str, str]


@dataclass(frozen=True)
class Row:
    key: Key
    published: float
    emulated: float

    @property
    def error(self) -> float:
        return (self.emulated - self.published) / self.published


@dataclass(frozen=True)
class Summary:
    cells: int
    median: float  # of |error|
    max: float


def find_build(arg: str | None) -> Path:
    cands = [Path(arg)] if arg else []
    if os.environ.get("PADLOCK_BUILD_DIR"):
        cands.append(Path(os.environ["PADLOCK_BUILD_DIR"]))
    cands += sorted(REPO.glob("build*")) + sorted(REPO.parent.glob("build*"))
    for c in cands:
        if (c / "bench" / GUEST).exists():
            return c
    sys.exit(f"gladman_compare: no build with bench/{GUEST} (pass --build DIR)")


def find_emulator(build: Path) -> Path:
    env = os.environ.get("PADLOCK_EMU_BIN")
    return Path(env) if env else build / "emulator" / "padlock-emu"


def parse_run(stdout: str) -> Run:
    cells: dict[Key, Cell] = {}
    settings: dict[str, str] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if not parts or parts[0] not in ("cell", "modetest"):
            continue
        f = dict(p.split("=", 1) for p in parts[1:])
        if parts[0] == "modetest":
            settings = f
            continue
        key = (f["align"], f["mode"], f["dir"], int(f["blocks"]))
        cells[key] = Cell(float(f["cpb"]), float(f["cpb_raw"]), float(f["mean"]),
                          float(f["base"]), f["converged"] == "1")
    return Run(cells, settings)


def run_modetest(emu: Path, guest: Path, cpu: str = CPU, mhz: int = MHZ,
                 guest_args: list[str] | tuple = (), emu_args: list[str] | tuple = (),
                 timeout: float = 1800) -> Run:
    """Runs the guest once (all cells it is asked for) and parses its records."""
    cmd = [str(emu), "run", "--cpu", cpu, "--mhz", str(mhz), *emu_args, str(guest), *guest_args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}\n"
                           f"{p.stderr[-2000:]}")
    return parse_run(p.stdout)


def compare(published: PublishedTable, emulated: dict[Key, Cell]) -> list[Row]:
    """One row per published cell, in the table's order; cells the run lacks are skipped."""
    rows = []
    for key3 in published.rows():
        for blocks in GLADMAN_BLOCKS:
            key = key3 + (blocks,)
            if key in emulated:
                rows.append(Row(key, published.cells[key], emulated[key].cpb))
    return rows


def summarise(rows: list[Row]) -> dict[str, Summary]:
    out = {}
    for align in ("aligned", "unaligned"):
        errs = [abs(r.error) for r in rows if r.key[0] == align]
        if errs:
            out[align] = Summary(len(errs), statistics.median(errs), max(errs))
    return out


def call_fit(cpb: dict[int, float]) -> tuple[float, float]:
    """Cycles per call as a + b*N through the 100- and 1000-block cells: (a, b)."""
    t100, t1000 = cpb[100] * 16 * 100, cpb[1000] * 16 * 1000
    b = (t1000 - t100) / 900
    return t100 - 100 * b, b


def markdown(rows: list[Row], offset: str = "?") -> str:
    """The comparison as docs/timing.md tables: one per alignment."""
    lines = []
    by_row: dict[tuple[str, str, str], dict[int, Row]] = {}
    for r in rows:
        by_row.setdefault(r.key[:3], {})[r.key[3]] = r
    for align, title in (("aligned", "aligned"), ("unaligned", f"unaligned (data offset {offset})")):
        keys = [k for k in by_row if k[0] == align]
        if not keys:
            continue
        lines.append(f"Cycles/byte, {title}: published / emulated / error\n")
        lines.append("| Mode | " + " | ".join(f"{b} blk pub | emu | err" for b in GLADMAN_BLOCKS)
                     + " |")
        lines.append("|---|" + "---|---|---|" * len(GLADMAN_BLOCKS))
        for k in keys:
            cells = []
            for b in GLADMAN_BLOCKS:
                r = by_row[k].get(b)
                cells.append("| | " if r is None else
                             f"{r.published:.2f} | {r.emulated:.2f} | {100 * r.error:+.0f}%")
            lines.append(f"| {k[1]} {k[2]} | " + " | ".join(cells) + " |")
        s = summarise([r for r in rows if r.key[0] == align])[align]
        lines.append("")
        lines.append(f"{align}: {s.cells} cells, median |error| {100 * s.median:.1f} %, "
                     f"max {100 * s.max:.1f} %.\n")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build")
    ap.add_argument("--emu", help="padlock-emu (default: $PADLOCK_EMU_BIN or BUILD's)")
    ap.add_argument("--guest", help=f"the guest (default: BUILD/bench/{GUEST})")
    ap.add_argument("--samples", help="N1,N2 samples per stage (default: the method's)")
    ap.add_argument("--emu-arg", action="append", default=[], help="extra padlock-emu option")
    ap.add_argument("--guest-arg", action="append", default=[], help="extra guest option")
    ap.add_argument("--markdown", action="store_true", help="print docs/timing.md tables")
    ap.add_argument("--fits", action="store_true",
                    help="also print cycles per call as a + b*N, published and emulated")
    args = ap.parse_args()
    build = None if args.emu and args.guest else find_build(args.build)
    emu = Path(args.emu) if args.emu else find_emulator(build)
    guest = Path(args.guest) if args.guest else build / "bench" / GUEST
    gargs = list(args.guest_arg) + (["-samples", args.samples] if args.samples else [])
    published = load_gladman_c3()
    run = run_modetest(emu, guest, guest_args=gargs, emu_args=args.emu_arg)
    cells = run.cells
    rows = compare(published, cells)
    if not rows:
        sys.exit("gladman_compare: the guest printed no cells")
    if args.markdown:
        print(markdown(rows, run.settings.get("offset", "?")))
    else:
        print(f"{'align':9} {'mode':4} {'dir':7} {'blocks':>6} {'pub':>6} {'emu':>6} {'err':>7}")
        for r in rows:
            a, m, d, b = r.key
            print(f"{a:9} {m:4} {d:7} {b:6d} {r.published:6.2f} {r.emulated:6.2f} "
                  f"{100 * r.error:+6.1f}%")
        for align, s in summarise(rows).items():
            print(f"{align}: {s.cells} cells, median |error| {100 * s.median:.1f} %, "
                  f"max {100 * s.max:.1f} %")
    if args.fits:
        print(f"\n{'align':9} {'mode':4} {'dir':7} {'a pub':>7} {'a emu':>7} {'b pub':>6} "
              f"{'b emu':>6}  (cycles per call = a + b * blocks)")
        for key3 in published.rows():
            if not all(key3 + (b,) in cells for b in (100, 1000)):
                continue
            pa, pb = call_fit({b: published.cells[key3 + (b,)] for b in GLADMAN_BLOCKS})
            ea, eb = call_fit({b: cells[key3 + (b,)].cpb_raw for b in (100, 1000)})
            print(f"{key3[0]:9} {key3[1]:4} {key3[2]:7} {pa:7.0f} {ea:7.0f} {pb:6.2f} {eb:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
