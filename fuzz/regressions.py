#!/usr/bin/env python3
"""The fuzz regression inputs (docs/reliability.md, "Regressions") as text: every input that
once crashed or hung a fuzz target is kept as tests/regressions/TARGET/NAME.hex, hex digits
with '#' comments, so the repository holds no binary files. The bytes are rebuilt when the
inputs are replayed.

usage: fuzz/regressions.py add TARGET FILE [NOTE]   write FILE's bytes as
                                                      tests/regressions/TARGET/<FILE's name>.hex
       fuzz/regressions.py decode HEXFILE OUT       write the bytes of HEXFILE to OUT
       fuzz/regressions.py replay FUZZER DIR        run fuzz target FUZZER once on every
                                                      DIR/*.hex; its status is the target's"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BYTES_PER_LINE = 32


def encode(data: bytes, comments: list[str]) -> str:
    lines = [f"# {c}" for c in comments]
    lines += [data[i:i + BYTES_PER_LINE].hex() for i in range(0, len(data), BYTES_PER_LINE)]
    return "\n".join(lines) + "\n"


def decode(text: str) -> bytes:
    """The bytes of a .hex file: '#' starts a comment; blanks between digits are allowed."""
    digits = "".join("".join(line.split("#", 1)[0].split()) for line in text.splitlines())
    return bytes.fromhex(digits)  # ValueError on an odd count or a non-hex character


def add(target: str, file: Path, note: str) -> Path:
    out = ROOT / "tests" / "regressions" / target / (file.name + ".hex")
    out.parent.mkdir(parents=True, exist_ok=True)
    data = file.read_bytes()
    comments = [f"fuzz_{target} input, {len(data)} bytes (fuzz/regressions.py decodes it)."]
    if note:
        comments.append(note)
    out.write_text(encode(data, comments))
    return out


def replay(fuzzer: str, directory: Path) -> int:
    inputs = sorted(directory.glob("*.hex"))
    if not inputs:
        print(f"regressions.py: no .hex inputs in {directory}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for f in inputs:
            out = Path(tmp) / f.stem
            out.write_bytes(decode(f.read_text()))
            files.append(str(out))
        # Files (not a directory) as arguments: libFuzzer runs each once and stops at the
        # first that fails.
        return subprocess.run([fuzzer, *files]).returncode


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "add":
        print(add(argv[1], Path(argv[2]), argv[3] if len(argv) > 3 else ""))
        return 0
    if len(argv) == 3 and argv[0] == "decode":
        Path(argv[2]).write_bytes(decode(Path(argv[1]).read_text()))
        return 0
    if len(argv) == 3 and argv[0] == "replay":
        return replay(argv[1], Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
