"""hello under padlock-emu: the CLI contract (docs/emulator.md) seen through a guest.
`padlock-emu run [--cpu NAME] PROGRAM ARGS...` passes ARGS through, exits with the
guest's status, and a guest killed by signal N ends the emulator like qemu-user: the
parent sees signal N, a shell sees 128+N (docs/emulator.md)."""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess

import pytest

from guestrun import QEMU


def test_hello_output(runner, target):
    """a static program starts, writes to stdout and exits 0."""
    proc = runner.run("hello", target)
    assert proc.stdout == b"hello, world\n"
    assert proc.returncode == 0


def test_hello_arguments_pass_through(runner, target):
    """everything after PROGRAM is the guest's argv, options included."""
    args = ["plain", "two words", "", "ünïcode", "--cpu", "nano", "-E", "X=1"]
    proc = runner.run("hello", target, ["--echo"] + args)
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == "hello, world"
    assert lines[1:] == [f"arg={a}" for a in args]


@pytest.mark.parametrize("status", [0, 1, 7, 42, 255])
def test_exit_status_is_the_guests(runner, target, status):
    """the exit status is the guest's."""
    proc = runner.run("hello", target, ["--exit", status], check=False)
    assert proc.returncode == status


@pytest.mark.parametrize("sig", [signal.SIGABRT, signal.SIGTERM, signal.SIGSEGV])
def test_death_by_signal_like_qemu_user(runner, target, sig):
    """no handler installed -> the parent sees the same signal."""
    proc = runner.run("hello", target, ["--raise", int(sig)], check=False)
    assert proc.stdout.startswith(b"hello, world\n")
    assert proc.returncode == -sig


def test_shell_sees_128_plus_n(runner, target):
    cmd = " ".join(shlex.quote(c) for c in runner.command(
        "hello", target.arch, ["--raise", int(signal.SIGABRT)], target.cpu))
    proc = subprocess.run(["sh", "-c", f"{cmd} >/dev/null 2>&1; echo $?"],
                          capture_output=True, timeout=120)
    assert proc.stdout.strip() == str(128 + signal.SIGABRT).encode()


def test_same_output_as_qemu_user(runner, target):
    """A program without PadLock behaves as under qemu-user."""
    qemu = shutil.which(QEMU[target.arch])
    if not qemu:
        pytest.skip(f"{QEMU[target.arch]} not installed")
    args = ["--echo", "a", "b c", "--exit", "5"]
    ours = runner.run("hello", target, args, check=False)
    theirs = subprocess.run([qemu, str(runner.guest("hello", target.arch))] + args,
                            capture_output=True, timeout=60)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)
