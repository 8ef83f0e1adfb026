"""REP MOVS and REP STOS that fault part-way (docs/timing.md, "REP string instructions").

padlock-emu runs them whole, as a loop inside their translated block (our Unicorn patch,
UC_CTL_REP_STRING), charged once before the loop. A fault in the loop must leave what an
x86 leaves: ECX counting the elements not done, ESI and EDI at the element that faulted,
si_addr its address; the handler makes the page accessible and the instruction finishes
from there. tests/guest/rep_fault.c prints those for four forms, both directions, the
source or the destination faulting; the host, running the same binary, is the reference."""

from __future__ import annotations

import pytest

from guestrun import records, run_in_mode, run_native

# 100 elements starting 40 bytes from the boundary: 40 bytes are done before the fault.
DONE = {"movsb": 40, "stosb": 40, "movsl": 10, "stosl": 10}


def emulate(runner, arch, memory, timing):
    return run_in_mode(runner, "rep_fault", arch, memory, timing, timeout=120)


@pytest.mark.parametrize("timing", ["on", "off"])
@pytest.mark.parametrize("memory", ["direct", "tlb"])
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_fault_inside_rep_movs_and_stos(runner, arch, memory, timing):
    rows = records(emulate(runner, arch, memory, timing), "fault")
    assert len(rows) == 12
    for r in rows:
        assert r["faults"] == "1", r
        assert int(r["ecx"]) == 100 - DONE[r["insn"]], r
        # The faulting element's address: the page boundary (4096 from the area), or the
        # last element below it going down.
        size = 4 if r["insn"].endswith("l") else 1
        assert int(r["addr"]) == (4096 if r["dir"] == "up" else 4096 - size), r
        faulted = r["edi"] if r["side"] == "dst" else r["esi"]
        assert int(faulted) == int(r["addr"]), r


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_rep_fault_matches_the_host(runner, arch):
    native = run_native(runner.guest("rep_fault", arch), [])
    assert emulate(runner, arch, "direct", "on") == native
    assert emulate(runner, arch, "tlb", "off") == native
