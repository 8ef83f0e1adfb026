"""Faults a hostile or buggy guest can reach (docs/reliability.md, "Faithful faults"): the
guest (tests/guest/faults.c) runs one instruction and prints the signal, si_code, si_addr
and the instruction pointer its handler saw; the host running the same binary is the
reference. The last two needed Unicorn patches (alignment-check.patch,
iret-vm86-cpl0.patch; docs/emulator.md, "Unicorn", items 19 and 20)."""

from __future__ import annotations

import subprocess

import pytest

from guestrun import run_native

# (case, architectures)
CASES = [
    ("in", ("i386", "x86_64")),
    ("out", ("i386", "x86_64")),
    ("in-dx", ("i386", "x86_64")),
    ("ins", ("i386", "x86_64")),
    ("outs", ("i386", "x86_64")),
    ("icebp", ("i386", "x86_64")),
    ("rdpmc", ("i386", "x86_64")),
    ("sysenter", ("x86_64",)),
    ("noncanonical-push", ("x86_64",)),
    ("ac", ("i386", "x86_64")),
    ("iret-vm", ("i386",)),
]

# What Linux on x86-64 answers, so that a host that differed would be noticed.
LINUX = {
    "in": "sig=11 code=128 addr=0 ip=+0",  # #GP: SIGSEGV, SI_KERNEL
    "out": "sig=11 code=128 addr=0 ip=+0",
    "in-dx": "sig=11 code=128 addr=0 ip=+0",
    "ins": "sig=11 code=128 addr=0 ip=+0",
    "outs": "sig=11 code=128 addr=0 ip=+0",
    "icebp": "sig=5 code=1 addr=+1 ip=+1",  # #DB trap: SIGTRAP, TRAP_BRKPT, after F1
    "rdpmc": "sig=11 code=128 addr=0 ip=+0",  # CR4.PCE clear: #GP
    "sysenter": "sig=4 code=2 addr=+0 ip=+0",  # #UD in long mode (AMD): ILL_ILLOPN
    "noncanonical-push": "sig=7 code=128 addr=0 ip=+0",  # #SS: SIGBUS, SI_KERNEL
    "ac": "sig=7 code=1 addr=0 ip=+0",  # #AC: SIGBUS, BUS_ADRALN
    "iret-vm": "sig=0 code=0 addr=0 ip=0",  # VM is ignored at CPL 3: IRET returns
}


def params():
    for case, arches in CASES:
        for arch in arches:
            yield pytest.param(case, arch, id=f"{case}-{arch}")


@pytest.mark.parametrize("memory", ["direct", "tlb"])
@pytest.mark.parametrize("case,arch", list(params()))
def test_fault_as_on_linux(runner, case, arch, memory):
    guest = runner.guest("faults", arch)
    if not guest.is_file():
        pytest.skip(f"no {arch} guests")
    native = run_native(guest, [case]).decode()
    assert native == f"{case} {LINUX[case]}\n"
    cpu = "esther" if arch == "i386" else "nano"
    proc = subprocess.run([str(runner.emulator), "run", "--cpu", cpu, "--memory", memory,
                           str(guest), case], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == native


@pytest.mark.parametrize("memory", ["direct", "tlb"])
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_padlock_modrm_on_an_unmapped_page_faults_there(runner, arch, memory):
    # The chip fetches the whole instruction before it runs, so a ModRM byte on an
    # unmapped page is a page fault there (SIGSEGV, SEGV_MAPERR, si_addr the page), with the
    # PC at the instruction; the host has no PadLock, so there is no native reference.
    guest = runner.guest("faults", arch)
    if not guest.is_file():
        pytest.skip(f"no {arch} guests")
    cpu = "esther" if arch == "i386" else "nano"
    proc = subprocess.run([str(runner.emulator), "run", "--cpu", cpu, "--memory", memory,
                           str(guest), "padlock-next-page"], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == "padlock-next-page sig=11 code=1 addr=+3 ip=+0\n"


@pytest.mark.parametrize("timing", ["on", "off"])
@pytest.mark.parametrize("memory", ["direct", "tlb"])
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_padlock_modrm_rewrite_runs_the_new_code(runner, arch, memory, timing):
    # XSTORE's ModRM byte belongs to no translated block (the translator ends the block at
    # 0F A7). Under --memory tlb its in-place rewrite once left the page's later stores
    # unchecked, and the replaced code ran stale: SIGILL at a valid mov.
    guest = runner.guest("faults", arch)
    if not guest.is_file():
        pytest.skip(f"no {arch} guests")
    cpu = "esther" if arch == "i386" else "nano"
    proc = subprocess.run([str(runner.emulator), "run", "--cpu", cpu, "--memory", memory,
                           "--timing", timing, str(guest), "padlock-modrm-rewrite"],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == "padlock-modrm-rewrite first=1 second=1 third=42\n"


@pytest.mark.parametrize("path", ["/proc/self/exe", "/proc/self/../self/exe", "link"])
def test_execve_proc_self_exe_runs_the_guest(runner, target, tmp_path, path):
    # The guest's /proc/self/exe is the guest program: execve of it (or of a link to it)
    # runs the guest again, as the host running the same binary does; it once ran
    # padlock-emu itself ("unknown command").
    guest = runner.guest("procs", target.arch)
    if path == "link":
        path = str(tmp_path / "self")
        (tmp_path / "self").symlink_to("/proc/self/exe")
    args = ["run", path, "echo", "again"]
    native = run_native(guest, args)
    assert native.decode().splitlines()[-1] == "run_status=0"
    out = runner.run("procs", target, args).stdout
    assert out == native
