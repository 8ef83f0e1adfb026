"""An emulator ended from outside (Ctrl-C, kill, a hang-up) while the guest leaves the
signal at its default action: the guest dies by that signal in the run loop, so the
profile, the traces and --stats are written and closed before the emulator ends by the
same signal (docs/profiling.md, docs/emulator.md "Exit status and signals")."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time

import pytest

from test_profile import annotate

# A guest that runs REP XCRYPTCBC in a loop for much longer than the test waits.
LONG_RUN = ["host_alarm_xcrypt", "100000000"]


# The signals the tests send, at their default action in the emulator as from a terminal.
# A signal inherited as ignored stays ignored in the guest, as exec keeps it
# (docs/emulator.md, "Exit status and signals"): under nohup, SIGHUP would be.
SENT = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def default_actions() -> None:
    for sig in SENT:
        signal.signal(sig, signal.SIG_DFL)


def start(runner, target, tmp_path, *opts: str) -> subprocess.Popen:
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, *opts,
           str(runner.guest(LONG_RUN[0], target.arch)), *LONG_RUN[1:]]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path, preexec_fn=default_actions)


def wait_for_work(proc: subprocess.Popen, seconds: float = 1.5) -> None:
    time.sleep(seconds)
    assert proc.poll() is None, proc.communicate()


@pytest.mark.parametrize("sig", SENT)
def test_host_signal_closes_every_output(runner, target, tmp_path, sig):
    if shutil.which("callgrind_annotate") is None:
        pytest.skip("callgrind_annotate (valgrind) is not installed")
    proc = start(runner, target, tmp_path, "--profile", "p.out", "--trace", "t.jsonl",
                 "--chrome-trace", "c.json", "--stats")
    wait_for_work(proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -sig, err[-500:]

    text, warnings = annotate(tmp_path / "p.out", "--show=Cyc,PLCyc,PLIns")
    assert "warning" not in warnings.lower(), warnings
    assert "PROGRAM TOTALS" in text
    prof = (tmp_path / "p.out").read_text()
    assert prof.rstrip().splitlines()[-1].startswith("totals:")

    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    recs = [json.loads(line) for line in lines]  # every line is whole
    assert recs[0]["type"] == "run" and recs[-1]["type"] == "end"
    assert recs[-1]["signal"] == int(sig)
    insns = [r for r in recs if r["type"] == "insn"]
    assert len(insns) > 10 and recs[-1]["instructions"] == len(insns)

    chrome = json.loads((tmp_path / "c.json").read_text())
    names = [e["name"] for e in chrome["traceEvents"]]
    assert "REP XCRYPTCBC" in names and names[-1] == "killed by signal"

    assert b"padlock-emu: stats:   REP XCRYPTCBC" in err


def test_shell_sees_128_plus_n_after_ctrl_c(runner, target, tmp_path):
    """The status a shell reports is 128 + SIGINT, as for a native program. (set -m: a
    shell without job control starts background commands with SIGINT ignored.)"""
    cmd = (f"set -m; {runner.emulator} run --cpu {target.cpu} --profile p.out "
           f"{runner.guest(LONG_RUN[0], target.arch)} {LONG_RUN[1]} & pid=$!; sleep 1; "
           f"kill -INT $pid; wait $pid; echo status $?")
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == f"status {128 + signal.SIGINT}"
    assert (tmp_path / "p.out").read_text().rstrip().splitlines()[-1].startswith("totals:")


def test_a_guest_handler_still_gets_the_signal(runner, target, tmp_path):
    """A guest that handles SIGINT sees it and goes on (it is not the emulator's)."""
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--trace", "t.jsonl",
           str(runner.guest("hello", target.arch)), "--catch", str(int(signal.SIGINT))]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert f"caught {int(signal.SIGINT)}".encode() in out
