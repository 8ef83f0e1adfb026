#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target (docs/reliability.md, "Fuzzing") into
OUT/<target>/: PadLock encodings for the decoder, command lines for the CLI, the golden
traces (cut short) for the trace reader, hand-made ELF files (tests/integration/elfcraft.py)
for the loader, and messages for the differential unit targets. The seeds are made here
rather than committed as binaries; they stay small, so that each execution is fast.

usage: fuzz/seeds.py OUT"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import elfcraft  # noqa: E402


# A relocatable object's source: data and code sections, relocations of several kinds.
OBJECT_SOURCE = """
extern int imported(int);
int common_counter;
static const char table[] = "padlock";
int values[4] = {1, 2, 3, 4};
int pick(int i) {
  switch (i) { case 0: return values[0]; case 1: return table[1]; case 2: return imported(i);
               case 3: return common_counter; default: return -1; }
}
int twice(int i) { return pick(i) + pick(i + 1); }
"""


def put(out: Path, target: str, data: bytes) -> None:
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main() -> int:
    out = Path(sys.argv[1])
    # Decoder: byte 0 picks the mode; then prefixes and the PadLock encodings (§2.1-§5.1).
    for mode in (b"\x00", b"\x01"):
        for enc in (b"\x0f\xa7\xc0", b"\xf3\x0f\xa7\xc0", b"\xf3\x0f\xa7\xc8", b"\xf3\x0f\xa7\xd0",
                    b"\xf3\x0f\xa7\xd8", b"\xf3\x0f\xa7\xe0", b"\xf3\x0f\xa7\xe8",
                    b"\xf3\x0f\xa6\xc0", b"\xf3\x0f\xa6\xc8", b"\xf3\x0f\xa6\xd0",
                    b"\x67\xf3\x0f\xa7\xc8", b"\xf2\x0f\xa6\xc8", b"\x66\xf3\x0f\xa7\xd0",
                    b"\x0f\x32", b"\x0f\x30"):
            put(out, "decoder", mode + enc)
    # CLI: NUL-separated arguments.
    for args in (["run", "prog"], ["run", "--cpu", "nano", "--mhz", "800", "prog", "a"],
                 ["run", "--mhz=1.2", "--irq-hz", "0", "--seed", "0x10", "prog"],
                 ["run", "-E", "A=1", "-UB", "-L", "/", "--timing", "off", "prog"],
                 ["run", "--errata", "off", "--memory", "tlb", "--trace", "t", "prog"],
                 ["cpus", "--verbose"], ["trace", "summary", "x"], ["--version"], ["help", "run"]):
        put(out, "cli", b"\0".join(a.encode() for a in args))
    # Trace reader: the golden traces, whole and cut short.
    for f in sorted((ROOT / "tests" / "golden").glob("*.jsonl")):
        data = f.read_bytes()
        put(out, "trace_reader", data[:4000])
        put(out, "trace_reader", data[:1500])
    # Loader: hand-made programs and, when built, the guests.
    for bits, base in ((32, 0x08048000), (64, 0x400000)):
        put(out, "elf_loader", elfcraft.static_exit(bits, base, 0).build())
        put(out, "elf_loader", elfcraft.static_exit(bits, base, 0, interp="/lib/ld.so").build())
        e = elfcraft.static_exit(bits, base, 0)
        e.segments[0].memsz = 0x10000
        put(out, "elf_loader", e.build())
    # Object loader: the same programs, a shared object, and relocatable objects compiled
    # here (gcc -c) with data, calls to an import, a common symbol and a switch table.
    for bits, base in ((32, 0x08048000), (64, 0x400000)):
        put(out, "object_loader", elfcraft.static_exit(bits, base, 0).build())
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "obj.c"
        src.write_text(OBJECT_SOURCE)
        for flags in (["-m32"], ["-m64"], ["-m64", "-fPIC"], ["-m32", "-fPIC", "-shared"],
                      ["-m64", "-fPIC", "-shared"]):
            obj = Path(tmp) / "obj.o"
            cmd = ["gcc", "-O1", "-nostdlib", *flags, "-o", str(obj), str(src)]
            if "-shared" not in flags:
                cmd.insert(1, "-c")
            if subprocess.run(cmd, capture_output=True).returncode == 0:
                put(out, "object_loader", obj.read_bytes())
    # Memory system calls: byte 0 the memory mode; 14-byte records (call, address, length,
    # protections, flags, a second address in pages).
    def rec(call, addr, length, prot=3, flags=0, addr2=0):
        return (bytes([call]) + addr.to_bytes(4, "little") + length.to_bytes(4, "little") +
                bytes([prot, flags]) + addr2.to_bytes(3, "little"))
    for mode in (0, 1):
        put(out, "memory_syscalls", bytes([mode]) + rec(0, 0, 0x3000) + rec(2, 0, 0x1000, 1))
        put(out, "memory_syscalls", bytes([mode]) + rec(0, 0xFFFFD000, 0x1000, 3, 2) +
            rec(1, 0xFFFFE000, 0x2000) + rec(3, 0xFFFFD000, 0x1000, 0, 3, 0xFFFFF))
        put(out, "memory_syscalls", bytes([mode]) + rec(4, 0x100000, 0) + rec(4, 0x1000, 0) +
            rec(0, 0x40000000, 0x10000, 7, 1) + rec(3, 0x40000000, 0x10000, 0, 1, 0x20))
    # Path and descriptor system calls: 8-byte records (call, two descriptor selectors, a
    # path in three bytes, flags, a second path); see fuzz/fuzz_path_syscalls.cpp.
    def call(nr, fd1=0, fd2=0, a=0, b=0, c=0, flags=0, pb=0):
        return bytes([nr, fd1, fd2, a, b, c, flags, pb])
    put(out, "path_syscalls", call(0, b=16, c=16) + call(2, fd1=1, flags=1))  # link-mem
    put(out, "path_syscalls", call(0, a=0x29, c=161) + call(2, fd1=1, flags=1) +
        call(1, fd1=1))  # /proc/self/mem
    put(out, "path_syscalls", call(3, fd1=2) + call(5, fd1=2) + call(7, fd1=1, fd2=2) +
        call(8, fd1=2))  # the emulator's output descriptor
    put(out, "path_syscalls", call(0, a=0x49, c=161, flags=4) + call(19, fd1=1) +
        call(0, fd1=1, b=11, c=11))  # /proc/self/fd, then a number in it
    put(out, "path_syscalls", call(12, a=1, b=0) + call(0, b=1, c=5 + 40 * 2) +
        call(2, fd1=1, flags=1))  # chdir("/proc"), then self/mem
    # MONTMUL: control byte, size byte, then operand bytes.
    for ctl in (0, 1, 2, 3, 0x40, 0x41, 0xFC):
        for size in (0, 2, 6, 30):
            put(out, "montmul_vs_gmp", bytes([ctl, size]) + bytes(range(1, 200, 3)))
    # Differential units: a control byte, then key/IV/data (xcrypt) or the message (xsha).
    for ctl in range(0, 256, 5):
        put(out, "xcrypt_vs_openssl", bytes([ctl]) + bytes(range(48)) + bytes(16 * (ctl % 9)))
        put(out, "xsha_vs_openssl", bytes([ctl]) + b"abc" * (ctl % 50))
        put(out, "xsha512_vs_openssl", bytes([ctl]) + b"abc" * (ctl % 90))
        put(out, "sm3_vs_openssl", bytes([ctl]) + b"abcd" * (ctl % 40))
        put(out, "sm4_vs_openssl", bytes([ctl]) + bytes(range(32)) + bytes(16 * (ctl % 9)))
    # SM2 verify: mode and change, d, k, e, then r || s (an XOR mask when the harness signs)
    # and a raw key; mode 0 signs, so a zero mask (or one whose first byte's low bits are
    # set: not applied) leaves a valid signature.
    for change in range(8):
        for mode in range(4):
            for mask in (bytes(64), bytes([1] + [0] * 63), bytes([4] + [0] * 62 + [0x80])):
                put(out, "sm2_verify_vs_openssl", bytes([change << 2 | mode]) +
                    bytes(range(1, 33)) + bytes(range(33, 65)) + hashlib.sha256(mask).digest() +
                    mask + bytes(range(64)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
