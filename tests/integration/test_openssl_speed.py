"""`openssl speed -engine padlock -evp aes-128-cbc -seconds 1` completes under padlock-emu
on Nehemiah and Esther (Debian's i386 openssl) and Nano (the host's x86-64 openssl), with
the work done by REP XCRYPTCBC (docs/emulator.md).

openssl speed times each block size with alarm(1) and a SIGALRM handler that ends the
loop, so this exercises guest signal handlers interrupting PadLock-heavy code. The
figures it prints depend on the clock the guest sees (see docs/emulator.md, "Virtual
time"); the test checks that every block size ran and that the engine did the work, not
the rates.

On Nehemiah the engine's chunked path (padlock.so, from OpenSSL's e_padlock-x86.pl)
clears its stack buffer with PXOR xmm0, an SSE2 instruction the C3 does not have: on the
chip that is #UD. The chip check (docs/emulator.md) reports it; the test runs Nehemiah
with `--chip-check warn` and pins the report, so the rest of the run is still checked."""

from __future__ import annotations

import re

import pytest

from realclients import openssl_client, padlock_counts

SIZES = (16, 64, 256, 1024, 8192, 16384)


@pytest.mark.parametrize("arch,cpu", [("i386", "nehemiah"), ("i386", "esther"),
                                      ("x86_64", "nano")])
def test_speed_completes(emulator_path, arch, cpu):
    client = openssl_client(arch)
    warn = ("--chip-check", "warn") if cpu == "nehemiah" else ()
    p = client.run(emulator_path, "/usr/bin/openssl",
                   ["speed", "-engine", "padlock", "-evp", "aes-128-cbc", "-seconds", "1"],
                   cpu=cpu, timeout=600, extra=warn)
    out = p.stdout.decode()
    row = re.search(r"^AES-128-CBC\s+(.*)$", out, re.M)
    assert row, out
    rates = [float(v.rstrip("k")) for v in row.group(1).split()]
    assert len(rates) == len(SIZES) and all(r > 0 for r in rates), out
    err = p.stderr.decode(errors="replace")
    sse2 = re.findall(r"pxor xmm\d+, xmm\d+.*'sse2'", err)
    assert bool(sse2) == (cpu == "nehemiah"), err[-3000:]
    for size in SIZES:
        assert f"on {size} size blocks" in err, err
    counts = padlock_counts(p.stderr)
    # Every block size encrypted many blocks with the hardware instruction.
    assert counts["XCRYPTCBC"][0] > 1000, counts
    assert counts["XCRYPTCBC"][1] > 1_000_000, counts
    print(f"\n{cpu} ({arch}): {row.group(0)}")


def test_speed_multi_completes(emulator_path):
    """`-multi 2` forks two children that each time every block size and report to the
    parent through a pipe (docs/emulator.md, "Processes"); each child writes its own
    --stats, with the REP XCRYPTCBC work in them; the parent adds the rates up."""
    client = openssl_client("i386")
    p = client.run(emulator_path, "/usr/bin/openssl",
                   ["speed", "-multi", "2", "-engine", "padlock", "-evp", "aes-128-cbc",
                    "-seconds", "1"], cpu="esther", timeout=900)
    out = p.stdout.decode()
    assert "Forked child 0" in out and "Forked child 1" in out, out
    reports = re.findall(r"^Got: \+F:\d+:AES-128-CBC:(.*) from (\d)$", out, re.M)
    assert sorted(child for _, child in reports) == ["0", "1"], out
    row = re.search(r"^AES-128-CBC\s+(.*)$", out, re.M)
    assert row, out
    total = [float(v.rstrip("k")) * 1000 for v in row.group(1).split()]
    assert len(total) == len(SIZES) and all(r > 0 for r in total), out
    # The parent's row is the sum of the children's rates (bytes per second).
    per_child = [[float(v) for v in rates.split(":")] for rates, _ in reports]
    for i, size_total in enumerate(total):
        assert size_total == pytest.approx(per_child[0][i] + per_child[1][i], rel=1e-3)
    err = p.stderr.decode(errors="replace")
    # Three --stats reports (the parent, two children); the children did the encryption.
    cbc = [int(m) for m in re.findall(r"REP XCRYPTCBC\s+(\d+)", err)]
    assert len(cbc) == 2 and all(n > 1000 for n in cbc), err[-3000:]
    assert err.count("padlock-emu: stats: system calls") == 3, err[-3000:]
