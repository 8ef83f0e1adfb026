"""Real, unmodified Debian clients of PadLock under padlock-emu: the distribution's
openssl with its padlock engine (engines-3/padlock.so) and GnuTLS's gnutls-cli.

Two targets, as docs/emulator.md describes:
  x86_64-nano     the host's own /usr/bin/openssl (x86-64 guests use the host root)
  i386-esther     Debian's i386 openssl from an i386 sysroot (scripts/make-sysroot.sh)

Where things are:
  the sysroot     $PADLOCK_SYSROOT_I386, else $PADLOCK_EMU_SYSROOT, else <repo>/.sysroot-i386
A missing piece skips the test with the reason; with PADLOCK_REQUIRE_REAL_CLIENTS=1 (set
by scripts/test.sh, which builds the sysroot) it fails instead, so CI cannot pass by
skipping them."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from guestrun import REPO

HOST_OPENSSL = Path("/usr/bin/openssl")
HOST_ENGINE = Path("/usr/lib/x86_64-linux-gnu/engines-3/padlock.so")
I386_ENGINE = Path("usr/lib/i386-linux-gnu/engines-3/padlock.so")  # inside the sysroot


def unavailable(reason: str):
    """Skip, or fail when the test command promised these clients (CI)."""
    if os.environ.get("PADLOCK_REQUIRE_REAL_CLIENTS") == "1":
        pytest.fail(reason + " (PADLOCK_REQUIRE_REAL_CLIENTS=1)")
    pytest.skip(reason)


def sysroot_i386() -> Path:
    for var in ("PADLOCK_SYSROOT_I386", "PADLOCK_EMU_SYSROOT"):
        if os.environ.get(var):
            return Path(os.environ[var])
    return REPO / ".sysroot-i386"


@dataclass(frozen=True)
class Client:
    """One way of running a Debian program under the emulator."""
    arch: str             # "i386" or "x86_64"
    cpu: str              # default CPU model for this target
    sysroot: Path | None  # -L DIR, None for the host root

    @property
    def id(self) -> str:
        return f"{self.arch}-{self.cpu}"

    def command(self, emulator: Path, program: str, args, cpu: str | None = None,
                stats: bool = True, extra: tuple = ()) -> list[str]:
        cmd = [str(emulator), "run", "--cpu", cpu or self.cpu, *extra]
        if stats:
            cmd.append("--stats")
        if self.sysroot is not None:
            cmd += ["-L", str(self.sysroot)]
        return cmd + [program, *[str(a) for a in args]]

    def run(self, emulator: Path, program: str, args, cpu: str | None = None,
            stats: bool = True, timeout: float = 300, check: bool = True, extra: tuple = (),
            input: bytes | None = None) -> subprocess.CompletedProcess:
        cmd = self.command(emulator, program, args, cpu, stats, extra)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PADLOCK_EMU_")}
        env.pop("OPENSSL_CONF", None)
        env.pop("OPENSSL_ENGINES", None)
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env, input=input)
        if check and p.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd)}\n  exit {p.returncode}\n  stdout: "
                f"{p.stdout.decode(errors='replace')[-2000:]}\n  stderr: "
                f"{p.stderr.decode(errors='replace')[-3000:]}")
        return p


def openssl_client(arch: str) -> Client:
    """The openssl target for `arch`, or skip/fail with the reason it is missing."""
    if arch == "x86_64":
        if not HOST_OPENSSL.is_file():
            unavailable("host /usr/bin/openssl is not installed (Debian package openssl)")
        if not HOST_ENGINE.is_file():
            unavailable(f"{HOST_ENGINE} missing (Debian package libssl3)")
        return Client("x86_64", "nano", None)
    root = sysroot_i386()
    if not (root / "usr/bin/openssl").is_file() or not (root / I386_ENGINE).is_file():
        unavailable(f"no i386 openssl in {root}: build the sysroot with "
                    "'bash scripts/make-sysroot.sh' (as root, needs Debian's i386 packages)")
    return Client("i386", "esther", root)


# --- the emulator's --stats summary ------------------------------------------------------

# The instruction table: "REP XCRYPTCBC  count  bytes  cycles  faults  reloads" (other
# --stats tables name the instructions too, with fewer columns). The RNG's two are
# "XSTORE" and "REP XSTORE".
STATS_LINE = re.compile(
    r"padlock-emu: stats:\s+(?:REP (XCRYPT\w+|XSHA\w+|MONTMUL)|(XSTORE|REP XSTORE))"
    r"\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s*$", re.M)


def padlock_counts(stderr: bytes | str) -> dict[str, tuple[int, int]]:
    """{"XCRYPTCBC": (instructions, bytes), "XSTORE": ..., ...} from padlock-emu --stats."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    return {m.group(1) or m.group(2): (int(m.group(3)), int(m.group(4)))
            for m in STATS_LINE.finditer(text)}


def host_openssl(args, input: bytes | None = None) -> bytes:
    """The host's openssl, natively and without the engine: the reference."""
    p = subprocess.run([str(HOST_OPENSSL), *[str(a) for a in args]], capture_output=True,
                       input=input, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p.stdout
