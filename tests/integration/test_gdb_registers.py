"""Which value sits in which register slot of the gdb stub (docs/debugging.md): gdb reads
the guest's registers with the `g` packet (all slots, in its register numbers' order) and
the `p` packet (one slot). The guest (tests/guest/gdb_regs.c) gives every general register
its own value at gdb_regs_site; real gdb reads them by name, by `g` and by `p`, and each
must be that register's value.

The slot order is gdb's own numbering of the i386 and amd64 core registers (gdb's
features/i386/32bit-core.xml and 64bit-core.xml: eax ecx edx ebx esp ebp esi edi eip; rax
rbx rcx rdx rsi rdi rbp rsp r8-r15 rip), which a stub must follow for a gdb that reads no
target description."""

from __future__ import annotations

import re

import pytest

from test_gdb import GDB, debug, values

pytestmark = pytest.mark.skipif(GDB is None, reason="gdb is not installed")

# Slot order -> the register's number in the x86 encoding (AX=0 ... DI=7, R8-R15 = 8-15),
# whose value the guest sets to (number + 1) * 0x01 repeated.
SLOTS = {
    "i386": [("eax", 0), ("ecx", 1), ("edx", 2), ("ebx", 3), ("esp", 4), ("ebp", 5),
             ("esi", 6), ("edi", 7)],
    "x86_64": [("rax", 0), ("rbx", 3), ("rcx", 1), ("rdx", 2), ("rsi", 6), ("rdi", 7),
               ("rbp", 5), ("rsp", 4)] + [(f"r{k}", k) for k in range(8, 16)],
}


def test_every_general_register_sits_in_its_slot(runner, target):
    program = runner.guest_dir / f"guest_gdb_regs_{target.arch}"
    slots = SLOTS[target.arch]
    width = 8 if target.arch == "x86_64" else 4
    pc = len(slots)  # the instruction pointer's slot follows the general registers
    commands = ["break *gdb_regs_site", "continue", "p/x $pc", "maint packet g"]
    commands += [f"maint packet p{n:x}" for n in range(pc + 1)]
    commands += [f"p/x ${name}" for name, _ in slots]
    commands += ["delete", "continue"]
    text, rc, out, err = debug(runner.emulator, ["--cpu", target.cpu], program, commands)
    site = int(re.search(r"^Breakpoint 1 at (0x[0-9a-f]+)", text, re.M).group(1), 16)
    assert rc == 0 and out == "done\n", (rc, out, err)

    def expected(k: int) -> int:
        return (k + 1) * int("01" * width, 16)

    def word(hex_text: str, slot: int) -> int:
        return int.from_bytes(bytes.fromhex(hex_text[2 * width * slot:2 * width * (slot + 1)]),
                              "little")

    v = values(text)
    assert int(v[1], 16) == site, text  # stopped at the site
    replies = re.findall(r'^received: "([0-9a-fx]*)"$', text, re.M)
    assert len(replies) == 1 + pc + 1, text
    g, ps = replies[0], replies[1:]
    for slot, (name, k) in enumerate(slots):
        assert word(g, slot) == expected(k), (name, slot, g[:2 * width * (pc + 1)])
        assert len(ps[slot]) == 2 * width and word(ps[slot], 0) == expected(k), (name, ps[slot])
        assert int(v[2 + slot], 16) == expected(k), (name, v[2 + slot])
    assert word(g, pc) == site and word(ps[pc], 0) == site
