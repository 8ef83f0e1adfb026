"""A thread switch clears EFLAGS[30] (§1.8 steps 3 and 5; docs/fidelity.md): two threads
take turns at REP XCRYPTECB under their own keys with nothing but the scheduler's switch
between one thread's XCRYPT and the other's (tests/guest/switch_key.c). Each must encrypt
under its own key in every round: the standard vectors below. Without periodic interrupts
(--irq-hz 0), which clear the bit too, the switch is the only thing that can clear it."""

from __future__ import annotations

import re
import subprocess

import pytest

from guestrun import kv

# SP 800-38A F.1.1 (AES-128 ECB, block 1) and FIPS-197 Appendix C.1.
C1 = "3ad77bb40d7a3660a89ecaf32466ef97"
C2 = "69c4e0d86a7b0430d8cdb78070b4c55a"
ROUNDS = 8


@pytest.mark.parametrize("irq_args", [["--irq-hz", "0"], []], ids=["no-irq", "default-irq"])
def test_each_thread_encrypts_under_its_own_key(runner, target, irq_args):
    cmd = [str(runner.emulator), "run", "--cpu", target.cpu, "--stats", *irq_args,
           str(runner.guest("switch_key", target.arch)), str(ROUNDS)]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    out, err = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 0 and "mismatch" not in out, (p.returncode, out, err[-800:])
    v = kv(out)
    assert (v["rounds"], v["c1"], v["c2"]) == (str(ROUNDS), C1, C2)
    # Every turn passed to the other thread by a switch (a time slice ending in its spin).
    switches = int(re.search(r"thread switches (\d+)", err).group(1))
    assert switches >= 2 * ROUNDS - 1, err
