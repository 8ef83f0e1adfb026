"""Futex words that name their owner (docs/emulator.md, "Threads"): robust mutexes, which
the emulator marks FUTEX_OWNER_DIED from the exiting thread's robust list as Linux does,
and priority-inheritance mutexes (FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI).

tests/guest/mutexes.c prints only results that Linux gives whatever the interleaving, so
the same binary run natively on the host is the reference; the expected values are also
spelled out here (glibc's documented results: EOWNERDEAD, ENOTRECOVERABLE, EBUSY ...)."""

from __future__ import annotations

import re
import subprocess

import pytest

from guestrun import kv, straces_without_pid

QUANTUM = ["--quantum", "5"]  # short slices: threads are switched inside critical sections


def native(runner, target, args):
    p = subprocess.run([str(runner.guest("mutexes", target.arch)), *map(str, args)],
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p.stdout.decode()


def emulated(runner, target, args, extra=(), seed=1):
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--seed", str(seed), "--stats",
           *QUANTUM, *extra, str(runner.guest("mutexes", target.arch)), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return p


def test_robust_mutex_of_an_exited_thread(runner, target):
    out = emulated(runner, target, ["robust"]).stdout.decode()
    assert out == native(runner, target, ["robust"])
    values = kv(out)
    for flavour in ("robust", "robust_pi"):
        # The owner exited before the lock: EOWNERDEAD, then pthread_mutex_consistent
        # makes it an ordinary mutex again.
        assert values[f"{flavour}_after_exit"] == "EOWNERDEAD"
        assert values[f"{flavour}_consistent"] == "0"
        assert values[f"{flavour}_unlock"] == "0"
        assert values[f"{flavour}_relock"] == "0"
        # The owner exited while main waited in the kernel: main was woken (a PI futex
        # handed to it) and owns it with EOWNERDEAD.
        assert values[f"{flavour}_waiter"] == "EOWNERDEAD"
        # Unlocked without pthread_mutex_consistent: not recoverable any more.
        assert values[f"{flavour}_not_consistent"] == "ENOTRECOVERABLE"
        # Released before the exit: not marked.
        assert values[f"{flavour}_released"] == "0"


def futex_ops(strace: str) -> dict[int, int]:
    """How often each futex command (op without the private/clock flags) was called."""
    counts: dict[int, int] = {}
    for m in re.finditer(r"futex\(0x[0-9a-f]+, (\d+),", strace):
        cmd = int(m.group(1)) & 127
        counts[cmd] = counts.get(cmd, 0) + 1
    return counts


def test_contended_pi_mutex(runner, target):
    p = emulated(runner, target, ["pi"], extra=["--strace"])
    out = p.stdout.decode()
    assert out == native(runner, target, ["pi"])
    values = kv(out)
    assert values["counter"] == "800"
    assert [values[f"worker{t}"] for t in range(4)] == ["200"] * 4
    assert values["errors"] == "0"
    assert values["consumed"] == "50"
    assert (values["trylock_other"], values["unlock_other"]) == ("EBUSY", "EPERM")
    assert (values["relock_self"], values["trylock_self"]) == ("EDEADLK", "EDEADLK")
    assert values["trylock_free"] == "0"
    # FUTEX_LOCK_PI2 (or FUTEX_LOCK_PI) with a CLOCK_REALTIME deadline, on virtual time.
    assert values["timedlock"] == "ETIMEDOUT"
    # The slices end inside critical sections: the lock was contended many times, and every
    # contended lock went through the kernel (FUTEX_LOCK_PI or _PI2, then FUTEX_UNLOCK_PI).
    ops = futex_ops(p.stderr.decode())
    locks = ops.get(6, 0) + ops.get(13, 0)
    assert locks > 50, ops
    assert ops.get(7, 0) >= locks, ops


# The PI operations (LOCK_PI, UNLOCK_PI, TRYLOCK_PI, LOCK_PI2, with or without
# FUTEX_PRIVATE_FLAG) ignore uaddr2 and val3, and --strace prints those registers as they
# are: for the timed lock, uaddr2 holds the CLOCK_REALTIME seconds glibc computed, which
# start at the host's wall-clock second (docs/emulator.md, "Virtual time"), so two runs that
# straddle a second differ there.
PI_UNUSED_ARGS = re.compile(r"(futex\(0x[0-9a-f]+, (?:6|7|8|13|134|135|136|141), [^,]+, [^,]+), "
                            r"[^,]+, [^,)]+\)")


def interleavings(a: str, b: str) -> tuple[str, str]:
    return straces_without_pid(*(PI_UNUSED_ARGS.sub(r"\1, _, _)", s) for s in (a, b)))


def test_pi_same_seed_same_interleaving(runner, target):
    # --strace records every futex call with its thread and result: the interleaving.
    a = emulated(runner, target, ["pi", 100], extra=["--strace"], seed=7)
    b = emulated(runner, target, ["pi", 100], extra=["--strace"], seed=7)
    assert a.stdout == b.stdout
    ia, ib = interleavings(a.stderr.decode(), b.stderr.decode())
    assert ia == ib
    assert futex_ops(a.stderr.decode()).get(7, 0) > 20


@pytest.mark.parametrize("how", ["exit_group", "signal", "execve"])
def test_robust_lists_when_the_whole_process_ends(runner, target, how):
    # tests/guest/robust_death.c: a forked child holds two process-shared robust mutexes
    # (in a MAP_SHARED file mapping), one per thread, and ends all at once: every thread's
    # robust list is walked, so the parent's timed locks get EOWNERDEAD, not ETIMEDOUT.
    guest = str(runner.guest("robust_death", target.arch))
    nat = subprocess.run([guest, how], capture_output=True, timeout=60)
    assert nat.returncode == 0, nat.stderr.decode(errors="replace")
    p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, guest, how],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    status = "exited=0 signaled=15" if how == "signal" else "exited=1 signaled=0"
    assert p.stdout.decode() == nat.stdout.decode() == (
        f"child {status}\na=eownerdead b=eownerdead\n")


def test_requeue_pi(runner, target):
    # tests/guest/mutexes.c requeue_pi: three FUTEX_WAIT_REQUEUE_PI waiters, one
    # FUTEX_CMP_REQUEUE_PI: one comes back owning the PI word, two wait for it and get it
    # through FUTEX_UNLOCK_PI; nr_wake other than 1 is EINVAL.
    expected = "requeue_pi counted=3 not_owner=0 pi_word=0 nr_wake2=-1 einval=1\n"
    a = emulated(runner, target, ["requeue_pi"], extra=["--strace"])
    assert a.stdout.decode() == native(runner, target, ["requeue_pi"]) == expected
    # Every waiter was waiting when main requeued (its 20 ms sleep is virtual time the
    # others run in): 1 taken for the top waiter + 2 moved to the PI word.
    assert re.search(r"futex\(0x[0-9a-f]+, 12, 1, 0x3, \d+, 1\) = 3", a.stderr.decode())
    b = emulated(runner, target, ["requeue_pi"], extra=["--strace"])
    sa, sb = straces_without_pid(a.stderr.decode(), b.stderr.decode())
    assert sa == sb
