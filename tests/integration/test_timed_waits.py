"""Timeouts of select, pselect6, poll, ppoll and epoll_wait on the guest's clock
(docs/emulator.md, "Sockets"). tests/guest/timed_waits.c prints each call's result and the
CLOCK_MONOTONIC time it took. With timing on, a wait on no descriptor is a sleep on the
virtual clock (as nanosleep: no real wait, the same output run after run), and a wait on
descriptors that times out moves the virtual clock to its deadline; a descriptor ready at
once takes no virtual time. With --timing off the waits run in real time."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

MS = 1_000_000
# The guest's own instructions between its two clock_gettime calls (the libc wrappers):
# far below this at the default clock.
BOUND = MS // 2


def run(runner, target, mode, *extra):
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, *extra,
           str(runner.guest("timed_waits", target.arch)), mode]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return p.stdout.decode()


def native(runner, target, mode):
    p = subprocess.run([str(runner.guest("timed_waits", target.arch)), mode],
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p.stdout.decode()


def calls(out):
    """{call: (result, ns)} and {call: select's time left in us}."""
    res = {m[1]: (int(m[2]), int(m[3]))
           for m in re.finditer(r"^(\w+) r=(-?\d+) ns=(\d+)$", out, re.M)}
    left = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)_left_us=(\d+)$", out, re.M)}
    return res, left


def results(out):
    return {k: r for k, (r, _) in calls(out)[0].items()}


def test_waits_on_no_descriptor_are_virtual_sleeps(runner, target):
    out = run(runner, target, "sleeps")
    res, left = calls(out)
    assert sorted(res) == ["epoll_wait", "poll", "ppoll", "pselect", "select"]
    for name, (r, ns) in res.items():
        assert r == 0, name
        assert 10 * MS <= ns < 10 * MS + BOUND, (name, ns)
    assert left == {"select": 0}
    # Deterministic: nothing but the guest's clock decides what it sees.
    assert run(runner, target, "sleeps") == out
    assert results(out) == results(native(runner, target, "sleeps"))


def test_sleeps_take_no_real_time(runner, target):
    # 6 s of the guest's clock at a slow clock rate, as nanosleep: no real wait.
    t0 = time.monotonic()
    res, _ = calls(run(runner, target, "long", "--mhz", "100"))
    real = time.monotonic() - t0
    assert {k: r for k, (r, _) in res.items()} == {"select": 0, "poll": 0}
    for name, (_, ns) in res.items():
        assert 3000 * MS <= ns < 3000 * MS + 10 * BOUND, (name, ns)
    assert real < 3.0, real


def test_timeout_on_descriptors_moves_the_virtual_clock(runner, target):
    t0 = time.monotonic()
    out = run(runner, target, "pipe")
    real = time.monotonic() - t0
    res, left = calls(out)
    assert sorted(res) == ["epoll_wait", "poll", "select"]
    for name, (r, ns) in res.items():
        assert r == 0, name
        assert 20 * MS <= ns < 20 * MS + BOUND, (name, ns)
    assert left == {"select": 0}
    # The host waits in real time for the outside world (three 20 ms waits).
    assert real >= 0.06, real
    assert results(out) == results(native(runner, target, "pipe"))


def test_ready_descriptor_takes_no_virtual_time(runner, target):
    out = run(runner, target, "ready")
    res, left = calls(out)
    assert {k: r for k, (r, _) in res.items()} == {"poll": 1, "select": 1}
    for name, (_, ns) in res.items():
        assert ns < BOUND, (name, ns)
    # select's time left is virtual: the whole timeout (the outside world took none).
    assert left == {"select": 20 * 1000}
    assert results(out) == results(native(runner, target, "ready"))


def test_sleeps_let_other_threads_run(runner, target):
    res, left = calls(run(runner, target, "thread"))
    assert {k: r for k, (r, _) in res.items()} == {"poll": 0, "select": 0, "poll_pipe": 0}
    for name in ("poll", "select"):
        assert 10 * MS <= res[name][1] < 10 * MS + BOUND, (name, res[name])
    assert left == {"select": 0}
    # The host wait on the pipe times out in the scheduler while the other thread runs;
    # the virtual deadline counts from the call (the other thread may pass it meanwhile).
    assert res["poll_pipe"][1] >= 20 * MS


def test_timing_off_waits_in_real_time(runner, target):
    out = run(runner, target, "sleeps", "--timing", "off")
    res, _ = calls(out)
    for name, (r, ns) in res.items():
        assert r == 0 and ns >= 10 * MS, (name, ns)
    out = run(runner, target, "pipe", "--timing", "off")
    for name, (r, ns) in calls(out)[0].items():
        assert r == 0 and ns >= 20 * MS, (name, ns)
