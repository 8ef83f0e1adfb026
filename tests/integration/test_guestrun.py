"""The helpers the integration tests compare runs with (tests/integration/guestrun.py)."""

from __future__ import annotations

from guestrun import straces_without_pid


def test_straces_without_pid_names_threads_by_offset():
    a = "4000 clone(0x3d0f00, 0x7f0) = 4001\n4001 futex(0x10, 12, 1, 0x3, 4001, 1) = 0\n"
    b = "5000 clone(0x3d0f00, 0x7f0) = 5001\n5001 futex(0x10, 12, 1, 0x3, 5001, 1) = 0\n"
    sa, sb = straces_without_pid(a, b)
    assert sa == sb == "T0 clone(0x3d0f00, 0x7f0) = T1\nT1 futex(0x10, 12, 1, 0x3, T1, 1) = 0\n"


def test_straces_without_pid_keeps_numbers_that_are_not_thread_ids():
    # 16384 lies 21 above the first run's PID and 22 above the second's: a length, the same
    # in both runs, not a thread.
    a = "16363 mprotect(0x4ba000, 16384, PROT_READ) = 0\n"
    b = "16362 mprotect(0x4ba000, 16384, PROT_READ) = 0\n"
    assert straces_without_pid(a, b) == ("T0 mprotect(0x4ba000, 16384, PROT_READ) = 0\n",) * 2


def test_straces_without_pid_shows_a_different_thread():
    a = "100 clone(0x1) = 101\n101 write(1, 0x1, 2) = 2\n"
    b = "200 clone(0x1) = 201\n200 write(1, 0x1, 2) = 2\n"
    sa, sb = straces_without_pid(a, b)
    # The first lines match; the second is another thread's call, kept as the runs print it.
    assert sa.splitlines() == ["T0 clone(0x1) = T1", "101 write(1, 0x1, 2) = 2"]
    assert sb.splitlines() == ["T0 clone(0x1) = T1", "200 write(1, 0x1, 2) = 2"]
