#!/usr/bin/env python3
"""Writes docs/fidelity.md: the index of the fidelity notes and the table of every case the
guide leaves undefined, with our choice and the tests that check it.

The table comes from the C++ diagnostics table (through padlock_emu._core) and a scan of
tests/ for each Diag's name, so it cannot drift from the code: tests/python/test_docs.py
fails when the committed file differs from what this script writes.

Usage: scripts/gen_fidelity.py [--check]   (PADLOCK_BUILD_DIR selects the build tree)
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "fidelity.md"

AREAS = [
    ("rng.md", "RNG: XSTORE, REP XSTORE, MSR 0x110B (§1.4, §2)"),
    ("ace.md", "ACE/ACE2: REP XCRYPT, key cache, CTR erratum (§1.7, §1.8, §3, §6.6)"),
    ("phe.md", "PHE: REP XSHA1/XSHA256 (§4)"),
    ("pmm.md", "PMM: REP MONTMUL (§5)"),
    ("phe2.md", "PHE2: REP XSHA384/XSHA512 of the late Nano and Zhaoxin"),
    ("gmi.md", "GMI: SM3, SM4, SM2 verify, and the instructions with no public semantics"),
    ("emulator.md", "Emulator: EFLAGS[30], faults and signals, system calls (§1.2, §1.3, §1.8)"),
    ("guests.md", "Guest programs: the rules checked end to end under the emulator"),
    ("clients.md", "The undefined-case choices checked against real clients' code (Linux, "
     "OpenSSL, GnuTLS, libgcrypt, mbed TLS)"),
]


def load_core():
    build = os.environ.get("PADLOCK_BUILD_DIR")
    if build:
        sys.path.insert(0, str(Path(build) / "python"))
    import padlock_emu._core as core  # noqa: E402

    return core


def enum_names() -> list[str]:
    """C++ enumerator names of Diag, in declaration order."""
    text = (ROOT / "models" / "diagnostics.hpp").read_text()
    start = text.index("enum class Diag")
    end = re.compile(r"^\s*Count\b", re.M).search(text, start).start()
    return re.findall(r"^\s*(\w+),", text[start:end], re.M)


def tests_naming(enumerator: str, trace_name: str) -> list[str]:
    hits = []
    pat = re.compile(rf"\bDiag::{enumerator}\b|\b{re.escape(trace_name)}\b|\b{trace_name.replace('-', '_')}\b")
    for path in sorted((ROOT / "tests").rglob("*")):
        if path.suffix not in (".cpp", ".py") or not path.is_file():
            continue
        if pat.search(path.read_text(errors="replace")):
            hits.append(str(path.relative_to(ROOT)))
    return hits


def render(core) -> str:
    infos = core.diagnostics()
    names = enum_names()
    if len(names) != len(infos):
        raise SystemExit(f"models/diagnostics.hpp lists {len(names)} Diags, the table {len(infos)}")
    lines = [
        "# Fidelity notes",
        "",
        "<!-- Written by scripts/gen_fidelity.py; edit the per-area notes or the diagnostics",
        "     table in models/diagnostics.cpp, then run the script. -->",
        "",
        "How padlock-emu follows the VIA PadLock Programming Guide, v1.66.",
        "Every rule the models implement is listed, with its guide section and the test that checks",
        "it, in the per-area notes:",
        "",
    ]
    for file, title in AREAS:
        lines.append(f"- [{title}](fidelity/{file})")
    lines += [
        "",
        "## Cases the guide leaves undefined",
        "",
        "Each has one deterministic behaviour. When a program hits one, the models report it",
        "through the diagnostics channel: the emulator prints `padlock-emu: diagnostic: NAME at",
        "ADDRESS: CHOICE` once per case and address (undefined *output fields* of a normal use are",
        "only counted in `--stats`), and traces record it.",
        "",
        "| diagnostic | guide | our behaviour | shown | tests |",
        "|---|---|---|---|---|",
    ]
    for enumerator, info in zip(names, infos):
        tests = tests_naming(enumerator, info.name)
        tests_cell = "<br>".join(f"`{t}`" for t in tests) if tests else "**none**"
        shown = "yes" if getattr(info, "shown", True) else "counted only"
        lines.append(
            f"| `{info.name}` | {info.section} | {info.choice} | {shown} | {tests_cell} |"
        )
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    text = render(load_core())
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print("docs/fidelity.md is out of date: run scripts/gen_fidelity.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
