"""Debian's libgcrypt 1.10 (libgcrypt20) and mbed TLS 2.28 (libmbedcrypto7) under
padlock-emu with the checker: i386 from the sysroot on Esther, x86-64 from the host on
Nano. tests/guest/client_aes.c loads each library by soname and runs the FIPS-197 and
SP 800-38A AES-ECB and AES-CBC vectors of tests/vectors/aes/ through its public API,
encrypting and decrypting; the library finds PadLock through CPUID itself. Per library and
architecture the tests pin three things (docs/checker.md, "Findings in real clients"):

  the known answers   every vector, both directions
  what it issues      the PadLock instruction counts of --stats, exact where the library's
                      code fixes them, and 0 for the instructions it has no path for
  the findings        the exact set of --check-jsonl findings (kind, severity,
                      instruction, function)

The libraries' PadLock paths, from their public source:
  libgcrypt  cipher/rijndael.c (do_setkey) takes PadLock for 128-bit keys only, with the
             chip's own key expansion; cipher/rijndael-padlock.c (do_padlock) runs one
             block per REP XCRYPTECB with a zeroed control word and PUSHF/POPF before it;
             CBC is libgcrypt's own chaining over that. random/rndhw.c (poll_padlock)
             draws with XSTORE (no REP, EDX = 0). i386 and x86-64 alike (USE_PADLOCK).
  mbed TLS   library/padlock.c (mbedtls_padlock_xcryptecb, mbedtls_padlock_xcryptcbc),
             i386 only (include/mbedtls/padlock.h defines MBEDTLS_HAVE_X86 for __i386__):
             the control word's first dword is written into an uninitialised stack
             buffer, so CW[127:32] are whatever the stack held."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from realclients import Client, padlock_counts, sysroot_i386, unavailable
from vectors import VECTOR_DIR, read_vectors

LIB_DIRS = {"i386": "usr/lib/i386-linux-gnu", "x86_64": "usr/lib/x86_64-linux-gnu"}


@dataclass(frozen=True)
class Library:
    name: str       # client_aes's backend name
    soname: str
    package: str    # the Debian package that ships it


LIBRARIES = {
    "gcrypt": Library("gcrypt", "libgcrypt.so.20", "libgcrypt20"),
    "mbedtls": Library("mbedtls", "libmbedcrypto.so.7", "libmbedcrypto7"),
}


@dataclass(frozen=True)
class Request:
    mode: str       # ecb or cbc
    encrypt: bool
    key: bytes
    iv: bytes | None
    data: bytes
    expected: bytes
    source: str

    def line(self) -> str:
        return " ".join([self.mode, "enc" if self.encrypt else "dec", self.key.hex(),
                         self.iv.hex() if self.iv else "-", self.data.hex()])


def requests() -> list[Request]:
    """Every ECB and CBC record of the FIPS-197 and SP 800-38A files, both directions."""
    out = []
    for name, section_modes in (("fips197.vec", {}), ("sp800_38a.vec", {"ECB": "ecb", "CBC": "cbc"})):
        for rec in read_vectors(VECTOR_DIR / "aes" / name):
            mode = section_modes.get(rec.section, "ecb" if name == "fips197.vec" else None)
            if mode is None:
                continue
            iv = rec.hex("IV") if mode == "cbc" else None
            plain, cipher = rec.hex("In"), rec.hex("Out")
            src = f"{name}:{rec.line}"
            out.append(Request(mode, True, rec.hex("Key"), iv, plain, cipher, src))
            out.append(Request(mode, False, rec.hex("Key"), iv, cipher, plain, src))
    return out


REQUESTS = requests()
RANDOM_BYTES = 64  # two draws: libgcrypt's XSTORE path (random/rndhw.c)


def client_for(arch: str, lib: Library) -> Client:
    """The target, or skip/fail (PADLOCK_REQUIRE_REAL_CLIENTS=1) when the library is missing."""
    if arch == "x86_64":
        path = Path("/") / LIB_DIRS[arch] / lib.soname
        if not path.exists():
            unavailable(f"host {path} missing (Debian package {lib.package})")
        return Client("x86_64", "nano", None)
    root = sysroot_i386()
    if not (root / LIB_DIRS[arch] / lib.soname).exists():
        unavailable(f"no i386 {lib.soname} in {root}: build the sysroot with "
                    f"'bash scripts/make-sysroot.sh' (Debian package {lib.package}:i386)")
    return Client("i386", "esther", root)


@dataclass
class Run:
    answers: list[str]
    counts: dict[str, tuple[int, int]]
    findings: list[dict]
    stderr: str


_RUNS: dict[tuple[str, str], Run] = {}


def run_client(emulator: Path, guest_dir: Path, tmp_path_factory, arch: str, lib_name: str) -> Run:
    """One run of client_aes per library and arch, with --stats and --check-jsonl; cached."""
    key = (arch, lib_name)
    if key in _RUNS:
        return _RUNS[key]
    lib = LIBRARIES[lib_name]
    client = client_for(arch, lib)
    guest = guest_dir / f"guest_client_aes_{arch}"
    if not guest.is_file():
        pytest.skip(f"{guest} not built (gcc for {arch})")
    lines = [r.line() for r in REQUESTS]
    if lib_name == "gcrypt":
        lines += [f"random {RANDOM_BYTES}"] * 2
    jsonl = tmp_path_factory.mktemp(f"{lib_name}-{arch}") / "check.jsonl"
    p = client.run(emulator, str(guest), [lib.name], extra=("--check", "--check-jsonl", str(jsonl)),
                   input=("\n".join(lines) + "\n").encode())
    findings = [json.loads(line) for line in jsonl.read_text().splitlines() if line]
    run = Run(p.stdout.decode().splitlines(), padlock_counts(p.stderr), findings,
              p.stderr.decode(errors="replace"))
    _RUNS[key] = run
    return run


CASES = [pytest.param(a, lib, id=f"{lib}-{a}") for lib in LIBRARIES for a in ("i386", "x86_64")]


@pytest.fixture
def client_run(emulator_path, guest_dir, tmp_path_factory):
    def get(arch: str, lib: str) -> Run:
        return run_client(emulator_path, guest_dir, tmp_path_factory, arch, lib)
    return get


def test_requests_cover_ecb_and_cbc():
    """The vector files hold what this module runs (a renamed file or section fails here)."""
    modes = {(r.mode, len(r.key), r.encrypt) for r in REQUESTS}
    assert modes == {(m, k, e) for m in ("ecb", "cbc") for k in (16, 24, 32) for e in (True, False)}


@pytest.mark.parametrize("arch,lib", CASES)
def test_known_answers(client_run, arch, lib):
    run = client_run(arch, lib)
    aes = [a for a in run.answers if a.startswith("out=")]
    assert len(aes) == len(REQUESTS), run.stderr[-2000:]
    for r, got in zip(REQUESTS, aes):
        assert got == "out=" + r.expected.hex(), (r.source, r.mode, r.encrypt)
    if lib == "gcrypt":
        draws = [a for a in run.answers if a.startswith("random=")]
        assert len(draws) == 2 and all(len(d) == len("random=") + 2 * RANDOM_BYTES for d in draws)
        assert draws[0] != draws[1]


def blocks(mode: str, key_len: int | None = None) -> int:
    return sum(len(r.data) // 16 for r in REQUESTS
               if r.mode == mode and (key_len is None or len(r.key) == key_len))


def cbc_requests() -> int:
    return sum(1 for r in REQUESTS if r.mode == "cbc")


# libgcrypt's do_setkey runs the AES self-test on its first key (cipher/rijndael.c,
# selftest(): selftest_basic_128/192/256, then selftest_ctr_128, selftest_cbc_128 and
# selftest_cfb_128 through cipher/cipher-selftest.c's helpers). Its 128-bit parts go
# through PadLock too, block by block. The bulk tests use 8+1 and 8+2 blocks, 16+1 and
# 16+2 where USE_VAES is compiled in (x86-64), hence two counts. Measured under
# padlock-emu; pinned so that a change of the library shows up.
GCRYPT_SELFTEST_BLOCKS = {"i386": 228, "x86_64": 692}


def expected_counts(arch: str, lib: str) -> dict[str, tuple[int, int]]:
    """What each library issues for REQUESTS (see the module docstring)."""
    if lib == "gcrypt":
        ecb = blocks("ecb", 16) + blocks("cbc", 16) + GCRYPT_SELFTEST_BLOCKS[arch]
        return {"XCRYPTECB": (ecb, 16 * ecb)}
    if arch == "i386":
        return {"XCRYPTECB": (blocks("ecb"), 16 * blocks("ecb")),
                "XCRYPTCBC": (cbc_requests(), 16 * blocks("cbc"))}
    return {}  # mbed TLS has no x86-64 PadLock path


@pytest.mark.parametrize("arch,lib", CASES)
def test_padlock_instructions_issued(client_run, arch, lib):
    run = client_run(arch, lib)
    counts = dict(run.counts)
    xstore = counts.pop("XSTORE", (0, 0))
    assert counts == expected_counts(arch, lib), run.stderr[-3000:]
    if lib == "gcrypt":
        # Each gcry_randomize reads the pool once; read_pool (random/random-csprng.c) runs
        # a fast poll first, and _gcry_rndhw_poll_fast issues one XSTORE of up to 8 bytes.
        assert xstore[0] == 2 and 0 < xstore[1] <= 16, run.stderr[-3000:]
    else:
        assert xstore == (0, 0)
    if not expected_counts(arch, lib):
        assert "padlock-emu: stats:   (none executed)" in run.stderr


# (kind, severity, instruction, function) of each finding, per library and arch:
# docs/checker.md. mbed TLS writes only CW[31:0]; the other 12 bytes are stack leftovers,
# nonzero for some of its calls (which ones depends on what ran on the stack before), and
# the guide reserves CW[127:12] (§3.2): cw-reserved.
EXPECTED_FINDINGS = {
    ("gcrypt", "i386"): set(),
    ("gcrypt", "x86_64"): set(),
    ("mbedtls", "i386"): {
        ("cw-reserved", "warning", "REP XCRYPTECB", "mbedtls_padlock_xcryptecb"),
        ("cw-reserved", "warning", "REP XCRYPTCBC", "mbedtls_padlock_xcryptcbc")},
    ("mbedtls", "x86_64"): set(),
}


@pytest.mark.parametrize("arch,lib", CASES)
def test_checker_findings(client_run, arch, lib):
    run = client_run(arch, lib)
    got = {(f["kind"], f["severity"], f["insn"], f.get("function")) for f in run.findings}
    assert got == EXPECTED_FINDINGS[(lib, arch)], json.dumps(run.findings, indent=1)[:4000]
    assert all(f["count"] >= 1 for f in run.findings)
    n = len(run.findings)
    assert f"padlock-emu: check: {n} finding" in run.stderr


def test_findings_named_after_dlclose(emulator_path, guest_dir, tmp_path):
    """client_aes unloads mbed TLS before it exits ("close"): the findings, located when the
    run ends, still name the functions of the unmapped library, read from the object mapped
    when each was raised (docs/checker.md, "How it works")."""
    lib = LIBRARIES["mbedtls"]
    client = client_for("i386", lib)
    guest = guest_dir / "guest_client_aes_i386"
    if not guest.is_file():
        pytest.skip(f"{guest} not built (gcc for i386)")
    jsonl = tmp_path / "check.jsonl"
    lines = [r.line() for r in REQUESTS] + ["close"]
    p = client.run(emulator_path, str(guest), [lib.name],
                   extra=("--check", "--check-jsonl", str(jsonl)),
                   input=("\n".join(lines) + "\n").encode())
    assert p.stdout.decode().splitlines()[-1] == "closed unloaded"
    findings = [json.loads(line) for line in jsonl.read_text().splitlines() if line]
    got = {(f["kind"], f["severity"], f["insn"], f.get("function")) for f in findings}
    assert got == EXPECTED_FINDINGS[("mbedtls", "i386")], json.dumps(findings, indent=1)[:4000]
