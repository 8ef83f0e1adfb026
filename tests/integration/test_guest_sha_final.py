"""guest_sha_final: the Linux padlock-sha.c final step (software hashes the whole blocks,
REP XSHA gets EAX = bytes already hashed, ECX = total, §4.1). For a length that is a
nonzero multiple of 64 the instruction runs with EAX = ECX and must emit only the padding
block (docs/fidelity/phe.md, "xsha-pad-only"): testmgr's 64-byte SHA-1/SHA-256 vectors
take this path through the driver's final()."""

from __future__ import annotations

import hashlib
import random

import pytest

from guestrun import records

SIZES = [0, 1, 55, 63, 64, 65, 128, 192, 1000, 4096]
ALGOS = {"1": hashlib.sha1, "256": hashlib.sha256}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("sha_final")
    rng = random.Random(61)
    names = []
    for n in SIZES:
        (d / f"f{n}.bin").write_bytes(rng.randbytes(n))
        names.append(f"f{n}.bin")
    return d, names


@pytest.mark.parametrize("algo", ["1", "256"])
def test_final_digest_matches(runner, target, files, algo):
    """Every split gives the standard digest, the pad-only ones (64, 128, ...) included."""
    d, names = files
    proc = runner.run("sha_final", target, [algo] + names, cwd=d)
    expected = "".join(f"{ALGOS[algo]((d / n).read_bytes()).hexdigest()}  {n}\n"
                       for n in names)
    assert proc.stdout.decode() == expected


@pytest.mark.parametrize("algo", ["1", "256"])
def test_pad_only_registers_and_diagnostic(runner, target, files, algo):
    """EAX = ECX at start: ESI does not move, EAX stays ECX; the choice is reported once
    per address as xsha-pad-only."""
    d, _ = files
    proc = runner.run("sha_final", target, [algo, "-v", "f64.bin", "f128.bin"], cwd=d)
    regs = records(proc.stdout, "regs")
    assert [(r["eax"], r["ecx"], r["eax_after"], r["esi_adv"]) for r in regs] == \
        [("64", "64", "64", "0"), ("128", "128", "128", "0")]
    assert proc.stderr.decode().count("diagnostic: xsha-pad-only") == 1
