"""Reader for the Botan-style vector files under tests/vectors/ (the format of
tests/common/vector_file.hpp): '# comment', '[section]', 'Key = value' lines, a blank
line ends a record."""

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

    def hex(self, key: str) -> bytes:
        return bytes.fromhex(self.fields[key])


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
