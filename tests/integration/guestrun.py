"""Finding and running the guest programs of tests/guest/ under padlock-emu.

Locations (first match wins):
  the CLI     $PADLOCK_EMU_BIN; <repo>/build*/emulator/padlock-emu; padlock-emu on PATH
  the guests  $PADLOCK_GUEST_DIR; <repo>/build*/tests/guest
A guest binary is <guest dir>/guest_<name>_<arch>, arch i386 or x86_64.

The CLI contract the tests rely on (docs/emulator.md):
  padlock-emu run [--cpu NAME] [--seed N] [--stats] PROGRAM ARGS...
exit status = the guest's; a guest killed by signal N ends the emulator the way qemu-user
does, so Python's subprocess sees returncode -N and a shell sees 128+N."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Every guest runs as i386 under Esther (stepping 8) and as x86-64 under Nano.
TARGETS = (("i386", "esther"), ("x86_64", "nano"))
QEMU = {"i386": "qemu-i386", "x86_64": "qemu-x86_64"}


def _build_dirs() -> list[Path]:
    dirs = []
    env = os.environ.get("PADLOCK_BUILD_DIR")
    if env:
        dirs.append(Path(env))
    dirs += sorted(p for p in REPO.glob("build*") if p.is_dir())
    return dirs


def find_emulator() -> Path | None:
    env = os.environ.get("PADLOCK_EMU_BIN")
    if env:
        return Path(env)
    for d in _build_dirs():
        for cand in (d / "emulator" / "padlock-emu", d / "padlock-emu"):
            if cand.is_file() and os.access(cand, os.X_OK):
                return cand
    which = shutil.which("padlock-emu")
    return Path(which) if which else None


def find_guest_dir() -> Path | None:
    env = os.environ.get("PADLOCK_GUEST_DIR")
    if env:
        return Path(env)
    for d in _build_dirs():
        cand = d / "tests" / "guest"
        if any(cand.glob("guest_hello_*")):
            return cand
    return None


@dataclass(frozen=True)
class Target:
    arch: str
    cpu: str

    @property
    def id(self) -> str:
        return f"{self.arch}-{self.cpu}"


class Runner:
    """Runs guests under the emulator (or, for comparisons, under qemu-user)."""

    def __init__(self, emulator: Path | None, guest_dir: Path | None):
        self.emulator = emulator
        self.guest_dir = guest_dir

    def guest(self, name: str, arch: str) -> Path:
        assert self.guest_dir is not None
        return self.guest_dir / f"guest_{name}_{arch}"

    def command(self, name: str, arch: str, args=(), cpu: str | None = None,
                seed: int | None = None, stats: bool = False) -> list[str]:
        cmd = [str(self.emulator), "run"]
        if cpu:
            cmd += ["--cpu", cpu]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        if stats:
            cmd.append("--stats")
        return cmd + [str(self.guest(name, arch))] + [str(a) for a in args]

    def run(self, name: str, target: Target | tuple, args=(), cpu: str | None = None,
            seed: int | None = None, stats: bool = False, timeout: float = 300,
            input: bytes | None = None, cwd: Path | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        arch, default_cpu = (target.arch, target.cpu) if isinstance(target, Target) else target
        cmd = self.command(name, arch, args, cpu or default_cpu, seed, stats)
        proc = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout, cwd=cwd)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd)}\n  exit {proc.returncode}\n  stdout: "
                f"{proc.stdout.decode(errors='replace')[-2000:]}\n  stderr: "
                f"{proc.stderr.decode(errors='replace')[-2000:]}")
        return proc


def run_in_mode(runner, name: str, arch: str, memory: str, timing: str, args=(),
                timeout: float = 300) -> bytes:
    """stdout of guest `name` under padlock-emu with --memory MEMORY and --timing TIMING, on
    the default CPU of its architecture (esther for i386, nano for x86-64); it must exit 0."""
    cpu = "esther" if arch == "i386" else "nano"
    cmd = [str(runner.emulator), "run", "--cpu", cpu, "--memory", memory, "--timing", timing,
           str(runner.guest(name, arch)), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, timeout=timeout)
    assert p.returncode == 0, (p.returncode, p.stdout[-800:], p.stderr[-800:])
    return p.stdout


def run_native(guest: Path, args=(), timeout: float = 60) -> bytes:
    """The guest's stdout when the host itself runs it (an independent x86); skips the
    calling test where the host cannot run it (a kernel without i386 support)."""
    import pytest

    try:
        p = subprocess.run([str(guest), *args], capture_output=True, timeout=timeout)
    except OSError as e:
        pytest.skip(f"the host cannot run {guest.name}: {e}")
    assert p.returncode == 0, (p.returncode, p.stderr[-500:])
    return p.stdout


def kv(stdout: bytes | str) -> dict[str, str]:
    """key=value lines (one pair per line) into a dict; later lines win."""
    text = stdout.decode() if isinstance(stdout, bytes) else stdout
    out = {}
    for line in text.splitlines():
        if "=" in line and " " not in line.split("=", 1)[0]:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def records(stdout: bytes | str, tag: str) -> list[dict[str, str]]:
    """Lines "tag k=v k=v ..." into a list of dicts."""
    text = stdout.decode() if isinstance(stdout, bytes) else stdout
    out = []
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == tag:
            out.append(dict(p.split("=", 1) for p in parts[1:]))
    return out


def straces_without_pid(a: str, b: str) -> tuple[str, str]:
    """Two runs' --strace output with the guest's TIDs (its PID + n) written "T<n>", to be
    compared: the PID is the emulator's own and differs from run to run. A number becomes
    T<n> only where the two runs differ by exactly their PIDs' difference, so a length or
    an address that happens to lie near one run's PID stays as it is in both."""
    pid_a, pid_b = int(a.split(None, 1)[0]), int(b.split(None, 1)[0])
    parts_a, parts_b = re.split(r"\b(\d+)\b", a), re.split(r"\b(\d+)\b", b)
    if len(parts_a) != len(parts_b):
        return a, b  # different calls: the plain text shows where
    for i in range(1, len(parts_a), 2):
        x, y = int(parts_a[i]), int(parts_b[i])
        if x != y and 0 <= x - pid_a == y - pid_b < 100:
            parts_a[i] = parts_b[i] = f"T{x - pid_a}"
    return "".join(parts_a), "".join(parts_b)
