"""padlock_emu.run / Emulator: whole guest programs in this process.

The guest programs are the repository's (tests/guest, built into <build>/tests/guest);
expected outputs come from hashlib and from the programs' documented behaviour.
"""

from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path

import pytest

import padlock_emu as pe
from _cbuild import build


def _guest_dir() -> Path:
    for env in ("PADLOCK_GUEST_DIR",):
        if os.environ.get(env):
            return Path(os.environ[env])
    build_dir = os.environ.get("PADLOCK_BUILD_DIR")
    if build_dir:
        return Path(build_dir) / "tests" / "guest"
    return Path("/nonexistent")


GUESTS = _guest_dir()


def guest(name: str, arch: str = "i386") -> str:
    path = GUESTS / f"guest_{name}_{arch}"
    if not path.is_file():
        pytest.skip(f"{path} not built (set PADLOCK_BUILD_DIR or PADLOCK_GUEST_DIR)")
    return str(path)


def _open_fds() -> set:
    return set(os.listdir("/proc/self/fd"))


def test_hello_output_exit_status_and_stats():
    r = pe.run([guest("hello")], cpu="esther")
    assert (r.exit_code, r.signal, r.returncode) == (0, None, 0)
    assert r.stdout == b"hello, world\n" and r.stderr == b""
    assert r.cpu == "esther-c5j"
    assert r.stats.instructions > 1000 and r.stats.cycles >= r.stats.instructions
    assert r.stats.padlock == {} and r.stats.syscalls > 0
    r = pe.run([guest("hello"), "--exit", "3"])
    assert (r.exit_code, r.returncode) == (3, 3)


def test_sha_guest_hashes_stdin_with_rep_xsha_section_4_1():
    data = bytes(range(256)) * 40 + b"tail"
    r = pe.run([guest("sha"), "256", "-"], cpu="esther", stdin=data)
    assert r.stdout.split()[0].decode() == hashlib.sha256(data).hexdigest()
    st = r.stats.padlock["REP XSHA256"]
    assert (st.count, st.bytes, st.faults) == (1, len(data), 0)
    assert r.stats.padlock_cycles == st.cycles > 0
    r1 = pe.run([guest("sha"), "1", "-"], cpu="nano", stdin=b"abc")
    assert r1.stdout.split()[0] == b"a9993e364706816aba3e25717850c26c9cd0d89d"


def test_64_bit_guest_on_nano():
    r = pe.run([guest("sha", "x86_64"), "256", "-"], cpu="nano", stdin=b"abc")
    assert r.stdout.split()[0].decode() == hashlib.sha256(b"abc").hexdigest()
    with pytest.raises(pe.LoadError, match="no long mode"):
        pe.run([guest("sha", "x86_64"), "256", "-"], cpu="esther")


def test_missing_unit_kills_the_guest_with_sigill_section_1_3():
    r = pe.run([guest("nehemiah_sigill"), "ecb"], cpu="nehemiah-c5xl")
    assert (r.exit_code, r.signal, r.signal_name, r.returncode) == (None, signal.SIGILL, "SIGILL", -4)
    assert b"executing ecb" in r.stdout
    assert "SIGILL (Illegal instruction)" in r.log and "xcryptecb" in r.log
    assert r.stats.padlock["REP XCRYPTECB"].faults == 1
    with pytest.raises(pe.PadlockError, match="killed by SIGILL"):
        r.check()


def test_signal_raised_by_the_guest():
    r = pe.run([guest("hello"), "--raise", str(int(signal.SIGTERM))])
    assert r.signal == signal.SIGTERM and not r.core


def test_env_and_arguments_reach_the_guest(tmp_path):
    src = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  printf("argc=%d argv1=%s FOO=%s HOME=%s\n", argc, argv[1], getenv("FOO"), getenv("HOME"));
  fprintf(stderr, "to stderr\n");
  return 7;
}
"""
    prog = build(tmp_path, src, 32, ["-O1", "-static"], "")
    r = pe.run([prog, "one"], env={"FOO": "bar"})
    assert r.stdout == b"argc=2 argv1=one FOO=bar HOME=(null)\n"
    assert r.stderr == b"to stderr\n" and r.exit_code == 7
    emu = pe.Emulator(cpu="nano", env=["FOO=baz", "HOME=/h"])
    assert emu.run([prog, "x"]).stdout == b"argc=2 argv1=x FOO=baz HOME=/h\n"


def test_timeout_kills_the_guest(tmp_path):
    prog = build(tmp_path, "int main(void){ volatile int x = 0; for (;;) ++x; }", 32,
                 ["-O1", "-static"], "")
    with pytest.raises(pe.GuestTimeout) as e:
        pe.run([prog], timeout=0.5)
    assert e.value.result.signal == signal.SIGKILL and e.value.result.timed_out


def test_trace_records_each_padlock_instruction():
    if not pe.features().get("trace"):
        with pytest.raises(NotImplementedError):
            pe.run([guest("sha"), "1", "-"], stdin=b"abc", trace=True)
        return
    r = pe.run([guest("sha"), "1", "-"], stdin=b"abc", trace=True)
    insns = [t for t in r.trace if t.get("type") == "insn"]
    assert len(insns) == r.stats.count("REP XSHA1") == 1
    assert insns[0]["bytes"] == 3 and insns[0]["cycles"] == r.stats.padlock["REP XSHA1"].cycles


def test_load_errors_are_exceptions(tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(pe.LoadError, match="not an ELF file"):
        pe.run([str(script)])
    with pytest.raises(ValueError, match="unknown CPU model"):
        pe.run([guest("hello")], cpu="pentium")


def test_the_run_leaves_this_process_as_it_was(capfd):
    before = _open_fds()
    stdio = [os.fstat(fd).st_ino for fd in (0, 1, 2)]
    print("before", flush=True)
    r = pe.run([guest("hello")])
    print("after", flush=True)
    out = capfd.readouterr().out
    assert out == "before\nafter\n"  # the guest's output went to the Result only
    assert r.stdout == b"hello, world\n"
    assert _open_fds() == before
    assert [os.fstat(fd).st_ino for fd in (0, 1, 2)] == stdio


def test_descriptors_the_guest_leaves_open_are_closed(tmp_path):
    """The guest shares this process's descriptor table; what it leaves open dies with it."""
    src = r"""
#include <fcntl.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int fds[3];
  for (int i = 0; i < 3; ++i) fds[i] = open(argv[1], O_RDONLY);
  printf("%d %d %d\n", fds[0] >= 0, fds[1] >= 0, fds[2] >= 0);
  return 0;
}
"""
    prog = build(tmp_path, src, 32, ["-O1", "-static"], "")
    before = _open_fds()
    r = pe.run([prog, prog])
    assert r.stdout == b"1 1 1\n"
    assert _open_fds() == before


def test_a_forked_guest_child_ends_with_its_guest(tmp_path):
    """A guest that forks forks this process; the child ends with its guest (it never
    returns into Python), and execve in the child runs the package's padlock-emu CLI."""
    marker = tmp_path / "after_run"
    r = pe.run([guest("procs", "x86_64"), "vfork"], cpu="nano")
    with open(marker, "a") as f:
        f.write(f"{os.getpid()}\n")
    assert r.stdout.decode().splitlines() == [
        "argv0=guest_procs_x86_64", "argv=vforked", "vfork_exec=0", "vfork_exit=3"]
    r = pe.run([guest("procs"), "fork"], cpu="esther")
    assert "exit=7 signaled=6" in r.stdout.decode()
    with open(marker, "a") as f:
        f.write(f"{os.getpid()}\n")
    assert marker.read_text().split() == [str(os.getpid())] * 2
