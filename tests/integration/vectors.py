"""The one Python reader for the Botan-style vector files under tests/vectors/ (the format of
tests/common/vector_file.hpp): '# comment', '[section]', 'Key = value' lines; a blank line
or a section ends a record. tests/python imports it too (its conftest.py puts this folder on
sys.path)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

VECTOR_DIR = Path(__file__).resolve().parents[1] / "vectors"


@dataclass
class Record:
    file: str
    section: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """'file.vec:LINE', the record's first line: a test id that says where it is."""
        return f"{self.file}:{self.line}"

    def hex(self, key: str) -> bytes:
        return bytes.fromhex(self.fields[key])

    def num(self, key: str) -> int:
        return int(self.fields[key], 0)

    def __getitem__(self, key: str) -> str:
        return self.fields[key]

    def __contains__(self, key: str) -> bool:
        return key in self.fields


def read_vectors(path: Path) -> list[Record]:
    out: list[Record] = []
    section = ""
    cur: Record | None = None
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line:
            cur = None
            continue
        if line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section, cur = line[1:-1], None
            continue
        if "=" not in line:
            raise ValueError(f"{path}:{lineno}: expected 'key = value'")
        key, value = (s.strip() for s in line.split("=", 1))
        if cur is None:
            cur = Record(path.name, section, lineno)
            out.append(cur)
        cur.fields[key] = value
    return out
