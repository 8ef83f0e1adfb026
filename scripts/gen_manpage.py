#!/usr/bin/env python3
"""Writes padlock-emu's man page (section 1) from the program's own --help texts, so the
page says what the binary does: usage: gen_manpage.py PADLOCK_EMU OUTPUT.1

The top-level --help becomes DESCRIPTION and COMMANDS, `run --help` the OPTIONS; the
version comes from --version. Nothing is retyped here."""

from __future__ import annotations

import re
import subprocess
import sys


def help_text(exe: str, *args: str) -> str:
    return subprocess.run([exe, *args], capture_output=True, text=True, check=True).stdout


def roff(text: str) -> str:
    """Escapes text for roff: backslashes, leading dots and quotes, hyphens in options."""
    text = text.replace("\\", "\\e")
    lines = []
    for line in text.splitlines():
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def options_section(run_help: str) -> str:
    """`run --help`'s option list as .TP entries: a line starting "  -" opens an entry;
    an option alone on its line (its text on the next lines) keeps the text together."""
    body = run_help.split("\n\n", 2)
    text = body[1] if len(body) > 1 else run_help
    out = []
    for line in text.splitlines():
        m = re.match(r"^  (-\S.*?)(?:\s{2,}(.*))?$", line)
        if m:
            out.append(".TP\n.B " + roff(m.group(1)).replace("-", "\\-"))
            if m.group(2):
                out.append(roff(m.group(2)))
        elif line.strip() and out:
            out.append(roff(line.strip()))
    return "\n".join(out)


def main() -> int:
    exe, output = sys.argv[1], sys.argv[2]
    top = help_text(exe, "--help")
    run = help_text(exe, "run", "--help")
    version = help_text(exe, "--version").split()[1]
    usage = [ln.replace("usage:", "").strip() for ln in top.splitlines()
             if ln.startswith(("usage:", "       padlock-emu"))]
    description = top.split("\n\n")[1]
    commands = top.split("commands:\n", 1)[1] if "commands:\n" in top else ""
    trailer = run.rsplit("\n\n", 1)[1] if "\n\n" in run else ""
    page = [
        f'.TH PADLOCK-EMU 1 "" "padlock-emu {version}" "User Commands"',
        ".SH NAME",
        "padlock-emu \\- run Linux programs on an emulated VIA processor with PadLock",
        ".SH SYNOPSIS",
        *[".nf\n" + roff(u) + "\n.fi" for u in usage],
        ".SH DESCRIPTION",
        roff(" ".join(description.split())),
        ".SH COMMANDS",
        ".nf",
        roff(commands.rstrip()),
        ".fi",
        ".SH OPTIONS OF RUN",
        options_section(run),
        ".SH EXIT STATUS AND SIGNALS",
        roff(" ".join(trailer.split())),
        ".SH SEE ALSO",
        "docs/emulator.md, docs/profiling.md and docs/python.md in the padlock-emu sources;",
        "the VIA PadLock Programming Guide, v1.66.",
    ]
    with open(output, "w") as f:
        f.write("\n".join(page) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
