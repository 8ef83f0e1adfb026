"""Real clients on the Nano 3000 and Zhaoxin models (docs/zhaoxin.md, "Clients"): Debian
12's GnuTLS 3.7.9 (the host's x86-64 library and the i386 sysroot's) hashing through
guest_client_hash, and OpenSSL 3.0's padlock engine.

GnuTLS (lib/accelerated/x86/x86-common.c, register_x86_padlock_crypto):
- by default it asks its padlock_capability assembly, which accepts only the vendor
  "CentaurHauls" and then returns C000_0001 EDX: with PHE (bits 10/11) it runs
  check_phe_partial (one block of REP XSHA1, EAX = -1) and registers PadLock SHA-1/SHA-256
  at priority 90, behind the SSSE3 ones (80); with PHE2 (bits 25/26) PadLock SHA-384/SHA-512
  at 80, replacing SSSE3's (equal priorities: the later stays). On "  Shanghai  " (kx-5000)
  it returns 0: no PadLock, although the C code around it accepts that vendor;
- GNUTLS_CPUID_OVERRIDE=0x700000 (PADLOCK | PADLOCK_PHE | PADLOCK_PHE_SHA512) skips the
  assembly: capabilities_to_zhaoxin_edx grants each pair when any of its bits is set in
  leaf 1 EDX (bits 6/7, 10/11, 25/26 there: PAE/MCE, SEP, SSE/SSE2), so the PadLock paths
  are forced on any model, the Shanghai one included.
Every digest is checked against Python's hashlib, in one call and in pieces."""

from __future__ import annotations

import hashlib
import json

import pytest

from realclients import (HOST_OPENSSL, Client, host_openssl, openssl_client, padlock_counts,
                         sysroot_i386, unavailable)

SIZES = [0, 3, 55, 56, 64, 111, 112, 128, 1000, 100000]
FORCE_PADLOCK = "0x700000"
ALGS = ("sha1", "sha256", "sha384", "sha512")


def message(size: int) -> bytes:
    return bytes((i * 7 + 3) & 0xFF for i in range(size))


def hash_client(arch: str, guest_dir) -> tuple[Client, str]:
    guest = guest_dir / f"guest_client_hash_{arch}"
    if not guest.is_file():
        pytest.skip(f"no {arch} guests")
    if arch == "x86_64":
        return Client("x86_64", "kx-6000", None), str(guest)
    root = sysroot_i386()
    if not (root / "usr/lib/i386-linux-gnu/libgnutls.so.30").is_file():
        unavailable(f"no i386 libgnutls in {root}: run 'bash scripts/make-sysroot.sh'")
    return Client("i386", "kx-6000", root), str(guest)


def run_hashes(emulator_path, guest_dir, arch, cpu, override=None, algs=ALGS):
    """({insn: (count, bytes)} from --stats, {(alg, size, piece): digest} of the wrong
    digests): every digest, one call (piece 0) and in pieces, against hashlib."""
    client, guest = hash_client(arch, guest_dir)
    extra = ("-E", f"GNUTLS_CPUID_OVERRIDE={override}") if override else ()
    p = client.run(emulator_path, guest, [",".join(algs), *SIZES], cpu=cpu, extra=extra,
                   timeout=600)
    seen, wrong = 0, {}
    for line in p.stdout.decode().splitlines():
        alg, size, piece, digest = line.split()
        seen += 1
        if digest != hashlib.new(alg, message(int(size))).hexdigest():
            wrong[(alg, int(size), int(piece))] = digest
    assert seen == len(algs) * len(SIZES) * 4, p.stdout.decode()
    return padlock_counts(p.stderr), wrong


# Zhaoxin's XSHA1/XSHA256 with ECX = 0 do nothing (docs/zhaoxin.md, "Quirks"): GnuTLS's
# one-call digest of the empty message (padlock_sha*_oneshot, ECX = 0) leaves the initial
# values; in pieces, software pads the empty message into a block and it is right.
EMPTY_ONESHOT_WRONG = {
    ("sha1", 0, 0): "67452301efcdab8998badcfe10325476c3d2e1f0",
    ("sha256", 0, 0): "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19",
}


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
@pytest.mark.parametrize("cpu", ["nano-3000", "kx-6000"])
def test_gnutls_forced_padlock_sha1_sha256(emulator_path, guest_dir, arch, cpu):
    """The override: no SSSE3 hash registered before, so PadLock's SHA-1/SHA-256 (priority
    90) hash. Right on the VIA Nano 3000; on Zhaoxin every digest is right but the one-call
    digest of the empty message, which is the initial values (the ECX = 0 quirk); its
    32-byte XSHA1 store lands in the asm's own scratch copy (EDI = ESP)."""
    counts, wrong = run_hashes(emulator_path, guest_dir, arch, cpu, FORCE_PADLOCK,
                               ("sha1", "sha256"))
    for insn in ("XSHA1", "XSHA256"):
        assert counts.get(insn, (0, 0))[1] >= 100000, (insn, counts)
    assert wrong == ({} if cpu == "nano-3000" else EMPTY_ONESHOT_WRONG), wrong


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
@pytest.mark.parametrize("cpu", ["nano-3000", "kx-6000"])
def test_gnutls_default_sha1_sha256_are_ssse3(emulator_path, guest_dir, arch, cpu):
    """No override, "CentaurHauls" with PHE: check_phe_partial's one block of XSHA1 passes,
    but PadLock's SHA-1/SHA-256 register at priority 90 after the SSSE3 ones at 80 (leaf 1
    has SSSE3) and lose: the probe is the only XSHA, and every digest is right."""
    counts, wrong = run_hashes(emulator_path, guest_dir, arch, cpu, algs=("sha1", "sha256"))
    assert counts.get("XSHA1") == (1, 64), counts  # the one-block probe
    assert "XSHA256" not in counts and wrong == {}, (counts, wrong)


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
@pytest.mark.parametrize("cpu", ["nano-3000", "kx-6000"])
@pytest.mark.parametrize("override", [None, FORCE_PADLOCK], ids=["default", "forced"])
def test_gnutls_sha384_sha512_through_xsha512(emulator_path, guest_dir, arch, cpu, override):
    """PHE2 (C000_0001 EDX bits 25/26): GnuTLS registers padlock_sha512_blocks for SHA-384
    and SHA-512 at priority 80 after SSSE3's 80, so it hashes through REP XSHA512 by default
    as well as forced. Software pads (a 16-byte length), so no call has ECX = 0 and every
    digest, in one call and in pieces, is right."""
    counts, wrong = run_hashes(emulator_path, guest_dir, arch, cpu, override,
                               ("sha384", "sha512"))
    assert counts.get("XSHA512", (0, 0))[1] >= 2 * 100000, counts
    assert wrong == {}, wrong


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_gnutls_default_on_shanghai_uses_no_padlock(emulator_path, guest_dir, arch):
    """kx-5000 reports "  Shanghai  ": padlock_capability returns 0, no PadLock at all,
    not even the probe, and SHA-1 to SHA-512 are right. The override skips the assembly:
    forced, the same part runs XSHA (the C code accepts the vendor), with the quirk."""
    assert run_hashes(emulator_path, guest_dir, arch, "kx-5000") == ({}, {})
    forced, wrong = run_hashes(emulator_path, guest_dir, arch, "kx-5000", FORCE_PADLOCK,
                               ("sha1", "sha256"))
    assert forced.get("XSHA256", (0, 0))[1] >= 100000, forced
    assert wrong == EMPTY_ONESHOT_WRONG


def test_gnutls_empty_oneshot_finding_names_gnutls_hash_fast(emulator_path, guest_dir,
                                                             tmp_path):
    """--check on the forced path: the ECX = 0 calls are findings whose backtrace reaches
    gnutls_hash_fast (the asm itself is a hidden symbol of libgnutls)."""
    client, guest = hash_client("x86_64", guest_dir)
    jsonl = tmp_path / "f.jsonl"
    client.run(emulator_path, guest, ["sha1,sha256", 0], cpu="kx-6000", stats=False,
               extra=("-E", f"GNUTLS_CPUID_OVERRIDE={FORCE_PADLOCK}", "--check-jsonl",
                      str(jsonl)))
    findings = [json.loads(ln) for ln in jsonl.read_text().splitlines()]
    assert sorted(f["insn"] for f in findings) == ["REP XSHA1", "REP XSHA256"], findings
    for f in findings:
        assert f["kind"] == "xsha-ecx0-no-op"
        assert "gnutls_hash_fast" in [b.get("function") for b in f["backtrace"]]


# --- OpenSSL 3.0's padlock engine --------------------------------------------------------

@pytest.mark.parametrize("cpu", ["kx-5000", "kx-6000"])
def test_openssl_engine_on_zhaoxin(emulator_path, cpu):
    """engines/asm/e_padlock-x86_64.pl's padlock_capability accepts "CentaurHauls" and
    "  Shanghai  ": ACE found on both."""
    client = openssl_client("x86_64")
    p = client.run(emulator_path, "/usr/bin/openssl", ["engine", "-c", "-t", "padlock"],
                   cpu=cpu, stats=False)
    out = p.stdout.decode()
    assert "(padlock) VIA PadLock (no-RNG, ACE)" in out, out
    assert "[ available ]" in out, out


@pytest.mark.parametrize("cpu", ["kx-5000", "kx-6000"])
@pytest.mark.parametrize("cipher", ["aes-128-ecb", "aes-192-cbc", "aes-256-cfb",
                                    "aes-128-ofb", "aes-256-ctr"])
def test_openssl_enc_on_zhaoxin_matches_host(emulator_path, tmp_path, cpu, cipher):
    if not HOST_OPENSSL.is_file():
        unavailable("no host openssl")
    client = openssl_client("x86_64")
    plain = tmp_path / "p.bin"
    plain.write_bytes(message(70007))
    key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    key = key[: int(cipher.split("-")[1]) // 4]
    args = ["-" + cipher, "-K", key]
    if not cipher.endswith("ecb"):
        args += ["-iv", "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"]
    ref = host_openssl(["enc", *args, "-in", plain, "-out", "/dev/stdout"])
    got = tmp_path / "c.bin"
    p = client.run(emulator_path, "/usr/bin/openssl",
                   ["enc", "-engine", "padlock", *args, "-in", plain, "-out", got], cpu=cpu)
    assert got.read_bytes() == ref, (cpu, cipher)
    counts = padlock_counts(p.stderr)
    assert sum(b for _, b in counts.values()) >= 70000, counts
    back = tmp_path / "d.bin"
    client.run(emulator_path, "/usr/bin/openssl",
               ["enc", "-d", "-engine", "padlock", *args, "-in", got, "-out", back], cpu=cpu)
    assert back.read_bytes() == plain.read_bytes()
