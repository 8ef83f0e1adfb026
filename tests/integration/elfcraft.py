"""Hand-made ELF executables for the loader's regression tests: no compiler, no committed
binaries. Each file holds one PT_LOAD segment (or more) and code that ends the process
with a chosen status, so a test can tell "loaded and ran" from "refused" and "crashed".

The layouts follow the ELF specification's program headers (Elf32_Phdr / Elf64_Phdr)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

PT_LOAD, PT_INTERP, PT_TLS = 1, 3, 7
PF_X, PF_W, PF_R = 1, 2, 4
ET_EXEC, ET_DYN = 2, 3


def exit_code(bits: int, status: int) -> bytes:
    """exit(status) through the ABI's system call."""
    if bits == 32:  # mov eax, 1; mov ebx, status; int 0x80
        return b"\xb8\x01\x00\x00\x00\xbb" + struct.pack("<I", status) + b"\xcd\x80"
    # mov eax, 60; mov edi, status; syscall
    return b"\xb8\x3c\x00\x00\x00\xbf" + struct.pack("<I", status) + b"\x0f\x05"


def exit_with_dword_at(bits: int, address: int) -> bytes:
    """exit(the 32-bit word at `address`): the status is its low byte."""
    if bits == 32:  # mov ebx, [address]; mov eax, 1; int 0x80
        return b"\x8b\x1d" + struct.pack("<I", address) + b"\xb8\x01\x00\x00\x00\xcd\x80"
    # mov eax, [moffs64]; mov edi, eax; mov eax, 60; syscall
    return (b"\xa1" + struct.pack("<Q", address) + b"\x89\xc7\xb8\x3c\x00\x00\x00"
            b"\x0f\x05")


@dataclass
class Segment:
    type: int
    vaddr: int
    offset: int
    data: bytes = b""
    memsz: int | None = None  # default: len(data)
    flags: int = PF_R | PF_X
    align: int = 0x1000
    filesz: int | None = None  # default: len(data)


@dataclass
class Elf:
    bits: int = 32
    type: int = ET_EXEC
    entry: int = 0
    segments: list[Segment] = field(default_factory=list)

    def build(self) -> bytes:
        is64 = self.bits == 64
        ehsize, phentsize = (64, 56) if is64 else (52, 32)
        phoff = ehsize
        end = phoff + phentsize * len(self.segments)
        size = max([end] + [s.offset + len(s.data) for s in self.segments])
        out = bytearray(size)
        # Segment bytes first: a segment that maps offset 0 holds the headers too.
        for s in self.segments:
            if s.data:
                out[s.offset:s.offset + len(s.data)] = s.data
        ident = b"\x7fELF" + bytes([2 if is64 else 1, 1, 1, 0]) + bytes(8)
        machine = 62 if is64 else 3
        if is64:
            hdr = struct.pack("<16sHHIQQQIHHHHHH", ident, self.type, machine, 1, self.entry,
                              phoff, 0, 0, ehsize, phentsize, len(self.segments), 64, 0, 0)
        else:
            hdr = struct.pack("<16sHHIIIIIHHHHHH", ident, self.type, machine, 1, self.entry,
                              phoff, 0, 0, ehsize, phentsize, len(self.segments), 40, 0, 0)
        out[0:len(hdr)] = hdr
        for i, s in enumerate(self.segments):
            filesz = len(s.data) if s.filesz is None else s.filesz
            memsz = filesz if s.memsz is None else s.memsz
            if is64:
                ph = struct.pack("<IIQQQQQQ", s.type, s.flags, s.offset, s.vaddr, s.vaddr, filesz,
                                 memsz, s.align)
            else:
                ph = struct.pack("<IIIIIIII", s.type, s.offset, s.vaddr, s.vaddr, filesz, memsz,
                                 s.flags, s.align)
            out[phoff + i * phentsize:phoff + (i + 1) * phentsize] = ph
        return bytes(out)

    def write(self, path: Path, mode: int = 0o755) -> Path:
        path.write_bytes(self.build())
        path.chmod(mode)
        return path


def static_exit(bits: int, base: int, status: int, interp: str | None = None) -> Elf:
    """A static program at `base` that exits with `status`; with `interp`, the same with a
    PT_INTERP naming it (the interpreter starts first)."""
    code_off = 0x200
    code = exit_code(bits, status)
    image = bytearray(code_off + len(code))
    image[code_off:] = code
    segs = [Segment(PT_LOAD, base, 0, bytes(image))]
    if interp is not None:
        path = interp.encode() + b"\0"
        image[0x100:0x100 + len(path)] = path
        segs = [Segment(PT_INTERP, base + 0x100, 0x100, path, flags=PF_R, align=1),
                Segment(PT_LOAD, base, 0, bytes(image))]
    return Elf(bits=bits, entry=base + code_off, segments=segs)
