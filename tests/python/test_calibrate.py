"""scripts/calibrate.py's data writer: models/cpus/calibrated.hpp is exactly what the writer
produces from the values the file holds, and --set changes only the fit it names."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "calibrate.py"
DATA = ROOT / "models" / "cpus" / "calibrated.hpp"


def calibrate(*args):
    return subprocess.run([sys.executable, str(SCRIPT), "--write-data-only", *args],
                          capture_output=True, text=True)


def test_data_file_is_the_writers_output_byte_for_byte(tmp_path):
    r = calibrate("--check")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "calibrated.hpp"
    r = calibrate("--data-out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == DATA.read_bytes()


def test_check_fails_on_a_hand_edit(tmp_path):
    edited = tmp_path / "calibrated.hpp"
    edited.write_text(DATA.read_text(encoding="utf-8").replace("do not edit", "edited"),
                      encoding="utf-8")
    r = calibrate("--check", "--data-out", str(edited))
    assert r.returncode == 1
    assert "not what write_calibrated produces" in r.stderr


def test_set_changes_one_fit_and_keeps_one_provenance_line_per_table(tmp_path):
    out = tmp_path / "calibrated.hpp"
    r = calibrate("--set", "EstherAligned:CBC=9.75,20.5", "--data-out", str(out))
    assert r.returncode == 0, r.stderr
    old = DATA.read_text(encoding="utf-8").splitlines()
    new = out.read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert len(old) == len(new)
    assert len(changed) == 1
    assert changed[0][0].startswith("inline constexpr ChainFit kEstherAlignedCbc = ")
    assert changed[0][1] == (
        "inline constexpr ChainFit kEstherAlignedCbc = {kEstherAlignedTable, 9.75, 20.5};")
    text = "\n".join(new)
    for table in ("NehemiahAligned", "EstherAligned", "EstherUnaligned"):
        assert text.count(f"inline constexpr const char* k{table}Table =") == 1
    assert text.count("calibrated: the BAES loop") == 3


@pytest.mark.parametrize("bad", ["NehemiahAligned:CTR=1,2", "Pentium:CBC=1,2", "EstherAligned:CBC=1"])
def test_set_rejects_unknown_fits(bad, tmp_path):
    r = calibrate("--set", bad, "--data-out", str(tmp_path / "x.hpp"))
    assert r.returncode != 0
    assert "expected TABLE:MODE=START-UP,PER-BLOCK" in r.stderr
    assert not (tmp_path / "x.hpp").exists()
