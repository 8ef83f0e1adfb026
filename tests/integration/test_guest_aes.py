"""guest_aes: every ACE mode and key size through REP XCRYPT, driven as crypto libraries
drive it, against the FIPS-197 and SP 800-38A vectors in tests/vectors/aes/ (§3.1, §3.2).

For each vector: 128-bit keys both hardware-expanded (KEYGN = 0) and application-provided
(KEYGN = 1, schedule computed in the guest); 192/256-bit keys application-provided (§3.2:
the only supported option). Both directions. Variants:
  whole      one REP XCRYPT for the whole message; checks the result and the registers
             after it (§3.1), then undoes it after PUSHF/POPF with the inverse key in the
             same buffers (--roundtrip, §1.8)
  split      one REP XCRYPT per block, carrying the IV forward from EAX as OpenSSL does
  unaligned  ALIGN = 1 with misaligned input and output (§3.2, not ECB)
  prefix     the first 3 blocks only: ECB with an odd count (§3.1, §3.3)
plus CBC-MAC / CFB-MAC digest mode (§3.2 DGEST) and the alignment faults (§3.1, §3.2)."""

from __future__ import annotations

import signal
from dataclasses import dataclass

import pytest

from guestrun import kv
from vectors import VECTOR_DIR, read_vectors

AES_DIR = VECTOR_DIR / "aes"
MODES = ("ecb", "cbc", "cfb", "ofb", "ctr")
# CPU models with the Esther stepping-8 CTR erratum (§3.1 ERRATA, §6.6).
CTR_ERRATA_CPUS = {"esther", "esther-c5j"}


@dataclass(frozen=True)
class Vector:
    source: str      # file:line [section]
    mode: str
    key: bytes
    iv: bytes | None
    plain: bytes
    cipher: bytes

    @property
    def id(self) -> str:
        return f"{self.mode}{8 * len(self.key)}-{self.source}"


def _mode_of(rec) -> str | None:
    text = f"{rec.section} {rec.file}".lower().replace("-", " ").replace("_", " ").replace("/", " ")
    words = text.split()
    if any(w.startswith(("cfb1", "cfb8")) and w != "cfb128" for w in words):
        return None  # CFB-1 / CFB-8 are not ACE modes
    found = [m for m in MODES if any(w == m or w.startswith(m) for w in words)]
    return found[0] if len(found) == 1 else None


def load_vectors() -> list[Vector]:
    out: dict[tuple, Vector] = {}
    for path in sorted(AES_DIR.glob("*.vec")):
        for rec in read_vectors(path):
            f = {k.lower(): v for k, v in rec.fields.items()}
            if not {"key", "in", "out"} <= f.keys():
                continue
            iv_hex = f.get("iv") or f.get("nonce") or f.get("counter")
            mode = _mode_of(rec) or ("ecb" if iv_hex is None else None)
            if mode is None or (mode == "ecb") != (iv_hex is None):
                continue
            plain, cipher = bytes.fromhex(f["in"]), bytes.fromhex(f["out"])
            if "decrypt" in rec.section.lower():  # a decryption record: In is ciphertext
                plain, cipher = cipher, plain
            v = Vector(f"{path.stem}:{rec.line}", mode, bytes.fromhex(f["key"]),
                       bytes.fromhex(iv_hex) if iv_hex else None, plain, cipher)
            out.setdefault((v.mode, v.key, v.iv, v.plain, v.cipher), v)
    return list(out.values())


VECTORS = load_vectors()


def _keysrcs(v: Vector):
    return ("hw", "sw") if len(v.key) == 16 else ("sw",)


def _cases(variant: str):
    cases = []
    for v in VECTORS:
        nblocks = len(v.plain) // 16
        if variant == "split" and nblocks < 2:
            continue
        if variant == "unaligned" and v.mode == "ecb":
            continue
        if variant == "prefix" and (v.mode != "ecb" or nblocks < 4):
            continue
        for ks in _keysrcs(v):
            for d in ("enc", "dec"):
                cases.append(pytest.param(v, ks, d, id=f"{v.id}-{ks}-{d}"))
    return cases


def test_vectors_present():
    """The vector files exist and cover every mode and key size (FIPS-197 Appendix C,
    SP 800-38A F.1-F.5)."""
    have = {(v.mode, len(v.key)) for v in VECTORS}
    missing = {(m, k) for m in MODES for k in (16, 24, 32)} - have
    assert not missing, f"no vectors in {AES_DIR} for {sorted(missing)}"


def _args(v: Vector, ks: str, direction: str, data: bytes, *opts):
    iv = v.iv.hex() if v.iv is not None else "-"
    return [v.mode, ks, direction, v.key.hex(), iv, data.hex(), *opts]


def _io(v: Vector, direction: str, nbytes: int | None = None):
    src, dst = (v.plain, v.cipher) if direction == "enc" else (v.cipher, v.plain)
    n = len(src) if nbytes is None else nbytes
    return src[:n], dst[:n]


def _expected_iv_after(v: Vector, direction: str, src: bytes, dst: bytes, cpu: str):
    """§3.1 EAX table: what EAX / the memory at EAX hold after one whole REP XCRYPT.
    Returns (eax location, bytes at EAX, IV memory)."""
    last_in, last_out = src[-16:], dst[-16:]
    n = len(src) // 16
    if v.mode in ("cbc", "cfb") and direction == "enc":
        # "The value in EAX itself is changed": it points at the last ciphertext block,
        # the IV of the next block; the IV memory is untouched (BAES.C relies on it).
        return f"out+{16 * (n - 1)}", last_out, v.iv
    if v.mode in ("cbc", "cfb"):
        return "iv+0", last_in, last_in  # decryption: the memory at EAX changes
    if v.mode == "ofb":
        keystream = bytes(a ^ b for a, b in zip(last_in, last_out))
        return "iv+0", keystream, keystream
    # CTR: bytes 14-15 incremented once per block; +1 on Esther stepping 8 for even ECX.
    extra = 1 if cpu in CTR_ERRATA_CPUS and n % 2 == 0 else 0
    ctr = (int.from_bytes(v.iv[14:], "big") + n + extra) & 0xFFFF
    iv = v.iv[:14] + ctr.to_bytes(2, "big")
    return "iv+0", iv, iv


@pytest.mark.parametrize("v,ks,direction", _cases("whole"))
def test_aes_whole(runner, target, v, ks, direction):
    """§3.1/§3.2: result, ECX = 0, ESI/EDI advanced by the bytes stored, the IV rule of
    the mode, nothing stored past the output; then the inverse after a reload (§1.8)."""
    src, dst = _io(v, direction)
    out = kv(runner.run("aes", target, _args(v, ks, direction, src, "--roundtrip")).stdout)
    assert bytes.fromhex(out["out"]) == dst
    assert out["calls"] == "1"
    assert out["ecx"] == "0"
    assert int(out["esi_adv"]) == int(out["edi_adv"]) == len(src)
    assert out["overrun"] == "0"
    if v.mode != "ecb":
        eax, eaxmem, ivmem = _expected_iv_after(v, direction, src, dst, target.cpu)
        assert out["eax"] == eax
        assert bytes.fromhex(out["eaxmem"]) == eaxmem
        assert bytes.fromhex(out["ivmem"]) == ivmem
    assert bytes.fromhex(out["back"]) == src


@pytest.mark.parametrize("v,ks,direction", _cases("split"))
def test_aes_split_per_block(runner, target, v, ks, direction):
    """One REP XCRYPT per block, chaining through EAX / the IV memory (§3.1 EAX table)
    the way OpenSSL's e_padlock does; CTR rewrites its counter (§6.6 workaround)."""
    src, dst = _io(v, direction)
    out = kv(runner.run("aes", target, _args(v, ks, direction, src, "--split", 1)).stdout)
    assert bytes.fromhex(out["out"]) == dst
    assert int(out["calls"]) == len(src) // 16
    assert out["overrun"] == "0"


@pytest.mark.parametrize("v,ks,direction", _cases("unaligned"))
def test_aes_unaligned(runner, target, v, ks, direction):
    """§3.2 ALIGN = 1: input at 16n+1 and output at 16n+7 work in every mode but ECB."""
    src, dst = _io(v, direction)
    out = kv(runner.run("aes", target, _args(v, ks, direction, src, "--align", "--misalign",
                                               "--roundtrip")).stdout)
    assert bytes.fromhex(out["out"]) == dst
    assert out["ecx"] == "0"
    assert int(out["esi_adv"]) == int(out["edi_adv"]) == len(src)
    assert out["overrun"] == "0"
    assert bytes.fromhex(out["back"]) == src


@pytest.mark.parametrize("v,ks,direction", _cases("prefix"))
def test_aes_ecb_odd_count(runner, target, v, ks, direction):
    """§3.1/§3.3: ECB with an odd ECX processes one more block than it stores; the extra
    block is not written and ESI/EDI advance by the blocks stored."""
    src, dst = _io(v, direction, 48)
    out = kv(runner.run("aes", target, _args(v, ks, direction, src)).stdout)
    assert bytes.fromhex(out["out"]) == dst
    assert out["ecx"] == "0"
    assert int(out["esi_adv"]) == int(out["edi_adv"]) == 48
    assert out["overrun"] == "0"


def _mac_cases():
    return [pytest.param(v, ks, id=f"{v.id}-{ks}") for v in VECTORS
            if v.mode in ("cbc", "cfb") and len(v.plain) >= 32 for ks in _keysrcs(v)]


@pytest.mark.parametrize("v,ks", _mac_cases())
@pytest.mark.parametrize("align", [False, True], ids=["aligned", "align-flag"])
def test_aes_digest_mode(runner, target, v, ks, align):
    """§3.2 DGEST (CBC-MAC / CFB-MAC): EDI is never advanced, so the block left at EDI is
    the last block of the chain (the MAC); nothing is stored after it."""
    opts = ["--digest"] + (["--align"] if align else [])
    out = kv(runner.run("aes", target, _args(v, ks, "enc", v.plain, *opts)).stdout)
    assert bytes.fromhex(out["out"]) == v.cipher[-16:]
    assert out["ecx"] == "0"
    assert int(out["esi_adv"]) == len(v.plain)
    assert out["edi_adv"] == "0"
    assert out["overrun"] == "0"


def _one(mode: str):
    for v in VECTORS:
        if v.mode == mode and len(v.key) == 16:
            return v
    pytest.skip(f"no AES-128 {mode} vector")


@pytest.mark.parametrize("mode", ["ecb", "cbc", "ctr"])
def test_misaligned_without_align_flag_faults(runner, target, mode):
    """§3.1: with CW[5] = 0, a misaligned ESI/EDI raises #GP, delivered as SIGSEGV."""
    v = _one(mode)
    proc = runner.run("aes", target, _args(v, "hw", "enc", v.plain, "--misalign"),
                      check=False)
    assert proc.returncode == -signal.SIGSEGV
    assert proc.stdout == b""


def test_ecb_misaligned_faults_even_with_align_flag(runner, target):
    """§3.2: REP XCRYPTECB faults if ALIGN = 1 and the data is not 16-byte aligned."""
    v = _one("ecb")
    proc = runner.run("aes", target, _args(v, "hw", "enc", v.plain, "--align", "--misalign"),
                      check=False)
    assert proc.returncode == -signal.SIGSEGV
    assert proc.stdout == b""


def test_vectors_agree_with_reference():
    """The independent model used by the other integration tests (aes_ref) reproduces
    every vector file record, so vectors and reference check each other."""
    import aes_ref

    for v in VECTORS:
        if v.mode == "ecb":
            got = aes_ref.ecb(v.key, v.plain)
        elif v.mode == "cbc":
            got = aes_ref.cbc(v.key, v.iv, v.plain)
        elif v.mode == "cfb":
            got = aes_ref.cfb(v.key, v.iv, v.plain)
        elif v.mode == "ofb":
            got = aes_ref.ofb(v.key, v.iv, v.plain)
        else:
            got = aes_ref.ctr16(v.key, v.iv, v.plain)
        assert got == v.cipher, v.id


@pytest.mark.parametrize("mode", MODES)
def test_ecx_zero_stores_nothing(runner, target, mode):
    """§1.7, §3.3: a REP XCRYPT with ECX = 0 may load data (and so may fault) but stores
    no block and advances no pointer."""
    v = _one(mode)
    out = kv(runner.run("aes", target, _args(v, "hw", "enc", b"")).stdout)
    assert out["out"] == ""
    assert out["ecx"] == "0"
    assert out["esi_adv"] == out["edi_adv"] == "0"
    assert out["overrun"] == "0"
    if v.iv is not None:
        assert bytes.fromhex(out["ivmem"]) == v.iv


def _nehemiah_cases():
    return [c for c in _cases("whole") if c.values[0].mode != "ctr"]


@pytest.mark.parametrize("v,ks,direction", _nehemiah_cases())
def test_aes_on_nehemiah_c5p(runner, guest_dir, v, ks, direction):
    """§1.1: Nehemiah C5P has the original ACE: ECB/CBC/CFB/OFB with aligned buffers (no
    DGEST/ALIGN, §3.2; no CTR, §7.1). The i386 guest gets the same results there."""
    src, dst = _io(v, direction)
    out = kv(runner.run("aes", ("i386", "nehemiah-c5p"),
                        _args(v, ks, direction, src, "--roundtrip")).stdout)
    assert bytes.fromhex(out["out"]) == dst
    assert out["ecx"] == "0"
    assert out["overrun"] == "0"
    assert bytes.fromhex(out["back"]) == src
