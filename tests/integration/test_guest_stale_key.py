"""guest_stale_key: the EFLAGS[30] key cache (§1.8, §3.2). A key or control word changed
in memory without PUSHF/POPF is not reloaded: the chip keeps encrypting with the OLD
one. The expected ciphertexts come from aes_ref (pure-Python AES), independent of the
emulator's AES."""

from __future__ import annotations

import subprocess

import pytest

import aes_ref
from guestrun import kv

# case -> (which key c2 uses, what c3 does); "old"/"new" key, "enc"/"dec" direction.
CASES = {
    "stale": ("old", "new"),    # §1.8: bit 30 still 1, nothing reloaded
    "reload": ("new", "new"),   # §1.8: PUSHFL; POPFL clears bit 30
    "xsha": ("new", "new"),     # §1.8 PHE: REP XSHA sets EFLAGS:30 to zero
    "montmul": ("old", "new"),  # §1.8 PMM: REP MONTMUL neither reads nor sets bit 30
    "syscall": ("new", "new"),  # a system call stores EFLAGS (bit 30 -> 0)
    "sw": ("old", "new"),       # as "stale", 256-bit application-provided schedules
}


def stale_key_run(runner, target, case, timing):
    if timing == "on":
        return runner.run("stale_key", target, [case]).stdout
    # --timing off: the block hook is installed at the first REP XCRYPT and then runs
    # only for blocks with PUSHF/POPF/IRET (docs/emulator.md, "Unicorn").
    cmd = [str(runner.emulator), "run", "--timing", "off", "--cpu", target.cpu,
           str(runner.guest("stale_key", target.arch)), case]
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    assert p.returncode == 0, (p.stdout[-500:], p.stderr[-500:])
    return p.stdout


@pytest.mark.parametrize("timing", ["on", "off"])
@pytest.mark.parametrize("case", list(CASES))
def test_key_cache(runner, target, case, timing):
    out = kv(stale_key_run(runner, target, case, timing))
    k1, k2, p = (bytes.fromhex(out[k]) for k in ("k1", "k2", "p"))
    old, new = aes_ref.ecb(k1, p), aes_ref.ecb(k2, p)
    c2_key, _ = CASES[case]
    assert bytes.fromhex(out["c1"]) == old, "first encryption must use K1"
    assert bytes.fromhex(out["c2"]) == (old if c2_key == "old" else new), \
        f"{case}: expected the {c2_key} key after the action"
    assert bytes.fromhex(out["c3"]) == new, "PUSHF/POPF must load the new key"


def test_stale_control_word(runner, target):
    """§3.2: the control word is cached with the key: switching CRYPT to decrypt in
    memory has no effect until EFLAGS[30] is cleared."""
    out = kv(runner.run("stale_key", target, ["cw"]).stdout)
    k1, p = bytes.fromhex(out["k1"]), bytes.fromhex(out["p"])
    assert bytes.fromhex(out["c1"]) == aes_ref.ecb(k1, p)
    assert bytes.fromhex(out["c2"]) == aes_ref.ecb(k1, p)  # still encrypting
    assert bytes.fromhex(out["c3"]) == aes_ref.ecb(k1, p, decrypt=True)
