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
PAGES = ["README.md", "docs/emulator.md", "docs/profiling.md", "docs/debugging.md"]

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
    "padlock-emu run -g 1234": "waits for gdb in the background: tests/integration/test_gdb.py",
    "gdb -batch -ex 'target remote :1234'": "needs the emulator above: test_gdb.py",
}

TOOLS = ("padlock-emu", "callgrind_annotate", "jq", "echo", "kcachegrind", "gdb", "grep")


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


@pytest.fixture
def workdir(tmp_path, emulator_path, guest_dir):
    d = tmp_path / "docs"
    d.mkdir()
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


def skip_reason(workdir: Path, page: str, cmd: str) -> str | None:
    for prefix, why in NOT_RUN.items():
        if cmd.startswith(prefix):
            return why
    tool = cmd.split()[0]
    assert tool in TOOLS or "=" in tool, f"{page}: unknown tool in {cmd!r}"
    if tool != "padlock-emu" and tool != "echo" and shutil.which(tool) is None:
        return f"{tool} is not installed"
    if ".sysroot-i386" in cmd and not (workdir / ".sysroot-i386").exists():
        return "no i386 sysroot (scripts/make-sysroot.sh)"
    if tool == "kcachegrind":
        return "a GUI"
    return None


def run_session(workdir: Path, cmd: str, before: str) -> list[str]:
    """What the session prints: stdout and stderr together, or for `echo $?` the status of
    the command before it, run again in the same shell."""
    # A fixed, short environment: the guests' C library reads it at start-up, so its size
    # moves their instruction counts and cycles.
    env = {"PATH": f"{workdir / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}
    if cmd.split()[0] == "echo":
        p = subprocess.run(["bash", "-c", f"{before} >/dev/null 2>&1; {cmd}"], cwd=workdir,
                           env=env, capture_output=True, text=True, errors="replace",
                           timeout=600)
        return p.stdout.splitlines()[-1:]
    p = subprocess.run(["bash", "-c", cmd + " 2>&1"], cwd=workdir, env=env,
                       capture_output=True, text=True, errors="replace", timeout=600)
    return p.stdout.splitlines()


# One test per page: its sessions run in order in one working folder, as a reader types
# them (a later command reads a file an earlier one wrote, `echo $?` follows the command
# before it), so no scheduler (pytest-xdist) can separate them.
@pytest.mark.parametrize("page", PAGES)
def test_sessions_print_what_the_page_shows(workdir, page):
    ran, skipped, failures = 0, [], []
    before = "true"
    for _, cmd, expected in (p.values for p in sessions() if p.values[0] == page):
        why = skip_reason(workdir, page, cmd)
        if why is not None:
            skipped.append(f"$ {cmd}: {why}")
            continue
        actual = run_session(workdir, cmd, before)
        before = cmd
        ran += 1
        missing = matches(expected, actual)
        if missing is not None:
            failures.append(f"$ {cmd}\n{missing}\n--- got:\n" + "\n".join(actual[:60]))
    assert not failures, f"{page}: {len(failures)} of {ran} sessions differ\n\n" + \
        "\n\n".join(failures)
    if ran == 0:
        pytest.skip(f"{page}: no session can run here: " + "; ".join(skipped))


def test_system_md_names_the_kernel_debian_serves():
    """docs/system.md names the bookworm kernel `--debian-kernel` boots, as pinned in
    emulator/system/debian-kernels.txt, and Debian's archive still serves that version:
    drift of the docs from the pin, or of the pin from the archive, fails here."""
    pins = {}
    for line in (ROOT / "emulator/system/debian-kernels.txt").read_text().splitlines():
        f = line.split()
        if len(f) == 4 and not line.startswith("#") and f[0] == "bookworm":
            pins[f[1]] = (f[2], f[3])
    package, version = pins["i386"]
    abi = re.search(r"linux-image-(6\.1\.0-\d+)-", package)[1]
    text = (ROOT / "docs/system.md").read_text()
    named = set(re.findall(r"linux-(?:image|headers)-(6\.1\.0-\d+)-", text))
    assert named == {abi}, f"docs/system.md names {sorted(named)}, the pin is {abi}"
    assert f"`{package}`, {version}," in text, version
    r = subprocess.run(["apt-cache", "madison", pins["amd64"][0]], capture_output=True,
                       text=True)
    if pins["amd64"][1] not in r.stdout:
        if os.environ.get("PADLOCK_REQUIRE_SYSTEM") == "1":
            pytest.fail(f"Debian no longer serves {pins['amd64']}: {r.stdout}{r.stderr}")
        pytest.skip(f"apt-cache does not list {pins['amd64']} (apt-get update)")

