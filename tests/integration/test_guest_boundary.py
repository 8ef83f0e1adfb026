"""The guest cannot reach the emulator (docs/reliability.md, "Escape classes"): the /proc
files served for the guest are found by what a path resolves to, not by its spelling; the
guest's /proc/self/mem reaches guest pages only; the emulator's descriptors are no
descriptors of the guest's; no /proc/self entry shows the emulator's addresses or paths.
Each case runs the same guest natively on this host too, as the reference."""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

TIMEOUT = 120
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


def native(runner, target, name, args, cwd):
    return subprocess.run([str(runner.guest(name, target.arch)), *args], capture_output=True,
                          text=True, errors="replace", timeout=TIMEOUT, cwd=cwd, env=ENV,
                          stdin=subprocess.DEVNULL)


def emulated(runner, target, name, args, cwd, extra=()):
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, *extra,
           str(runner.guest(name, target.arch)), *args]
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TIMEOUT,
                          cwd=cwd, env=ENV, stdin=subprocess.DEVNULL)


# --- every spelling of a served /proc path -------------------------------------------------

@pytest.mark.parametrize("what", ["mem", "maps", "auxv", "exe"])
def test_every_spelling_reaches_the_served_file(runner, target, tmp_path, what):
    # /proc//self/mem, /proc/self/./mem, "self/mem" after chdir("/proc"), a link to
    # /proc/self/mem ... opened the emulator's own file (its memory, its maps), where
    # Linux opens the same file as /proc/self/mem.
    want = native(runner, target, "proc_paths", [what], tmp_path)
    assert want.returncode == 0, want.stderr
    good = "=12345678" if what == "mem" else "=same"
    assert want.stdout and all(line.endswith(good) for line in want.stdout.splitlines())
    got = emulated(runner, target, "proc_paths", [what], tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


def test_spellings_in_the_sandbox_reach_the_served_file_or_nothing(runner, target, tmp_path):
    # Under --sandbox a spelling that leaves DIR (chdir("/proc"), a descriptor of /proc) is
    # refused; every other one reaches the guest's memory, never the emulator's.
    got = emulated(runner, target, "proc_paths", ["mem"], tmp_path,
                   extra=["--sandbox", str(tmp_path)])
    assert got.returncode == 0, got.stderr
    values = dict(line[4:].split("=", 1) for line in got.stdout.splitlines())
    assert values["plain"] == values["double-slash"] == values["file-link"] == "12345678"
    assert set(values.values()) <= {"12345678", "-13"}, values


# --- /proc/self/mem reaches guest pages only ------------------------------------------------

def test_proc_self_mem_does_not_reach_the_gdt(runner, target, tmp_path):
    # The emulator keeps its GDT and boot stub in the top two pages of the 4 GiB space. A
    # write there through /proc/self/mem, then a far call through the planted call gate,
    # ended the emulator itself (rc 134: QEMU's cpu_abort in helper_lcall_protected; rc 139:
    # a host SIGSEGV). Linux has no mapping there (EIO) and the far call raises SIGSEGV.
    if target.arch != "i386":
        pytest.skip("the call gate is an i386 program's (lcall through a GDT selector)")
    want = native(runner, target, "proc_paths", ["gdt"], tmp_path)
    assert want.returncode == -11 and "gdt write ffffe000=-5" in want.stdout, want
    got = emulated(runner, target, "proc_paths", ["gdt"], tmp_path)
    assert got.stdout == want.stdout
    assert got.returncode == -11, got.stderr


def test_proc_self_mem_forces_as_linux(runner, target, tmp_path):
    # FOLL_FORCE: a PROT_NONE page reads, a read-only private mapping takes the write
    # (copy-on-write), a read-only shared one does not (EIO).
    want = native(runner, target, "proc_paths", ["force"], tmp_path)
    assert want.stdout == "force none=90\nforce private=120\nforce shared=-5\n", want
    got = emulated(runner, target, "proc_paths", ["force"], tmp_path)
    assert got.stdout == want.stdout, got.stderr


def test_maps_lists_no_emulator_page(runner, target, tmp_path):
    # /proc/self/maps listed the GDT and boot stub pages at the top of the window.
    got = emulated(runner, target, "proc_self", ["cat", "/proc/self/maps"], tmp_path)
    assert got.returncode == 0, got.stderr
    # The stack is the guest's highest mapping, as on Linux (no vsyscall page here).
    lines = got.stdout.splitlines()
    assert lines[-1].endswith("[stack]"), lines[-3:]
    if target.arch == "i386":
        assert int(lines[-1].split()[0].split("-")[1], 16) <= 0xFFFFE000


# --- process_vm_readv/writev and ptrace on itself ------------------------------------------

PROCESS_VM_CASES = ["read", "write", "scatter", "readonly-remote", "prot-none", "local-readonly",
                    "partial", "local-partial", "flags", "zero-local", "zero-remote", "no-pid",
                    "system-page"]


@pytest.mark.parametrize("memory", ["direct", "tlb"])
def test_process_vm_on_itself_moves_guest_memory_as_linux(runner, target, tmp_path, memory):
    # Linux's mm/process_vm_access.c: protections apply on both sides (no FOLL_FORCE), a
    # transfer stops at the first page it cannot reach with the bytes moved so far, and the
    # emulator's GDT (0xFFFFE000 in a 32-bit guest) is not the guest's: EFAULT, as natively,
    # where nothing is mapped there.
    want = native(runner, target, "process_vm", PROCESS_VM_CASES, tmp_path)
    assert want.returncode == 0, want.stderr
    lines = want.stdout.splitlines()
    assert lines[0] == "read=4 got=12345678" and lines[1] == "write=4 secret=9abcdef0"
    assert "readonly-remote=-14 read_only=cafef00d" in lines and "system-page=-14" in lines
    assert "partial=8 got=c9d0d7dee5ecf3fa" in lines and "local-partial=16" in lines
    got = emulated(runner, target, "process_vm", PROCESS_VM_CASES, tmp_path,
                   extra=["--memory", memory])
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


def test_process_vm_of_another_process_and_ptrace_are_not_offered(runner, target, tmp_path):
    # Documented choices (docs/reliability.md, "The guest cannot reach the emulator's
    # pages"): another process's memory lives in another emulator, whose host memory is
    # not its guest memory, so process_vm_readv refuses it (EPERM, as Linux does without
    # ptrace access), where Linux lets a parent read its child; ptrace is not provided
    # (ENOSYS), where Linux answers ESRCH to an untraced PEEKDATA.
    want = native(runner, target, "process_vm", ["child", "ptrace-self"], tmp_path)
    assert want.stdout == "child=4\nptrace-self=-3\n", want
    got = emulated(runner, target, "process_vm", ["child", "ptrace-self"], tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout == "child=-1\nptrace-self=-38\n"


# --- the walk of /proc/self ------------------------------------------------------------------

def test_no_proc_self_entry_shows_the_emulator(runner, target, tmp_path):
    # Every file under /proc/self and /proc/self/task/<tid>: no path of the emulator's (its
    # program, its libraries), no name of it, and (i386) no address above 4 GiB, where
    # only the emulator's pages are. The same walk natively is the control: it must read
    # the files the oracle looks at.
    want = native(runner, target, "proc_paths", ["walk"], tmp_path)
    assert want.returncode == 0, want.stderr
    for entry in ("walk maps:", "walk stat:", "walk status:", "walk cmdline:", "walk environ:"):
        assert entry in want.stdout
    got = emulated(runner, target, "proc_paths", ["walk"], tmp_path)
    assert got.returncode == 0, got.stderr
    text = got.stdout
    emulator = Path(runner.emulator).resolve()
    for bad in (str(emulator), str(emulator.parent), "padlock-emu", "libunicorn", "libcapstone",
                "libstdc++"):
        assert bad not in text, [line for line in text.splitlines() if bad in line][:5]
    if target.arch == "i386":
        wide = re.findall(r"\b[0-9a-f]{9,16}-[0-9a-f]{9,16}\b", text)
        assert not wide, wide[:5]
    # The served files are the guest's own; the emulator's state is refused as Linux
    # refuses it to a process without ptrace access.
    assert "walk smaps: open=-13" in text and "walk map_files/: opendir=-13" in text
    assert f"word {runner.guest('proc_paths', target.arch)}" in text  # cmdline: the guest's argv
    stat = text.split("walk stat:\n", 1)[1].splitlines()[0].split()
    assert stat[1] == f"(guest_proc_pa)" or stat[1].startswith("(guest_proc_pa")
    assert stat[25:30] == ["0"] * 5 and stat[44:51] == ["0"] * 7


# --- the emulator's descriptors ------------------------------------------------------------

def test_the_emulators_descriptors_are_not_the_guests(runner, target, tmp_path):
    # A guest wrote into the emulator's --trace and --check-jsonl files through their
    # descriptors and made check.jsonl setuid (fchmod 06777). Every number but 0-2 must be
    # EBADF, as natively, where nothing else is open.
    want = native(runner, target, "sandbox", ["strayfds"], tmp_path)
    assert want.stdout == "strayfds=none\n", want
    trace, check = tmp_path / "t.jsonl", tmp_path / "c.jsonl"
    got = emulated(runner, target, "sandbox", ["strayfds"], tmp_path,
                   extra=["--trace", str(trace), "--check-jsonl", str(check)])
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    for f in (trace, check):
        assert f.exists()
        assert f.stat().st_mode & 0o7777 == 0o644 & ~_umask(), oct(f.stat().st_mode)
        assert b"guest\n" not in f.read_bytes()


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def test_the_emulators_descriptors_stay_out_of_a_forked_child(runner, target, tmp_path):
    # A forked child's own output files (FILE.PID) are opened after the guest started.
    trace = tmp_path / "t.jsonl"
    got = emulated(runner, target, "sandbox", ["forkstray"], tmp_path,
                   extra=["--trace", str(trace)])
    assert got.returncode == 0, got.stderr
    assert got.stdout == "strayfds=none\nchild=0\n", got.stdout
    children = list(tmp_path.glob("t.jsonl.*"))
    assert children and all(b"guest\n" not in c.read_bytes() for c in children)


# --- sockets under --sandbox -----------------------------------------------------------------

@pytest.fixture
def listeners(tmp_path):
    """AF_UNIX datagram listeners outside the sandbox (a file and an abstract name) and one
    inside it."""
    box, out = tmp_path / "box", tmp_path / "out"
    box.mkdir()
    out.mkdir()
    socks = {}
    for key, addr in (("out", str(out / "l")), ("abstract", f"\0padlock-test-{os.getpid()}"),
                      ("in", str(box / "in"))):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(addr)
        s.setblocking(False)
        socks[key] = s
    yield box, out, socks
    for s in socks.values():
        s.close()


def received(s: socket.socket) -> int:
    n = 0
    while True:
        try:
            s.recv(64)
        except BlockingIOError:
            return n
        n += 1


def socket_ops(out: Path) -> list[str]:
    return [f"unixbind:{out}/made", f"unixsend:{out}/l", f"unixmsg:{out}/l",
            f"unixconnect:{out}/l", f"abstractsend:padlock-test-{os.getpid()}", "inetsend:9",
            "unixbind:made-inside", "unixsend:in"]


def test_socket_addresses_stay_in_the_sandbox(runner, target, listeners):
    # bind() on a socketpair's socket made a socket file outside DIR, and sendto() reached a
    # host listener outside DIR, without --net.
    box, out, socks = listeners
    got = emulated(runner, target, "sandbox", socket_ops(out), box, extra=["--sandbox", str(box)])
    assert got.returncode == 0, got.stderr
    pid = os.getpid()
    assert got.stdout.splitlines() == [
        f"unixbind {out}/made=-13", f"unixsend {out}/l=-13", f"unixmsg {out}/l=-13",
        f"unixconnect {out}/l=-13", f"abstractsend padlock-test-{pid}=-13", "inetsend 9=-13",
        "unixbind made-inside=0", "unixsend in=5"]
    assert not (out / "made").exists() and (box / "made-inside").is_socket()
    assert received(socks["out"]) == 0 and received(socks["abstract"]) == 0
    assert received(socks["in"]) == 1


def test_socket_escapes_work_without_the_sandbox(runner, target, listeners):
    # The control: natively, and under the emulator without --sandbox, the same calls reach
    # the outside listeners.
    box, out, socks = listeners
    want = native(runner, target, "sandbox", socket_ops(out), box)
    assert received(socks["out"]) == 2 and received(socks["abstract"]) == 1
    (out / "made").unlink()
    (box / "made-inside").unlink()
    got = emulated(runner, target, "sandbox", socket_ops(out), box)
    assert got.stdout == want.stdout
    assert received(socks["out"]) == 2 and received(socks["abstract"]) == 1
    assert (out / "made").is_socket()


def test_abstract_names_and_the_network_need_net(runner, target, listeners):
    box, out, socks = listeners
    got = emulated(runner, target, "sandbox",
                   [f"abstractsend:padlock-test-{os.getpid()}", f"unixsend:{out}/l"], box,
                   extra=["--sandbox", str(box), "--net"])
    assert got.stdout.splitlines() == [f"abstractsend padlock-test-{os.getpid()}=5",
                                       f"unixsend {out}/l=-13"]
    assert received(socks["abstract"]) == 1 and received(socks["out"]) == 0


def test_the_sandbox_sets_no_new_privs(runner, target, tmp_path):
    # docs/reliability.md, "Threat model": nothing the sandboxed emulator executes gains
    # privileges. Without --sandbox the flag is left as it was.
    for extra, want in ((["--sandbox", str(tmp_path)], "1"), ([], "0")):
        cmd = [str(runner.emulator), "run", "--cpu", target.cpu, *extra,
               str(runner.guest("sandbox", target.arch)), "pause"]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path,
                                env=ENV)
        try:
            status = Path(f"/proc/{proc.pid}/status")
            for _ in range(200):  # until the guest runs (its name replaces the emulator's)
                text = status.read_text()
                if "guest_sandbox" in text:
                    break
                subprocess.run(["sleep", "0.05"])
            flags = dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)
            assert flags["Name"].startswith("guest_sandbox")
            assert flags["NoNewPrivs"] == want
        finally:
            proc.communicate(b"x", timeout=TIMEOUT)
        assert proc.returncode == 0


def test_exec_of_proc_self_exe_runs_the_guest(runner, target, tmp_path):
    # execve("/proc/self/exe") ran padlock-emu itself as the guest ("unknown command").
    # Natively it runs the program again.
    args = ["exec:/proc//self/exe", "open:/dev/null"]
    want = native(runner, target, "sandbox", args, tmp_path)
    got = emulated(runner, target, "sandbox", args, tmp_path)
    assert want.stdout == "open /dev/null=text:\n", want
    assert got.stdout == want.stdout, got.stderr
