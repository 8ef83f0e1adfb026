"""The gdb stub (-g/--gdb, docs/debugging.md), driven by Debian's real gdb in batch mode:
a breakpoint in a function, a single step over REP XCRYPTECB with its registers before and
after, a hardware watchpoint, a PadLock fault stopping in gdb with its signal at the
instruction, shared libraries found through the auxiliary vector, and the one-line errors."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time

import pytest

GDB = shutil.which("gdb")
pytestmark = pytest.mark.skipif(GDB is None, reason="gdb is not installed")

# The guest's REP XCRYPTECB is 4 bytes (F3 0F A7 C8); it encrypts 4 blocks of 16 bytes.
XCRYPT_LEN, BLOCKS = 4, 4


def debug(emulator, emu_args, program, commands, guest_args=(), timeout=120):
    """Runs PROGRAM under padlock-emu -g 0 and gdb with COMMANDS; returns gdb's output and
    the emulator's (returncode, stdout, stderr)."""
    emu = subprocess.Popen([str(emulator), "run", "-g", "0", *emu_args, str(program),
                            *guest_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        first = emu.stderr.readline()
        m = re.fullmatch(r"padlock-emu: gdb: waiting for a connection on port (\d+)\n", first)
        assert m, first
        cmd = [GDB, "-nx", "-batch", "-ex", "set pagination off", "-ex", "set confirm off",
               "-ex", f"target remote 127.0.0.1:{m.group(1)}"]
        for c in commands:
            cmd += ["-ex", c]
        g = subprocess.run(cmd + [str(program)], capture_output=True, text=True,
                           timeout=timeout)
        out, err = emu.communicate(timeout=timeout)
    finally:
        if emu.poll() is None:
            emu.kill()
            emu.wait()
    return g.stdout + g.stderr, emu.returncode, out, err


def values(text):
    """gdb's value history: {1: '4', 2: '0x80f00b0', ...}."""
    return {int(n): v for n, v in re.findall(r"^\$(\d+) = (.*)$", text, re.M)}


def test_break_step_over_rep_xcrypt_and_watch(runner, target):
    program = runner.guest_dir / f"guest_gdb_xcrypt_{target.arch}"
    r = "r" if target.arch == "x86_64" else "e"
    text, rc, out, err = debug(runner.emulator, ["--cpu", target.cpu], program, [
        "break encrypt_blocks",
        "continue",
        "break *gdb_xcrypt_site",
        "continue",
        "x/i $pc",
        "p/x $pc",                                            # 1
        f"p ${r}cx", f"p/x ${r}ax", f"p/x ${r}si", f"p/x ${r}di",  # 2-5
        "stepi",
        "p/x $pc",                                            # 6
        f"p ${r}cx", f"p/x ${r}ax", f"p/x ${r}si", f"p/x ${r}di",  # 7-10
        "p $eflags",                                          # 11
        "p/x $fctrl", "p/x $mxcsr", "p $st0", "p $xmm0.uint128",  # 12-15
        "watch gdb_watched",
        "continue",
        "delete",
        "continue",
    ])
    assert "Breakpoint 1, encrypt_blocks (" in text, text
    assert re.search(r"=> 0x[0-9a-f]+ <encrypt_blocks\+\d+>:\s+repz xcrypt-ecb", text), text
    v = values(text)
    site = int(v[1], 16)
    # Before: ECX = blocks; one stepi runs the whole instruction (docs/debugging.md).
    assert v[2] == str(BLOCKS)
    assert int(v[6], 16) == site + XCRYPT_LEN
    assert v[7] == "0"                                   # ECX: 0 on completion (§3.1)
    assert v[8] == v[3]                                  # ECB leaves EAX (the IV) alone
    assert int(v[9], 16) == int(v[4], 16) + 16 * BLOCKS  # ESI, EDI advanced (§3.1)
    assert int(v[10], 16) == int(v[5], 16) + 16 * BLOCKS
    assert "PADLOCK30" in v[11]                          # §1.8: set by REP XCRYPT
    # x87 and SSE state: Linux's start-up control words; ST0 and XMM0 read as values.
    assert (v[12], v[13]) == ("0x37f", "0x1f80")
    assert re.fullmatch(r"-?[0-9.e+-]+", v[14]) and re.fullmatch(r"\d+", v[15]), (v[14], v[15])
    assert re.search(r"Hardware watchpoint 3: gdb_watched\s+Old value = 0\s+New value = 7",
                     text), text
    assert "exited normally" in text, text
    assert rc == 0, err
    assert out == "left 0 watched 7 block 69c4e0d86a7b0430d8cdb78070b4c55a\n"


def test_rep_string_clocks_are_the_same_while_watched(runner):
    """With the timing model, REP MOVS and REP STOS run whole and are charged once before
    their loop; while gdb watches memory they run an iteration at a time and are charged
    per element (docs/timing.md, "REP string instructions"). Both give the clocks of
    tests/guest/rep_string.c to the cycle, and `--stats` shows which path each took."""
    program = runner.guest_dir / "guest_rep_string_i386"
    plain = subprocess.run([str(runner.emulator), "run", "--irq-hz", "0", "--stats",
                            str(program)], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr
    # g_src is only read: the watchpoint never triggers, and the program runs to its end.
    text, rc, out, err = debug(runner.emulator, ["--irq-hz", "0", "--stats"], program,
                               ["watch g_src[4095]", "continue"])
    assert "Hardware watchpoint 1: g_src[4095]" in text, text
    assert rc == 0 and out == plain.stdout
    assert len(out.splitlines()) == 48
    # The watched run took the per-element path: a REP MOVS or STOS run whole counts as
    # one instruction, an element at a time as one per element. rep_string.c runs each of
    # the two with counts 0, 1, 2, 3, 100, 1000, 2000 and 4096 (sum 7202), first in a
    # block and after others, twice each: at least 8 * 7202 - 8 * 7 more instructions.
    def counted(stderr):
        return int(re.search(r"instructions counted (\d+)", stderr).group(1))
    extra = counted(err) - counted(plain.stderr)
    assert 8 * 7202 - 8 * 7 <= extra < 2 * 8 * 7202, extra


def test_threads_are_listed_and_switched(runner, target):
    # qfThreadInfo names every guest thread by its TID (PID, PID + 1, ... in creation
    # order), the stop reply the one that hit the breakpoint, and Hg reads another
    # thread's saved registers (docs/debugging.md). A register written there is the
    # thread's own: read back from the stub after gdb's cache is flushed, and put back before
    # the run goes on.
    program = runner.guest_dir / f"guest_threads_{target.arch}"
    text, rc, out, err = debug(runner.emulator, ["--cpu", target.cpu, "--quantum", "5"], program,
                               ["break do_item", "continue", "info threads",
                                "p/x $pc", "thread 1", "p/x $pc",
                                "set $keep = $ebx", "set var $ebx = 0x5a5a1234",
                                "maint flush register-cache", "thread 2", "thread 1", "p/x $ebx",
                                "set var $ebx = $keep", "maint flush register-cache",
                                "p $ebx == $keep", "delete", "continue"],
                               guest_args=["8"])
    rows = re.findall(r"^(\*?)\s+(\d+)\s+Thread (\d+)\s+(0x[0-9a-f]+) in (\w+)", text, re.M)
    assert len(rows) == 5, text
    tids = sorted(int(r[2]) for r in rows)
    assert tids == list(range(tids[0], tids[0] + 5)), tids
    current = [r for r in rows if r[0] == "*"]
    assert len(current) == 1 and current[0][4] == "do_item", rows
    main = next(r for r in rows if r[1] == "1")
    assert int(main[2]) == tids[0]  # gdb's thread 1: the first thread, TID = PID
    v = values(text)
    assert int(v[1], 16) == int(current[0][3], 16)
    assert int(v[2], 16) == int(main[3], 16) != int(v[1], 16)
    assert v[3] == "0x5a5a1234" and v[4] == "1", text
    assert rc == 0, err
    # The run went on to the same result as without gdb (the interleaving may differ: a stop
    # inside a block charges its rest again, see "Modelled time").
    plain = runner.run("threads", target, ["8"]).stdout.decode()
    digest = re.compile(r"^digest=\w+$", re.M)
    assert digest.search(out).group() == digest.search(plain).group()


def test_watchpoint_sees_a_rep_xcrypt_result(runner):
    """A write watchpoint on the output buffer stops after the REP XCRYPTECB that writes it
    (the unit's output span), with the first ciphertext byte as the new value."""
    program = runner.guest_dir / "guest_gdb_xcrypt_i386"
    text, rc, out, err = debug(runner.emulator, [], program, [
        "break encrypt_blocks", "continue", "watch -l *(unsigned char*)out", "continue",
        "p/x $pc", "p $ecx", "delete", "continue"])
    v = values(text)
    assert re.search(r"Old value = 0 '\\000'\s+New value = 105 'i'", text), text  # 0x69
    assert v[2] == "0"  # stopped after the instruction completed
    assert rc == 0 and "exited normally" in text


def test_step_ends_at_an_interrupt_point(runner):
    """With periodic interrupts often enough to land inside a long REP XCRYPTECB (every
    32000 clocks at 1.6 GHz, the instruction takes more than 80000), stepi
    runs it to the next interrupt point (§1.7): the PC stays on the instruction and ECX
    counts the blocks left; further steps resume it until it completes. (How many
    interrupt points it meets depends on the modelled time at its start, which depends on
    the environment the guest starts with.)"""
    program = runner.guest_dir / "guest_gdb_xcrypt_i386"
    blocks, steps = 8192, 12
    text, rc, out, err = debug(runner.emulator, ["--irq-hz", "50000"], program, [
        "break *gdb_xcrypt_site", "continue", "p/x $pc", "p $ecx"] +
        ["stepi", "p/x $pc", "p $ecx"] * steps + ["continue"], guest_args=[str(blocks)])
    assert "Breakpoint 1, " in text, text
    v = values(text)
    site = int(v[1], 16)
    assert int(v[2]) == blocks
    trail = [(int(v[2 * k + 1], 16), int(v[2 * k + 2])) for k in range(1, steps + 1)]
    stops = [ecx for pc, ecx in trail if pc == site]
    assert stops, text                         # stopped at least once at an interrupt point
    assert all(0 < ecx < blocks for ecx in stops) and stops == sorted(stops, reverse=True)
    done = trail[len(stops)]                   # the step that completed it
    assert done == (site + XCRYPT_LEN, 0), text
    assert rc == 0 and out.startswith("left 0 ")


def test_padlock_fault_stops_in_gdb_at_the_instruction(runner):
    """REP XCRYPT on a chip without ACE is #UD: gdb sees SIGILL with the PC at the
    instruction, and the guest dies of it when gdb passes the signal on."""
    program = runner.guest_dir / "guest_nehemiah_sigill_i386"
    text, rc, out, err = debug(runner.emulator, ["--cpu", "nehemiah-c5xl"], program,
                               ["continue", "x/i $pc", "continue"], guest_args=["ecb"])
    assert "Program received signal SIGILL" in text, text
    assert re.search(r"=> 0x[0-9a-f]+ <[^>]+>:\s+repz xcrypt-ecb", text), text
    assert "Program terminated with signal SIGILL" in text, text
    assert rc == -4


def test_page_fault_in_rep_xcrypt_reaches_the_guest_handler(runner):
    """A #PF inside REP XCRYPTCBC stops in gdb as SIGSEGV at the instruction; continuing
    passes it to the guest's handler, which maps the page and returns, as without gdb."""
    program = runner.guest_dir / "guest_segv_xcrypt_i386"
    plain = subprocess.run([str(runner.emulator), "run", str(program), "in", "unmap", "enc"],
                           capture_output=True, text=True, timeout=60)
    text, rc, out, err = debug(runner.emulator, [], program, ["continue", "x/i $pc",
                                                              "continue"],
                               guest_args=["in", "unmap", "enc"])
    assert "Program received signal SIGSEGV" in text, text
    assert re.search(r"=> 0x[0-9a-f]+ <[^>]+>:\s+repz xcrypt-cbc", text), text
    assert "exited normally" in text, text
    assert rc == plain.returncode == 0
    assert out == plain.stdout


def test_shared_libraries_come_from_the_auxiliary_vector(runner):
    """A dynamically linked x86-64 program: gdb finds ld.so and libc through qXfer:auxv and
    the dynamic linker's list."""
    text, rc, out, err = debug(runner.emulator, ["--cpu", "nano"], "/usr/bin/true",
                               ["break exit", "continue", "info sharedlibrary", "continue"])
    assert re.search(r"Breakpoint 1, .*exit", text), text
    assert re.search(r"Yes\s+.*/libc\.so\.6", text), text
    assert "exited normally" in text, text
    assert rc == 0


def test_port_in_use_is_one_line(runner):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        p = subprocess.run([str(runner.emulator), "run", "-g", str(port),
                            str(runner.guest_dir / "guest_hello_i386")],
                           capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert p.stderr == (f"padlock-emu: gdb: cannot listen on port {port}: "
                        "Address already in use\n")


@pytest.mark.parametrize("arg", ["abc", "65536", "-1", ""])
def test_bad_port_is_a_usage_error(runner, arg):
    p = subprocess.run([str(runner.emulator), "run", "--gdb", arg,
                        str(runner.guest_dir / "guest_hello_i386")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert p.stderr == (f"padlock-emu: invalid gdb port '{arg}': expected a TCP port 0-65535, "
                        "e.g. -g 1234\n")


class Rsp:
    """A minimal client of the remote protocol, for what batch gdb cannot do (^C)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""

    def send(self, payload: bytes):
        self.sock.sendall(b"$%s#%02x" % (payload, sum(payload) & 0xFF))

    def packet(self) -> bytes:
        while True:
            m = re.search(rb"\$([^#]*)#([0-9a-f]{2})", self.buf)
            if m:
                self.buf = self.buf[m.end():]
                assert int(m.group(2), 16) == sum(m.group(1)) & 0xFF
                return m.group(1)
            data = self.sock.recv(4096)
            assert data, "connection closed"
            self.buf += data

    def ask(self, payload: bytes) -> bytes:
        self.send(payload)
        return self.packet()


def test_ctrl_c_stops_a_running_guest(runner):
    """gdb's interrupt (a 0x03 byte while the guest runs) stops it with SIGINT; the
    registers are then readable and `k` ends the emulator."""
    emu = subprocess.Popen([str(runner.emulator), "run", "--cpu", "nano", "-g", "0",
                            "/usr/bin/yes"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r"port (\d+)", emu.stderr.readline()).group(1))
        c = Rsp(port)
        assert b"swbreak+" in c.ask(b"qSupported:swbreak+;xmlRegisters=i386")
        assert c.ask(b"?").startswith(b"T05")
        xml = c.ask(b"qXfer:features:read:target.xml:0,3fff")
        assert xml.startswith(b"l<?xml") and b"<osabi>GNU/Linux</osabi>" in xml
        assert b'name="org.gnu.gdb.i386.segments"' in xml  # x86-64: fs_base, gs_base
        c.send(b"vCont;c")
        time.sleep(0.5)
        c.sock.sendall(b"\x03")
        assert c.packet().startswith(b"T02")  # gdb's SIGINT
        rip = c.ask(b"p10")                   # register 16 of the x86-64 layout: rip
        assert len(rip) == 16 and int.from_bytes(bytes.fromhex(rip.decode()), "little") > 0
        c.send(b"k")
        assert emu.wait(timeout=30) == -9
    finally:
        if emu.poll() is None:
            emu.kill()
            emu.wait()
