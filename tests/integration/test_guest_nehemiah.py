"""guest_nehemiah_sigill: which PadLock instructions each CPU model accepts (§1.1 table,
§1.3 CPUID bits, §7.1). An instruction of a unit the chip lacks raises #UD, which Linux
delivers as SIGILL; with no handler the guest dies of it, and the emulator ends the way
qemu-user does (docs/emulator.md). Nehemiah C5XL has only the RNG; Nehemiah C5P adds ACE
(ECB/CBC/CFB/OFB) but not ACE2's CTR, nor PHE or PMM; Esther and Nano have everything."""

from __future__ import annotations

import shlex
import signal
import subprocess

import pytest

from guestrun import Target

ACE = ["ecb", "cbc", "cfb", "ofb"]
ACE2_PHE_PMM = ["ctr", "sha1", "sha256", "montmul"]
ALL = ["xstore"] + ACE + ACE2_PHE_PMM

SUPPORTED = {
    "nehemiah-c5xl": {"xstore"},
    "nehemiah-c5p": {"xstore", *ACE},
    "nehemiah": {"xstore", *ACE},  # alias of nehemiah-c5p
    "esther": set(ALL),
    "esther-c5j-s9": set(ALL),
}
CASES = [(Target("i386", cpu), insn) for cpu in SUPPORTED for insn in ALL]
CASES += [(Target("x86_64", "nano"), insn) for insn in ALL]


@pytest.mark.parametrize("target,insn", CASES, ids=[f"{t.id}-{i}" for t, i in CASES])
def test_unit_presence(runner, target, insn):
    proc = runner.run("nehemiah_sigill", target, [insn], check=False)
    lines = proc.stdout.decode().splitlines()
    assert lines[0].startswith("xstore eax=")  # the RNG exists on every model
    assert lines[1] == f"executing {insn}"
    supported = target.arch == "x86_64" or insn in SUPPORTED[target.cpu]
    if supported:
        assert proc.returncode == 0, proc.stderr
        assert lines[2:] == [f"{insn} ok"]
    else:
        assert proc.returncode == -signal.SIGILL, proc.stderr
        assert len(lines) == 2  # died at the instruction


def test_xcrypt_sigill_exit_status_in_shell(runner):
    """A shell sees 128 + SIGILL = 132 for an XCRYPT program on Nehemiah C5XL."""
    cmd = " ".join(shlex.quote(c) for c in runner.command(
        "nehemiah_sigill", "i386", ["ctr"], "nehemiah-c5xl"))
    proc = subprocess.run(["sh", "-c", f"{cmd} >/dev/null 2>&1; echo $?"],
                          capture_output=True, timeout=120)
    assert proc.stdout.strip() == b"132"


@pytest.mark.parametrize("mode", ["ecb", "cbc", "ctr"])
def test_aes_guest_dies_on_nehemiah_c5xl(runner, mode):
    """The AES guest itself (not only the probe) dies with SIGILL on an RNG-only chip."""
    args = [mode, "hw", "enc", "2b7e151628aed2a6abf7158809cf4f3c",
            "-" if mode == "ecb" else "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            "6bc1bee22e409f96e93d7e117393172a"]
    proc = runner.run("aes", ("i386", "nehemiah-c5xl"), args, check=False)
    assert proc.returncode == -signal.SIGILL
    assert proc.stdout == b""
