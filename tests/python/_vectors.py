"""Reader for the Botan-style vector files under tests/vectors/ (the same format as tests/common/vector_file.hpp: `# comment`, `[section]`, `Key = value`
lines, a blank line ends a record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Record:
    section: str
    fields: Dict[str, str]
    source: str = field(default="")

    def hex(self, key: str) -> bytes:
        return bytes.fromhex(self.fields[key])

    def num(self, key: str) -> int:
        return int(self.fields[key], 0)

    def __getitem__(self, key: str) -> str:
        return self.fields[key]

    def __contains__(self, key: str) -> bool:
        return key in self.fields


def read_vectors(path: Path) -> List[Record]:
    records: List[Record] = []
    section = ""
    cur: Dict[str, str] = {}
    first = 0

    def flush() -> None:
        nonlocal cur
        if cur:
            records.append(Record(section, cur, f"{path.name}:{first}"))
        cur = {}

    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith("#"):
            continue
        elif line.startswith("[") and line.endswith("]"):
            flush()
            section = line[1:-1]
        else:
            key, sep, value = line.partition("=")
            if not sep:
                raise ValueError(f"{path}:{lineno}: expected key = value")
            if not cur:
                first = lineno
            cur[key.strip()] = value.strip()
    flush()
    return records
