"""The guest cannot reach the host (docs/reliability.md, "Sandbox"): --sandbox DIR confines
its file access to DIR (and the sysroot), --net gates sockets, /proc/self/fd/ lists only
the guest's descriptors, and --max-memory caps its mappings. The guest is
tests/guest/sandbox.c; each escape is also run without --sandbox, where it must succeed,
so that none of these tests passes for want of a working attack."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from elfcraft import static_exit

TIMEOUT = 120


def run(runner, target, args, *, sandbox: Path | None, cwd: Path, extra=()):
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, *extra]
    if sandbox is not None:
        cmd += ["--sandbox", str(sandbox)]
    cmd += [str(runner.guest("sandbox", target.arch)), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    return proc.stdout.splitlines()


@pytest.fixture
def tree(tmp_path):
    """box/ (the sandbox) with a file and links that point out of it; out/ (the host)."""
    box, out = tmp_path / "box", tmp_path / "out"
    (box / "d").mkdir(parents=True)
    out.mkdir()
    (box / "d" / "secret").write_text("inside\n")
    (out / "host").write_text("hostfile\n")
    (box / "abslink").symlink_to(out / "host")
    (box / "rellink").symlink_to("../out/host")
    (box / "proclink").symlink_to(f"/proc/self/root{out}/host")
    (box / "dirlink").symlink_to(out)
    return box, out


# Each escape: the operation, and its result with --sandbox (-13 is EACCES).
ESCAPES = [
    ("open:../out/host", "open ../out/host=-13"),
    ("open:{out}/host", "open {out}/host=-13"),
    ("open:abslink", "open abslink=-13"),
    ("open:rellink", "open rellink=-13"),
    ("open:proclink", "open proclink=-13"),
    ("open:dirlink/host", "open dirlink/host=-13"),
    ("open:/proc/self/root{out}/host", "open /proc/self/root{out}/host=-13"),
    ("open:d/../../out/host", "open d/../../out/host=-13"),
    ("openat:{box}/d:../../out/host", "openat ../../out/host=-13"),
    ("stat:abslink", "stat abslink=-13"),
    ("access:rellink", "access rellink=-13"),
    ("statfs:{out}", "statfs {out}=-13"),
    ("mkdir:../out/made", "mkdir ../out/made=-13"),
    ("chmod:rellink", "chmod rellink=-13"),
    ("rename:d/secret:../out/moved", "rename ../out/moved=-13"),
    ("link:../out/host:hard", "link hard=-13"),
    ("unlink:../out/host", "unlink ../out/host=-13"),
    ("chdir:{out}", "chdir {out}=-13"),  # last: without the sandbox it moves the guest
]


def fill(s: str, box: Path, out: Path) -> str:
    return s.format(box=box, out=out)


def test_escapes_are_refused_in_the_sandbox(runner, target, tree):
    box, out = tree
    ops = [fill(op, box, out) for op, _ in ESCAPES]
    got = run(runner, target, ops, sandbox=box, cwd=box)
    assert got == [fill(want, box, out) for _, want in ESCAPES]
    assert (out / "host").read_text() == "hostfile\n"
    assert sorted(p.name for p in out.iterdir()) == ["host"]


def test_the_same_escapes_work_without_the_sandbox(runner, target, tree):
    # The control: each operation reaches out/ when nothing confines it. (unlink last: the
    # others need the file.)
    box, out = tree
    ops = [fill(op, box, out) for op, _ in ESCAPES]
    got = run(runner, target, ops, sandbox=None, cwd=box)
    assert len(got) == len(ESCAPES)
    for line in got:
        assert not line.endswith("=-13"), line
    assert not (out / "host").exists() and (out / "moved").exists()


def test_inside_the_sandbox_files_work(runner, target, tree):
    box, out = tree
    got = run(runner, target,
              ["open:d/secret", f"open:{box}/d/secret", "openat:d:../d/secret", "lstat:abslink",
               "readlink:abslink", "create:new", "open:new", "mkdir:sub", "rename:new:sub/moved",
               "symlink:/etc/passwd:sub/link", "open:sub/link", "chdir:sub", "open:moved",
               "unlink:moved", "open:/dev/null", "open:/proc/self/maps"],
              sandbox=box, cwd=box)
    assert got[:15] == [
        "open d/secret=text:inside", f"open {box}/d/secret=text:inside",
        "openat ../d/secret=text:inside", "lstat abslink=0", f"readlink abslink=text:{out}/host",
        "create new=0", "open new=text:guest", "mkdir sub=0", "rename sub/moved=0",
        "symlink sub/link=0", "open sub/link=-13", "chdir sub=0", "open moved=text:guest",
        "unlink moved=0", "open /dev/null=text:"]
    # The generated /proc files stay: they describe the guest.
    assert got[15].startswith("open /proc/self/maps=text:")
    assert not (box / "sub" / "moved").exists()


def test_a_guest_outside_its_sandbox_starts_in_it(runner, target, tree, tmp_path):
    box, _ = tree
    got = run(runner, target, ["open:d/secret"], sandbox=box, cwd=tmp_path)
    assert got == ["open d/secret=text:inside"]


def test_renames_during_open_cannot_slip_a_path_out(runner, target, tmp_path):
    # A forked child swaps box/sub between a directory and a link to out/ while the guest
    # opens box/sub/secret: the lookup is one kernel walk beneath the root, so the link
    # never wins. Without the sandbox the same race reads out/secret.
    for sandboxed in (True, False):
        box, out = tmp_path / f"box{sandboxed}", tmp_path / f"out{sandboxed}"
        (box / "real").mkdir(parents=True)
        out.mkdir()
        (box / "real" / "secret").write_text("inside\n")
        (out / "secret").write_text("outside\n")
        got = run(runner, target, [f"race:{box}:{out}"], sandbox=box if sandboxed else None,
                  cwd=box)
        want = "escaped=none" if sandboxed else "escaped=some"
        assert got == [f"race opened=some linked=some {want}"]


def test_sockets_need_net(runner, target, tree):
    box, _ = tree
    assert run(runner, target, ["socket"], sandbox=box, cwd=box) == ["socket inet=-13"]
    assert run(runner, target, ["socket"], sandbox=box, cwd=box,
               extra=["--net"]) == ["socket inet=0"]
    assert run(runner, target, ["socket"], sandbox=None, cwd=box) == ["socket inet=0"]


def test_execve_stays_in_the_sandbox(runner, target, tree):
    box, out = tree
    prog = static_exit(32, 0x08048000, 7).write(out / "prog")
    os.chmod(prog, 0o755)
    # Outside: refused before the point of no return; the guest goes on.
    assert run(runner, target, [f"exec:{prog}"], sandbox=box, cwd=box) == [f"exec {prog}=-13"]
    # Inside: the new image runs sandboxed too (its own escape fails).
    inner = box / "guest"
    inner.write_bytes(runner.guest("sandbox", target.arch).read_bytes())
    os.chmod(inner, 0o755)
    got = run(runner, target, [f"exec:{inner}", "open:../out/host", "open:d/secret"],
              sandbox=box, cwd=box)
    assert got == ["open ../out/host=-13", "open d/secret=text:inside"]


def test_sandbox_must_be_a_directory(emulator_path, tmp_path):
    proc = subprocess.run([str(emulator_path), "run", "--sandbox", str(tmp_path / "none"),
                           "/bin/true"], capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2 and "is not a directory" in proc.stderr, proc.stderr
    proc = subprocess.run([str(emulator_path), "run", "--net", "/bin/true"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2 and "--net" in proc.stderr, proc.stderr


# --- /proc/self/fd/ ------------------------------------------------------------------


def test_proc_self_fd_lists_the_guest_descriptors_only(runner, target, tmp_path):
    # The emulator's own descriptors (here its trace file and the sandbox's roots) are not
    # the guest's: the listing and readlink leave them out, as native Linux would not have
    # them at all.
    trace = tmp_path / "t.jsonl"
    r, w = os.pipe()
    try:
        cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--trace", str(trace),
               "--sandbox", str(tmp_path), str(runner.guest("sandbox", target.arch)),
               "create:f", "fds", "dupfds"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, pass_fds=(w,), cwd=tmp_path)
    finally:
        os.close(r)
        os.close(w)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()[1:]
    half = len(lines) // 2
    for listing in (lines[:half], lines[half:]):  # fds, then dupfds
        fds = dict(line[3:].split(" -> ", 1) for line in listing)
        assert fds["0"] == "/dev/null"
        assert fds[str(w)].startswith("pipe:[")
        assert "(the listing)" in fds.values()
        assert not any(str(trace) in v for v in fds.values()), fds
        assert set(fds) == {"0", "1", "2", str(w),
                            next(k for k, v in fds.items() if v == "(the listing)")}, fds


# --- --max-memory --------------------------------------------------------------------


def test_max_memory_caps_mmap_brk_and_mremap(runner, target, tmp_path):
    got = run(runner, target, ["mmap:100", "brk:100", "mremap:100", "mmap:8", "brk:8", "mremap:8"],
              sandbox=None, cwd=tmp_path, extra=["--max-memory", "64M"])
    assert got == ["mmap 100=-12", "brk 100=-12", "mremap 100=-12", "mmap 8=0", "brk 8=0",
                   "mremap 8=0"]
    # Without the cap the same requests succeed.
    got = run(runner, target, ["mmap:100", "brk:100", "mremap:100"], sandbox=None, cwd=tmp_path)
    assert got == ["mmap 100=0", "brk 100=0", "mremap 100=0"]


def test_max_memory_below_a_megabyte_is_a_usage_error(emulator_path):
    proc = subprocess.run([str(emulator_path), "run", "--max-memory", "100K", "/bin/true"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2 and "--max-memory" in proc.stderr, proc.stderr
