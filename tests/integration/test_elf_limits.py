"""Program header tables Linux refuses (docs/reliability.md, "No host crash by design"):
fs/binfmt_elf.c's load_elf_phdrs fails with ENOEXEC unless e_phentsize is the size of an
Elf32_Phdr / Elf64_Phdr and the table holds 1 to 65,536 bytes. The host running each
file is the reference: the same file is run directly, under padlock-emu, and by a
guest's execve."""

from __future__ import annotations

import errno
import struct
import subprocess

import pytest

from elfcraft import PF_R, PF_X, PT_LOAD, Elf, Segment, exit_code

BASE = {32: 0x08048000, 64: 0x400000}
ENTRY_SIZE = {32: 32, 64: 56}
CODE_OFF = 0x11000  # past any accepted table (64 + 65,536 bytes)


def program(bits: int, count: int, phentsize: int | None = None) -> bytes:
    """A static program that exits 42, with `count` program headers: its PT_LOAD, then
    PT_NULL entries; `phentsize` overrides e_phentsize."""
    base = BASE[bits]
    image = bytearray(CODE_OFF) + exit_code(bits, 42)
    segs = [Segment(PT_LOAD, base, 0, bytes(image), flags=PF_R | PF_X)]
    segs += [Segment(0, 0, 0, flags=0, align=0) for _ in range(count - 1)]
    data = bytearray(Elf(bits=bits, entry=base + CODE_OFF, segments=segs).build())
    # A refused table may reach past the code: put it back (such a file never runs).
    data[CODE_OFF:CODE_OFF + len(exit_code(bits, 42))] = exit_code(bits, 42)
    if phentsize is not None:
        struct.pack_into("<H", data, 54 if bits == 64 else 42, phentsize)
    return bytes(data)


def most(bits: int) -> int:
    return 65536 // ENTRY_SIZE[bits]


CASES = [
    # (id, bits, count, phentsize, accepted)
    ("32-most", 32, most(32), None, True),
    ("32-one-more", 32, most(32) + 1, None, False),
    ("32-65535", 32, 65535, None, False),
    ("32-phentsize-1000", 32, 1, 1000, False),
    ("32-phentsize-56", 32, 1, 56, False),
    ("64-most", 64, most(64), None, True),
    ("64-one-more", 64, most(64) + 1, None, False),
    ("64-65535", 64, 65535, None, False),
    ("64-phentsize-1000", 64, 1, 1000, False),
    ("64-phentsize-64", 64, 1, 64, False),
]


def native_status(path) -> int:
    try:
        return subprocess.run([str(path)], timeout=60).returncode
    except OSError as e:
        return -e.errno


@pytest.mark.parametrize("bits,count,phentsize,accepted",
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_program_header_table_as_linux(runner, tmp_path, bits, count, phentsize, accepted):
    path = tmp_path / "prog"
    path.write_bytes(program(bits, count, phentsize))
    path.chmod(0o755)
    native = native_status(path)
    if bits == 32 and native == -errno.ENOEXEC and accepted:
        pytest.skip("the host kernel runs no i386 programs")
    assert native == (42 if accepted else -errno.ENOEXEC)

    proc = subprocess.run([str(runner.emulator), "run", "--cpu", "nano", str(path)],
                          capture_output=True, text=True, timeout=60)
    if accepted:
        assert proc.returncode == 42, proc.stderr
    else:
        assert proc.returncode == 1, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "program header" in lines[0], proc.stderr

    # A guest's execve: ENOEXEC before the point of no return, as on the host.
    procs = runner.guest("procs", "x86_64")
    if not procs.is_file():
        pytest.skip("no x86_64 guests")
    want = "run_status=42\n" if accepted else "execv failed: 8\nrun_status=127\n"
    on_host = subprocess.run([str(procs), "run", str(path)], capture_output=True, text=True,
                             timeout=60)
    assert on_host.stdout == want
    guest = subprocess.run([str(runner.emulator), "run", "--cpu", "nano", str(procs), "run",
                            str(path)], capture_output=True, text=True, timeout=60)
    assert guest.stdout == want, guest.stderr
