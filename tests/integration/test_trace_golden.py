"""Golden traces (traces/README.md): every run listed in tests/golden/runs.txt is
recorded again with --trace and must equal its golden file, compared by
`padlock-emu trace diff` (results, registers, control words, cycles, virtual time,
diagnostics, exit). A change of results or cycles fails here until the golden files are
regenerated on purpose with scripts/update_golden_traces.sh and the diff is reviewed."""

from __future__ import annotations

import subprocess

import pytest

from golden_traces import RUNS_FILE, GOLDEN_DIR, read_runs, record

RUNS = read_runs()


def test_runs_file_and_golden_files_match():
    """Every run has its golden file and every golden file its run."""
    expected = {r.golden.name for r in RUNS}
    present = {p.name for p in GOLDEN_DIR.glob("*.jsonl")}
    assert expected - present == set(), f"missing golden files (run {RUNS_FILE.name} update)"
    assert present - expected == set(), "golden files without a run in runs.txt"


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_golden_trace(emulator_path, guest_dir, tmp_path, run):
    if not (guest_dir / run.program()).is_file():
        pytest.skip(f"{run.program()} not built (gcc could not build {run.arch} guests)")
    fresh = tmp_path / f"{run.name}.jsonl"
    record(run, emulator_path, guest_dir, fresh)
    diff = subprocess.run([str(emulator_path), "trace", "diff", str(run.golden), str(fresh)],
                          capture_output=True, text=True)
    assert diff.returncode == 0, (
        f"{run.name} changed (intended? regenerate with scripts/update_golden_traces.sh "
        f"{run.name} and review the diff):\n{diff.stdout}{diff.stderr}")
