"""signalfd and signalfd4 (docs/emulator.md, "Sockets"). tests/guest/
signalfd.c blocks SIGUSR1 and SIGTERM, makes a non-blocking close-on-exec signalfd for
them, raises one and kills itself with the other, and sees them through poll, select,
epoll_wait and one read of two struct signalfd_siginfo (ssi_signo, ssi_code, ssi_pid);
then it gives the descriptor a new mask, and blocks in a read until an interval timer's
SIGALRM. Its output is compared with the same binary run natively."""

from __future__ import annotations

import subprocess

import pytest

from guestrun import straces_without_pid

EXPECTED = """size=128
cloexec=1 nonblock=1
empty read=-1 eagain=1 poll=0 select=0
short read=-1 einval=1
pending poll=1 select=1 epoll=1
read=256
first signo=10 code=-6 pid_ok=1 uid_ok=1
second signo=15 code=0 pid_ok=1 uid_ok=1
after poll=0 select=0
update=1
usr1 poll=0
usr2 poll=1 read=128
usr2 signo=12 code=-6 pid_ok=1 uid_ok=1
not_signalfd=-1 einval=1
blocking read=128
alarm signo=14 code=128 pid_ok=1 uid_ok=1
usr1_pending=1
"""


# Under --timing off the interval timer is the host's: its SIGALRM reaches the emulator
# while the read waits in the host (a stop of Unicorn that the read's own wait consumes).
@pytest.mark.parametrize("timing", ["on", "off"])
def test_signalfd_as_native(runner, target, timing):
    guest = str(runner.guest("signalfd", target.arch))
    native = subprocess.run([guest], capture_output=True, timeout=60)
    assert native.returncode == 0, native.stderr.decode(errors="replace")
    p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, "--timing", timing,
                        guest], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    assert p.stdout.decode() == native.stdout.decode() == EXPECTED


# tests/guest/signalfd_threads.c: one thread waits on a blocking signalfd (read, poll,
# epoll_wait) while another computes and then signals the process (kill) or the waiting
# thread (tgkill); a signal for the process that every thread blocks is read by another
# thread. "dup": dup, F_DUPFD_CLOEXEC and dup3 of a signalfd read, poll and re-mask it.
THREADS_EXPECTED = {
    "threads": """read_kill read=128 signo=10 code=0 pid_ok=1
read_tgkill read=128 signo=12 code=-6 pid_ok=1
poll=1 revents_in=1
poll_kill read=128 signo=12 code=0 pid_ok=1
epoll=1 fd_ok=1
epoll_tgkill read=128 signo=10 code=-6 pid_ok=1
thread_read read=128 signo=10 code=0 pid_ok=1
pending_for_process read=128 signo=12 code=0 pid_ok=1
sum_same=1
""",
    "dup": """dups=1,1,1
dup poll=1 revents_in=1
dupfd read=128 signo=10 code=-6 pid_ok=1
dup3 update=1
dup3 read=128 signo=12 code=-6 pid_ok=1
short=-1 einval=1
usr1_pending=1
""",
}


def run_threads(runner, target, mode, extra=()):
    guest = str(runner.guest("signalfd_threads", target.arch))
    args = [] if mode == "threads" else [mode]
    p = subprocess.run([str(runner.emulator), "run", "--cpu", target.cpu, *extra, guest, *args],
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    return p


@pytest.mark.parametrize("mode", ["threads", "dup"])
def test_signalfd_threads_as_native(runner, target, mode):
    guest = str(runner.guest("signalfd_threads", target.arch))
    native = subprocess.run([guest] + ([] if mode == "threads" else [mode]), capture_output=True,
                            timeout=60)
    assert native.returncode == 0, native.stderr.decode(errors="replace")
    out = run_threads(runner, target, mode).stdout.decode()
    assert out == native.stdout.decode() == THREADS_EXPECTED[mode]


def test_signalfd_lone_poll_host_alarm(runner, target):
    # --timing off: the interval timer is the host's; its SIGALRM, blocked in the guest,
    # interrupts the host poll, which is made again and sees the signalfd readable.
    guest = str(runner.guest("signalfd_threads", target.arch))
    native = subprocess.run([guest, "alarm"], capture_output=True, timeout=60)
    out = run_threads(runner, target, "alarm", ["--timing", "off"]).stdout.decode()
    assert out == native.stdout.decode() == (
        "alarm poll=1 revents_in=1\nalarm read=128 signo=14 code=128 pid_ok=0\n")


def test_signalfd_poll_times_out_with_a_busy_timer(runner, target):
    # Each expiry of a 2 ms virtual interval timer wakes the waiting thread (its signalfd
    # might have become readable) but makes nothing ready: the poll goes on with the time
    # it had left and times out, rather than starting its 30 ms over at every expiry.
    guest = str(runner.guest("signalfd_threads", target.arch))
    native = subprocess.run([guest, "busy_timer"], capture_output=True, timeout=60)
    out = run_threads(runner, target, "busy_timer").stdout.decode()
    assert out == native.stdout.decode() == "busy_timer poll=0 alarm_pending=1\n"


@pytest.mark.parametrize("quantum", ["50", "1000"])
def test_signalfd_threads_same_seed_same_calls(runner, target, quantum):
    # The waits and the signals are the guest threads' own: with the same --seed both
    # runs make the same calls in the same order, the waits that were made again included.
    extra = ["--seed", "5", "--quantum", quantum, "--strace"]
    a = run_threads(runner, target, "threads", extra)
    b = run_threads(runner, target, "threads", extra)
    assert a.stdout.decode() == THREADS_EXPECTED["threads"]
    assert a.stdout == b.stdout
    sa, sb = straces_without_pid(a.stderr.decode(), b.stderr.decode())
    assert sa == sb
