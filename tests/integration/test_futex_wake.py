"""FUTEX_WAKE with more waiters than it asks to wake (futex(2)): it wakes at most n of
them (one when n is 0) and returns how many it woke. The guest (tests/guest/futex_wake.c)
counts the waiters left after each wake with FUTEX_CMP_REQUEUE, so the result does not
depend on timing; the reference is the same binary run natively."""

from __future__ import annotations

from guestrun import run_native

# futex(2): "returns the number of waiters that were woken up"; n = 0 wakes one on Linux.
EXPECTED = ("wake n=0 returned=1 still_waiting=4\n"
            "wake n=1 returned=1 still_waiting=3\n"
            "wake n=2 returned=2 still_waiting=1\n"
            "wake n=3 returned=1 still_waiting=0\n"
            "woke=5\n")


def test_wake_returns_and_wakes_at_most_n(runner, target):
    out = runner.run("futex_wake", target, timeout=120).stdout.decode()
    assert out == EXPECTED
    assert run_native(runner.guest("futex_wake", target.arch)).decode() == out
