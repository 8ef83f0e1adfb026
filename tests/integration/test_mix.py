"""--mix FILE (docs/debugging.md): executed instructions by opcode, in total and per
function, counted from per-block counts (Unicorn's block log, or the block hook under
--stats) and from the PadLock instructions that completed."""

from __future__ import annotations

import re
import subprocess

import pytest


def parse(text):
    """{section: {opcode: count}}; the global section is '$global'."""
    sections, cur = {}, None
    for line in text.splitlines():
        if line.startswith("$global-dynamic-counts"):
            cur = sections.setdefault("$global", {})
        elif line.startswith("$dynamic-counts-for-function: "):
            cur = sections.setdefault(line.split(": ", 1)[1].split(" [")[0], {})
        elif line and not line.startswith("#") and cur is not None:
            op, n = line.rsplit(None, 1)
            cur[op] = int(n)
    return sections


def run_mix(runner, target, tmp_path, *extra):
    out = tmp_path / f"mix-{len(extra)}.txt"
    p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, "--mix", str(out),
                        *extra, str(runner.guest("gdb_xcrypt", target.arch))],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return parse(out.read_text()), p.stderr


def test_mix_counts_every_executed_instruction(runner, target, tmp_path):
    logged, _ = run_mix(runner, target, tmp_path)
    hooked, err = run_mix(runner, target, tmp_path, "--stats")
    counted = int(re.search(r"instructions counted (\d+)", err).group(1))
    g = logged["$global"]
    # The x86 instructions are those --stats counts block by block; the one PadLock
    # instruction is counted by the guide's name.
    assert g["*total"] == counted + 1 and g["*padlock"] == 1
    assert g["REP XCRYPTECB"] == 1
    assert sum(n for op, n in g.items() if not op.startswith("*")) == g["*total"]
    # Both ways of counting blocks (the block log, the hook) agree.
    assert hooked == logged
    # Per function: encrypt_blocks holds the REP XCRYPTECB and ends with one RET.
    f = logged["encrypt_blocks"]
    assert f["REP XCRYPTECB"] == 1 and f["RET"] == 1 and f["*padlock"] == 1
    assert sum(s["*total"] for name, s in logged.items() if name != "$global") == g["*total"]


def test_mix_names_repeated_string_instructions(runner, target, tmp_path):
    """glibc's start-up clears memory with REP STOS: one count per element, REP_ prefixed."""
    logged, _ = run_mix(runner, target, tmp_path)
    assert any(op.startswith("REP_STOS") for op in logged["$global"]), logged["$global"]


def test_mix_unwritable_file_is_one_line(runner, tmp_path):
    bad = tmp_path / "missing" / "mix.txt"
    p = subprocess.run([str(runner.emulator), "run", "--mix", str(bad),
                        str(runner.guest("hello", "i386"))], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 1
    assert p.stderr == (f"padlock-emu: cannot write the instruction mix '{bad}': "
                        "No such file or directory\n")


@pytest.mark.parametrize("timing", ["on", "off"])
def test_counters_block_log_and_hook_agree(runner, target, tmp_path, timing):
    """--mix alone counts blocks in generated code (Unicorn's UC_CTL_BLOCK_COUNT); with
    --profile beside it, from the block log; with --stats, in the block hook. The three
    histograms are the same, with the timing model on and off."""
    extra = ["--timing", timing]
    counted, _ = run_mix(runner, target, tmp_path, *extra)
    logged, _ = run_mix(runner, target, tmp_path, *extra, "--profile", str(tmp_path / "p.out"))
    hooked, err = run_mix(runner, target, tmp_path, *extra, "--stats", "--profile",
                          str(tmp_path / "p2.out"))
    assert counted == logged == hooked
    assert counted["$global"]["*total"] == int(re.search(r"instructions counted (\d+)", err).group(1)) + 1


def test_a_forked_child_counts_its_own_blocks(runner, target, tmp_path):
    """A forked child writes FILE.PID with the blocks it ran after the fork: the same with
    generated-code counters (--mix alone) as with the block hook (--stats)."""
    def mixes(*extra):
        d = tmp_path / f"run{len(extra)}"
        d.mkdir()
        p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, "--mix",
                            str(d / "m.txt"), *extra, str(runner.guest("procs", target.arch)),
                            "fork"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        files = sorted(d.iterdir())
        assert files[0].name == "m.txt" and len(files) >= 2
        children = sorted((parse(f.read_text()) for f in files[1:]),
                          key=lambda s: s["$global"]["*total"])
        return parse(files[0].read_text()), children, p.stderr

    parent, children, _ = mixes()
    parent_h, children_h, err = mixes("--stats")
    assert (parent, children) == (parent_h, children_h)
    counted = sorted(int(n) for n in re.findall(r"instructions counted (\d+)", err))
    totals = sorted(m["$global"]["*total"] - m["$global"]["*padlock"] for m in [parent, *children])
    assert totals == counted
