"""guest_xstore: XSTORE at every quality factor and REP XSTORE (§2.1), and the CLI's
--seed (the RNG bits are reproducible from a seed)."""

from __future__ import annotations

import os
import subprocess

import pytest

from guestrun import kv, records

# §2.1 "RNG Quality Factor" table: EDX[1:0] -> (total bytes stored, random bytes).
QUALITY = {0: (8, 8), 1: (4, 4), 2: (4, 2), 3: (4, 1)}
FILL = 0xA5
ENBL = 1 << 6  # MSR 0x110B bit 6, copied into EAX (§2.1 "RNG Status Word", §1.4)


@pytest.fixture
def xstore_out(runner, target):
    return runner.run("xstore", target, ["8"]).stdout


def test_xstore_quality_factor_table(xstore_out):
    """§2.1: bytes stored, zero fill, EAX[4:0] and the EDI increment per EDX[1:0]; the
    upper 30 bits of EDX are ignored."""
    lines = records(xstore_out, "xstore")
    by_edx = {}
    for r in lines:
        by_edx.setdefault(int(r["edx"], 16), []).append(r)
    assert sorted(by_edx) == [0, 1, 2, 3, 0xFFFFFFF1]
    for edx, rs in by_edx.items():
        stored, random_bytes = QUALITY[edx & 3]
        assert len(rs) == 8
        for r in rs:
            eax = int(r["eax"], 16)
            buf = bytes.fromhex(r["bytes"])
            assert int(r["count"]) == random_bytes == eax & 0x1F
            assert int(r["edi_adv"]) == random_bytes
            assert eax & ENBL
            assert int(r["tries"]) >= 1
            # zero fill of the rest of the 4-byte store; nothing past the store(s)
            assert buf[random_bytes:stored] == bytes(stored - random_bytes)
            assert buf[stored:] == bytes([FILL]) * (16 - stored)


def test_xstore_random_bytes_vary(xstore_out):
    """The random part differs between stores (8 samples per quality factor)."""
    for edx in (0, 1, 2, 3):
        n = QUALITY[edx][1]
        samples = [bytes.fromhex(r["bytes"])[:n] for r in records(xstore_out, "xstore")
                   if int(r["edx"], 16) == edx]
        assert len(set(samples)) >= (2 if n == 1 else 6), (edx, samples)


def test_xstore_empty_buffer_stores_nothing(xstore_out):
    """§2.1: with fewer than 8 bytes available nothing is stored, the count is 0 and EDI
    stays. Back-to-back XSTOREs outrun the RNG, so the burst has such stores, and the
    first (after the RNG had time to fill) stores all 8 bytes."""
    burst = records(xstore_out, "burst")
    assert len(burst) == 64
    assert int(burst[0]["eax"], 16) & 0x1F == 8
    empty = [r for r in burst if int(r["eax"], 16) & 0x1F == 0]
    assert empty, "no XSTORE in the burst found the buffer empty"
    for r in burst:
        eax = int(r["eax"], 16)
        assert eax & ENBL
        assert eax & 0x1F in (0, 8)
        stored = eax & 0x1F
        assert int(r["edi_adv"]) == stored
        # nothing is written when nothing is available; 8 bytes otherwise
        assert bytes.fromhex(r["bytes"])[stored:] == bytes([FILL]) * (16 - stored)


def test_rep_xstore(xstore_out):
    """§2.1 REP XSTORE: ECX = 0 and EDI advanced by the count at the end; at most seven
    bytes past the request are written (the buffer is count + 8, as CRAP.C allocates)."""
    reps = records(xstore_out, "rep")
    assert len(reps) == 4 * 7
    for r in reps:
        count = int(r["count"])
        assert int(r["ecx"]) == 0
        assert int(r["edi_adv"]) == count
        assert int(r["beyond"]) == 0
        assert int(r["eax"], 16) & ENBL
        assert len(bytes.fromhex(r["bytes"])) == min(count, 32)
    big = [r for r in reps if r["count"] == "1000"]
    for r in big:  # 32 random bytes should not all be the fill pattern
        assert bytes.fromhex(r["bytes"]) != bytes([FILL]) * 32


def test_rep_xstore_statistics(xstore_out):
    """64 KiB from REP XSTORE with EDX = 0: every byte value occurs and about half the
    bits are ones (a gross check of the whitened stream, §2.2 RBTS = 0)."""
    out = kv(xstore_out)
    assert int(out["distinct"]) == 256
    assert 490 <= int(out["ones_permille"]) <= 510


def test_seed_reproducible(runner, target):
    """--seed N: the same seed gives the same bits, another seed others."""
    a = runner.run("xstore", target, ["1"], seed=1).stdout
    b = runner.run("xstore", target, ["1"], seed=1).stdout
    c = runner.run("xstore", target, ["1"], seed=2).stdout
    assert kv(a)["sample"] == kv(b)["sample"]
    assert kv(a)["sample"] != kv(c)["sample"]


def test_seed_from_environment(runner, target):
    """PADLOCK_EMU_SEED sets the seed as --seed does; --seed wins over it."""
    cmd = runner.command("xstore", target.arch, ["1"], cpu=target.cpu)
    seeded = runner.command("xstore", target.arch, ["1"], cpu=target.cpu, seed=1)
    base = {k: v for k, v in os.environ.items() if k != "PADLOCK_EMU_SEED"}

    def sample(c, seed_env):
        env = dict(base, PADLOCK_EMU_SEED=seed_env) if seed_env else base
        p = subprocess.run(c, capture_output=True, timeout=300, env=env)
        assert p.returncode == 0, p.stderr[-500:]
        return kv(p.stdout)["sample"]

    assert sample(cmd, "1") == sample(seeded, None)
    assert sample(cmd, "2") != sample(seeded, None)
    assert sample(seeded, "2") == sample(seeded, None)
