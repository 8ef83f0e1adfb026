"""Stubs for the C library functions a compiled driver may import.

Compilers emit calls to ``memcpy``, ``memset``, ``memmove``, ``memcmp`` and ``strlen``
even in freestanding code (struct copies, large initialisers), and kernel-style code
imports an allocator. :meth:`padlock_emu.Machine.stub_libc` registers these; each takes
the machine and the C arguments, as every stub does. They cost no guest cycles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, Optional

if TYPE_CHECKING:  # pragma: no cover
    from .machine import Machine

__all__ = ["LIBC"]


def memcpy(m: "Machine", dst: int, src: int, n: int) -> int:
    m.write(dst, m.read(src, n))
    return dst


def memmove(m: "Machine", dst: int, src: int, n: int) -> int:
    m.write(dst, m.read(src, n))  # read fully first: overlap is safe
    return dst


def memset(m: "Machine", dst: int, c: int, n: int) -> int:
    m.write(dst, bytes([c & 0xFF]) * n)
    return dst


def memcmp(m: "Machine", a: int, b: int, n: int) -> int:
    x, y = m.read(a, n), m.read(b, n)
    for p, q in zip(x, y):
        if p != q:
            return p - q
    return 0


def strlen(m: "Machine", s: int) -> int:
    return len(m.read_cstring(s, 1 << 20))


def malloc(m: "Machine", size: int) -> int:
    return m.alloc(max(size, 1), align=16)


def calloc(m: "Machine", count: int, size: int) -> int:
    return m.alloc(max(count * size, 1), align=16)  # fresh pages are zero


def free(m: "Machine", ptr: int) -> Optional[int]:
    return None  # the arena is not reused: a use after free still reads the old data


LIBC: Dict[str, Callable[..., Optional[int]]] = {
    "memcpy": memcpy,
    "memmove": memmove,
    "memset": memset,
    "memcmp": memcmp,
    "strlen": strlen,
    "malloc": malloc,
    "calloc": calloc,
    "free": free,
}
