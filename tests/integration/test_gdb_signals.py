"""-g PORT waits for gdb before the first instruction, and for gdb's next packet while the
guest is stopped; SIGINT, SIGTERM or SIGHUP from the host end either wait within a second,
as they end a run (docs/debugging.md): the guest dies by the signal, its outputs are
written and the emulator ends by the same signal."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time

import pytest

from test_gdb import Rsp

SENT = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def start(runner, tmp_path) -> tuple[subprocess.Popen, int]:
    emu = subprocess.Popen(
        [str(runner.emulator), "run", "-g", "0", "--trace", str(tmp_path / "t.jsonl"),
         str(runner.guest_dir / "guest_hello_i386")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in SENT])
    first = emu.stderr.readline()
    m = re.fullmatch(r"padlock-emu: gdb: waiting for a connection on port (\d+)\n", first)
    assert m, first
    return emu, int(m.group(1))


def ended_by(emu: subprocess.Popen, sig: int, tmp_path) -> None:
    start = time.monotonic()
    emu.send_signal(sig)
    try:
        emu.communicate(timeout=10)
    finally:
        if emu.poll() is None:
            emu.kill()
    assert time.monotonic() - start < 1.0
    assert emu.returncode == -sig
    recs = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert recs[0]["type"] == "run" and recs[-1]["type"] == "end"
    assert recs[-1]["signal"] == int(sig)


@pytest.mark.parametrize("sig", SENT, ids=lambda s: s.name)
def test_a_signal_ends_the_wait_for_gdb(runner, tmp_path, sig):
    emu, _ = start(runner, tmp_path)
    time.sleep(0.3)
    ended_by(emu, sig, tmp_path)


@pytest.mark.parametrize("sig", SENT, ids=lambda s: s.name)
def test_a_signal_ends_the_wait_for_gdbs_next_packet(runner, tmp_path, sig):
    emu, port = start(runner, tmp_path)
    c = Rsp(port)
    assert c.ask(b"?").startswith(b"T05")  # stopped before the first instruction
    time.sleep(0.3)
    ended_by(emu, sig, tmp_path)
    c.sock.close()
