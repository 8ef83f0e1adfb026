"""The modetest-method guest (bench/guest/modetest.c) on nehemiah-c5p at 1.2 GHz against
Gladman's published C3 tables (tests/vectors/timing/gladman_c3_1200.tsv; docs/timing.md,
"Second source: Gladman's ACE tables").

Two kinds of checks, kept apart:
- structure that must hold whatever the calibration: every row present and converged, the
  results checked against the software AES (the guest exits non-zero otherwise), cycles/byte
  falling with the block count, aligned no slower than unaligned, ECB the fastest of the
  hardware modes. The same checks run on the published table, so they state facts of the
  silicon, not of our model;
- the accuracy the project must reach (aligned median |error| <= 3 %, max <= 10 %;
  unaligned median <= 5 %, max <= 15 %), and what the calibrated model reaches today, so
  that a change that makes the fit worse fails before anyone reads the regenerated
  tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from gladman_compare import CPU, GUEST, MHZ, compare, parse_run, summarise  # noqa: E402
from silicon_tables import GLADMAN_BLOCKS, load_gladman_c3  # noqa: E402

# Fewer samples than the method's 1000/10000: the emulator's clock is deterministic apart
# from the timer interrupts, which the filter drops either way.
SAMPLES = "200,2000"
HARDWARE_MODES = ("ecb", "cbc", "cfb", "ofb")  # REP XCRYPT on the data; CTR is software
BOUNDS = {"aligned": (0.03, 0.10), "unaligned": (0.05, 0.15)}  # (median, max) |error|
# What the model reaches today (docs/timing.md, "The targets, and the cells still over
# 10 %": aligned 0.7 % / 7.6 %, unaligned 1.4 % / 10.9 %), with a little room for the fewer
# samples taken here.
REACHED = {"aligned": (0.012, 0.085), "unaligned": (0.02, 0.12)}


def find_modetest(emulator: Path) -> Path | None:
    dirs = []
    if os.environ.get("PADLOCK_BUILD_DIR"):
        dirs.append(Path(os.environ["PADLOCK_BUILD_DIR"]))
    dirs.append(emulator.parent.parent)
    dirs += sorted(p for p in REPO.glob("build*") if p.is_dir())
    for d in dirs:
        if (d / "bench" / GUEST).is_file():
            return d / "bench" / GUEST
    return None


@pytest.fixture(scope="module")
def emulated(emulator_path):
    guest = find_modetest(emulator_path)
    if guest is None:
        pytest.skip(f"bench/{GUEST} not built (target padlock_bench_guests)")
    cmd = [str(emulator_path), "run", "--cpu", CPU, "--mhz", str(MHZ), str(guest),
           "-samples", SAMPLES]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    return parse_run(p.stdout)


@pytest.fixture(scope="module")
def published():
    return load_gladman_c3()


def structural_problems(t: dict) -> list[str]:
    """Violations of the structure in {(align, mode, dir, blocks): cycles/byte}."""
    problems = []
    rows = sorted({k[:3] for k in t})
    for row in rows:
        seq = [t[row + (b,)] for b in GLADMAN_BLOCKS]
        if any(a <= b for a, b in zip(seq, seq[1:])):
            problems.append(f"{row}: cycles/byte does not fall with the block count: {seq}")
    for (align, mode, d) in rows:
        if align != "aligned":
            continue
        for b in GLADMAN_BLOCKS:
            u = t.get(("unaligned", mode, d, b))
            if u is not None and t[(align, mode, d, b)] > u:
                problems.append(f"{mode} {d} {b}: aligned {t[(align, mode, d, b)]} > "
                                f"unaligned {u}")
    for align in ("aligned", "unaligned"):
        for b in GLADMAN_BLOCKS:
            ecb = max(t[(align, "ecb", d, b)] for d in ("encrypt", "decrypt"))
            for mode in HARDWARE_MODES[1:]:
                for d in ("encrypt", "decrypt"):
                    if t[(align, mode, d, b)] < ecb:
                        problems.append(f"{align} {b}: {mode} {d} {t[(align, mode, d, b)]} "
                                        f"faster than ECB {ecb}")
    return problems


def test_published_table_has_the_structure_the_checks_expect(published):
    # The checks below are facts of the silicon: they hold on Gladman's own figures.
    assert len(published.cells) == (8 + 10) * len(GLADMAN_BLOCKS)
    assert structural_problems(published.cells) == []


def test_every_row_present_converged_and_checked(emulated, published):
    # The guest compares the first and last timed call of each cell with the software AES
    # and exits non-zero on a mismatch (the fixture asserts exit 0).
    assert set(emulated.cells) == set(published.cells)
    assert all(c.converged for c in emulated.cells.values())
    assert emulated.settings["affinity"] in ("ok", "enosys")
    # the baseline interval (two reads, nothing between) is never longer than a call
    assert all(0 < c.base < c.mean for c in emulated.cells.values())


def test_cycles_per_byte_structure(emulated):
    assert structural_problems({k: c.cpb for k, c in emulated.cells.items()}) == []


def accuracy_failures(emulated, published, bounds) -> list[str]:
    """The sources whose median or max |error| exceeds its bound, with the figures."""
    s = summarise(compare(published, emulated.cells))
    return [f"{a}: median {100 * s[a].median:.1f} %, max {100 * s[a].max:.1f} %"
            for a, (median_bound, max_bound) in bounds.items()
            if s[a].median > median_bound or s[a].max > max_bound]


def test_accuracy_no_worse_than_reached(emulated, published):
    assert accuracy_failures(emulated, published, REACHED) == []


def test_accuracy_against_gladman_tables(emulated, published):
    assert accuracy_failures(emulated, published, BOUNDS) == []
