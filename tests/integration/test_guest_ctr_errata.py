"""guest_ctr_errata: the REP XCRYPTCTR erratum (§3.1 ERRATA, §6.6 CTR_ERRATA.C). On
Esther stepping 8 (esther-c5j, alias esther) a REP XCRYPTCTR whose initial ECX is even
leaves the counter field incremented once too often; a later stepping (esther-c5j-s9) and
Nano do not. The ciphertext of a single call is still right (§6.6), and the counter
increments once per block otherwise (§3.1 EAX table)."""

from __future__ import annotations

import pytest

import aes_ref
from guestrun import Target, kv

KEY = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
IV = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
BLOCKS = [1, 2, 3, 4, 5, 6, 16, 17, 64, 255, 256]

ERRATA_TARGETS = [Target("i386", "esther"), Target("i386", "esther-c5j")]
CLEAN_TARGETS = [Target("i386", "esther-c5j-s9"), Target("x86_64", "nano")]


def check(runner, target, blocks, errata):
    out = kv(runner.run("ctr_errata", target, [blocks]).stdout)
    assert out["counter_start"] == "feff"
    clean = (0xFEFF + blocks) & 0xFFFF
    assert int(out["counter_ref"], 16) == clean  # ECX = 1 each time: never affected
    extra = 1 if errata and blocks % 2 == 0 else 0
    assert int(out["counter_single"], 16) == (clean + extra) & 0xFFFF
    assert out["match"] == "1"
    if 1 < blocks < 5:  # §6.6: no interrupt can have occurred, so no retry
        assert out["retries"] == "0"
    if blocks <= 64:
        assert bytes.fromhex(out["out"]) == aes_ref.ctr16(KEY, IV, bytes.fromhex(out["in"]))


@pytest.mark.parametrize("blocks", BLOCKS)
@pytest.mark.parametrize("target", ERRATA_TARGETS, ids=lambda t: t.id)
def test_ctr_counter_with_errata(runner, target, blocks):
    check(runner, target, blocks, errata=True)


@pytest.mark.parametrize("blocks", BLOCKS)
@pytest.mark.parametrize("target", CLEAN_TARGETS, ids=lambda t: t.id)
def test_ctr_counter_without_errata(runner, target, blocks):
    check(runner, target, blocks, errata=False)
