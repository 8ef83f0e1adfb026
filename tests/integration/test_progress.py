"""The progress line (--progress, PADLOCK_EMU_PROGRESS; docs/debugging.md): on a terminal
(a pseudo-terminal here) a run longer than 2 s shows one status line on stderr, redrawn
and erased at the end; never when stderr is not a terminal or when it is turned off. The
guest is the host's `sleep 3` under --timing off, so the run takes 3 s of host time."""

from __future__ import annotations

import os
import pty
import re
import subprocess

import pytest

SLEEP = "/usr/bin/sleep"
pytestmark = pytest.mark.skipif(not os.path.exists(SLEEP), reason="no /usr/bin/sleep")


def on_pty(cmd, env=None):
    """Runs cmd with stderr on a pseudo-terminal; returns (returncode, bytes seen there)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=slave, env=env)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's last user is gone
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    return p.wait(timeout=60), data


def sleep_cmd(runner, *opts):
    return [str(runner.emulator), "run", "--timing", "off", "--cpu", "nano", *opts, SLEEP, "3"]


def test_progress_line_on_a_terminal(runner):
    rc, data = on_pty(sleep_cmd(runner))
    assert rc == 0
    lines = re.findall(rb"\rpadlock-emu: timing off, PadLock 0B, host (\d+\.\d) s\x1b\[K", data)
    # First after 2 s, then twice a second until the guest ends at 3 s.
    assert lines and float(lines[0]) >= 2.0 and len(lines) >= 2, data
    assert data.endswith(b"\r\x1b[K"), data  # erased at the end


@pytest.mark.parametrize("how", ["option", "environment"])
def test_progress_off(runner, how):
    env = dict(os.environ)
    opts = []
    if how == "option":
        opts = ["--progress", "off"]
        env["PADLOCK_EMU_PROGRESS"] = "on"  # the command line wins
    else:
        env["PADLOCK_EMU_PROGRESS"] = "off"
    rc, data = on_pty(sleep_cmd(runner, *opts), env)
    assert (rc, data) == (0, b"")


def test_never_without_a_terminal(runner):
    p = subprocess.run(sleep_cmd(runner, "--progress", "on"), capture_output=True, timeout=60)
    assert (p.returncode, p.stderr) == (0, b"")


def test_bad_values_are_usage_errors(runner):
    p = subprocess.run([str(runner.emulator), "run", "--progress", "maybe", SLEEP, "0"],
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stderr) == (2, "padlock-emu: --progress expects on or off, got "
                                           "'maybe'\n")
    env = dict(os.environ, PADLOCK_EMU_PROGRESS="yes")
    p = subprocess.run([str(runner.emulator), "run", SLEEP, "0"], capture_output=True,
                       text=True, timeout=60, env=env)
    assert (p.returncode, p.stderr) == (2, "padlock-emu: PADLOCK_EMU_PROGRESS expects on or "
                                           "off, got 'yes'\n")
