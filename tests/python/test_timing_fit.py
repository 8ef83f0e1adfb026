"""scripts/timing_fit.py, the fit behind scripts/calibrate.py: on cells made from known
parts and a known table clock it recovers them, and the cross-validation fits each see
only their own source (docs/timing.md, "Calibration")."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import timing_fit as tf  # noqa: E402

# "True" chip: CBC start-up 12, per block 22, chain reload 40; the guide's table measured
# at 1100 MHz; the x86 work around each unit is a fixed 30 (BAES) or 100 (a call).
TRUE = {"startup": 12.0, "per_block": 22.0, "reload": 40.0, "mhz": 1100.0}


def cells(start: float, per: float, reload: float):
    out = []
    for n in (1, 2, 4, 16, 64, 256):  # BAES: key loaded, one instruction per iteration
        true_clocks = 30 + TRUE["startup"] + TRUE["per_block"] * n
        gbps = 0.128 * n * TRUE["mhz"] / true_clocks
        out.append(tf.Cell("guide", "NehemiahAligned", "Nehemiah", "CBC", True, n, 1, 0, gbps,
                           30 + start + per * n, fitted=True))
    for n in (1, 10, 100, 1000):  # Gladman: a key reload before the instruction
        true_clocks = 100 + TRUE["startup"] + TRUE["reload"] + TRUE["per_block"] * n
        out.append(tf.Cell("gladman", "Gladman", "Nehemiah", "CBC", True, n, 1, 1,
                           true_clocks / (16 * n), 100 + start + reload + per * n, fitted=True))
    return out


def test_both_sources_recover_the_parts_and_the_clock():
    cs = cells(5.0, 25.0, 0.0)  # the emulator's current, wrong, parts
    fit = tf.solve("both", cs, tf.part_names(cs), {"Nehemiah": 1200.0}, {"Nehemiah"})
    d = {n[0]: v for n, v in fit.delta.items()}
    assert d["startup"] + 5.0 == pytest.approx(TRUE["startup"], abs=0.05)
    assert d["per_block"] + 25.0 == pytest.approx(TRUE["per_block"], abs=0.01)
    assert d["reload"] == pytest.approx(TRUE["reload"], abs=0.05)
    assert fit.mhz["Nehemiah"] == pytest.approx(TRUE["mhz"], rel=1e-3)
    assert max(abs(e) for e in fit.errors(cs)) < 1e-3


def test_cross_validation_fits_use_one_source_each():
    cs = cells(5.0, 25.0, 0.0)
    fits = tf.cross_validate(cs, {"Nehemiah": 1200.0}, {"Nehemiah": 1200.0})
    # The guide alone cannot see the chain reload: Gladman's cells stay off by it.
    assert not any(n[0] == "reload" for n in fits["guide"].delta)
    glad = [c for c in cs if c.source == "gladman"]
    assert max(abs(e) for e in fits["guide"].errors(glad)) > 0.1
    # Gladman alone gets the per-block clocks and start-up + reload (it always reloads, so
    # it keeps the start-up it was given) and the nominal clock: the guide is ~9 % off at
    # 1200 MHz, and within the start-up's error once the clock alone is fitted to it.
    gl = fits["gladman"]
    assert gl.delta[("per_block", "Nehemiah", "CBC", True)] + 25.0 == pytest.approx(22.0, abs=0.01)
    assert gl.delta[("reload", "Nehemiah", "CBC")] == pytest.approx(40.0 + 12.0 - 5.0, abs=0.05)
    guide = [c for c in cs if c.source == "guide"]
    assert gl.mhz["Nehemiah"] == 1200.0
    assert max(abs(e) for e in gl.errors(guide)) > 0.05
    clocked = fits["gladman+clock"]
    assert clocked.mhz["Nehemiah"] < 1200.0
    assert (sorted(abs(e) for e in clocked.errors(guide))[len(guide) // 2] <
            sorted(abs(e) for e in gl.errors(guide))[len(guide) // 2])
