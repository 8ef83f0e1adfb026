"""gpg with its own agent under padlock-emu (docs/emulator.md, "Threads"), on both targets:
the host's Debian x86-64 gpg under nano and the i386 sysroot's gpg under esther
(scripts/make-sysroot.sh, which leaves pinentry out: these runs use --pinentry-mode
loopback) each generate a key pair in a temporary GNUPGHOME, encrypt and sign a file,
decrypt and verify it, and the host's gpg, outside the emulator, decrypts the result with
the exported key. gpg starts its agent from the same root, so the i386 gpg talks to an
emulated i386 gpg-agent.

gpg starts gpg-agent itself (fork, execve, setsid, an AF_UNIX socket); the agent serves
each connection in an npth thread while its main thread waits in pselect, so this needs
guest threads and the scheduler's host waits. libgcrypt finds the PadLock units through
CPUID and does gpg's AES with REP XCRYPTECB and part of its randomness with XSTORE, which
--stats shows."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from realclients import Client, padlock_counts, sysroot_i386, unavailable

UID = "Test User <test@example.org>"
PASS = ["--batch", "--pinentry-mode", "loopback", "--passphrase", ""]


def gpg_client(arch: str) -> Client:
    if arch == "x86_64":
        if not Path("/usr/bin/gpg").is_file() or not Path("/usr/bin/gpg-agent").is_file():
            unavailable("host /usr/bin/gpg or gpg-agent is not installed (Debian gpg, gpg-agent)")
        return Client("x86_64", "nano", None)
    root = sysroot_i386()
    if not (root / "usr/bin/gpg").is_file() or not (root / "usr/bin/gpg-agent").is_file():
        unavailable(f"no i386 gpg and gpg-agent in {root}: rebuild it with "
                    "'bash scripts/make-sysroot.sh'")
    return Client("i386", "esther", root)


def stop_agent(home: Path) -> None:
    """The emulated agent is a daemon of this test: end it (KILLAGENT through gpgconf when the
    host has it, then any emulator process still serving this GNUPGHOME)."""
    if shutil.which("gpgconf"):
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"],
                       capture_output=True, timeout=30)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(home).encode() in cmdline and any(a.endswith(b"padlock-emu") for a in cmdline):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_gpg_with_agent(emulator_path, tmp_path, arch):
    client = gpg_client(arch)
    # A short GNUPGHOME: the agent's socket path must fit a sockaddr_un.
    home = Path(os.environ.get("TMPDIR", "/tmp")) / f"pe-gpg-{os.getpid()}"
    home.mkdir(mode=0o700)
    plain = tmp_path / "plain.bin"
    plain.write_bytes(bytes((i * 131 + 7) & 0xFF for i in range(200_000)))
    sealed, opened = tmp_path / "sealed.gpg", tmp_path / "opened.bin"

    def gpg(*args, stats=False):
        return client.run(emulator_path, "/usr/bin/gpg", ["--homedir", home, *PASS, *args],
                          stats=stats, timeout=600)

    try:
        gpg("--quick-gen-key", UID, "future-default", "default", "never")
        enc = gpg("--yes", "-r", "test@example.org", "-u", "test@example.org", "--encrypt",
                  "--sign", "-o", sealed, plain, stats=True)
        counts = padlock_counts(enc.stderr)
        assert counts.get("XCRYPTECB", (0, 0))[0] > 0, enc.stderr.decode(errors="replace")
        dec = gpg("--yes", "-o", opened, "--decrypt", sealed)
        assert opened.read_bytes() == plain.read_bytes()
        assert 'Good signature from "Test User <test@example.org>"' in dec.stderr.decode()
        secret = gpg("--armor", "--export-secret-keys", "test@example.org").stdout
    finally:
        stop_agent(home)
        shutil.rmtree(home, ignore_errors=True)
    assert secret.startswith(b"-----BEGIN PGP PRIVATE KEY BLOCK-----")

    host_gpg = shutil.which("gpg")
    if host_gpg is None:
        pytest.skip("no gpg on the host: the host-side decryption is not checked")
    host_home = Path(os.environ.get("TMPDIR", "/tmp")) / f"pe-hgpg-{os.getpid()}"
    host_home.mkdir(mode=0o700)
    try:
        subprocess.run([host_gpg, "--homedir", host_home, "--batch", "--import"], input=secret,
                       capture_output=True, timeout=60, check=True)
        host_out = tmp_path / "host.bin"
        p = subprocess.run([host_gpg, "--homedir", host_home, *PASS, "-o", host_out,
                            "--decrypt", sealed], capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr.decode()
        assert host_out.read_bytes() == plain.read_bytes()
        assert "Good signature" in p.stderr.decode()
    finally:
        subprocess.run(["gpgconf", "--homedir", host_home, "--kill", "gpg-agent"],
                       capture_output=True, timeout=30)
        shutil.rmtree(host_home, ignore_errors=True)
