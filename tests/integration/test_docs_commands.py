"""The shell sessions in README.md and docs/ (a "$ command" line followed by its output):
every one that can run here runs, and prints what the page shows, so the pages cannot go
stale. tests/python/test_python_docs.py does the same for docs/python.md.

Matching: the shown lines must appear in order; a line "..." stands for any number of
lines, and "..." or "[...]" inside a line for any text. A leading process id (strace)
matches any number. The sessions run in a fixed, short environment. Sessions that need what this machine may lack (an i386 sysroot,
callgrind_annotate, jq) are skipped with the reason; sessions on made-up files (./prog)
are not sessions of this kind and are listed in NOT_RUN with why."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/emulator.md", "docs/profiling.md"]

# Commands shown for illustration on files that do not exist, and long or environment-
# dependent runs (a benchmark's wall times), by their first characters.
NOT_RUN = {
    "padlock-emu run --cpu pentium ./prog": "usage example on a made-up program",
    "padlock-emu run ./script.sh": "made-up file",
    "padlock-emu run ./hello64": "made-up file",
    "padlock-emu run ./dyn32": "needs a host without i386 libraries",
    "bash scripts/": "sets up the machine",
    "REPEAT=5 bench/": "a benchmark: wall times vary",
    "padlock-emu run --cpu esther -L .sysroot-i386 /usr/bin/openssl enc":
        "writes to made-up files",
}

TOOLS = ("padlock-emu", "callgrind_annotate", "jq", "echo", "kcachegrind")


def sessions():
    out = []
    for page in PAGES:
        text = (ROOT / page).read_text()
        for block in re.finditer(r"```[a-z]*\n(.*?)```", text, re.S):
            lines = block.group(1).splitlines()
            first = text.count("\n", 0, block.start()) + 2
            i = 0
            while i < len(lines):
                if not lines[i].startswith("$ "):
                    i += 1
                    continue
                start = i
                cmd = lines[i][2:]
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd[:-1] + " " + lines[i].strip()
                i += 1
                expected = []
                while i < len(lines) and not lines[i].startswith("$ "):
                    expected.append(lines[i])
                    i += 1
                out.append(pytest.param(page, cmd, expected,
                                        id=f"{page}:{first + start}"))
    return out


def line_pattern(line: str) -> re.Pattern:
    parts = re.split(r"\[\.\.\.\]|\.\.\.", line.rstrip())
    body = ".*".join(re.escape(p) for p in parts)
    return re.compile(r"(?:\d+ )?" + body if re.match(r"\d+ ", line) is None else
                      r"\d+ " + ".*".join(re.escape(p) for p in
                                          re.split(r"\[\.\.\.\]|\.\.\.",
                                                   re.sub(r"^\d+ ", "", line.rstrip()))))


def matches(expected: list[str], actual: list[str]) -> str | None:
    """None when `actual` shows `expected`, else what is missing."""
    pos, skip = 0, False
    for line in expected:
        if line.strip() == "...":
            skip = True
            continue
        pat = line_pattern(line)
        while pos < len(actual) and not pat.fullmatch(actual[pos].rstrip()):
            if not skip:
                return f"expected {line!r}, got {actual[pos]!r}"
            pos += 1
        if pos == len(actual):
            return f"missing {line!r}"
        pos += 1
        skip = False
    return None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, emulator_path, guest_dir):
    d = tmp_path_factory.mktemp("docs")
    (d / "abc.txt").write_text("abc")
    (d / "zeros.bin").write_bytes(bytes(100000))
    (d / "build" / "tests").mkdir(parents=True)
    (d / "build" / "tests" / "guest").symlink_to(guest_dir.resolve())
    (d / "bin").mkdir()
    (d / "bin" / "padlock-emu").symlink_to(emulator_path.resolve())
    sysroot = os.environ.get("PADLOCK_SYSROOT_I386") or str(ROOT / ".sysroot-i386")
    if Path(sysroot).is_dir():
        (d / ".sysroot-i386").symlink_to(Path(sysroot).resolve())
    return d


@pytest.mark.parametrize("page,cmd,expected", sessions())
def test_session_prints_what_the_page_shows(workdir, page, cmd, expected):
    for prefix, why in NOT_RUN.items():
        if cmd.startswith(prefix):
            pytest.skip(why)
    tool = cmd.split()[0]
    assert tool in TOOLS or "=" in tool, f"{page}: unknown tool in {cmd!r}"
    if tool != "padlock-emu" and tool != "echo" and shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    if ".sysroot-i386" in cmd and not (workdir / ".sysroot-i386").exists():
        pytest.skip("no i386 sysroot (scripts/make-sysroot.sh)")
    if tool == "kcachegrind":
        pytest.skip("a GUI")
    # A fixed, short environment: the guests' C library reads it at start-up, so its size
    # moves their instruction counts and cycles.
    env = {"PATH": f"{workdir / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}
    # "echo $?" reports the status of the command before it, in the same shell.
    script = cmd if tool != "echo" else f"{test_session_prints_what_the_page_shows.last}; {cmd}"
    test_session_prints_what_the_page_shows.last = cmd
    p = subprocess.run(["bash", "-c", script], cwd=workdir, env=env, capture_output=True,
                       text=True, errors="replace", timeout=600)
    actual = p.stdout.splitlines() if tool == "echo" else None
    if actual is None:
        p = subprocess.run(["bash", "-c", script + " 2>&1"], cwd=workdir, env=env,
                           capture_output=True, text=True, errors="replace", timeout=600)
        actual = p.stdout.splitlines()
    if tool == "echo":
        actual = actual[-1:]
    why = matches(expected, actual)
    assert why is None, f"{page}: $ {cmd}\n{why}\n--- got:\n" + "\n".join(actual[:60])


test_session_prints_what_the_page_shows.last = "true"
