"""guest_host_alarm_xcrypt: host-time SIGALRM (ITIMER_REAL every 500 us under
--timing off) stops Unicorn asynchronously while the guest loops over REP XCRYPTCBC
(docs/emulator.md, "Asynchronous host signals"). Every iteration must give the same,
correct ciphertext (§3.1 CBC, checked against aes_ref) and the guest must see its alarms.

With Unicorn's unpatched library this guest crashed or computed wrong results in 6 of 6
runs; the patched build (cmake/PadlockUnicorn.cmake) gave 10 of 10 clean runs."""

from __future__ import annotations

import subprocess

import pytest

import aes_ref
from guestrun import kv


@pytest.mark.parametrize("attempt", range(3))
def test_host_alarms_during_rep_xcrypt(runner, target, attempt):
    cmd = [str(runner.emulator), "run", "--timing", "off", "--cpu", target.cpu,
           str(runner.guest("host_alarm_xcrypt", target.arch)), "20000"]
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    assert p.returncode == 0, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    out = kv(p.stdout)
    assert out["bad"] == "0"
    assert int(out["alarms"]) > 0  # the timer did fire during the loop
    key = bytes(7 * i % 256 for i in range(16))
    plain = bytes(i % 256 for i in range(32))
    assert bytes.fromhex(out["c"]) == aes_ref.cbc(key, bytes(16), plain)
