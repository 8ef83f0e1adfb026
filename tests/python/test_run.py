"""padlock_emu.run / Emulator: whole guest programs in this process.

The guest programs are the repository's (tests/guest, built into <build>/tests/guest);
expected outputs come from hashlib and from the programs' documented behaviour.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
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
    r = pe.run([guest("hello")], cpu="esther", icount=True)
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
    # As execve: a file without execute permission is refused before it is read.
    with pytest.raises(pe.LoadError, match="Permission denied"):
        pe.run([str(script)])
    script.chmod(0o755)
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


def test_gdb_attaches_to_a_python_run():
    """gdb=PORT (docs/debugging.md): gdb, started first, connects while run() waits, breaks
    at the guest's REP XCRYPTECB and reads RCX; the run then completes as usual."""
    import shutil
    import socket
    import subprocess

    gdb = shutil.which("gdb")
    if gdb is None:
        pytest.skip("gdb is not installed")
    program = guest("gdb_xcrypt", "x86_64")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = subprocess.Popen(
        [gdb, "-nx", "-batch", "-ex", f"target remote 127.0.0.1:{port}",
         "-ex", "break *gdb_xcrypt_site", "-ex", "continue", "-ex", "p $rcx",
         "-ex", "continue", program], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        r = pe.run([program], cpu="nano", gdb=port, timeout=120)
        text = client.communicate(timeout=60)[0]
    finally:
        if client.poll() is None:
            client.kill()
    assert r.exit_code == 0 and r.stdout.startswith(b"left 0 watched 7")
    assert "$1 = 4" in text and "exited normally" in text, text
    assert f"waiting for a connection on port {port}" in r.log
    with pytest.raises(ValueError, match="gdb=0"):
        pe.run([program], cpu="nano", gdb=0)


def _interrupt_after(seconds: float) -> subprocess.Popen:
    """Another process sends this one SIGINT after `seconds` and prints when (time.time());
    a thread of ours could not: the run holds the GIL."""
    code = (f"import os, signal, sys, time; time.sleep({seconds}); t = time.time(); "
            f"os.kill({os.getpid()}, signal.SIGINT); print(t)")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def _sent_at(sender: subprocess.Popen) -> float:
    out, _ = sender.communicate(timeout=30)
    assert out.strip(), "the interrupt was not sent"
    return float(out)


def test_keyboard_interrupt_stops_the_guest_within_100_ms(tmp_path):
    """Ctrl-C (SIGINT) during run(): the guest stops at once, the trace and profile are
    closed, and Python's handler raises KeyboardInterrupt."""
    prog = guest("host_alarm_xcrypt")
    sender = _interrupt_after(1.0)
    with pytest.raises(KeyboardInterrupt):
        pe.run([prog, "100000000"], cpu="esther", trace=tmp_path / "t.jsonl",
               profile=tmp_path / "p.out")
    caught = time.time()
    delay = caught - _sent_at(sender)
    assert 0 <= delay < 0.1, delay
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    end = json.loads(lines[-1])
    assert end["type"] == "end" and end["signal"] == signal.SIGKILL
    assert (tmp_path / "p.out").read_text().rstrip().splitlines()[-1].startswith("totals:")
    # The run's handler is gone: Python's own is back.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_python_sigint_handler_sees_the_interrupt():
    """A handler the program installed runs instead of KeyboardInterrupt, and run()
    returns the killed guest's result."""
    seen = []
    old = signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
    sender = _interrupt_after(1.0)
    try:
        r = pe.run([guest("host_alarm_xcrypt"), "100000000"], cpu="esther")
    finally:
        signal.signal(signal.SIGINT, old)
    _sent_at(sender)
    assert seen == [signal.SIGINT]
    assert r.signal == signal.SIGKILL


def test_icount_is_off_by_default_and_does_not_change_the_clock():
    """icount only counts instructions (the block hook on every block); the virtual clock
    is the same without it, as with the CLI's --icount."""
    plain = pe.run([guest("sha"), "256", "-"], stdin=b"abc")
    counted = pe.run([guest("sha"), "256", "-"], stdin=b"abc", icount=True)
    assert plain.stats.instructions == 0 and counted.stats.instructions > 10_000
    assert plain.stats.cycles == counted.stats.cycles
    assert plain.stdout == counted.stdout


def test_memory_and_cache_x86_reach_the_emulator():
    base = pe.run([guest("sha"), "256", "-"], stdin=b"abc")
    tlb = pe.run([guest("sha"), "256", "-"], stdin=b"abc", memory="tlb")
    assert (tlb.stdout, tlb.stats.cycles) == (base.stdout, base.stats.cycles)
    cached = pe.run([guest("sha"), "256", "-"], stdin=b"abc", cache_x86=True)
    assert cached.stdout == base.stdout and cached.stats.cycles > base.stats.cycles
    with pytest.raises(ValueError, match="--memory expects direct or tlb, got .softmmu."):
        pe.run([guest("sha"), "256", "-"], stdin=b"abc", memory="softmmu")


def test_chrome_trace_is_not_read_back(tmp_path, monkeypatch):
    """run() checks that the Chrome trace exists and is not empty, without loading it."""
    read = []
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: read.append(self) or real(self, *a, **k))
    c = tmp_path / "c.json"
    r = pe.run([guest("sha"), "256", "-"], stdin=b"abc", chrome_trace=c)
    assert r.chrome_trace == c and c.stat().st_size > 0
    assert c not in read


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
