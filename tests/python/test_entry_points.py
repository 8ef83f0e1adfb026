"""One execution core for every entry point (docs/architecture.md): the same PadLock
instruction, on the same registers and the same memory layout, gives identical cycles,
registers and memory through the CLI (``padlock-emu run``), the function harness
(``padlock_emu.Machine``) and the direct model API (``padlock_emu.Model``).

tests/guest/entry_points.c holds the instructions: every operand in one arena, so the
harness can load the same ELF and call its cases, and the direct model can replay each
instruction on a copy of the arena. Both the harness and the direct model run with
``timing=True``, the CLI's ``--timing on`` charge (the cache model's stalls and the §3.3
overlap); ``--irq-hz 0`` keeps interrupts out (the harness places none either). The cases
cover the five ACE modes, the stale key of §1.8, ALIGN, DGEST, both PHE hashes and
MONTMUL; XSTORE is left out because its result depends on when it runs (§2.3), and the
x86 code between instructions costs differently in the CLI (block costs) and the
harness (one cycle per instruction)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import padlock_emu as pe

TARGETS = [("i386", "esther-c5j", 32), ("x86_64", "nano", 64)]
FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def _build_dir() -> Path:
    d = os.environ.get("PADLOCK_BUILD_DIR")
    if not d:
        pytest.skip("set PADLOCK_BUILD_DIR (the guests and padlock-emu of a build)")
    return Path(d)


def _guest(arch: str) -> Path:
    gd = os.environ.get("PADLOCK_GUEST_DIR") or str(_build_dir() / "tests" / "guest")
    path = Path(gd) / f"guest_entry_points_{arch}"
    if not path.is_file():
        pytest.skip(f"{path} not built")
    return path


def _emulator() -> Path:
    e = os.environ.get("PADLOCK_EMU_BIN") or str(_build_dir() / "emulator" / "padlock-emu")
    if not Path(e).is_file():
        pytest.skip(f"{e} not built")
    return Path(e)


def cli_trace(arch: str, cpu: str, tmp_path: Path) -> list[dict]:
    trace = tmp_path / f"{arch}.jsonl"
    r = subprocess.run([str(_emulator()), "run", "--cpu", cpu, "--irq-hz", "0", "--trace",
                        str(trace), str(_guest(arch))], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    return [x for x in lines if x["type"] == "insn"]


def harness_run(arch: str, cpu: str, bits: int):
    """Calls ep_init and every ep_case; records, around each PadLock instruction, the
    registers, EFLAGS[30], the instruction bytes and the whole arena before and after."""
    m = pe.Machine(cpu, bits=bits, timing=True)
    m.load(_guest(arch))
    arena = m.symbol("ep_arena")
    size = m.read_u32(m.symbol("ep_arena_bytes"))
    records: list[dict] = []

    def before(mach, ev):
        records.append({"pc": ev.pc, "regs": dict(ev.regs), "eflags30": ev.eflags30,
                        "insn": mach.read(ev.pc, ev.decoded.length),
                        "arena": mach.read(arena, size)})

    def after(mach, ev):
        records[-1].update(outcome=ev.outcome, regs_after=dict(ev.regs_after),
                           eflags30_after=ev.eflags30_after, arena_after=mach.read(arena, size))

    m.hook_padlock(before, after)
    m.call("ep_init", ret="void")
    for k in range(m.read_u32(m.symbol("ep_cases"))):
        m.call("ep_case", k, ret="void")
    return m, arena, size, records


# The static guest's IFUNC slots (glibc's string functions) stay unresolved in the harness;
# the cases never call them.
@pytest.mark.filterwarnings("ignore:.*R_(386|X86_64)_IRELATIVE")
@pytest.mark.parametrize("arch,cpu,bits", TARGETS, ids=[t[1] for t in TARGETS])
def test_cli_harness_and_direct_api_agree(arch, cpu, bits, tmp_path):
    m, arena, size, recs = harness_run(arch, cpu, bits)
    cli = cli_trace(arch, cpu, tmp_path)
    assert len(cli) == len(recs) == 13  # 12 cases, case 10 holds two instructions

    model = pe.Model(cpu, bits=bits, timing=True)
    plain = pe.Model(cpu, bits=bits)  # the units' clocks alone
    page = pe._core.PAGE_SIZE
    for md in (model, plain):
        md.map(arena, (size + page - 1) // page * page, pe._core.Perm.RW)
    stale_seen = memory_seen = False
    for i, (rec, line) in enumerate(zip(recs, cli)):
        o = rec["outcome"]
        where = f"instruction {i} ({line['insn']})"
        # The CLI and the harness.
        assert line["pc"] and int(line["pc"], 16) == rec["pc"], where
        assert (line["cycles"], line["int_cycles"]) == (o.cycles, o.int_cycles), where
        assert line["key_reloaded"] == o.key_reloaded, where
        assert line["eflags30_in"] == rec["eflags30"], where
        for reg, value in line["out"].items():
            assert int(value, 16) == rec["regs_after"][reg], f"{where}: {reg}"
        res = line["result"]
        if res is not None:
            off = int(res["addr"], 16) - arena
            data = rec["arena_after"][off:off + res["len"]]
            assert fnv1a64(data) == int(res["fnv1a64"], 16), f"{where}: result"

        # The harness and the direct model API, from the same registers and memory.
        gprs = model.regs().keys()
        for md in (model, plain):
            md.write(arena, rec["arena"])
            for reg in gprs:
                md[reg] = rec["regs"][reg]
            md.eflags30 = rec["eflags30"]
        x = model.execute_bytes(rec["insn"])
        memory_seen |= plain.execute_bytes(rec["insn"]).outcome.cycles != o.cycles
        assert (x.outcome.cycles, x.outcome.int_cycles) == (o.cycles, o.int_cycles), where
        assert x.outcome.status == o.status and x.outcome.bytes == o.bytes, where
        assert model.regs() == {r: rec["regs_after"][r] for r in gprs}, where
        assert model.eflags30 == rec["eflags30_after"], where
        assert model.read(arena, size) == rec["arena_after"], where
        stale_seen |= "cw" in line and line["cw"]["source"] == "cached"

    # The set exercises what differs between the entry points: the stale key (§1.8) and the
    # cache model's charge on large streams.
    assert stale_seen
    assert memory_seen


def test_timing_off_gives_the_units_clocks():
    """Model(timing=False), the default, charges the guide's table: REP XCRYPTECB of one
    block with a hardware key is 45 + 2R = 65 SSE clocks at R = 10 (§3.3); timing=True adds
    the cache model's cost of the cold lines it touches."""
    plain, timed = pe.Model("esther"), pe.Model("esther", timing=True)
    for m in (plain, timed):
        buf = m.alloc(64)
        key = m.alloc(16)
        cw = m.alloc(16, data=(10).to_bytes(16, "little"))
        m.step(pe.InsnId.XcryptEcb, esi=buf, edi=buf + 32, ebx=key, edx=cw, ecx=1)
    assert plain.now == 65
    assert timed.now > 65
