"""guest_sha: REP XSHA1 / REP XSHA256 over whole files (§4.1, §6.3 PHE.C), compared
with the host's sha1sum / sha256sum on the same files (hashlib when those tools are
missing). Sizes cover the empty message (§4.1: ECX = 0 is valid), sizes that are not a
multiple of 64, the padding boundaries 55/56/63/64 and a large file."""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess

import pytest

from guestrun import records

SIZES = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 1000, 4096, 100003,
         1 << 20]
ALGOS = {"1": ("sha1sum", hashlib.sha1), "256": ("sha256sum", hashlib.sha256)}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("sha")
    rng = random.Random(180)
    names = []
    for n in SIZES:
        name = f"f{n}.bin"
        (d / name).write_bytes(rng.randbytes(n))
        names.append(name)
    # FIPS 180-2 examples: "abc" and the 448-bit two-block message.
    (d / "abc.txt").write_bytes(b"abc")
    (d / "fips448.txt").write_bytes(
        b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
    (d / "zeros.bin").write_bytes(bytes(5000))  # any bytes, NULs included (§4.1)
    names += ["abc.txt", "fips448.txt", "zeros.bin"]
    return d, names


def host_sums(algo, d, names):
    tool, fn = ALGOS[algo]
    exe = shutil.which(tool)
    if exe:
        return subprocess.run([exe] + names, cwd=d, capture_output=True, check=True).stdout
    return b"".join(f"{fn((d / n).read_bytes()).hexdigest()}  {n}\n".encode() for n in names)


@pytest.mark.parametrize("algo", ["1", "256"])
def test_sha_files_match_host_tool(runner, target, files, algo):
    """§4.1, §6.3: same lines as sha1sum/sha256sum for every file."""
    d, names = files
    proc = runner.run("sha", target, [algo] + names, cwd=d)
    assert proc.stdout == host_sums(algo, d, names)


@pytest.mark.parametrize("algo", ["1", "256"])
def test_sha_registers_after(runner, target, files, algo):
    """§4.1: EAX == ECX at the end, ECX and EDI unchanged, ESI advanced by ECX."""
    d, names = files
    proc = runner.run("sha", target, [algo, "-v"] + names, cwd=d)
    regs = records(proc.stdout, "regs")
    assert len(regs) == len(names)
    for name, r in zip(names, regs):
        n = (d / name).stat().st_size
        assert (int(r["eax"]), int(r["ecx"]), int(r["esi_adv"]), r["edi_same"]) == \
            (n, n, n, "1"), name


@pytest.mark.parametrize("algo", ["1", "256"])
def test_sha_stdin(runner, target, algo):
    """§4.1: a message read from a pipe, hashed by one REP XSHA like a file."""
    data = bytes(range(256)) * 9 + b"tail"
    proc = runner.run("sha", target, [algo, "-"], input=data)
    assert proc.stdout == f"{ALGOS[algo][1](data).hexdigest()}  -\n".encode()
