"""signalfd and signalfd4 (docs/emulator.md, "Sockets"). tests/guest/
signalfd.c blocks SIGUSR1 and SIGTERM, makes a non-blocking close-on-exec signalfd for
them, raises one and kills itself with the other, and sees them through poll, select,
epoll_wait and one read of two struct signalfd_siginfo (ssi_signo, ssi_code, ssi_pid);
then it gives the descriptor a new mask, and blocks in a read until an interval timer's
SIGALRM. Its output is compared with the same binary run natively."""

from __future__ import annotations

import subprocess

import pytest

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
