"""Reads test vectors out of the kernel's crypto/testmgr.h (Linux 6.1): the arrays of
`struct cipher_testvec` (key, klen, iv, ptext, ctext, len) and `struct hash_testvec`
(plaintext, psize, digest). C string literals are decoded; fields we do not use are skipped."""

from __future__ import annotations

import re
from pathlib import Path

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_FIELD = re.compile(r"\.(\w+)\s*=\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+|[^,}]+)", re.S)


def _c_string(literals: str) -> bytes:
    out = bytearray()
    for body in _STRING.findall(literals):
        i = 0
        while i < len(body):
            c = body[i]
            if c != "\\":
                out.append(ord(c))
                i += 1
                continue
            nxt = body[i + 1]
            if nxt == "x":
                m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
                out.append(int(m.group(0), 16))
                i += 2 + len(m.group(0))
            elif nxt in "01234567":
                m = re.match(r"[0-7]{1,3}", body[i + 1:])
                out.append(int(m.group(0), 8) & 0xFF)
                i += 1 + len(m.group(0))
            else:
                out.append({"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39}[nxt])
                i += 2
    return bytes(out)


def _entries(text: str, array: str) -> list[str]:
    start = text.index(f" {array}[] = {{")
    i = text.index("{", start + len(array)) + 1
    depth, entries, cur = 0, [], None
    in_str = False
    while True:
        c = text[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            in_str = c != '"'
        elif c == '"':
            in_str = True
        elif c == "{":
            depth += 1
            if depth == 1:
                cur = i + 1
        elif c == "}":
            if depth == 0:
                return entries
            depth -= 1
            if depth == 0:
                entries.append(text[cur:i])
        i += 1


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def vectors(testmgr: Path, array: str) -> list[dict]:
    """The entries of `array` as dicts: string fields as bytes, numbers as int."""
    text = _strip_comments(testmgr.read_text(errors="replace"))
    out = []
    for entry in _entries(text, array):
        d = {}
        for name, value in _FIELD.findall(entry):
            value = value.strip()
            if value.startswith('"'):
                d[name] = _c_string(value)
            elif re.fullmatch(r"\d+", value):
                d[name] = int(value)
            else:
                d[name] = value
        out.append(d)
    return out
