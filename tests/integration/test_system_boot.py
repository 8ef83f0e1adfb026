"""System mode (docs/system.md): Debian's own kernel boots under the patched QEMU on a
modelled VIA CPU, loads its PadLock modules and runs the kernel's crypto self-tests on our
models. Each entry of BOOTS is one boot: a CPU model and a Debian kernel pinned in
emulator/system/debian-kernels.txt (each boot under 30 s).

Needs the cached QEMU (cmake --build BUILD --target padlock-qemu) and apt-get download for
Debian's kernel; scripts/test.sh sets PADLOCK_REQUIRE_SYSTEM=1 so that a missing piece
fails there instead of skipping."""

from __future__ import annotations

import ctypes
import fcntl
import functools
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

import sarif_schema

BOOT_LIMIT_S = 30
# /proc/crypto drivers per unit (drivers/crypto/padlock-aes.c, padlock-sha.c)
ACE_DRIVERS = {"aes-padlock", "ecb-aes-padlock", "cbc-aes-padlock"}
# padlock-sha.c registers the "-nano" variants when the CPU's model is 15 or more (it reads
# cpu_data(0).x86_model alone): the Nano, and Zhaoxin's family-7 parts.
def phe_drivers(b: Boot) -> set[str]:
    suffix = "-nano" if b.cpuid[2] >= 0x0F else ""
    return {"sha1-padlock" + suffix, "sha256-padlock" + suffix}


@dataclass(frozen=True)
class Kernel:
    """One boot: a CPU model and the Debian kernel pinned for an architecture and a suite."""
    cpu: str
    arch: str
    suite: str = "bookworm"
    qemu_args: tuple[str, ...] = ()
    # padlock-sha on this kernel and model: "passed" (its self-tests), "fails" (6.16 on
    # Zhaoxin: Debian bug #1113996) or "refused" (ebba09f: -ENODEV on family 7 and up)
    phe: str = "passed"

    @property
    def directory(self) -> str:
        """Where `padlock-emu system` keeps its kernel and initramfs (system_cmd.cpp)."""
        return f"system-{self.arch}" + ("" if self.suite == "bookworm" else f"-{self.suite}")


@dataclass
class Boot:
    cpu: str
    seconds: float
    output: str
    name: str = ""  # its key in BOOTS
    release: str = ""  # uname -r
    cpuid: tuple = ("", 0, 0, 0)  # vendor, family, model, stepping as /proc/cpuinfo shows
    cpu_seconds: float = 0  # user + system time of padlock-emu and QEMU
    modules: dict[str, str] = field(default_factory=dict)
    selftests: dict[str, str] = field(default_factory=dict)
    others: dict[str, str] = field(default_factory=dict)  # other SHA drivers' self-tests
    afalg: list[tuple[str, str]] = field(default_factory=list)  # (driver, result) per vector
    hwrng: str | None = None
    stats: str = ""  # stderr: --stats's table and --check's findings when QEMU exits
    taint: dict[str, str] = field(default_factory=dict)  # /sys/module/M/taint ("-": none)
    tsc: dict[int, int] = field(default_factory=dict)  # blocks -> RDTSC cycles (tsc_xcrypt.c)
    trace: list[dict] = field(default_factory=list)  # --trace: the JSON Lines records
    findings: list[dict] = field(default_factory=list)  # --check-jsonl's records
    sarif: dict = field(default_factory=dict)  # --check-sarif's log
    # module -> each load of it -> section -> address (a second load: PADLOCK-UNTESTED)
    sections: dict[str, list[dict[str, int]]] = field(default_factory=dict)
    # The init's second pass over a driver that failed its self-tests, loaded again with
    # the crypto manager's tests off (tests/system/init.sh): modules, AF_ALG results.
    untested: list[str] = field(default_factory=list)
    untested_afalg: list[tuple[str, str]] = field(default_factory=list)


def parse(name: str, seconds: float, output: str) -> Boot:
    b = Boot(BOOTS[name].cpu, seconds, output, name)
    for line in output.splitlines():
        line = line.strip()
        if m := re.match(r"PADLOCK-KERNEL (\S+)$", line):
            b.release = m[1]
        elif m := re.match(r"PADLOCK-CPUID '(.*)' (\d+) (\d+) (\d+)$", line):
            b.cpuid = (m[1], int(m[2]), int(m[3]), int(m[4]))
        elif m := re.match(r"PADLOCK-MODULE (\S+) (loaded|refused: .*)$", line):
            b.modules[m[1]] = m[2]
        elif m := re.match(r"PADLOCK-SELFTEST (\S+) \S+ (\S+)$", line):
            b.selftests[m[1]] = m[2]
        elif m := re.match(r"PADLOCK-OTHER (\S+) \S+ (\S+)$", line):
            b.others[m[1]] = m[2]
        elif m := re.match(r"AFALG \S+ (\S+) (.*)$", line):
            b.afalg.append((m[1], m[2]))
        elif m := re.match(r"PADLOCK-HWRNG (\S*)$", line):
            b.hwrng = m[1]
        elif m := re.match(r"PADLOCK-TAINT (\S+) (\S+)$", line):
            b.taint[m[1]] = m[2]
        elif m := re.match(r"PADLOCK-TSC ecb (\d+) (\d+)$", line):
            b.tsc[int(m[1])] = int(m[2])
        elif m := re.match(r"PADLOCK-SECTION (\S+) (\S+) 0x([0-9a-f]+)$", line):
            loads = b.sections.setdefault(m[1], [])
            if not loads or m[2] in loads[-1]:  # a section again: the module loaded again
                loads.append({})
            loads[-1][m[2]] = int(m[3], 16)
        elif m := re.match(r"PADLOCK-UNTESTED (\S+) loaded$", line):
            b.untested.append(m[1])
        elif m := re.match(r"PADLOCK-UNTESTED AFALG \S+ (\S+) (.*)$", line):
            b.untested_afalg.append((m[1], m[2]))
    return b


REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("PADLOCK_DEPS_CACHE", Path.home() / ".cache" / "padlock-emu"))
# The boots: bookworm's i386 kernel on Esther (every unit) and on Nehemiah C5P (RNG and ACE
# only; under -icount, where the clock the RNG and the MSRs read is the instruction count),
# and trixie-backports' amd64 6.16 on the Nano (qemu-system-x86_64; the "-nano" SHA drivers;
# modules as .ko.xz under usr/lib/modules), the kernel whose padlock-sha fails on Zhaoxin.
BOOTS = {
    "esther-c5j": Kernel("esther-c5j", "i386"),
    "nehemiah-c5p": Kernel("nehemiah-c5p", "i386", qemu_args=("-icount", "shift=7")),
    "nano": Kernel("nano", "amd64", "trixie-backports"),
    # Zhaoxin's KX-6000 ("CentaurHauls", family 7): bookworm's 6.1 and 6.12 pass as on VIA;
    # 6.16's rework trips on the two PHE quirks (docs/recipes/zhaoxin-padlock-sha.md); sid's
    # 7.2 refuses the part and hashes SHA-256 in lib/crypto with REP XSHA256 instead.
    "kx-6000": Kernel("kx-6000", "amd64"),
    "kx-6000-6.12": Kernel("kx-6000", "amd64", "bookworm-backports"),
    "kx-6000-6.16": Kernel("kx-6000", "amd64", "trixie-backports", phe="fails"),
    "kx-6000-7.2": Kernel("kx-6000", "amd64", "sid", phe="refused"),
}
_boots: dict[str, Boot] = {}


def model_units(emulator_path: Path) -> dict[str, set[str]]:
    """The UNITS column of `padlock-emu cpus`: the model data, not a copy of it."""
    out = subprocess.run([str(emulator_path), "cpus"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    cols = out[0].split()
    units = {}
    for line in out[1:]:
        f = line.split()
        units[f[0]] = set(f[cols.index("UNITS")].replace("ACE2", "ACE").split(","))
    return units


@contextmanager
def shared(tmp_path_factory, name: str):
    """A directory all pytest-xdist workers of the run share, held under the lock `name`:
    one worker builds or boots, the others wait and read what it left there."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield root


@pytest.fixture(scope="session")
def initramfs(tmp_path_factory):
    """Debian's kernels and the test initramfs, built before any boot is timed; the CLI's
    --debian-kernel finds them unchanged (make-initramfs.sh keeps a stamp)."""
    with shared(tmp_path_factory, "system-initramfs"):
        for k in sorted(set(BOOTS.values()), key=lambda k: k.directory):
            r = subprocess.run(["bash", str(REPO / "emulator/system/make-initramfs.sh"),
                                "--suite", k.suite, k.arch, str(CACHE / k.directory)],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr


def boot(emulator_path: Path, tmp_path_factory, name: str, trace: Path, *args: str) -> Boot:
    """One boot of Debian's kernel with --stats, --trace and --check (its findings also as
    JSON Lines and SARIF, beside the trace); `args` go before QEMU's own. One boot at a time
    in the whole run, so that a boot has a core of its own while the other tests run: its
    wall time is its own."""
    required = os.environ.get("PADLOCK_REQUIRE_SYSTEM") == "1"
    jsonl, sarif = trace.with_suffix(".check.jsonl"), trace.with_suffix(".sarif")
    with shared(tmp_path_factory, "system-boot"):
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        k = BOOTS[name]
        r = subprocess.run([str(emulator_path), "system", "--cpu", k.cpu, "--debian-kernel",
                            k.arch, "--debian-suite", k.suite, "--append", "quiet", "--stats",
                            "--trace", str(trace), "--check", "--check-jsonl", str(jsonl),
                            "--check-sarif", str(sarif), *args, "--", *k.qemu_args],
                           capture_output=True, text=True, timeout=BOOT_LIMIT_S * 4)
        seconds = time.monotonic() - start
        done = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "no QEMU at" in r.stderr and not required:
        pytest.skip("system mode's QEMU is not built (target padlock-qemu)")
    assert "PADLOCK-DONE" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    b = parse(name, seconds, r.stdout)
    b.cpu_seconds = (done.ru_utime + done.ru_stime) - (used.ru_utime + used.ru_stime)
    b.stats = r.stderr
    b.trace = [json.loads(line) for line in trace.read_text().splitlines()]
    b.findings = [json.loads(line) for line in jsonl.read_text().splitlines()]
    b.sarif = json.loads(sarif.read_text())
    return b


@pytest.fixture(params=list(BOOTS))
def booted(request, emulator_path, initramfs, tmp_path_factory) -> Boot:
    """Each entry of BOOTS boots once per test run, whichever worker asks first."""
    name = request.param
    if name not in _boots:
        with shared(tmp_path_factory, f"system-boot-{name}") as root:
            saved = root / f"system-boot-{name}.json"
            if not saved.exists():
                try:
                    b = boot(emulator_path, tmp_path_factory, name,
                             root / f"system-trace-{name}.jsonl")
                except pytest.skip.Exception as e:  # no QEMU: the other workers skip at once
                    saved.write_text(json.dumps({"skip": str(e)}))
                    raise
                saved.write_text(json.dumps(asdict(b)))
            data = json.loads(saved.read_text())
            if "skip" in data:
                pytest.skip(data["skip"])
            b = Boot(**data)
            b.tsc = {int(n): t for n, t in b.tsc.items()}
            b.sections = {m: [dict(s) for s in loads] for m, loads in b.sections.items()}
            b.afalg = [tuple(a) for a in b.afalg]
            b.untested_afalg = [tuple(a) for a in b.untested_afalg]
            b.cpuid = tuple(b.cpuid)
            _boots[name] = b
    return _boots[name]


def sanitized() -> bool:
    """Whether PADLOCK_BUILD_DIR is a build with -DPADLOCK_SANITIZE=ON (scripts/sanitize.sh)."""
    build = os.environ.get("PADLOCK_BUILD_DIR")
    cache = Path(build) / "CMakeCache.txt" if build else None
    return bool(cache and cache.is_file() and "PADLOCK_SANITIZE:BOOL=ON" in cache.read_text())


def test_boot_takes_under_30_s(booted):
    # A sanitized build (docs/reliability.md, "Sanitizers") runs the models instrumented:
    # twice the limit, AddressSanitizer's typical slowdown (2x, clang's documentation).
    limit = BOOT_LIMIT_S * (2 if sanitized() else 1)
    assert booted.seconds < limit, (
        f"{booted.cpu}: {booted.seconds:.1f} s ({booted.cpu_seconds:.1f} s of CPU time)")


def pinned_kernels() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """emulator/system/debian-kernels.txt: (suite, arch) -> [(package, version)]."""
    pins: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for line in (REPO / "emulator/system/debian-kernels.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            suite, arch, package, version = line.split()
            pins.setdefault((suite, arch), []).append((package, version))
    return pins


def test_the_pinned_kernel_boots_on_the_models_cpuid(booted, emulator_path):
    """The kernel that ran is the one pinned for its suite (uname -r is the package's name
    without linux-image- or, for sid's split packages, linux-binary-), and Linux's
    /proc/cpuinfo shows the vendor, family, model and stepping of the model's CPUID, which
    reach QEMU through the C ABI (docs/system.md, "CPU models")."""
    k = BOOTS[booted.name]
    package = pinned_kernels()[(k.suite, k.arch)][0][0]
    assert booted.release == re.sub(r"^linux-(image|binary)-", "", package), booted.output[-2000:]
    assert booted.cpuid == linux_cpuid(k.cpu), booted.output[-2000:]


def linux_cpuid(cpu: str) -> tuple[str, int, int, int]:
    """What Linux's cpu_detect() (arch/x86/kernel/cpu/common.c) makes of leaves 0 and 1 as
    libpadlock-system.so answers them through the C ABI, the answers QEMU gets: the
    extended family counts when the family is 15, the extended model from family 6 on."""
    build = os.environ.get("PADLOCK_BUILD_DIR")
    lib = Path(build) / "libpadlock-system.so" if build else None
    if lib is None or not lib.is_file():
        if os.environ.get("PADLOCK_REQUIRE_SYSTEM") == "1":
            raise AssertionError(f"no libpadlock-system.so in PADLOCK_BUILD_DIR ({build})")
        pytest.skip("libpadlock-system.so is not built (PADLOCK_BUILD_DIR)")
    if sanitized():  # its runtime must come first in the process (docs/reliability.md)
        pytest.skip("a sanitized libpadlock-system.so cannot be loaded into pytest")
    so = ctypes.CDLL(str(lib))
    so.padlock_sys_create.restype = ctypes.c_void_p
    so.padlock_sys_create.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
    so.padlock_sys_cpuid.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
                                     ctypes.POINTER(ctypes.c_uint32 * 4)]
    so.padlock_sys_destroy.argtypes = [ctypes.c_void_p]
    handle = so.padlock_sys_create(cpu.encode(), 0)
    assert handle, cpu
    leaf0, leaf1 = (ctypes.c_uint32 * 4)(), (ctypes.c_uint32 * 4)()
    so.padlock_sys_cpuid(handle, 0, 0, ctypes.byref(leaf0))
    so.padlock_sys_cpuid(handle, 1, 0, ctypes.byref(leaf1))
    so.padlock_sys_destroy(handle)
    vendor = b"".join(v.to_bytes(4, "little") for v in (leaf0[1], leaf0[3], leaf0[2])).decode()
    eax = leaf1[0]
    family = (eax >> 8) & 0xF
    model = (eax >> 4) & 0xF
    if family == 0xF:
        family += (eax >> 20) & 0xFF
    if family >= 6:
        model += ((eax >> 16) & 0xF) << 4
    return vendor, family, model, eax & 0xF


def test_kernel_selftests_pass_for_every_unit_the_model_has(booted, emulator_path):
    """/proc/crypto: the crypto manager ran the kernel's own vectors on our models."""
    units = model_units(emulator_path)[booted.cpu]
    phe = BOOTS[booted.name].phe
    ace = ACE_DRIVERS if "ACE" in units else set()
    sha = phe_drivers(booted) if "PHE" in units and phe != "refused" else set()
    assert ace | sha, booted.cpu
    assert set(booted.selftests) == ace | sha, booted.output[-3000:]
    # A failed test leaves the algorithm untested: /proc/crypto says "unknown".
    want = {d: "unknown" if d in sha and phe == "fails" else "passed" for d in ace | sha}
    assert booted.selftests == want, booted.selftests
    # The init's second pass runs only after a failure (test_616_...).
    assert bool(booted.untested) == (phe == "fails"), booted.untested


def test_modules_refuse_to_load_for_units_the_model_lacks(booted, emulator_path):
    """As on the chip: the driver finds no unit in CPUID 0xC0000001 and returns -ENODEV."""
    units = model_units(emulator_path)[booted.cpu]
    refused = BOOTS[booted.name].phe == "refused"
    for module, unit in (("padlock-aes", "ACE"), ("padlock-sha", "PHE"), ("via-rng", "RNG")):
        if unit in units and not (module == "padlock-sha" and refused):
            assert booted.modules[module] == "loaded", booted.modules
        else:
            assert booted.modules[module] == "refused: No such device", booted.modules
    assert booted.modules["algif_skcipher"] == "loaded"


def test_afalg_known_answers_through_the_padlock_drivers(booted, emulator_path):
    """tests/system/afalg_check.c binds cbc-aes-padlock, sha256-padlock and sha1-padlock by
    driver name and checks NIST known answers (tests/system/afalg_vectors.txt), the hashes
    as streams (update, then final). A driver that failed its self-tests is refused with
    ELIBBAD, as the kernel refuses such an algorithm to every user."""
    units = model_units(emulator_path)[booted.cpu]
    phe = BOOTS[booted.name].phe
    # A vector no driver serves is reported under the first name (afalg_check.c).
    sha = phe_drivers(booted) if phe != "refused" else {"sha1-padlock", "sha256-padlock"}
    assert {d for d, _ in booted.afalg} == {"cbc-aes-padlock"} | sha
    assert len(booted.afalg) == 6
    for driver, result in booted.afalg:
        if "aes" in driver:
            want = "ok" if "ACE" in units else "ERROR No such file or directory"
        elif "PHE" not in units or phe == "refused":
            want = "ERROR No such file or directory"
        else:
            want = {"passed": "ok", "fails": "ERROR Accessing a corrupted shared library"}[phe]
        assert result == want, booted.afalg


def test_hwrng_returns_bytes_through_via_rng(booted):
    """via-rng is the current hw_random source and /dev/hwrng gives 32 bytes."""
    assert booted.hwrng is not None and len(booted.hwrng) == 64, booted.output[-2000:]
    assert len(set(booted.hwrng[i:i + 2] for i in range(0, 64, 2))) > 8


@pytest.mark.parametrize("args, message", [
    ([], "give --kernel or --debian-kernel"),
    (["--kernel", "k", "--debian-kernel", "i386"], "give --kernel or --debian-kernel"),
    (["--debian-kernel", "sparc"], "--debian-kernel is i386 or amd64"),
    (["--kernel", "k", "--module", "m.ko"], "--module needs --debian-kernel"),
    (["--kernel", "k", "--cpu", "pentium"], "unknown CPU model 'pentium'"),
    (["--kernel", "k", "--bogus"], "unknown argument '--bogus'"),
    (["--kernel", "k", "--check-sarif"], "--check-sarif needs a value"),
    (["--kernel", "k", "--debian-suite", "sid"], "--debian-suite needs --debian-kernel"),
    (["--debian-kernel", "amd64", "--debian-suite", "sid;reboot"],
     "--debian-suite is a Debian suite's name"),
    # make-initramfs.sh's usage error, before QEMU: no kernel pinned (debian-kernels.txt)
    (["--debian-kernel", "amd64", "--debian-suite", "hamm"],
     "no amd64 kernel pinned for suite 'hamm' (pinned: bookworm bookworm-backports"),
    (["--debian-kernel", "i386", "--debian-suite", "sid"], "no i386 kernel pinned for suite 'sid'"),
])
def test_system_usage_errors(emulator_path, args, message):
    r = subprocess.run([str(emulator_path), "system", *args], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_system_without_qemu_says_how_to_build_it(emulator_path, tmp_path):
    env = dict(os.environ, PADLOCK_QEMU_DIR=str(tmp_path))
    r = subprocess.run([str(emulator_path), "system", "--kernel", "k"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 2
    assert f"no QEMU at {tmp_path}/bin/qemu-system-i386" in r.stderr
    assert "--target padlock-qemu" in r.stderr


def test_a_sanitized_build_preloads_its_runtime_into_qemu(emulator_path, tmp_path):
    """QEMU is not instrumented, and the sanitized library it loads needs the sanitizer
    runtime first in the process (docs/reliability.md, "Sanitizers"): a sanitized
    padlock-emu puts the runtime in QEMU's LD_PRELOAD; an ordinary one leaves it empty."""
    qemu = tmp_path / "bin" / "qemu-system-i386"
    qemu.parent.mkdir()
    qemu.write_text('#!/bin/sh\necho "LD_PRELOAD=$LD_PRELOAD"\n')
    qemu.chmod(0o755)
    env = dict(os.environ, PADLOCK_QEMU_DIR=str(tmp_path), LD_PRELOAD="")
    # The shell standing in for QEMU is no part of the check: no leak report at its exit.
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    r = subprocess.run([str(emulator_path), "system", "--kernel", "k", "--console"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    preload = r.stdout.split("LD_PRELOAD=", 1)[1].split()
    if sanitized():
        assert preload and "asan" in Path(preload[0]).name, r.stdout
        assert all(Path(p).is_file() for p in preload), preload
    else:
        assert preload == [], r.stdout


def test_kernel_never_issues_rep_xcryptctr(booted):
    """Esther stepping 8's CTR erratum (§3.1, §6.6) cannot reach these drivers: padlock-aes
    registers ECB and CBC only. --stats counts what the kernel issued."""
    rows = {line.split("stats:")[1].strip().rsplit(None, 5)[0]
            for line in booted.stats.splitlines() if "stats:   REP" in line or "stats:   XSTORE" in line}
    assert "REP XCRYPTCBC" in rows and "REP XCRYPTECB" in rows, booted.stats[-2000:]
    assert "REP XCRYPTCTR" not in rows
    assert booted.stats.count("PadLock cycles") == 1


def stats_rows(stats: str) -> dict[str, int]:
    """--stats's instruction table: count per instruction."""
    rows = {}
    for line in stats.splitlines():
        if m := re.match(r"padlock-emu: stats:   ((?:REP )?X\w+|MONTMUL|REP MONTMUL) +(\d+) ", line):
            rows[m[1]] = int(m[2])
    return rows


def test_trace_records_every_padlock_instruction_the_kernel_ran(booted):
    """--trace in system mode: user mode's format (a run line, one line per instruction, an
    end line), fed by the same execution core as --stats, so the two agree."""
    run, insns, end = booted.trace[0], booted.trace[1:-1], booted.trace[-1]
    assert run["type"] == "run" and run["cpu"] == booted.cpu and run["program"] == "vmlinuz"
    assert run["arch"] == ("x86_64" if BOOTS[booted.name].arch == "amd64" else "i386")
    assert end["type"] == "end" and all(r["type"] == "insn" for r in insns)
    assert [r["seq"] for r in insns] == list(range(len(insns)))
    assert end["instructions"] == len(insns)
    counts: dict[str, int] = {}
    for r in insns:
        counts[r["insn"]] = counts.get(r["insn"], 0) + 1
    assert counts == stats_rows(booted.stats), booted.stats[-2000:]
    total = int(re.search(r"PadLock cycles (\d+)", booted.stats)[1])
    assert end["padlock_cycles"] == sum(r["cycles"] for r in insns) == total
    # The clock the trace reports is the guest's TSC: it never goes back.
    cycles = [r["cycle"] for r in insns]
    assert cycles == sorted(cycles) and end["cycle"] >= cycles[-1]


def test_checker_runs_on_the_kernels_padlock_instructions(booted, emulator_path):
    """--check in system mode. padlock-sha.c's final() on a PHE without Nano's partial
    hashing issues REP XSHA with EAX = ECX, the `xsha-pad-only` note docs/checker.md lists
    for the driver under the harness; the kernel's self-tests do it at every boot. Before
    6.16 the "-nano" drivers (model 15 and up) pad in software; 6.16's rework gives them the
    same finup() (its one-shot REP XSHA with EAX = the bytes hashed), which on a message of
    whole blocks is that call too, except on Zhaoxin, where the tests stop at the first
    vector (test_616_...)."""
    assert re.search(r"padlock-emu: check: \d+ findings? \(", booted.stats), booted.stats[-2000:]
    pad_only = "padlock-emu: check: note xsha-pad-only" in booted.stats
    units = model_units(emulator_path)[booted.cpu]
    k = BOOTS[booted.name]
    version = re.search(r"-(\d+)\.(\d+)\.", pinned_kernels()[(k.suite, k.arch)][0][0])
    shared_finup = (int(version[1]), int(version[2])) >= (6, 16) and k.phe == "passed"
    assert pad_only == ("PHE" in units and (booted.cpuid[2] < 0x0F or shared_finup)), \
        booted.stats[-3000:]
    if BOOTS[booted.name].phe != "fails":  # 6.16 on Zhaoxin: test_616_check_names_...
        assert "padlock-emu: check: error" not in booted.stats


# --- the modules' functions in the trace and the findings (docs/system.md, "Kernel symbols")

# The module that issues each unit's instructions in these boots.
UNIT_MODULE = {"ACE": "padlock-aes", "PHE": "padlock-sha", "RNG": "via-rng"}


def kernel_space(b: Boot) -> int:
    """The lowest kernel address: Debian's 686 kernel has the 3 GiB split; x86-64's upper half."""
    return 0xC0000000 if BOOTS[b.name].arch == "i386" else 0xFFFF800000000000


@functools.lru_cache(maxsize=None)
def ko_functions(ko: Path) -> list[tuple[str, int, int, str]]:
    """(section, offset, size, name) of each function of a module, from binutils' objdump -t:
    a reading of the .ko's symbol table independent of padlock-emu's."""
    out = subprocess.run(["objdump", "-t", str(ko)], capture_output=True, text=True,
                         check=True).stdout
    fns = []
    for line in out.splitlines():
        # 000005e0 l     F .text	00000111 ecb_aes_encrypt
        if m := re.match(r"([0-9a-f]+) (.{7}) (\S+)\t([0-9a-f]+) (\S+)$", line):
            if m[2][6] == "F":
                fns.append((m[3], int(m[1], 16), int(m[4], 16), m[5]))
    return fns


def function_at(b: Boot, module_file: str, pc: int) -> tuple[str, int] | None:
    """The function of the module's .ko holding `pc` at the section addresses the guest
    printed (PADLOCK-SECTION) for any load of it, and the offset in it."""
    ko = CACHE / BOOTS[b.name].directory / "ko" / f"{module_file}.ko"
    for load in b.sections[module_file.replace("-", "_")]:
        for section, offset, size, name in ko_functions(ko):
            base = load.get(section)
            if base is not None and base + offset <= pc < base + offset + size:
                return name, pc - base - offset
    return None


def test_trace_names_the_modules_functions(booted, emulator_path):
    """Every PadLock instruction the kernel ran is in the function of its driver's module
    that objdump finds at that address; user code (tsc_xcrypt) stays unnamed. padlock-aes's
    padlock_xcrypt_ecb and padlock_xcrypt_cbc are inlined into ecb_aes_encrypt and
    cbc_aes_encrypt; via-rng's XSTORE is in via_rng_data_present."""
    units = model_units(emulator_path)[booted.cpu]
    drivers = {UNIT_MODULE[u].replace("-", "_") for u in units
               if u in UNIT_MODULE and booted.modules[UNIT_MODULE[u]] == "loaded"}
    assert set(booted.sections) >= drivers, booted.sections
    seen = set()
    for r in booted.trace[1:-1]:
        pc = int(r["pc"], 16)
        in_proper = r["unit"] == "PHE" and BOOTS[booted.name].phe == "refused"
        if pc < kernel_space(booted) or in_proper:  # user code; 7.x's lib/crypto SHA-256
            assert r["fn"] == "??? (anonymous)" and "module" not in r, r
            continue
        module_file = UNIT_MODULE[r["unit"]]
        found = function_at(booted, module_file, pc)
        assert found is not None, (r, booted.sections)
        assert (r["fn"], r["module"]) == (found[0], module_file.replace("-", "_")), r
        seen.add((r["module"], r["insn"], r["fn"]))
    if "ACE" in units:
        assert ("padlock_aes", "REP XCRYPTECB", "ecb_aes_encrypt") in seen, seen
        assert ("padlock_aes", "REP XCRYPTCBC", "cbc_aes_encrypt") in seen, seen
    assert ("via_rng", "XSTORE", "via_rng_data_present") in seen, seen


def test_findings_name_the_modules_functions_in_text_jsonl_and_sarif(booted):
    """--check's text, --check-jsonl and --check-sarif in system mode: the same findings,
    each at its driver's function (+offset) and module as objdump places the PC; the SARIF
    log validates against the official schema. On Esther padlock-sha's final() gives the
    xsha-pad-only note."""
    count = int(re.search(r"padlock-emu: check: (\d+) findings? \(", booted.stats)[1])
    assert len(booted.findings) == count
    sarif_schema.validate(booted.sarif)
    results = booted.sarif["runs"][0]["results"]
    assert len(results) == count
    for f, result in zip(booted.findings, results):
        assert (f["program"], f["cpu"]) == ("vmlinuz", booted.cpu)
        assert result["ruleId"] == f["kind"]
        pc = int(f["pc"], 16)
        location = result["locations"][0]
        assert location["physicalLocation"]["address"]["absoluteAddress"] == pc
        if pc < kernel_space(booted) or ("XSHA" in f["insn"] and BOOTS[booted.name].phe == "refused"):
            assert "module" not in f, f
            continue
        unit = "PHE" if "XSHA" in f["insn"] else "RNG" if "XSTORE" in f["insn"] else "ACE"
        module_file = UNIT_MODULE[unit]
        module = module_file.replace("-", "_")
        name, offset = function_at(booted, module_file, pc)
        assert (f["function"], f["module"], f["offset"]) == (name, module, offset), f
        assert f["backtrace"][0] == {"pc": f["pc"], "function": name, "module": module,
                                     "offset": offset}
        assert (f"at {f['pc']} in {name}+{offset:#x} [{module}]") in booted.stats
        logical = location["logicalLocations"][0]
        assert (logical["name"], logical["fullyQualifiedName"]) == (name, f"{module}!{name}")
    if booted.cpu == "esther-c5j":
        pad_only = [f for f in booted.findings if f["kind"] == "xsha-pad-only"]
        assert pad_only and all(f["module"] == "padlock_sha" for f in pad_only), booted.findings


def model_cycles(cpu: str, blocks: int) -> int:
    """The model's cycles for tsc_xcrypt.c's REP XCRYPTECB (AES-128 encryption, key loaded
    again) from the direct model API, with the units' clocks alone as in system mode."""
    build = os.environ.get("PADLOCK_BUILD_DIR")
    if build and str(Path(build).resolve() / "python") not in sys.path:
        sys.path.insert(0, str(Path(build).resolve() / "python"))
    try:
        from padlock_emu import direct
    except ImportError:
        if os.environ.get("PADLOCK_REQUIRE_SYSTEM") == "1":
            raise
        pytest.skip("the padlock_emu module is not built (PADLOCK_BUILD_DIR)")
    return direct.xcrypt("ecb", 10, bytes(16), None, bytes(16 * blocks), cpu=cpu).cycles


def test_padlock_cycles_reach_the_guests_tsc(booted):
    """tests/system/tsc_xcrypt.c reads RDTSC around REP XCRYPTECB of N blocks. The TSC is
    QEMU's virtual clock at the model's MHz plus the PadLock cycles (docs/system.md), so
    under -icount, where the instructions around it cost the same for every N, the times
    differ by exactly the model's cycles (within the one cycle of rounding QEMU's clock to
    cycles); without it, host time adds to them."""
    assert sorted(booted.tsc) == [1, 2, 3, 4, 16, 64, 255, 1024], booted.output[-2000:]
    model = {n: model_cycles(booted.cpu, n) for n in booted.tsc}
    assert len(set(model.values())) == len(model)  # the counts tell the formula apart
    # The trace saw the same instructions cost the same: every whole REP XCRYPTECB of
    # AES-128 encryption with the key loaded (not interrupted, not resumed), by ECX.
    traced: dict[int, set[int]] = {}
    for r in booted.trace[1:-1]:
        if (r["insn"] == "REP XCRYPTECB" and r["key_reloaded"] and r["status"] == "completed"
                and not r["restarted"] and r["cw"]["raw"] == "0x0000000a"):
            n = int(r["in"]["ecx" if "ecx" in r["in"] else "rcx"], 16)
            traced.setdefault(n, set()).add(r["cycles"])
    assert all(traced.get(n) == {c} for n, c in model.items()), (traced, model)
    if "-icount" in BOOTS[booted.name].qemu_args:
        for n in booted.tsc:
            assert abs((booted.tsc[n] - booted.tsc[1]) - (model[n] - model[1])) <= 1, (
                booted.tsc, model)
    else:
        assert all(booted.tsc[n] >= model[n] for n in booted.tsc), (booted.tsc, model)


# --- a kernel developer's padlock-aes.c (docs/system.md, "Testing a patched padlock-aes.c")

KBUILD = REPO / "emulator/system/debian-kbuild.sh"
# A deliberately broken variant: its own driver names (so it loads beside the good one) and
# the wrong number of rounds in the control word (§3.2), which every AES vector detects.
BROKEN = [("-padlock\"", "-padlock-broken\""),
          ("ctx->cword.encrypt.rounds = 10 + ", "ctx->cword.encrypt.rounds = 12 + ")]


def test_a_patched_padlock_aes_built_against_debians_headers_boots(emulator_path, initramfs,
                                                                   tmp_path, tmp_path_factory):
    """The recipe as a test: Debian's padlock-aes.c from linux-source-6.1 at the booted
    kernel's version, built out of tree against that kernel's linux-headers and
    linux-kbuild (apt-get download, dpkg-deb -x), and a broken variant of it; both go into
    the initramfs with --module. The kernel loads both (unsigned: taint E), the crypto
    manager passes the good one and fails the broken one."""
    r = subprocess.run(["bash", str(KBUILD), "source", "i386", "drivers/crypto/padlock-aes.c"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    source = Path(r.stdout.strip()).read_text()
    good, broken = tmp_path / "padlock-aes.c", tmp_path / "padlock-aes-broken.c"
    good.write_text(source)
    text = source
    for old, new in BROKEN:
        assert old in text, old
        text = text.replace(old, new)
    broken.write_text(text)
    r = subprocess.run(["bash", str(KBUILD), "build", "i386", str(tmp_path / "ko"), str(good),
                        str(broken)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    modules = r.stdout.split()
    assert [Path(m).name for m in modules] == ["padlock-aes.ko", "padlock-aes-broken.ko"]

    # The initramfs first, where the CLI finds it (system-i386+padlock-aes+...), so that the
    # boot alone is timed.
    r = subprocess.run(["bash", str(REPO / "emulator/system/make-initramfs.sh"), "i386",
                        str(CACHE / "system-i386+padlock-aes+padlock-aes-broken"), *modules],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    b = boot(emulator_path, tmp_path_factory, "esther-c5j", tmp_path / "trace.jsonl",
             *[a for m in modules for a in ("--module", m)])
    assert b.seconds < BOOT_LIMIT_S, f"{b.seconds:.1f} s ({b.cpu_seconds:.1f} s of CPU time)"
    assert b.modules["padlock-aes"] == "loaded" and b.modules["padlock-aes-broken"] == "loaded"
    # Ours, not Debian's signed module: the kernel is tainted by an unsigned module (E).
    assert "E" in b.taint["padlock-aes"] and "E" in b.taint["padlock-aes-broken"], b.taint
    assert b.taint["padlock-sha"] == "-"
    for driver in ACE_DRIVERS:
        assert b.selftests[driver] == "passed", b.selftests
        assert b.selftests[driver + "-broken"] != "passed", b.selftests
        assert re.search(rf"alg: .*{driver}-broken", b.output), b.output[-3000:]
    assert ("cbc-aes-padlock", "ok") in b.afalg


# --- Zhaoxin: Linux 6.16's padlock-sha and its successors (docs/recipes/zhaoxin-padlock-sha.md)

def findings_of(b: Boot, kind: str) -> dict[str, dict]:
    """--check's findings of one kind in padlock-sha, by function."""
    return {f["function"]: f for f in b.findings
            if f["kind"] == kind and f.get("module") == "padlock_sha"}


@pytest.mark.parametrize("booted", ["kx-6000-6.16"], indirect=True)
def test_616_padlock_sha_fails_on_zhaoxin_and_check_names_both_quirks(booted):
    """Debian bug #1113996 on the KX-6000: the crypto manager's first vector (the empty
    message, init+update+final) fails both -nano drivers, because their finup() issues the
    one-shot REP XSHA with ECX = 0, which does nothing on Zhaoxin. The init then loads
    padlock-sha again with the tests off and streams the AF_ALG known answers through it:
    SHA-1 of a message longer than a block is wrong, because update()'s REP XSHA1 stores
    32 bytes over the byte count that follows the 20-byte state; SHA-256's state is 32
    bytes and its answers are right. --check names the driver's functions for both."""
    for d in ("sha1-padlock-nano", "sha256-padlock-nano"):
        assert re.search(rf"alg: shash: {d} test failed \(wrong result\) on test vector 0, "
                         r'cfg="init\+update\+final aligned buffer"', booted.output), \
            booted.output[-3000:]
    # The instruction each finding first saw, from the trace (`first` is its `seq`).
    regs = {r["seq"]: r["in"] for r in booted.trace[1:-1]}
    ecx0 = findings_of(booted, "xsha-ecx0-no-op")
    assert set(ecx0) == {"padlock_sha1_finup", "padlock_sha256_finup"}, booted.findings
    for f in ecx0.values():
        assert int(regs[f["first"]]["rcx"], 16) == 0 and regs[f["first"]]["rax"] == "0x" + "0" * 16
    store = findings_of(booted, "xsha1-32-byte-store")
    assert set(store) == {"padlock_sha1_update_nano"}, booted.findings
    assert int(regs[store["padlock_sha1_update_nano"]["first"]]["rax"], 16) == 2**64 - 1
    assert {f["kind"] for f in booted.findings} == {"xsha-ecx0-no-op", "xsha1-32-byte-store"}

    assert booted.untested == ["padlock-sha"]
    # afalg_vectors.txt's order: AES twice, then SHA-256 and SHA-1 of "abc", then of the
    # 896-bit message (one block and 48 bytes).
    assert booted.untested_afalg == [
        ("cbc-aes-padlock", "ok"), ("cbc-aes-padlock", "ok"),
        ("sha256-padlock-nano", "ok"), ("sha1-padlock-nano", "ok"),
        ("sha256-padlock-nano", "ok"), ("sha1-padlock-nano", "FAIL")], booted.output[-3000:]


@pytest.mark.parametrize("booted", ["kx-6000-7.2"], indirect=True)
def test_72_refuses_padlock_sha_and_hashes_sha256_with_xsha256(booted):
    """Sid's 7.2 carries ebba09f (padlock-sha: -ENODEV on family 7 and up) and lib/crypto's
    sha256_blocks_phe: the kernel's own SHA-256 runs REP XSHA256 (EAX = -1, ECX = blocks)
    from the kernel proper, and the crypto manager's vectors pass through it."""
    assert booted.modules["padlock-sha"] == "refused: No such device", booted.modules
    assert booted.others.get("sha256-lib") == "passed", booted.others
    xsha = [r for r in booted.trace[1:-1] if r["insn"].startswith("REP XSHA")]
    assert xsha and all(r["insn"] == "REP XSHA256" for r in xsha), {r["insn"] for r in xsha}
    # x86-64's kernel image lies below its module area (0xffffffffc0000000 and up).
    assert all(int(r["pc"], 16) < 0xFFFFFFFFC0000000 and "module" not in r and
               r["status"] == "completed" and int(r["in"]["rax"], 16) == 2**64 - 1 and
               int(r["in"]["rcx"], 16) > 0 for r in xsha), xsha[:3]
    assert "padlock-emu: check: error" not in booted.stats


# --- docs/recipes/zhaoxin-padlock-sha.md: each session is one of the boots above

RECIPE = REPO / "docs/recipes/zhaoxin-padlock-sha.md"
# The options of `padlock-emu system` that boot() passes too (with files of its own).
SESSION_OPTIONS = {"--cpu": True, "--debian-kernel": True, "--debian-suite": True,
                   "--append": True, "--check": False, "--stats": False, "--trace": True,
                   "--check-jsonl": True, "--check-sarif": True}


def recipe_sessions() -> list[tuple[str, list[str]]]:
    """The page's "$ command" blocks: the command and the lines it shows."""
    blocks = re.findall(r"```\n(.*?)```", RECIPE.read_text(), re.S)
    return [(b.splitlines()[0][2:], b.splitlines()[1:]) for b in blocks if b.startswith("$ ")]


def session_boot(cmd: str) -> str | None:
    """The key of BOOTS whose boot runs `cmd`, or None when no boot does."""
    args = shlex.split(cmd)
    if args[:2] != ["padlock-emu", "system"]:
        return None
    opts, i = {}, 2
    while i < len(args):
        if args[i] not in SESSION_OPTIONS:
            return None
        opts[args[i]] = args[i + 1] if SESSION_OPTIONS[args[i]] else None
        i += 2 if SESSION_OPTIONS[args[i]] else 1
    if opts.get("--append", "quiet") != "quiet":
        return None
    names = [n for n, k in BOOTS.items() if (k.cpu, k.arch, k.suite) == (
        opts.get("--cpu"), opts.get("--debian-kernel"), opts.get("--debian-suite", "bookworm"))]
    return names[0] if len(names) == 1 else None


SESSIONS = recipe_sessions()


def test_the_recipe_has_a_session_per_suite():
    """The page's sessions: bookworm-backports and trixie-backports on kx-6000, the same
    6.16 on nano, sid on kx-6000; every one of them a boot of BOOTS."""
    assert [session_boot(cmd) for cmd, _ in SESSIONS] == [
        "kx-6000-6.12", "kx-6000-6.16", "nano", "kx-6000-7.2"], SESSIONS


@pytest.mark.parametrize("booted, session", [
    pytest.param(session_boot(cmd) or "nano", i, id=f"{session_boot(cmd)}")
    for i, (cmd, _) in enumerate(SESSIONS)], indirect=["booted"])
def test_recipe_sessions_are_boots_that_print_what_they_show(booted, session):
    """Each session's command is the boot's (which adds --stats, --trace and the findings'
    files), and the boot printed the lines the page shows, in order, with the matching of
    the docs' sessions (tests/integration/test_docs_commands.py): its console on stdout,
    the `padlock-emu:` lines on stderr."""
    from test_docs_commands import matches
    cmd, shown = SESSIONS[session]
    assert session_boot(cmd) == booted.name, cmd
    out = [line for line in shown if not line.startswith("padlock-emu:")]
    err = [line for line in shown if line.startswith("padlock-emu:") or line == "..."]
    assert matches(out, booted.output.splitlines()) is None, (
        matches(out, booted.output.splitlines()), booted.output[-3000:])
    assert matches(err, booted.stats.splitlines()) is None, (
        matches(err, booted.stats.splitlines()), booted.stats[-3000:])
