"""docs/fidelity.md is generated from the diagnostics table and the tests: it must match."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fidelity_index_is_current():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_fidelity.py"), "--check"],
        env=dict(os.environ),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_every_undefined_case_has_a_test():
    text = (ROOT / "docs" / "fidelity.md").read_text()
    assert "**none**" not in text, "a diagnostic in docs/fidelity.md names no test"
