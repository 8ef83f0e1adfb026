"""timerfd on the guest's virtual clock (docs/emulator.md, "Sockets"). tests/guest/timerfd.c
arms timerfds (relative, an interval, TFD_TIMER_ABSTIME on CLOCK_REALTIME and in the past),
waits for them with read, poll, epoll_wait and select, alone and while a second thread
computes, and prints the expirations read and the CLOCK_MONOTONIC time that passed. With
timing on, that time is the timer's setting (at any --mhz) and the same run after run;
with --timing off the timerfd is the host's and the time is real. It also checks ppoll's
signal mask: a pending signal the mask unblocks ends the wait with EINTR and its handler
runs, the old mask back afterwards."""

from __future__ import annotations

import re
import subprocess

import pytest

# (pattern, {field: (low, high)}): `us` values in microseconds, checked in [low, high).
VIRTUAL = [
    (r"read ticks=1 us=(\d+)", (50000, 50300)),
    (r"nonblock read=-1 eagain=1", None),
    (r"short read=-1 einval=1", None),
    (r"gettime armed_ms=29", None),
    (r"gettime disarmed=1", None),
    (r"interval ticks=3 next_ms=5 interval_ms=10", None),
    (r"interval next ticks=1 us=(\d+)", (4700, 5000)),
    (r"abs_realtime poll=1 us=(\d+) ticks=1", (30000, 30300)),
    (r"abs_past ticks=1", None),
    (r"epoll=1 us=(\d+) ticks=1", (20000, 20300)),
    (r"select_timeout=0 us=(\d+)", (15000, 15300)),
    (r"ppoll_mask=-1 eintr=1 handled=1 still_blocked=1", None),
    (r"ppoll_blocked=1 handled=0 ticks=1", None),
    (r"after_unblock handled=1", None),
    # With a second thread: the waiter wakes when its slice-ending deadline comes.
    (r"thread read ticks=1 us=(\d+)", (20000, 21500)),
    (r"thread poll=1 us=(\d+) ticks=1", (25000, 26500)),
]


def run(runner, target, *extra, args=()):
    p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, *extra,
                        str(runner.guest("timerfd", target.arch)), *args],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return p.stdout.decode()


def check(out, expected):
    lines = out.splitlines()
    assert len(lines) == len(expected), out
    for line, (pattern, bounds) in zip(lines, expected):
        m = re.fullmatch(pattern, line)
        assert m, f"{line!r} !~ {pattern!r}"
        if bounds is not None:
            assert bounds[0] <= int(m.group(1)) < bounds[1], line


@pytest.mark.parametrize("mhz", [None, "100"])
def test_timerfd_on_virtual_clock(runner, target, mhz):
    extra = ["--seed", "7"] + (["--mhz", mhz] if mhz else [])
    out = run(runner, target, *extra)
    check(out, VIRTUAL)
    # The virtual clock: the same times, to the microsecond, in a second run.
    assert run(runner, target, *extra) == out


def test_timerfd_timing_off_is_real_time(runner, target):
    # The host's timerfd: at least the timer's setting passes in real time (and so on the
    # guest's clock, the host's with timing off).
    real = [(p, None if b is None else (b[0], b[0] + 5_000_000)) for p, b in VIRTUAL[:14]]
    # The interval: the sleep and the host's scheduling put the next expiry anywhere in it.
    # What is left of the 30 ms: host time passed since the arming, more than a
    # millisecond on a loaded machine (26 and 28 ms were seen under the sanitizers).
    real[3] = (r"gettime armed_ms=(\d+)", (0, 30))
    real[5] = (r"interval ticks=\d+ next_ms=\d+ interval_ms=10", None)
    real[6] = (r"interval next ticks=1 us=(\d+)", (0, 10001))
    check(run(runner, target, "--timing", "off", args=["alone"]), real)
