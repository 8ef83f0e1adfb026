"""-d ITEMS and -D FILE (docs/debugging.md): qemu-user's in_asm, exec and cpu logs, and
padlock and syscall lines, on the gdb_xcrypt guest (one REP XCRYPTECB of 4 blocks)."""

from __future__ import annotations

import re
import subprocess


def emu(runner, *args, check=True):
    p = subprocess.run([str(runner.emulator), "run", *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def test_in_asm_prints_each_block_once_with_the_padlock_instruction(runner, target, tmp_path):
    log = tmp_path / "log"
    emu(runner, "--cpu", target.cpu, "-d", "in_asm", "-D", log,
        runner.guest("gdb_xcrypt", target.arch))
    text = log.read_text()
    blocks = text.split("----------------\n")[1:]
    starts = [b.splitlines()[1].split(":")[0] for b in blocks]
    assert len(starts) == len(set(starts)) > 100  # once each
    enc = [b for b in blocks if b.startswith("IN: encrypt_blocks\n")]
    assert re.search(r"^0x[0-9a-f]{8}:  rep xcryptecb$", enc[0], re.M), enc[0]


def test_exec_and_cpu_log_every_executed_block(runner, tmp_path):
    log = tmp_path / "log"
    p = emu(runner, "--stats", "-d", "exec,cpu", "-D", log,
            runner.guest("gdb_xcrypt", "i386"))
    text = log.read_text()
    traces = re.findall(r"^Trace 0x([0-9a-f]+) \[(\d+) insns\] (.+)$", text, re.M)
    counted = int(re.search(r"instructions counted (\d+)", p.stderr).group(1))
    assert sum(int(n) for _, n, _ in traces) == counted
    # Registers before the block after REP XCRYPTECB: ECX is 0 (§3.1), EIP the block.
    after = [a for a, _, fn in traces if fn == "encrypt_blocks"][1]
    m = re.search(rf"^Trace 0x{after} .*\nEAX=\S+ EBX=\S+ ECX=(\S+) EDX=\S+\n.*\n"
                  rf"EIP=(\S+) EFL=\S+ \[[-DOSZAPC]{{7}}\]$", text, re.M)
    assert m and m.group(1) == "00000000" and m.group(2) == after, text[:2000]


def test_padlock_and_syscall_lines(runner, target):
    prog = runner.guest("gdb_xcrypt", target.arch)
    p = emu(runner, "--cpu", target.cpu, "-d", "padlock,syscall", prog)
    strace = emu(runner, "--cpu", target.cpu, "--strace", prog)
    lines = p.stderr.splitlines()
    pad = [x for x in lines if x.startswith("PadLock ")]
    assert len(pad) == 1
    assert re.fullmatch(r"PadLock 0x[0-9a-f]+: REP XCRYPTECB completed, 64 bytes, \d+ cycles; "
                        r"ECX 4 -> 0, ESI ([0-9a-f]+) -> [0-9a-f]+, .*EFLAGS\[30\] 0 -> 1",
                        pad[0]), pad[0]
    # The system calls as --strace prints them (lines start with the process id).
    def calls(ls):
        return [x.replace(x.split(" ", 1)[0], "PID") for x in ls]
    assert calls(x for x in lines if not x.startswith("PadLock ")) == \
        calls(strace.stderr.splitlines())


def test_no_log_without_d(runner):
    p = emu(runner, runner.guest("gdb_xcrypt", "i386"))
    assert p.stderr == ""


def test_bad_items_and_files_are_one_line(runner, tmp_path):
    prog = runner.guest("hello", "i386")
    p = emu(runner, "-d", "in_asm,bogus", prog, check=False)
    assert p.returncode == 2
    assert p.stderr == ("padlock-emu: unknown -d item 'bogus'; known: in_asm, cpu, exec, "
                        "padlock, syscall\n")
    bad = tmp_path / "missing" / "log"
    p = emu(runner, "-d", "exec", "-D", bad, prog, check=False)
    assert p.returncode == 1
    assert p.stderr == f"padlock-emu: cannot write the log '{bad}': No such file or directory\n"
