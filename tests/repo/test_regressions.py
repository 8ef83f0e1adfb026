"""The fuzz regression inputs (tests/regressions/TARGET/) are hex text that decodes, never
binary files (docs/reliability.md, "Regressions"): fuzz/regressions.py writes and replays
them."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("regressions", REPO / "fuzz" / "regressions.py")
regressions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(regressions)


def tracked(folder: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", folder], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout.split()
    return [REPO / f for f in out]


def test_every_regression_input_is_hex_text() -> None:
    files = tracked("tests/regressions")
    assert files, "no regression inputs tracked"
    for f in files:
        assert f.suffix == ".hex", f"{f.name}: not a .hex text file"
        data = regressions.decode(f.read_text(encoding="ascii"))
        assert data, f"{f.name}: no bytes"


def test_hex_round_trip_keeps_every_byte() -> None:
    data = bytes(range(256)) * 3 + b"\x00"
    text = regressions.encode(data, ["a note # with a hash"])
    assert text.startswith("# a note")
    assert regressions.decode(text) == data


def test_a_damaged_hex_file_is_an_error() -> None:
    with pytest.raises(ValueError):
        regressions.decode("7f454c4\n")
    with pytest.raises(ValueError):
        regressions.decode("7f45zz\n")
