"""The mutation check's list (scripts/mutate.py, docs/reliability.md "Mutation check") names
the exact text each mutation replaces. A change to that code silently retires the mutation
unless this fails: every text must occur exactly once in its file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_mutation_text_occurs_once():
    r = subprocess.run([sys.executable, str(REPO / "scripts/mutate.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "every text found once" in r.stdout + r.stderr
