"""--profile: a callgrind-format profile of a guest (docs/profiling.md). The tools users
already have read it: callgrind_annotate (valgrind) must accept it without a warning and
attribute the PadLock cycles to the function that issues the instruction. Which function
that is comes from binutils (objdump finds the opcode bytes in the guest binary), the
cycles and bytes from the --trace of the same run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tracerun import run_with

# "  1,234 (12.5%)  3 (100.0%)  ???:main [/path/obj]" with --show=PLCyc,PLBytes,PLReload
ROW = re.compile(r"^\s*((?:[\d,]+(?:\s+\([\d.]+%\))?|\.)\s+){3}"
                 r"(?P<file>[^\s:]+):(?P<fn>.+?) \[(?P<ob>.+)\]$")
NUM = re.compile(r"([\d,]+)(?:\s+\([\d.]+%\))?|\.")


def require_tool(name: str, package: str) -> str:
    """The tool's path; without it the test skips, or fails where the tools must be there
    (PADLOCK_REQUIRE_TOOLS=1: scripts/test.sh, after setup.sh installed them)."""
    exe = shutil.which(name)
    if exe is None:
        why = f"{name} ({package}) is not installed"
        if os.environ.get("PADLOCK_REQUIRE_TOOLS") == "1":
            pytest.fail(why + " (scripts/setup.sh installs it)")
        pytest.skip(why)
    return exe


def annotate(profile: Path, *opts: str) -> tuple[str, str]:
    exe = require_tool("callgrind_annotate", "valgrind")
    proc = subprocess.run([exe, *opts, str(profile)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def function_rows(text: str) -> dict[str, tuple[int, int, int]]:
    """fn -> (PLCyc, PLBytes, PLReload) from a --show=PLCyc,PLBytes,PLReload table."""
    rows = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        values = [0 if v.group(0) == "." else int(v.group(1).replace(",", ""))
                  for v in NUM.finditer(line[:m.start("file")])]
        rows[m["fn"]] = tuple(values[:3])
    return rows


def issuing_function(binary: Path, opcode: str) -> str:
    """The symbol whose code holds `opcode` (objdump -d's bytes column, e.g. 'f3 0f a6 d0')."""
    exe = require_tool("objdump", "binutils")
    text = subprocess.run([exe, "-d", str(binary)], capture_output=True, text=True,
                          check=True).stdout
    current, found = None, set()
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            current = m[1]
        elif f"\t{opcode} " in line + " " and current is not None:
            found.add(current)
    assert len(found) == 1, f"{opcode} in {sorted(found)}"
    return found.pop()


def trace_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()
            if json.loads(line)["type"] == "insn"]


def test_xsha_cycles_go_to_the_issuing_function(runner, target, tmp_path):
    """callgrind_annotate reads the profile of guest_sha and puts
    every REP XSHA256 cycle and byte on the function holding the instruction (§4.1)."""
    files = {"a.bin": b"abc", "b.bin": bytes(range(256)) * 40, "c.bin": b"x" * 100003}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    profile, trace = tmp_path / "p.out", tmp_path / "t.jsonl"
    run_with(runner, "sha", target, ["256", *files], ["--profile", profile, "--trace", trace],
             cwd=tmp_path)
    recs = trace_records(trace)
    assert len(recs) == len(files)
    pl_cycles = sum(r["cycles"] for r in recs)
    assert sum(r["bytes"] for r in recs) == sum(len(d) for d in files.values())

    out, err = annotate(profile, "--show=PLCyc,PLBytes,PLReload")
    assert err == "", err  # no warnings
    rows = function_rows(out)
    fn = issuing_function(runner.guest("sha", target.arch), "f3 0f a6 d0")
    assert fn in rows, out
    assert rows[fn][:2] == (pl_cycles, sum(len(d) for d in files.values()))
    others = {k: v for k, v in rows.items() if k != fn and v[0]}
    assert others == {}, f"PadLock cycles outside {fn}: {others}"
    assert {r["fn"] for r in recs} == {fn}  # the trace names the same function


def test_inclusive_costs_reach_the_callers(runner, target, tmp_path):
    """Call edges carry inclusive costs: with --inclusive=yes the C library's caller of
    main has all the PadLock cycles too, and --tree=caller shows who called whom."""
    (tmp_path / "m").write_bytes(b"y" * 5000)
    profile, trace = tmp_path / "p.out", tmp_path / "t.jsonl"
    run_with(runner, "sha", target, ["1", "m"], ["--profile", profile, "--trace", trace],
             cwd=tmp_path)
    pl_cycles = sum(r["cycles"] for r in trace_records(trace))
    out, err = annotate(profile, "--inclusive=yes", "--show=PLCyc,PLBytes,PLReload")
    assert err == ""
    rows = function_rows(out)
    assert rows["main"][0] == pl_cycles
    callers = [f for f, v in rows.items() if f != "main" and v[0] == pl_cycles]
    assert callers, f"no caller of main carries the inclusive PadLock cycles: {rows}"
    tree, err = annotate(profile, "--tree=caller")
    assert err == ""
    assert re.search(r"< \?\?\?:\S+ \(1x\) \[.*\]\n.*\*  \?\?\?:main \[", tree), tree


def test_key_reloads_per_function(runner, target, tmp_path):
    """The ACE key reloads (§1.8) of a split CBC run with a round trip: one per direction,
    counted in PLReload at the function issuing REP XCRYPTCBC, as in the trace."""
    key, iv = "2b7e151628aed2a6abf7158809cf4f3c", "000102030405060708090a0b0c0d0e0f"
    plain = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
    profile, trace = tmp_path / "p.out", tmp_path / "t.jsonl"
    run_with(runner, "aes", target,
             ["cbc", "hw", "enc", key, iv, plain, "--split", "1", "--roundtrip"],
             ["--profile", profile, "--trace", trace])
    recs = trace_records(trace)
    reloads = sum(r["key_reloaded"] for r in recs)
    assert reloads == 2
    out, err = annotate(profile, "--show=PLCyc,PLBytes,PLReload")
    assert err == ""
    fn = issuing_function(runner.guest("aes", target.arch), "f3 0f a7 d0")
    assert function_rows(out)[fn] == (sum(r["cycles"] for r in recs),
                                      sum(r["bytes"] for r in recs), reloads)


def test_profile_totals_match_the_clock(runner, target, tmp_path):
    """The summary's Cyc is the virtual time at exit (the trace's end record), and Ir the
    guest instructions counted (--profile implies --icount)."""
    profile, trace = tmp_path / "p.out", tmp_path / "t.jsonl"
    run_with(runner, "demo", target, [], ["--profile", profile, "--trace", trace])
    end = json.loads(trace.read_text().splitlines()[-1])
    text = profile.read_text()
    summary = [int(v) for v in re.search(r"^summary: (.*)$", text, re.M)[1].split()]
    totals = [int(v) for v in re.search(r"^totals: (.*)$", text, re.M)[1].split()]
    assert summary == totals
    assert summary[0] == end["cycle"]
    assert summary[2] == end["instructions"]
    assert summary[3] == end["padlock_cycles"]
    assert summary[1] > 10000  # guest instructions, counted from the first block


def test_profile_does_not_change_the_run(runner, target, tmp_path):
    """With the timing model on (the default) the block hook runs anyway: profiling
    changes neither the guest's output nor a single field of its trace."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    plain = run_with(runner, "demo", target, [], ["--trace", a]).stdout
    profiled = run_with(runner, "demo", target, [],
                        ["--trace", b, "--profile", tmp_path / "p", "--chrome-trace",
                         tmp_path / "c"]).stdout
    assert plain == profiled
    assert a.read_bytes() == b.read_bytes()


def test_shared_objects_get_their_symbols(emulator_path, tmp_path):
    """A dynamically linked x86-64 program: the profile names the program, ld.so and the
    C library as objects (ob=), with main in the program."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not installed")
    src = tmp_path / "dyn.c"
    src.write_text('#include <stdio.h>\n#include <string.h>\n'
                   'int main(int c, char **v) { printf("%zu\\n", strlen(v[0]) + c); return 0; }\n')
    exe = tmp_path / "dyn"
    subprocess.run([gcc, "-O2", "-o", str(exe), str(src)], check=True)
    profile = tmp_path / "p.out"
    proc = subprocess.run([str(emulator_path), "run", "--cpu", "nano", "--profile", str(profile),
                           str(exe)], capture_output=True, text=True)
    if "statically linked programs only" in proc.stderr:
        pytest.skip("this padlock-emu cannot load dynamically linked programs")
    assert proc.returncode == 0, proc.stderr
    objects = set(re.findall(r"^c?ob=(.*)$", profile.read_text(), re.M))
    names = {Path(o).name for o in objects}
    assert "dyn" in names
    assert any(n.startswith("libc.so") for n in names), objects
    assert any(n.startswith("ld-linux") for n in names), objects
    out, err = annotate(profile, "--threshold=100")
    assert err == ""
    assert re.search(r"\?\?\?:main \[.*/dyn\]", out), out


@pytest.mark.parametrize("timing", ["on", "off"])
def test_block_log_profile_equals_hooked_profile(runner, target, tmp_path, timing):
    """A plain --profile run sees blocks through Unicorn's block log, replayed in batches
    (docs/emulator.md, "Unicorn"); --icount makes the hook run on every block instead.
    Both must give the same profile, event for event: same blocks, same cycles (the
    batches are replayed with the times the hook would have seen) and same call edges."""
    def profile(*extra: str) -> list[str]:
        out = tmp_path / f"p{len(extra)}.out"
        run_with(runner, "demo", target, [], ["--timing", timing, *extra, "--profile", out])
        return [line for line in out.read_text().splitlines()
                if not line.startswith(("cmd:", "creator:", "#"))]
    logged, hooked = profile(), profile("--icount")
    assert any(line.startswith("calls=") for line in logged)
    assert logged == hooked


PC_IDIOM = r"""
#include <stdio.h>
__attribute__((noinline)) static unsigned long where(void) {
  unsigned long pc;
  __asm__ volatile("call 1f\n1: pop %0" : "=r"(pc));  /* the PIC idiom: call next; pop */
  return pc;
}
__attribute__((noinline)) static int leaf(int x) { return x * 3 + 1; }
int main(void) {
  unsigned long sum = 0;
  for (int i = 0; i < 10; ++i) sum += where() + leaf(i);
  printf("%lu\n", sum & 1);
  return 0;
}
"""


@pytest.mark.parametrize("arch,cpu,flag", [("i386", "esther", "-m32"), ("x86_64", "nano", "-m64")])
def test_call_next_pop_is_not_a_call(emulator_path, tmp_path, arch, cpu, flag):
    """`call next; pop` reads the PC; nothing returns from it, so it is no call edge
    (it showed as a function calling itself), while a real call still is one."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not installed")
    src, exe = tmp_path / "pc.c", tmp_path / f"pc_{arch}"
    src.write_text(PC_IDIOM)
    r = subprocess.run([gcc, flag, "-O1", "-static", "-o", str(exe), str(src)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"gcc {flag} -static failed: {r.stderr[:200]}")
    profile = tmp_path / "p.out"
    p = subprocess.run([str(emulator_path), "run", "--cpu", cpu, "--profile", str(profile),
                        str(exe)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    edges, fn = {}, None
    lines = profile.read_text().splitlines()
    for k, line in enumerate(lines):
        if line.startswith("fn="):
            fn = line[3:]
        elif line.startswith("cfn="):
            calls = int(lines[k + 1].split("=")[1].split()[0])
            edges[(fn, line[4:])] = edges.get((fn, line[4:]), 0) + calls
    assert edges.get(("main", "leaf")) == 10
    assert edges.get(("main", "where")) == 10
    assert ("where", "where") not in edges, edges
