"""Guest threads (docs/emulator.md, "Threads"): clone(CLONE_VM | CLONE_THREAD ...) with TLS,
futex waits and wakes, set_tid_address/CLONE_CHILD_CLEARTID (pthread_join), and the
deterministic scheduler.

tests/guest/threads.c runs four pthreads that take items from a shared counter under a
mutex and encrypt (REP XCRYPTCBC, twice per item with the key kept loaded) and hash (REP
XSHA256) each; main hashes the results. The digest must equal the same computation in
Python (aes_ref, hashlib), which also shows that each thread switch cleared EFLAGS[30]
(§1.8): otherwise a thread's second REP XCRYPTCBC would use another thread's key. Two runs
with the same --seed print the same lines (the items each thread took included) and write
the same trace."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess

import pytest

import aes_ref
from guestrun import kv

ITEMS = 96
# A short time slice so that threads are switched inside their critical sections and
# between the two REP XCRYPTCBC of an item.
QUANTUM = ["--quantum", "5"]


def fnv_rounds(data: bytes, rounds: int) -> int:
    h = 2166136261
    for _ in range(rounds):
        for b in data:
            h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def expected(items: int) -> tuple[str, str]:
    """The guest's digest and check value, computed independently."""
    results, check = b"", 0
    for i in range(items):
        key = bytes((7 * i + k) & 0xFF for k in range(16))
        iv = bytes((i ^ (3 * k)) & 0xFF for k in range(16))
        plain = bytes((i + k) & 0xFF for k in range(64))
        cipher = aes_ref.cbc(key, iv, plain)
        check ^= fnv_rounds(cipher[:32], 16)
        results += hashlib.sha256(cipher).digest()
    return hashlib.sha256(results).hexdigest(), f"{check:08x}"


def run(runner, target, tmp_path, name, extra=(), seed=1, items=ITEMS):
    trace = tmp_path / f"{name}.jsonl"
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--seed", str(seed), "--stats",
           "--trace", str(trace), *QUANTUM, *extra, str(runner.guest("threads", target.arch)),
           str(items)]
    proc = subprocess.run(cmd, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    return proc, trace.read_bytes()


def stat(stderr: bytes, pattern: str) -> int:
    m = re.search(pattern, stderr.decode())
    assert m, stderr.decode()[-2000:]
    return int(m.group(1))


def test_digest_matches_independent_computation(runner, target, tmp_path):
    proc, _ = run(runner, target, tmp_path, "a")
    out = kv(proc.stdout)
    assert out["items"] == str(ITEMS)
    assert (out["digest"], out["check"]) == expected(ITEMS)
    assert out["bytes"] == str(64 * ITEMS)  # the mutex-protected counter lost no update
    taken = [int(out[f"thread{t}"]) for t in range(4)]
    assert sum(taken) == ITEMS
    # The slice is short against the work: every thread got items.
    assert all(n > 0 for n in taken), taken
    assert stat(proc.stderr, r"threads created (\d+)") == 4
    assert stat(proc.stderr, r"thread switches (\d+)") > 20


def test_same_seed_same_output_and_trace(runner, target, tmp_path):
    a, trace_a = run(runner, target, tmp_path, "a", seed=7)
    b, trace_b = run(runner, target, tmp_path, "b", seed=7)
    assert a.stdout == b.stdout
    assert trace_a == trace_b
    assert len(trace_a.splitlines()) > 3 * ITEMS  # every PadLock instruction is in it
    switches = stat(a.stderr, r"thread switches (\d+)")
    assert switches == stat(b.stderr, r"thread switches (\d+)")


def test_trace_names_the_thread(runner, target, tmp_path):
    # Worker k (thread k + 1) runs three PadLock instructions per item it took (two REP
    # XCRYPTCBC and a REP XSHA256); main (thread 0) the final REP XSHA256.
    proc, trace = run(runner, target, tmp_path, "a")
    out = kv(proc.stdout)
    insns = [json.loads(line) for line in trace.splitlines() if b'"type":"insn"' in line]
    per_thread: dict[int, list[str]] = {}
    for r in insns:
        per_thread.setdefault(r["thread"], []).append(r["insn"])
    assert per_thread[0] == ["REP XSHA256"]
    for t in range(4):
        names = per_thread[t + 1]
        assert len(names) == 3 * int(out[f"thread{t}"])
        assert names.count("REP XSHA256") == int(out[f"thread{t}"])
    # A process that never creates a thread has no "thread" field (traces/README.md).
    single, data = tmp_path / "single.jsonl", tmp_path / "abc"
    data.write_bytes(b"abc")
    subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, "--trace", str(single),
                    str(runner.guest("sha", target.arch)), "256", str(data)],
                   capture_output=True, timeout=60, check=True)
    records = [json.loads(line) for line in single.read_text().splitlines()]
    assert any(r["type"] == "insn" for r in records)
    assert all("thread" not in r for r in records)


def test_slice_changes_the_interleaving_not_the_result(runner, target, tmp_path):
    # Another time slice gives another (equally reproducible) interleaving, same digest.
    a, _ = run(runner, target, tmp_path, "a")
    b, _ = run(runner, target, tmp_path, "b", extra=["--quantum", "2"])
    assert kv(a.stdout)["digest"] == kv(b.stdout)["digest"] == expected(ITEMS)[0]
    assert stat(a.stderr, r"thread switches (\d+)") != stat(b.stderr, r"thread switches (\d+)")


def test_timeouts_and_sleeps_run_on_virtual_time(runner, target):
    # FUTEX_WAIT (relative), pthread_cond_timedwait (FUTEX_WAIT_BITSET, absolute
    # CLOCK_REALTIME) and usleep in a thread, all while another thread spins without a
    # system call: each wait ends at its virtual deadline, to the microsecond.
    out = kv(runner.run("threads", target, ["timed"]).stdout)
    # Before any thread exists: the wait ends with the 1.5 ms interval timer's SIGALRM.
    assert out["alarm_wait"].startswith("-1 errno=EINTR waited_us=15")
    assert out["futex_wait"] == "-1 errno=ETIMEDOUT waited_us=2000"
    assert out["cond_timedwait"] == "ETIMEDOUT waited_us=4000"
    assert out["slept_us"] == "3000"
    assert out["spinner_ran"] == "1"


def test_tgkill_reaches_the_thread(runner, target):
    out = kv(runner.run("threads", target, ["signal"]).stdout)
    assert out["main_tid_is_pid"] == "1"
    assert out["worker_pid_same"] == "1"
    assert out["tids_differ"] == "1"
    # The handler ran in the worker (gettid there) and interrupted its futex wait.
    assert out["tgkill"] == "0 handler_in_worker=1"
    assert out["worker_wait"] == "-1 errno=EINTR"
    assert out["tgkill_gone"] == "ESRCH"


def test_exit_group_from_a_thread_ends_the_process(runner, target):
    p = runner.run("threads", target, ["exit", "3"], check=False)
    assert p.returncode == 3, p.stderr.decode()
    assert p.stdout.decode().splitlines() == ["main_waits=1"]


def test_main_thread_exit_leaves_the_others_running(runner, target):
    # pthread_exit in main is the exit system call of one thread: the worker goes on, and
    # the process ends when it does.
    p = runner.run("threads", target, ["detach"])
    assert p.stdout.decode().splitlines() == ["main_exits=1", "worker_last=1"]


def test_timing_off_runs_threads_too(runner, target):
    # The fast functional mode: slices end on the PadLock cycles the clock still counts.
    p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, "--timing", "off",
                        str(runner.guest("threads", target.arch)), str(ITEMS)],
                       capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    assert kv(p.stdout)["digest"] == expected(ITEMS)[0]


def test_quantum_must_be_positive(runner, target):
    p = subprocess.run([str(runner.emulator), "run", "--quantum", "0",
                        str(runner.guest("threads", target.arch))], capture_output=True)
    assert p.returncode == 2
    assert "invalid time slice '0'" in p.stderr.decode()


def test_host_waits_let_other_threads_run(runner, target):
    # read(), poll() and select() on empty pipes in three threads do not block the process:
    # main computes and writes the bytes they wait for (a host call that blocked the whole
    # process would never return here).
    out = kv(runner.run("threads", target, ["pipe"], timeout=120).stdout)
    assert out == {"main_ran": "1", "read": "x", "poll": "1", "select": "1"}


def test_requeue_and_wake_op(runner, target):
    out = runner.run("threads", target, ["futexops"]).stdout.decode().splitlines()
    assert out == [
        "requeue=2",     # both waiters moved from word1 to word2, none woken
        "wake_word1=0",  # nobody waits on word1 any more
        "wake_word2=2",  # they wait on word2
        "wake_op=1",     # word2 set to 5; old value 0 == 0: word2's waiter woken
        "word2=5",
        "woke=111",
    ]


def test_execve_keeps_the_quantum(runner, target):
    # An image started by execve runs under the same --quantum: its threads switch as often
    # as in a direct run with that slice.
    def switches(*args):
        p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, "--stats",
                            "--quantum", "2", *map(str, args)], capture_output=True, timeout=300)
        assert p.returncode == 0, p.stderr.decode()
        return stat(p.stderr, r"thread switches (\d+)")

    guest = runner.guest("threads", target.arch)
    direct = switches(guest, ITEMS)
    assert switches(runner.guest("procs", target.arch), "run", guest, ITEMS) == direct
    # (the default slice of 1000 us gives far fewer switches)
    p = runner.run("threads", target, [ITEMS], stats=True)
    assert stat(p.stderr, r"thread switches (\d+)") < direct
