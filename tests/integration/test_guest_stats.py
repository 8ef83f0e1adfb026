"""`padlock-emu run --stats`: the exit summary counts the PadLock instructions the guest
executed, by kind, with bytes and key reloads (docs/emulator.md). The guests know exactly what
they executed, so the counts are exact."""

from __future__ import annotations

import re

import pytest

STATS_LINE = re.compile(
    r"^padlock-emu: stats:\s+(?P<name>(?:REP )?[A-Z0-9]+)\s+(?P<count>\d+)\s+(?P<bytes>\d+)"
    r"\s+(?P<cycles>\d+)\s+(?P<faults>\d+)\s+(?P<reloads>\d+)\s*$")


def stats(proc) -> dict[str, dict[str, int]]:
    text = (proc.stderr + proc.stdout).decode(errors="replace")
    out = {}
    for line in text.splitlines():
        m = STATS_LINE.match(line)
        if m:
            out[m["name"]] = {k: int(m[k]) for k in ("count", "bytes", "cycles", "faults",
                                                      "reloads")}
    return out


@pytest.mark.parametrize("case,reloads", [("stale", 2), ("reload", 3)])
def test_stats_count_xcrypt_and_key_reloads(runner, target, case, reloads):
    """stale_key runs three 2-block REP XCRYPTECBs; the key is loaded for the first and
    the third, and for the second only after PUSHF/POPF (§1.8)."""
    proc = runner.run("stale_key", target, [case], stats=True)
    s = stats(proc)
    assert s["REP XCRYPTECB"]["count"] == 3
    assert s["REP XCRYPTECB"]["bytes"] == 3 * 32
    assert s["REP XCRYPTECB"]["reloads"] == reloads
    assert s["REP XCRYPTECB"]["faults"] == 0
    assert s["REP XCRYPTECB"]["cycles"] > 0


def test_stats_count_xsha(runner, target, tmp_path):
    sizes = [0, 100, 5000]
    names = []
    for n in sizes:
        (tmp_path / f"f{n}").write_bytes(b"x" * n)
        names.append(f"f{n}")
    proc = runner.run("sha", target, ["256"] + names, stats=True, cwd=tmp_path)
    s = stats(proc)
    assert s["REP XSHA256"]["count"] == len(sizes)
    assert s["REP XSHA256"]["bytes"] == sum(sizes)
    assert "REP XSHA1" not in s


def test_stats_count_fault(runner, target):
    """The page fault of segv_xcrypt shows as one faulted REP XCRYPTCBC among two
    executions (the faulting one and the restarted one)."""
    proc = runner.run("segv_xcrypt", target, ["out", "prot", "enc"], stats=True)
    s = stats(proc)
    assert s["REP XCRYPTCBC"]["count"] == 2
    assert s["REP XCRYPTCBC"]["faults"] == 1
