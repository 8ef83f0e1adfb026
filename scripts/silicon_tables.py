"""Published silicon timings beyond the guide, loaded from their data files.

The figures live in tests/vectors/timing/ (one file per source, the source named in the
file's header); this module only reads them, so calibration and comparison scripts share
one transcription.

    from silicon_tables import load_gladman_c3
    t = load_gladman_c3()
    t.cpb("aligned", "ecb", "encrypt", 1000)   # 0.63
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GLADMAN_C3_1200 = REPO / "tests" / "vectors" / "timing" / "gladman_c3_1200.tsv"

# The block counts of Gladman's tables (one column each).
GLADMAN_BLOCKS = (1, 10, 100, 1000)

Key = tuple[str, str, str, int]  # (align, mode, dir, blocks)


@dataclass
class PublishedTable:
    """Cycles per byte by (align, mode, dir, blocks), with the file's header as source."""

    path: Path
    source: str
    cells: dict[Key, float] = field(default_factory=dict)
    peak: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def cpb(self, align: str, mode: str, direction: str, blocks: int) -> float:
        return self.cells[(align, mode, direction, blocks)]

    def rows(self) -> list[tuple[str, str, str]]:
        """(align, mode, dir) in file order."""
        return list(self.peak)


def load_gladman_c3(path: Path = GLADMAN_C3_1200) -> PublishedTable:
    """Gladman's via_ace.txt tables (1.2 GHz C3, C code), aligned and unaligned."""
    header: list[str] = []
    table = PublishedTable(path=path, source="")
    columns: list[str] | None = None
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            header.append(line[1:].strip())
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if columns is None:
            columns = fields
            continue
        row = dict(zip(columns, fields))
        key = (row["align"], row["mode"], row["dir"])
        for blocks in GLADMAN_BLOCKS:
            table.cells[key + (blocks,)] = float(row[f"b{blocks}"])
        table.peak[key] = row["peak"]
    if columns is None:
        raise ValueError(f"{path}: no column header")
    table.source = " ".join(header)
    return table
