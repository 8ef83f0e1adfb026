"""Direct jumps chained across pages (docs/emulator.md, "Unicorn").

padlock-emu's Unicorn chains a direct jump to its target block even when the target lies
on another page, as qemu-user does, so the jump skips the target page's TLB lookup: a
change of the target page's mapping, permissions or bytes must drop its blocks and unlink
the jumps into them. guest_cross_page chains `jmp B` from page A, then maps a file over B,
unmaps and remaps it, takes its execute permission away, moves it with mremap, discards it
with madvise, and rewrites it from C and from A itself; the values and faults it prints
are what an x86 gives (and the host, running the same binary, where it can)."""

from __future__ import annotations

import signal

import pytest

from guestrun import kv, run_in_mode, run_native

ROUNDS = 200
SEGV = int(signal.SIGSEGV)
EXPECTED = {
    "remap_file": "3",
    "remap_anon": "4",
    "prot_none": f"{SEGV}:0 1",  # the fault at B's first byte; B's code again once allowed
    "noexec": f"{SEGV}:0",
    "mremap": f"{SEGV}:0 1",
    "dontneed": f"{SEGV}:0",     # B reads as zeros: `add [eax], al` with EAX = 0
    "smc_c": str(ROUNDS * (ROUNDS + 1) // 2),
    "smc_a": str(ROUNDS * (ROUNDS + 1) // 2),
}


def emulate(runner, arch, memory, timing):
    return run_in_mode(runner, "cross_page", arch, memory, timing, [ROUNDS])


@pytest.mark.parametrize("timing", ["on", "off"])
@pytest.mark.parametrize("memory", ["direct", "tlb"])
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_chained_jumps_see_page_changes(runner, arch, memory, timing):
    assert kv(emulate(runner, arch, memory, timing)) == EXPECTED


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_cross_page_matches_the_host(runner, arch):
    native = run_native(runner.guest("cross_page", arch), [str(ROUNDS)])
    assert kv(native) == EXPECTED
    assert emulate(runner, arch, "direct", "on") == native
