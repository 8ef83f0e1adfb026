"""--profile of a stripped program whose debug information lies in a separate file, found
through elfutils' libdwfl (emulator/observe/profile/debug_info.cpp): next to it by
.gnu_debuglink, in .debug/, and inside a sysroot (-L) by build-id
(usr/lib/debug/.build-id/xx/yyyy.debug, the layout of Debian's -dbgsym packages) or by the
debuglink mirrored under usr/lib/debug. Functions get their names, fl= their source file.

Debian's debug archive was not reachable from the machine these tests were written on, so
the debug files are made here from a repository guest with objcopy --only-keep-debug and
--add-gnu-debuglink, as a -dbgsym package's are."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

GUEST = "sha"


def self_costs(profile: Path) -> dict[str, int]:
    """fn -> Cyc (the first event) booked on it."""
    costs: dict[str, int] = {}
    fn, in_call = None, False
    for line in profile.read_text().splitlines():
        if line.startswith("fn="):
            fn, in_call = line[3:], False
        elif line.startswith("calls="):
            in_call = True  # the next cost line is the call's inclusive cost
        elif re.match(r"^(0x[0-9a-f]+|\+\d+|-\d+|\*)\s", line) and fn is not None:
            if in_call:
                in_call = False
                continue
            costs[fn] = costs.get(fn, 0) + int(line.split()[1])
    return costs


def named_share(profile: Path) -> float:
    costs = self_costs(profile)
    total = sum(costs.values())
    return sum(v for k, v in costs.items() if not k.startswith("???")) / total


@pytest.fixture
def split(runner, target, tmp_path):
    """(stripped program, its debug file, build-id) for the target's architecture."""
    for tool in ("objcopy", "strip", "readelf"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} (binutils) is not installed")
    prog, debug = tmp_path / "prog", tmp_path / "prog.debug"
    shutil.copy(runner.guest(GUEST, target.arch), prog)
    subprocess.run(["objcopy", "--only-keep-debug", str(prog), str(debug)], check=True)
    subprocess.run(["strip", "--strip-all", str(prog)], check=True)
    subprocess.run(["objcopy", f"--add-gnu-debuglink={debug}", str(prog)], check=True)
    notes = subprocess.run(["readelf", "-n", str(prog)], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    if m is None:
        pytest.skip("the guest has no build-id note")
    return prog, debug, m[1]


def profile_of(runner, target, tmp_path, prog: str, *opts: str) -> Path:
    (tmp_path / "abc.txt").write_text("abc")
    out = tmp_path / "p.out"
    p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, *opts, "--profile",
                        str(out), prog, "256", "abc.txt"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    return out


def test_stripped_program_without_debug_info_is_unnamed(runner, target, tmp_path, split):
    prog, debug, _ = split
    debug.unlink()
    out = profile_of(runner, target, tmp_path, str(prog))
    assert named_share(out) < 0.1
    assert "fn=main\n" not in out.read_text()


@pytest.mark.parametrize("where", ["beside", ".debug"])
def test_debuglink_next_to_the_program(runner, target, tmp_path, split, where):
    prog, debug, _ = split
    if where == ".debug":
        (tmp_path / ".debug").mkdir()
        debug.rename(tmp_path / ".debug" / debug.name)
    out = profile_of(runner, target, tmp_path, str(prog))
    text = out.read_text()
    assert "fn=main\n" in text
    assert re.search(r"^fl=.*tests/guest/sha\.c\nfn=main$", text, re.M), text[:2000]
    assert named_share(out) >= 0.9


@pytest.mark.parametrize("layout", ["build-id", "mirrored debuglink"])
def test_debug_files_inside_the_sysroot(runner, target, tmp_path, split, layout):
    prog, debug, build_id = split
    root = tmp_path / "root"
    (root / "usr" / "bin").mkdir(parents=True)
    shutil.copy(prog, root / "usr" / "bin" / "prog")
    if layout == "build-id":
        dest = root / "usr/lib/debug/.build-id" / build_id[:2] / f"{build_id[2:]}.debug"
    else:
        dest = root / "usr/lib/debug/usr/bin" / debug.name
    dest.parent.mkdir(parents=True)
    debug.rename(dest)
    prog.unlink()  # only the sysroot's copies remain
    out = profile_of(runner, target, tmp_path, "/usr/bin/prog", "-L", "root")
    assert "fn=main\n" in out.read_text()
    assert named_share(out) >= 0.9


def test_callgrind_annotate_reads_the_line_positions(runner, target, tmp_path, split):
    """With debug information the profile has positions "instr line", fl=/fi=/cfi= files,
    and callgrind_annotate reads it, source annotation included, without a warning."""
    exe = shutil.which("callgrind_annotate")
    if exe is None:
        pytest.skip("callgrind_annotate (valgrind) is not installed")
    prog, _, _ = split
    out = profile_of(runner, target, tmp_path, str(prog))
    text = out.read_text()
    assert "positions: instr line\n" in text and "\ncfi=" in text
    r = subprocess.run([exe, "--inclusive=yes", str(out)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "WARNING" not in r.stdout
    assert re.search(r"tests/guest/sha\.c:main \[", r.stdout), r.stdout[:3000]
