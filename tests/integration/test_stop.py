"""Every run stoppable (docs/reliability.md, "Every run stoppable"): --max-time and a host
signal end the guest promptly in every state, with --trace and --stats written whole.

The guests (tests/guest/long_rep.c) once ran on: one REP XSHA1 over 64 GiB took 109 s
under --max-time 5 (a REP instruction was never cut for the time limit), and with
--timing off a 1 us host timer whose handler runs REP XSHA1 kept both --max-time 5 and
SIGTERM from ending the run."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

CASES = {
    # A single instruction over 64 GiB of zero pages (x86-64: RCX holds the length).
    "huge": ("x86_64", "nano", ["huge", "64"], "REP XSHA1"),
    # The same with REP XCRYPTCBC in digest mode (the Nano's ACE2).
    "huge-mac": ("x86_64", "nano", ["huge-mac", "64"], "REP XCRYPTCBC"),
    # Host timer signals faster than their handler's REP XSHA1 ends.
    "storm-i386": ("i386", "esther", ["storm"], "REP XSHA1"),
    "storm-x86_64": ("x86_64", "nano", ["storm"], "REP XSHA1"),
}


def default_actions() -> None:
    # As from a terminal: the emulator inherits SIGTERM at its default action.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start(runner, case: str, timing: str, tmp_path, *opts: str) -> subprocess.Popen:
    arch, cpu, args, _ = CASES[case]
    guest = runner.guest("long_rep", arch)
    if not guest.is_file():
        pytest.skip(f"no {arch} guests")
    # Absolute: the emulator runs in tmp_path (scripts/mutate.py may pass a relative build).
    cmd = [str(Path(runner.emulator).resolve()), "run", "--cpu", cpu, "--timing", timing,
           "--trace", "t.jsonl", "--stats", *opts, str(guest.resolve()), *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            preexec_fn=default_actions)
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    assert ready and proc.stdout.readline() == b"start\n", proc.communicate(timeout=30)
    return proc


def finish(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    """Its output once it ends; killed after 20 s (the bound is far lower)."""
    try:
        return proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def assert_outputs_whole(tmp_path, case: str, err: bytes, signo: int | None) -> None:
    recs = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert recs[0]["type"] == "run" and recs[-1]["type"] == "end"
    assert recs[-1].get("signal") == signo
    assert f"padlock-emu: stats:   {CASES[case][3]}".encode() in err, err[-2000:]


@pytest.mark.parametrize("timing", ["on", "off"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_max_time_ends_the_run(runner, tmp_path, case, timing):
    t0 = time.monotonic()
    proc = start(runner, case, timing, tmp_path, "--max-time", "5")
    _, err = finish(proc)
    took = time.monotonic() - t0
    assert proc.returncode == 124, err[-2000:]
    assert 5 <= took < 6, took
    assert b"padlock-emu: --max-time 5 s reached: the guest was stopped\n" in err
    assert_outputs_whole(tmp_path, case, err, None)


@pytest.mark.parametrize("timing", ["on", "off"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_sigterm_ends_the_run(runner, tmp_path, case, timing):
    proc = start(runner, case, timing, tmp_path)
    time.sleep(0.5)
    assert proc.poll() is None
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = finish(proc)
    took = time.monotonic() - t0
    assert proc.returncode == -signal.SIGTERM, err[-2000:]
    assert took < 1, took
    assert_outputs_whole(tmp_path, case, err, int(signal.SIGTERM))
