"""Inputs that once crashed or hung the emulator (docs/reliability.md, "Regressions"): each
case must end quickly with the guest's own result or a one-line error, never a host
signal, an abort or a hang. The ELF files are made here (elfcraft.py); the guests come
from tests/guest/random_code.c."""

from __future__ import annotations

import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elfcraft import (ET_EXEC, PF_R, PF_W, PF_X, PT_LOAD, Elf, Segment, exit_code,
                      exit_with_dword_at, static_exit)

# Every case ends in seconds; a hang fails here rather than stalling the suite.
TIMEOUT = 60


PEAK_RSS_WRAPPER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run(emulator: Path, *args, cpu: str | None = None) -> subprocess.CompletedProcess:
    cmd = [str(emulator), "run"] + (["--cpu", cpu] if cpu else []) + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)


def run_peak_rss(emulator: Path, prog: Path, tmp_path: Path) -> tuple[int, int, str]:
    """Runs `prog` on the nano: the emulator's own peak RSS in KiB, its exit status and
    stderr, checking that it took under 10 s. A child's ru_maxrss keeps the high-water mark
    of what it was before exec, a fork of this pytest worker (1.1 GB after other tests): a
    small wrapper forks the emulator from its fresh image and reports the emulator's wait4."""
    start = time.monotonic()
    report = tmp_path / "rusage"
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS_WRAPPER, str(report), str(emulator),
                           "run", "--cpu", "nano", str(prog)],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert time.monotonic() - start < 10
    maxrss_kib, status = map(int, report.read_text().split())
    return maxrss_kib, status, proc.stderr


def one_line_error(proc: subprocess.CompletedProcess, needle: str) -> None:
    """Refused: status 1 and one line on stderr that names the reason."""
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("padlock-emu: "), proc.stderr
    assert needle in lines[0], proc.stderr


# --- the loader ------------------------------------------------------------------------


def test_interpreter_at_the_program_addresses_is_refused(emulator_path, tmp_path):
    # Once a host SIGSEGV: the second image was copied into the first one's read-only pages.
    interp = static_exit(32, 0x08048000, 7).write(tmp_path / "interp")
    prog = static_exit(32, 0x08048000, 3, interp=str(interp)).write(tmp_path / "prog")
    one_line_error(run(emulator_path, prog), "overlaps memory already mapped")


def test_interpreter_elsewhere_runs_first(emulator_path, tmp_path):
    # The same pair with the interpreter out of the way: it starts, and its exit wins.
    interp = static_exit(32, 0x09000000, 7).write(tmp_path / "interp")
    prog = static_exit(32, 0x08048000, 3, interp=str(interp)).write(tmp_path / "prog")
    proc = run(emulator_path, prog)
    assert proc.returncode == 7, proc.stderr


@pytest.mark.parametrize("bits", [32, 64])
def test_offset_not_congruent_to_vaddr_is_refused(emulator_path, tmp_path, bits):
    # p_offset 3 bytes off the page alignment of p_vaddr: Linux's mmap of the segment fails;
    # this once ran the bytes at the wrong place, forever.
    base = 0x08048000 if bits == 32 else 0x400000
    code = exit_code(bits, 0)
    image = bytes(0x203) + code
    elf = Elf(bits=bits, entry=base + 0x200,
              segments=[Segment(PT_LOAD, base, 3, image[3:])])
    prog = elf.write(tmp_path / "prog")
    start = time.monotonic()
    proc = run(emulator_path, prog, cpu=None if bits == 32 else "nano")
    assert time.monotonic() - start < 10
    one_line_error(proc, "differ modulo the page size")


def test_bss_near_4_gib_is_mapped_lazily_and_zero(emulator_path, tmp_path):
    # p_memsz just under 4 GiB: once zero-filled page by page (29 s, 4.2 GB of host RAM).
    # The file continues past p_filesz with 0xFF bytes, which must not show in the bss;
    # the program exits with the word just past its file part, and its last word.
    base, filesz, memsz = 0x400000, 0x1000 + 0x180, 0xFFF00000
    last = base + memsz - 4
    code = exit_with_dword_at(64, base + filesz)
    check_last = exit_with_dword_at(64, last)
    image = bytearray(b"\xff" * 0x2000)
    image[0x200:0x200 + len(code)] = code
    elf = Elf(bits=64, entry=base + 0x200,
              segments=[Segment(PT_LOAD, base, 0, bytes(image), memsz=memsz, filesz=filesz,
                                flags=PF_R | PF_W | PF_X)])
    prog = elf.write(tmp_path / "prog")
    image[0x200:0x200 + len(check_last)] = check_last
    prog_last = Elf(bits=64, entry=base + 0x200,
                    segments=[Segment(PT_LOAD, base, 0, bytes(image), memsz=memsz,
                                      filesz=filesz, flags=PF_R | PF_W | PF_X)]
                    ).write(tmp_path / "prog_last")
    for p in (prog, prog_last):
        maxrss_kib, status, stderr = run_peak_rss(emulator_path, p, tmp_path)
        assert status == 0, (status, stderr)
        assert maxrss_kib < 1 << 20, maxrss_kib  # far below the 4 GiB it once touched


def test_bss_over_an_earlier_segment_is_not_cleared_by_hand(emulator_path, tmp_path):
    # Found by the elf_loader fuzz target: a second PT_LOAD whose bss of gigabytes lay over
    # the first's pages was zeroed by hand, page by page (1.8 GB of host RAM, 8 s under the
    # sanitizers). Its whole pages are now fresh zero pages. The shared page keeps the first
    # segment's bytes below the second's bss and reads 0 in it; the program exits with the
    # word at `probe`.
    base, memsz = 0x400000, 0x80000000
    second = base + 0x1000
    bss = second + 0x80
    image = bytearray(b"\xff" * 0x2000)
    for probe, want in ((bss - 4, 0xFF), (bss, 0), (base + 0x10000, 0),
                        (base + memsz - 4, 0)):
        code = exit_with_dword_at(64, probe)
        image[0x200:0x200 + len(code)] = code
        elf = Elf(bits=64, entry=base + 0x200, segments=[
            Segment(PT_LOAD, base, 0, bytes(image), memsz=memsz, flags=PF_R | PF_W | PF_X),
            Segment(PT_LOAD, second, 0x1000, bytes(image[0x1000:]), filesz=0x80,
                    memsz=memsz - 0x1000, flags=PF_R | PF_W)])
        maxrss_kib, status, stderr = run_peak_rss(emulator_path, elf.write(tmp_path / "prog"),
                                                  tmp_path)
        assert status == want, (hex(probe), status, stderr)
        assert maxrss_kib < 1 << 20, maxrss_kib  # far below the 2 GiB it once touched


def test_segment_past_the_window_is_refused(emulator_path, tmp_path):
    base = 0xFFFFF000
    elf = Elf(bits=32, entry=base, segments=[Segment(PT_LOAD, base, 0, bytes(0x100),
                                                      memsz=0x2000)])
    one_line_error(run(emulator_path, elf.write(tmp_path / "prog")),
                   "lies outside the emulated address space")


def test_huge_tls_alignment_ends_without_a_host_abort(emulator_path, guest_dir, tmp_path):
    # glibc sizes the TLS block by PT_TLS p_align; 2^44 once ended in std::bad_alloc thrown
    # through Unicorn (SIGABRT). Now the allocation is the guest's ENOMEM, as on Linux, and
    # glibc reports it.
    data = bytearray((guest_dir / "guest_hello_x86_64").read_bytes())
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    patched = False
    for i in range(phnum):
        off = phoff + i * phentsize
        if struct.unpack_from("<I", data, off)[0] == 7:  # PT_TLS
            struct.pack_into("<Q", data, off + 48, 1 << 44)
            patched = True
    assert patched, "guest_hello_x86_64 has no PT_TLS"
    prog = tmp_path / "tls"
    prog.write_bytes(bytes(data))
    prog.chmod(0o755)
    proc = run(emulator_path, prog, cpu="nano")
    assert proc.returncode == 127, (proc.returncode, proc.stderr)
    assert "Cannot allocate TLS block" in proc.stderr


def test_file_without_execute_permission_is_refused(emulator_path, guest_dir, tmp_path):
    # execve gives EACCES for a file with no execute bit, even to root.
    prog = tmp_path / "hello"
    prog.write_bytes((guest_dir / "guest_hello_i386").read_bytes())
    prog.chmod(0o644)
    one_line_error(run(emulator_path, prog), "Permission denied")
    prog.chmod(0o755)
    assert run(emulator_path, prog).returncode == 0


def test_interpreter_without_execute_permission_is_refused(emulator_path, tmp_path):
    interp = static_exit(32, 0x09000000, 7).write(tmp_path / "interp", mode=0o644)
    prog = static_exit(32, 0x08048000, 3, interp=str(interp)).write(tmp_path / "prog")
    one_line_error(run(emulator_path, prog), "Permission denied")


# --- the command line ------------------------------------------------------------------


@pytest.mark.parametrize("mhz", ["0.5", "0.1", "0.01"])
def test_clock_below_the_minimum_is_a_usage_error(emulator_path, guest_dir, mhz):
    # These clocks once hung: the 2000-clock interrupts took all the time.
    proc = run(emulator_path, "--mhz", mhz, guest_dir / "guest_hello_i386")
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "below the lowest the timing model supports" in proc.stderr


def test_interrupts_that_leave_no_time_are_a_usage_error(emulator_path, guest_dir):
    proc = run(emulator_path, "--mhz", "2", "--irq-hz", "1000", guest_dir / "guest_hello_i386")
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "would take over half" in proc.stderr


@pytest.mark.parametrize("args", [["--mhz", "1.2"], ["--mhz", "1", "--irq-hz", "0"]])
def test_lowest_clocks_run(emulator_path, guest_dir, args):
    # 1.2 MHz: the 250 Hz interrupts take 42 % at most; 1 MHz without interrupts.
    proc = run(emulator_path, *args, guest_dir / "guest_hello_i386")
    assert proc.returncode == 0, proc.stderr


# --- random code -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_code_ends(runner, target, seed):
    # Seeds 1 and 3 once hung the i386 guest (IRET into virtual-8086 mode, then a handler
    # that could not run). Each round ends by a signal; the process ends by itself.
    start = time.monotonic()
    proc = runner.run("random_code", target, args=[200, seed], timeout=TIMEOUT)
    assert time.monotonic() - start < TIMEOUT
    lines = dict(line.split("=", 1) for line in proc.stdout.decode().splitlines())
    assert lines["rounds"] == "200"
    ends = {int(k): int(v) for k, v in (e.split(":") for e in lines["ends"].split(","))}
    assert sum(ends.values()) == 200
    assert ends.get(11, 0) > 0  # SIGSEGV, the commonest end


def test_handler_fault_overflowing_the_altstack_kills(runner, target):
    # A handler that faults again on the alternate stack (SA_NODEFER): frames descend until
    # the next would leave the stack; Linux then kills with SIGSEGV. The emulator once
    # wrapped around to the top of the stack and looped forever.
    proc = runner.run("random_code", target, args=["altstack-overflow"], timeout=TIMEOUT,
                      check=False)
    assert proc.returncode == -11, proc.stderr
    assert proc.stdout.decode() == "altstack_overflow=start\n"


def test_iret_into_vm86_does_not_hang(runner, guest_dir):
    # QEMU's IRET entered virtual-8086 mode from CPL 3 and the guest hung; the SDM's IRET
    # ignores VM there and returns (iret-vm86-cpl0.patch; docs/emulator.md, "Unicorn").
    proc = runner.run("random_code", ("i386", "esther"), args=["iret-vm"], timeout=TIMEOUT)
    assert proc.stdout.decode() == "iret_vm=returned\n"


def test_handler_starts_with_df_clear(runner, target):
    # Linux clears DF (and TF, RF) for a signal handler, whatever the interrupted code set.
    proc = runner.run("random_code", target, args=["handler-df"], timeout=TIMEOUT)
    assert proc.stdout.decode() == "handler_df=0\n"


def test_sa_restart_reruns_an_interrupted_read(runner, target):
    # Host time (--timing off): the 100 ms alarm interrupts the blocking read; with
    # SA_RESTART the call runs again and gets the bytes written at 0.5 s.
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--timing", "off",
           str(runner.guest("random_code", target.arch)), "restart-read"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    time.sleep(0.5)
    out, err = proc.communicate(b"hello", timeout=TIMEOUT)
    assert proc.returncode == 0, err
    assert out.decode() == "read=5 alarms=1 errno=0\n"


def test_top_of_the_i386_address_space_stays_out_of_reach(runner):
    # What Linux answers an i386 program on x86-64 (TASK_SIZE 0xFFFFE000): the emulator's
    # GDT and boot stub live in those two pages; unmapping or remapping them once crashed
    # the host (SIGSEGV in direct and TLB mode alike).
    want = """mmap_fixed fffff000 12
mprotect fffff000 12
mmap_fixed ffffe000 12
mprotect ffffe000 12
mmap_fixed ffffd000 0
mprotect ffffd000 0
mmap_fixed ffff0000 0
mprotect ffff0000 0
mremap_grow 12
mremap_fixed_top 22
munmap_top 22
touch_fffffffe 11
touch_ffffe000 11
"""
    for memory in ("direct", "tlb"):
        cmd = [str(runner.emulator), "run", "--memory", memory,
               str(runner.guest("random_code", "i386")), "top-pages"]
        proc = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
        assert proc.returncode == 0, (memory, proc.returncode, proc.stderr)
        assert proc.stdout.decode() == want, memory


# --- the guest cannot reach the emulator -----------------------------------------------


@pytest.mark.parametrize("memory", ["direct", "tlb"])
def test_proc_self_mem_is_the_guest_memory(runner, target, memory):
    # It was the emulator's own memory: the guest's addresses gave EIO there, and the
    # guest could have written into the emulator. Linux's answers (mem_rw, FOLL_FORCE).
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--memory", memory,
           str(runner.guest("proc_self_mem", target.arch))]
    proc = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == ("read=12345678\nwrite=9abcdef0\nforce=0badc0de\n"
                                    "seek_read=9abcdef0\nunmapped_errno=5\n")


def test_bss_on_a_page_shared_with_file_bytes_is_zero(emulator_path, tmp_path):
    # A second segment whose bss lies on a page the first one filled from the file (0xFF
    # bytes there): from p_vaddr + p_filesz on, the bss reads 0, as Linux's padzero makes it.
    base = 0x08048000
    image = bytearray(b"\xff" * 0x1000)
    code = exit_with_dword_at(32, base + 0x810)
    image[0x200:0x200 + len(code)] = code
    elf = Elf(bits=32, entry=base + 0x200,
              segments=[Segment(PT_LOAD, base, 0, bytes(image), flags=PF_R | PF_X),
                        Segment(PT_LOAD, base + 0x800, 0x800, bytes(image[0x800:0x810]),
                                memsz=0x100, flags=PF_R | PF_W)])
    proc = run(emulator_path, elf.write(tmp_path / "prog"))
    assert proc.returncode == 0, (proc.returncode, proc.stderr)



def test_max_time_stops_a_guest_that_never_ends(runner, target):
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--max-time", "1",
           str(runner.guest("random_code", target.arch)), "spin"]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert 1 <= time.monotonic() - start < 10
    assert proc.returncode == 124, proc.stderr
    assert proc.stderr == "padlock-emu: --max-time 1 s reached: the guest was stopped\n"


@pytest.mark.parametrize("value", ["0", "-1", "x", "1e9"])
def test_max_time_needs_positive_seconds(emulator_path, guest_dir, value):
    proc = run(emulator_path, "--max-time", value, guest_dir / "guest_hello_i386")
    assert proc.returncode == 2 and "--max-time 60" in proc.stderr


@pytest.mark.parametrize("memsz", [0x300010000, 0x2a00000000])
def test_huge_bss_loads_in_a_moment(emulator_path, tmp_path, memsz):
    # Found by the elf_loader fuzz target: 12 GiB took 47 s (permissions set a page at a
    # time), then 168 GiB (the page table written a page at a time). The program exits at
    # once; the bss is never touched.
    base = 0x400000
    elf = Elf(bits=64, entry=base + 0x200,
              segments=[Segment(PT_LOAD, base, 0, bytes(0x200) + exit_code(64, 0),
                                memsz=memsz, flags=PF_R | PF_W | PF_X)])
    start = time.monotonic()
    proc = run(emulator_path, elf.write(tmp_path / "prog"), cpu="nano")
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert time.monotonic() - start < 5