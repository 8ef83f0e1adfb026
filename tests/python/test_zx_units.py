"""The late Nano's and Zhaoxin's units end to end: tests/guest/zx_units.c runs each new
instruction as a whole Linux program (i386 and x86-64) through the emulator's trap path,
on nano with the units switched on (CpuModel.with_units; the Zhaoxin models themselves are
data under models/cpus/). Expected values come from hashlib and OpenSSL 3 (the openssl
command), never from the model.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

import padlock_emu as pe


def _guest(name: str, arch: str) -> str:
    base = os.environ.get("PADLOCK_GUEST_DIR") or (
        str(Path(os.environ["PADLOCK_BUILD_DIR"]) / "tests" / "guest")
        if os.environ.get("PADLOCK_BUILD_DIR") else "/nonexistent")
    path = Path(base) / f"guest_{name}_{arch}"
    if not path.is_file():
        pytest.skip(f"{path} not built")
    return str(path)


ZX = pe.cpu("nano").with_units(phe2=True, ccs=True, sm2=True, rsa=True, rng2=True)
ARCHES = ["i386", "x86_64"]


def run(arch: str, *args: str, cpu=ZX) -> pe.Result:
    return pe.run([_guest("zx_units", arch), *args], cpu=cpu, check=True)


def fields(out: bytes) -> dict:
    return dict(re.findall(r"(\w+)=([0-9a-f-]+)", out.decode()))


def openssl(*args: str, data: bytes = b"") -> bytes:
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("alg", ["sha512", "sha384"])
def test_xsha512_and_384_digests(arch: str, alg: str) -> None:
    for msg in (b"", b"abc", bytes(range(256)) * 3):
        r = run(arch, alg, msg.hex() or "-")
        assert r.exit_code == 0, r.log
        f = fields(r.stdout)
        assert f["digest"] == hashlib.new(alg, msg).hexdigest()
        assert f["ecx"] == "0"
        assert r.stats.padlock[("REP XSHA512" if alg == "sha512" else "REP XSHA384")].count == 1
        # The documented choices show as findings: EAX not read (a note) and XSHA384's state.
        kinds = {x["kind"] for x in r.findings}
        assert "phe2-eax" in kinds
        assert ("xsha384-state" in kinds) == (alg == "sha384")


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("mode", ["sm3", "sm3-blocks"])
def test_sm3_digest(arch: str, mode: str) -> None:
    for msg in (b"abc", b"abcd" * 16, bytes(range(200))):
        r = run(arch, mode, msg.hex())
        assert r.exit_code == 0, r.log
        f = fields(r.stdout)
        want = openssl("dgst", "-sm3", "-r", data=msg).split()[0].decode()
        assert f["digest"] == want
        if mode == "sm3":
            assert f["eax"] == str(len(msg)) and f["ecx"] == str(len(msg))
        else:
            assert f["eax"] == "-1" and f["ecx"] == "0"


KEY = "0123456789abcdeffedcba9876543210"
IV = "00112233445566778899aabbccddeeff"
MODES = {"ecb": 0x40, "cbc": 0x80, "cfb": 0x100, "ofb": 0x200, "ctr": 0x400}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("decrypt", [False, True])
def test_sm4_modes(arch: str, mode: str, decrypt: bool) -> None:
    data = bytes((7 * i + 3) & 0xFF for i in range(80))
    eax = 0x20 | MODES[mode] | (1 if decrypt else 0)
    r = run(arch, "sm4", f"{eax:x}", KEY, IV, data.hex())
    assert r.exit_code == 0, r.log
    f = fields(r.stdout)
    args = ["enc", f"-sm4-{mode}", "-K", KEY, "-nopad"] + ([] if mode == "ecb" else ["-iv", IV])
    want = openssl(*args, *(["-d"] if decrypt else []), data=data)
    assert f["out"] == want.hex()
    assert f["ecx"] == "0" and f["esi_adv"] == "80" and f["edi_adv"] == "80"
    assert int(f["eax"], 16) == eax


@pytest.mark.parametrize("arch", ARCHES)
def test_sm4_cbc_mac(arch: str) -> None:
    data = bytes(range(64))
    r = run(arch, "sm4", f"{0x20 | 0x80 | 0x800:x}", KEY, IV, data.hex())
    f = fields(r.stdout)
    full = openssl("enc", "-sm4-cbc", "-K", KEY, "-iv", IV, "-nopad", data=data)
    assert f["out"] == full[-16:].hex() and f["edi_adv"] == "0"


def _sm2_signature(tmp: Path) -> tuple:
    """An SM2 key, a 32-byte digest and OpenSSL's signature of it (r || s)."""
    key = tmp / "k.pem"
    openssl("genpkey", "-algorithm", "SM2", "-out", str(key))
    der = openssl("pkey", "-in", str(key), "-pubout", "-outform", "DER")
    pub = der[-65:]
    digest = hashlib.sha256(b"zx-units").digest()
    (tmp / "e.bin").write_bytes(digest)
    sig = openssl("pkeyutl", "-sign", "-inkey", str(key), "-in", str(tmp / "e.bin"))
    text = openssl("asn1parse", "-inform", "DER", data=sig).decode()
    ints = re.findall(r"INTEGER\s+:([0-9A-F]+)", text)
    rs = bytes.fromhex(ints[0].rjust(64, "0")) + bytes.fromhex(ints[1].rjust(64, "0"))
    return pub, digest, rs


@pytest.mark.parametrize("arch", ARCHES)
def test_sm2_verify(arch: str, tmp_path: Path) -> None:
    pub, digest, rs = _sm2_signature(tmp_path)
    r = run(arch, "sm2", "8", digest.hex(), pub.hex(), rs.hex())
    assert fields(r.stdout)["ecx"] == "1", r.log
    bad = bytearray(rs)
    bad[5] ^= 1
    r = run(arch, "sm2", "8", digest.hex(), pub.hex(), bytes(bad).hex())
    assert fields(r.stdout)["ecx"] == "0"


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("insn,name", [("xrng2", "REP XRNG2"), ("xmodexp", "REP XMODEXP"),
                                       ("montmul2", "REP MONTMUL2")])
def test_unmodelled_instruction_stops_the_guest(arch: str, insn: str, name: str) -> None:
    r = run(arch, insn)
    assert r.exit_code == 69 and r.signal is None
    assert b"returned" not in r.stdout
    lines = [line for line in r.log.splitlines() if "not modelled" in line]
    assert len(lines) == 1 and name in lines[0], r.log
    assert "not-modelled" in {x["kind"] for x in r.findings}
    # Without the unit: #UD, SIGILL, as on VIA's nano.
    r = run(arch, insn, cpu=pe.cpu("nano"))
    assert r.signal == 4


@pytest.mark.parametrize("arch", ARCHES)
def test_sm2_other_edx_stops(arch: str) -> None:
    r = run(arch, "sm2", "3", "00" * 32, "04" + "00" * 64, "00" * 64)
    assert r.exit_code == 69
    assert any("SM2 (F2 0F A6 C0)" in line and "EDX = 0x3" in line and "not modelled" in line
               for line in r.log.splitlines()), r.log
