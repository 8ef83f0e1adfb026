"""The guest programs themselves, without padlock-emu: they are static executables of
the right machine type, and under qemu-user (which has no PadLock) every PadLock program
dies with SIGILL at its first PadLock instruction while hello runs normally. This is the
gap padlock-emu closes (docs/emulator.md), and it shows the programs really issue the
opcodes of §0 rather than computing in software."""

from __future__ import annotations

import shutil
import signal
import subprocess

import pytest

from guestrun import QEMU

PADLOCK_GUESTS = ["aes", "sha", "montmul", "xstore", "stale_key", "segv_xcrypt",
                  "ctr_errata", "nehemiah_sigill"]
ALL_GUESTS = PADLOCK_GUESTS + ["hello"]

# Arguments that get each program to its first PadLock instruction.
FIRST_INSN_ARGS = {
    "aes": ["cbc", "hw", "enc", "2b7e151628aed2a6abf7158809cf4f3c",
            "000102030405060708090a0b0c0d0e0f", "6bc1bee22e409f96e93d7e117393172a"],
    "sha": ["1", "/dev/null"],
    "montmul": ["mul", "256", "f" * 63 + "1", "2", "3"],
    "xstore": [],
    "stale_key": ["stale"],
    "segv_xcrypt": ["out", "unmap", "enc"],
    "ctr_errata": ["4"],
    "nehemiah_sigill": ["ecb"],
}

ELF_MACHINE = {"i386": 3, "x86_64": 62}  # e_machine: EM_386, EM_X86_64


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("name", ALL_GUESTS)
def test_guest_is_static_elf(guest_dir, name, arch):
    path = guest_dir / f"guest_{name}_{arch}"
    if not path.exists():
        pytest.skip(f"{path.name} not built")
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF"
    is64 = arch == "x86_64"
    assert data[4] == (2 if is64 else 1)  # ELFCLASS64 / ELFCLASS32
    u16 = lambda off: int.from_bytes(data[off:off + 2], "little")  # noqa: E731
    u32 = lambda off: int.from_bytes(data[off:off + 4], "little")  # noqa: E731
    assert u16(18) == ELF_MACHINE[arch]
    assert u16(16) == 2  # ET_EXEC: static, non-PIE (MONTMUL's 32-bit pointers, padlock.h)
    phoff = int.from_bytes(data[32:40], "little") if is64 else u32(28)
    phentsize, phnum = (u16(54), u16(56)) if is64 else (u16(42), u16(44))
    types = [u32(phoff + i * phentsize) for i in range(phnum)]
    assert 3 not in types  # no PT_INTERP: statically linked


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("name", PADLOCK_GUESTS)
def test_guest_sigill_under_qemu(guest_dir, name, arch):
    """§0: the opcodes are 0F A6/0F A7, which qemu-user does not know."""
    qemu = shutil.which(QEMU[arch])
    path = guest_dir / f"guest_{name}_{arch}"
    if not qemu or not path.exists():
        pytest.skip("qemu-user or the guest is missing")
    proc = subprocess.run([qemu, str(path)] + FIRST_INSN_ARGS[name], capture_output=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGILL, proc.stderr


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_hello_runs_under_qemu(guest_dir, arch):
    qemu = shutil.which(QEMU[arch])
    path = guest_dir / f"guest_hello_{arch}"
    if not qemu or not path.exists():
        pytest.skip("qemu-user or the guest is missing")
    proc = subprocess.run([qemu, str(path), "--exit", "3"], capture_output=True, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout == b"hello, world\n"
