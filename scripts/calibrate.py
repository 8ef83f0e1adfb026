#!/usr/bin/env python3
"""Calibration report of the timing model: runs the BAES-shaped guest
(bench/guest/baes.c) under padlock-emu for every cell of the three measured throughput
tables of guide §3.3, prints the emulated figures beside the published ones with the
error of each cell, adds the documented clock tables (ECB, XSTORE), the PHE asymptote and
the PMM formula from bench_timing_cases, and writes the whole report to docs/timing.md
with PNG plots in docs/timing/.

The published figures below are the yardstick only: the emulator never sees them.

usage: scripts/calibrate.py [--build DIR] [--out docs/timing.md] [--jobs N] [--quick]
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZES = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 1048576]
SIZE_NAMES = ["16B", "32B", "64B", "128B", "256B", "512B", "1KB", "2KB", "4KB", "8KB", "16KB",
              "32KB", "64KB", "1MB"]

# Guide §3.3, "Measured performance" (Gb/s), transcribed as printed.
TABLES = [
    {
        "title": "1.2 GHz Nehemiah with 16-byte aligned buffers",
        "key": "nehemiah",
        "cpu": "nehemiah-c5p", "mhz": 1200, "unaligned": False,
        "cols": {
            "ECB": [3.28, 5.79, 10.67, 12.05, 12.88, 13.52, 13.88, 13.94, 14.00, 13.94, 14.01, 10.66, 9.45, 1.05],
            "CBC": [3.37, 5.29, 5.82, 6.04, 6.19, 6.36, 6.40, 6.38, 6.43, 6.43, 6.43, 6.24, 6.02, 1.05],
            "CFB": [2.98, 4.83, 5.82, 6.02, 6.10, 6.22, 6.33, 6.34, 6.28, 6.39, 6.24, 6.11, 5.90, 1.05],
            "OFB": [1.86, 2.38, 2.65, 2.82, 2.91, 3.03, 3.06, 3.06, 3.08, 3.09, 3.10, 2.89, 2.82, 0.89],
        },
    },
    {
        "title": "1.6 GHz Esther with 16-byte aligned buffers",
        "key": "esther",
        "cpu": "esther-c5j", "mhz": 1600, "unaligned": False,
        "cols": {
            "ECB": [4.13, 6.83, 12.19, 14.11, 15.21, 16.07, 16.72, 16.83, 17.03, 17.03, 17.03, 17.20, 14.56, 3.09],
            "CBC": [3.88, 6.03, 7.53, 8.36, 8.71, 8.80, 8.90, 8.98, 8.93, 8.93, 8.98, 8.97, 8.67, 2.69],
            "CFB": [3.66, 5.75, 7.31, 8.19, 8.71, 8.80, 8.90, 8.96, 8.93, 8.93, 8.93, 8.89, 8.67, 2.69],
            "OFB": [2.11, 2.96, 3.71, 4.27, 4.60, 4.82, 4.93, 4.96, 5.00, 5.00, 5.02, 5.04, 4.72, 2.56],
        },
    },
    {
        "title": "1.6 GHz Esther with non-aligned buffers",
        "key": "esther_unaligned",
        "cpu": "esther-c5j", "mhz": 1600, "unaligned": True,
        "cols": {
            "CTR": [1.52, 2.37, 3.27, 4.06, 4.10, 4.90, 5.09, 5.20, 5.24, 5.26, 5.28, 5.28, 5.14, 1.68],
            "CBC": [1.56, 1.78, 2.31, 2.69, 2.95, 3.08, 3.17, 3.20, 3.23, 3.23, 3.24, 3.25, 3.20, 2.17],
            "CFB": [1.49, 1.78, 2.28, 2.66, 2.93, 3.08, 3.15, 3.20, 3.22, 3.23, 3.24, 3.25, 3.20, 2.09],
            "OFB": [1.42, 1.70, 2.18, 2.54, 2.77, 2.90, 2.98, 3.01, 3.02, 3.03, 3.04, 3.04, 3.01, 2.09],
        },
    },
]


def find_build(arg: str | None) -> Path:
    cands = [Path(arg)] if arg else sorted(REPO.parent.glob("build*")) + sorted(REPO.glob("build*"))
    for c in cands:
        if (c / "emulator" / "padlock-emu").exists() and (c / "bench" / "guest_baes_i386").exists():
            return c
    sys.exit("calibrate: no build with emulator/padlock-emu and bench/guest_baes_i386 "
             "(pass --build DIR)")


def reps_for(blocks: int, quick: bool) -> int:
    budget = 500_000 if quick else 4_000_000  # blocks per run
    return max(8, min(100_000, budget // blocks))


def run_cell(emu: Path, baes: Path, cpu: str, mhz: int, mode: str, size: int, unaligned: bool,
             quick: bool) -> float:
    blocks = size // 16
    cmd = [str(emu), "run", "--cpu", cpu, "--mhz", str(mhz), str(baes), "-mode", mode.lower(),
           "-buffer", str(blocks), "-rep", str(reps_for(blocks, quick))]
    if unaligned:
        cmd.append("-unaligned")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"gbps=([0-9.]+)", out)
    if not m:
        raise RuntimeError(f"no gbps in output of {' '.join(cmd)}: {out!r}")
    return float(m.group(1))


def run_tables(emu: Path, baes: Path, jobs: int, quick: bool):
    results = {}
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {}
        for t in TABLES:
            for mode, pub in t["cols"].items():
                for i, size in enumerate(SIZES):
                    f = ex.submit(run_cell, emu, baes, t["cpu"], t["mhz"], mode, size,
                                  t["unaligned"], quick)
                    futs[f] = (t["key"], mode, i)
        for f in cf.as_completed(futs):
            results[futs[f]] = f.result()
    return results


def err(emul: float, pub: float) -> float:
    return (emul - pub) / pub


def plots(results, outdir: Path) -> list[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("calibrate: matplotlib not installed (pip install -r requirements.txt); no plots",
              file=sys.stderr)
        return []
    outdir.mkdir(parents=True, exist_ok=True)
    names = []
    for t in TABLES:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for mode, pub in t["cols"].items():
            em = [results[(t["key"], mode, i)] for i in range(len(SIZES))]
            line, = ax.plot(range(len(SIZES)), pub, "o-", label=f"{mode} published")
            ax.plot(range(len(SIZES)), em, "x--", color=line.get_color(), label=f"{mode} emulated")
        ax.set_xticks(range(len(SIZES)))
        ax.set_xticklabels(SIZE_NAMES, rotation=45)
        ax.set_ylabel("Gb/s")
        ax.set_title(t["title"] + " (§3.3): published vs emulated")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        name = f"throughput_{t['key']}.png"
        fig.savefig(outdir / name, dpi=110)
        plt.close(fig)
        names.append(name)
    return names


def model_cases(build: Path) -> str:
    tool = build / "bench" / "bench_timing_cases"
    if not tool.exists():
        return "(bench_timing_cases not built)\n"
    return subprocess.run([str(tool)], capture_output=True, text=True, check=True).stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build")
    ap.add_argument("--out", default=str(REPO / "docs" / "timing.md"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--quick", action="store_true", help="fewer iterations (smoke test)")
    args = ap.parse_args()
    build = find_build(args.build)
    emu, baes = build / "emulator" / "padlock-emu", build / "bench" / "guest_baes_i386"
    results = run_tables(emu, baes, args.jobs, args.quick)

    all_errs = []
    md = []
    for t in TABLES:
        modes = list(t["cols"])
        md.append(f"### {t['title']} (Gb/s): published / emulated / error\n")
        md.append(f"`padlock-emu run --cpu {t['cpu']} --mhz {t['mhz']} guest_baes_i386 -mode M "
                  f"-buffer BLOCKS{' -unaligned' if t['unaligned'] else ''}`\n")
        md.append("| Size | " + " | ".join(f"{m} pub | {m} emu | err" for m in modes) + " |")
        md.append("|---|" + "---|---|---|" * len(modes))
        terrs = []
        for i, sname in enumerate(SIZE_NAMES):
            cells = []
            for m in modes:
                pub = t["cols"][m][i]
                em = results[(t["key"], m, i)]
                e = err(em, pub)
                terrs.append(abs(e))
                mark = " **" if abs(e) > 0.10 else ""
                cells.append(f"{pub:.2f} | {em:.2f} | {100 * e:+.1f}%{mark}")
            md.append(f"| {sname} | " + " | ".join(cells) + " |")
        all_errs += terrs
        md.append("")
        md.append(f"Median |error| {100 * statistics.median(terrs):.1f} %, max "
                  f"{100 * max(terrs):.1f} %, cells over 10 %: "
                  f"{sum(e > 0.10 for e in terrs)} of {len(terrs)}.\n")
        print(f"{t['title']}: median {100 * statistics.median(terrs):.2f} %, "
              f"max {100 * max(terrs):.1f} %")
    summary = (f"**All {len(all_errs)} cells: median |error| "
               f"{100 * statistics.median(all_errs):.2f} % (target <= 3 %), max "
               f"{100 * max(all_errs):.1f} % (target <= 10 %), "
               f"{sum(e > 0.10 for e in all_errs)} cells over 10 %.**\n")
    print(summary.strip("*\n"))
    pngs = plots(results, Path(args.out).parent / "timing")

    out = Path(args.out)
    text = out.read_text() if out.exists() else ""
    begin, end = "<!-- calibrate.py: begin -->", "<!-- calibrate.py: end -->"
    block = [begin, "", "## Calibration results (generated by scripts/calibrate.py)", "",
             summary, *md]
    for p in pngs:
        block.append(f"![{p}](timing/{p})\n")
    block += ["### Documented clock tables, PHE asymptote, PMM formula (models, exact)", "",
              "Output of `bench_timing_cases` (the models through `Padlock::execute`):", "",
              "```", model_cases(build).rstrip(), "```", "", end]
    if begin in text and end in text:
        text = text[:text.index(begin)] + "\n".join(block) + text[text.index(end) + len(end):]
    else:
        text = text + ("\n" if text else "") + "\n".join(block) + "\n"
    out.write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
