"""The examples under docs/examples run as their own pytest suites, as a user runs them.

docs/examples/driver: the example PadLock driver (C with inline asm) built as a shared
object and as object files, tested under every CPU model through padlock_emu.Machine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import padlock_emu as pe

ROOT = Path(__file__).resolve().parents[2]


# In one process, and in two pytest-xdist workers (the plugin's parametrization and
# fixtures must be the same in every worker, docs/python.md "pytest").
@pytest.mark.parametrize("workers", [[], ["-n", "2", "--dist", "loadgroup"]],
                         ids=["serial", "xdist"])
def test_example_driver_suite_passes_under_every_cpu_model(workers):
    env = dict(os.environ)
    env.pop("PADLOCK_CPUS", None)  # every model
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs", *workers,
         str(ROOT / "docs" / "examples" / "driver")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert "failed" not in summary and "error" not in summary
    assert "skipped" not in summary, r.stdout[-3000:]  # every model runs every test
    # Every test ran for each model in 32-bit mode, for the long-mode ones in 64-bit mode
    # too, and for the three build forms of the driver.
    modes = sum(1 + int(c.long_mode) for c in pe.cpus())
    assert passed % (modes * 3) == 0 and passed >= modes * 3 * 15, summary
