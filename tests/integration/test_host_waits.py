"""Host waits that let the other guest threads run (docs/emulator.md, "Threads", "Host
waits"): write and send to a full pipe or socket, connect, wait4/waitpid and waitid on a
child, sigsuspend, pause and rt_sigtimedwait. tests/guest/waits.c makes each call while a second thread must act
for it to end (drain the pipe, write the byte the child waits for, send the signal): a
call that blocked the whole process would never return (the run times out). Each mode's
output is compared with the same binary run natively."""

from __future__ import annotations

import re
import subprocess

import pytest

from guestrun import straces_without_pid

MODES = ["write", "write_whole", "send", "wait4", "waitid", "sigsuspend", "pause", "sigtimedwait", "connect"]


def native(runner, target, mode):
    p = subprocess.run([str(runner.guest("waits", target.arch)), mode], capture_output=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p.stdout.decode()


def emulated(runner, target, mode, extra=()):
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--seed", "3", *extra,
           str(runner.guest("waits", target.arch)), mode]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return p


@pytest.mark.parametrize("mode", MODES)
def test_other_thread_runs_meanwhile(runner, target, mode):
    out = emulated(runner, target, mode).stdout.decode()
    assert out == native(runner, target, mode)
    expected = {
        "write": "written=1048576\nread=1048576\nsame=1\n",
        # One blocking write of 1 MiB returns when all of it is in the pipe, as on Linux.
        "write_whole": "calls=1\nwritten=1048576\nread=1048576\nsame=1\n",
        "send": "written=1048576\nread=1048576\nsame=1\n",
        "wait4": "wait4_pid_ok=1 exited=1 status=5\nworker_wrote=1\n",
        "waitid": "waitid=0 code_exited=1 status=5 pid_ok=1\nworker_wrote=1\n",
        "sigsuspend": "mask_restored=1\nsigsuspend=-1 eintr=1 handled=1 worker_ran=1\n",
        "pause": "pause=-1 eintr=1 handled=1 worker_ran=1\n",
        # rt_sigtimedwait: a pending signal at once, a timeout (EAGAIN), a signal sent by
        # a second thread while main waits, and a timeout while another thread spins.
        "sigtimedwait": "pending=SIGUSR2 code_user=1 pid_ok=1\ntimeout=-1 eagain=1\n"
                        "from_thread=SIGUSR1 code_user=1 worker_ran=1\n"
                        "timeout_with_thread=-1 eagain=1\n",
        # connect to an AF_UNIX listener with a full backlog until a second thread accepts
        "connect": "second_connect=0\naccepted=2\n",
    }
    assert out == expected[mode]


@pytest.mark.parametrize("mode", ["write", "write_whole", "sigsuspend"])
def test_same_seed_same_calls(runner, target, mode):
    # The pipe is filled and drained by guest threads only, the signal sent by one: with
    # the same --seed both runs make the same calls in the same order, waits included.
    a = emulated(runner, target, mode, extra=["--strace", "--quantum", "50"])
    b = emulated(runner, target, mode, extra=["--strace", "--quantum", "50"])
    assert a.stdout == b.stdout
    sa, sb = straces_without_pid(a.stderr.decode(), b.stderr.decode())
    assert sa == sb
    if mode.startswith("write"):
        # A write into the full pipe waited (its strace result is "?") and was made again.
        assert re.search(r"write\(4, 0x[0-9a-f]+, \d+\) = \?", a.stderr.decode()), \
            a.stderr.decode()[-2000:]
