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
    assert gl.delta[("reload", "Nehemiah")] == pytest.approx(40.0 + 12.0 - 5.0, abs=0.05)
    guide = [c for c in cs if c.source == "guide"]
    assert gl.mhz["Nehemiah"] == 1200.0
    assert max(abs(e) for e in gl.errors(guide)) > 0.05
    clocked = fits["gladman+clock"]
    assert clocked.mhz["Nehemiah"] < 1200.0
    assert (sorted(abs(e) for e in clocked.errors(guide))[len(guide) // 2] <
            sorted(abs(e) for e in gl.errors(guide))[len(guide) // 2])


def test_iv_writeback_is_seen_only_in_gladmans_chaining_decryptions():
    # The chip: CBC decryption stores the IV (§3.1) for 25 clocks more; the emulator
    # without the part has both directions alike, so only the decryptions are off.
    cs = cells(TRUE["startup"], TRUE["per_block"], TRUE["reload"])
    for n in (1, 10, 100, 1000):
        true_clocks = 100 + TRUE["startup"] + TRUE["reload"] + TRUE["per_block"] * n + 25
        cs.append(tf.Cell("gladman", "Gladman", "Nehemiah", "CBC", True, n, 1, 1,
                          true_clocks / (16 * n), true_clocks - 25, direction="decrypt",
                          fitted=True))
    names = tf.part_names(cs)
    assert ("iv_writeback",) in names
    fit = tf.solve("both", cs, names, {"Nehemiah": 1100.0}, set())
    assert fit.delta[("iv_writeback",)] == pytest.approx(25.0, abs=0.05)
    assert max(abs(e) for e in fit.errors(cs)) < 1e-3
    # OFB, and CBC/CFB with ALIGN = 1, store their IV in both directions: there the part is
    # the start-up's (calibrate.apply_fit gives the change back), so it moves none of them.
    ofb = tf.Cell("gladman", "Gladman", "Nehemiah", "OFB", True, 1, 1, 1, 10.0, 150.0,
                  direction="decrypt", fitted=True)
    assert tf.derivative(ofb, ("iv_writeback",)) == 0.0
    assert tf.stores_iv_always("OFB", True) and tf.stores_iv_always("CBC", False)
    assert not tf.stores_iv_always("CBC", True)


def test_ecb_floor_and_release_derivatives_Sec3_3():
    # §3.3 ECB formula with the key loaded, R = 10: 29, 31, then 11 + NR (+ R - 2 if odd).
    assert [tf.ecb_clocks(n) for n in (1, 2, 3, 4, 8)] == [29, 31, 49, 51, 91]
    # A chaining instruction below ECB's clocks is held there: its parts do not move it.
    assert tf.chain_floored(-4.0, 22.0, 1) and not tf.chain_floored(-4.0, 22.0, 2)
    held = tf.Cell("guide", "NehemiahAligned", "Nehemiah", "CBC", True, 1, 1, 0, 3.4, 45.0,
                   fitted=True, floored=True)
    assert tf.derivative(held, ("startup", "Nehemiah", "CBC", True)) == 0.0
    free = tf.Cell(**{**held.__dict__, "floored": False})
    assert tf.derivative(free, ("startup", "Nehemiah", "CBC", True)) == 1.0
    # ECB of more than 2 blocks: each clock of earlier release takes a clock off the loop.
    many = tf.Cell("guide", "NehemiahAligned", "Nehemiah", "ECB", True, 4, 1, 0, 10.7, 67.0)
    two = tf.Cell(**{**many.__dict__, "blocks": 2})
    assert tf.derivative(many, ("ecb_release", "Nehemiah")) == -1.0
    assert tf.derivative(many, ("ecb_release", "Esther")) == 0.0
    assert tf.derivative(two, ("ecb_release", "Nehemiah")) == 0.0
    assert ("ecb_release", "Nehemiah") in tf.part_names([many])


def dedibox_like(hidden_now: float):
    """A ratio cell: 1024 blocks of ECB at R = 12 over R = 10; on the chip the two rounds
    more hide 0.8 of each block's store, in the emulator currently `hidden_now`."""
    den = tf.Cell("dedibox", "Dedibox", "Esther", "ECB", True, 1024, 1, 0, 0.0, 12000.0,
                  rounds=10)
    num = tf.Cell(**{**den.__dict__, "rounds": 12,
                     "clocks": 12000.0 + 1024 * (2 - hidden_now)})
    true_ratio = (12000.0 + 1024 * (2 - 0.8)) / 12000.0
    return tf.Cell(**{**num.__dict__, "published": true_ratio, "den": den, "line": "192/128"})


def test_ratio_cells_recover_the_hidden_store():
    c = dedibox_like(0.0)
    assert tf.part_names([c]) == [("store_hidden",)]
    fit = tf.solve("h", [c], [("store_hidden",)], {}, set())
    assert fit.delta[("store_hidden",)] == pytest.approx(0.8, abs=1e-3)
    assert abs(fit.error(c)) < 1e-6
    assert tf.source_of(c) == "Dedibox ratios" and tf.judged(c)


def test_store_hidden_prior_is_instlats_store_alone():
    # Esther over Nehemiah, MOVAPS [m128], xmm: 2.75 - 2.17; the pair's serialisation is
    # the rest of the 2.00 per-store cost (5.92 - 3.92).
    assert tf.STORE_HIDDEN_PRIOR == pytest.approx(0.58)
    assert tf.STORE_ALONE + tf.STORE_SERIALISATION == pytest.approx(5.92 - 3.92)


def test_leave_one_source_out_falls_back_to_the_prior():
    # With the Dedibox left out no cell sees the hidden store: it goes to its prior, and the
    # ratio is predicted as the prior would have it.
    c = dedibox_like(0.8)
    glad = tf.Cell("gladman", "Gladman", "Nehemiah", "CBC", True, 10, 1, 1, 2.0, 320.0,
                   fitted=True)
    fits = tf.loso([c, glad], {"Nehemiah": 1200.0}, set(), {("store_hidden",): -0.2})
    without = fits["Dedibox ratios"]
    assert without.delta[("store_hidden",)] == pytest.approx(-0.2, abs=1e-3)
    assert without.error(c) == pytest.approx((12000 + 1024 * 1.4) / (12000 + 1024 * 1.2) - 1,
                                             rel=1e-3)
    assert fits["Gladman"].delta[("store_hidden",)] == pytest.approx(0.0, abs=1e-3)


def test_aligned_ctr_odd_counts_pay_for_a_whole_pair_Sec6_6():
    # ace::ctr_charged_blocks: with ALIGN = 0 a 1-block REP XCRYPTCTR pays 2 blocks; ALIGN = 1
    # and the other modes pay what they run (docs/timing.md, "Aligned CTR").
    def cell(mode, aligned, n):
        return tf.Cell("ctr_errata", "CTR_ERRATA", "Esther", mode, aligned, n, 1, 0, 1.0, 100.0,
                       fitted=True, clock_key="BAES")
    per = ("per_block", "Esther", "CTR", True)
    assert tf.cell_derivative(cell("CTR", True, 1), per) == 2.0
    assert tf.cell_derivative(cell("CTR", True, 3), per) == 4.0
    assert tf.cell_derivative(cell("CTR", True, 256), per) == 256.0
    assert tf.cell_derivative(cell("CTR", False, 1), ("per_block", "Esther", "CTR", False)) == 1.0
    assert tf.cell_derivative(cell("CBC", True, 1), ("per_block", "Esther", "CBC", True)) == 1.0


def test_esthers_store_cost_is_measured_not_fitted_and_sets_the_baes_clock():
    # Esther's per-store cost is InstLat's (docs/timing.md, "Esther's clocks"): no fit moves
    # it, and left out, the §3.3 Esther tables are predicted through the BAES run's clock,
    # which its ECB line fixes with the stores' cost held. Chip: 512-block ECB at 12 clocks a
    # block (N·R + 2 per store beyond the buffer), the BAES host at 1200 MHz; the §3.3 cell
    # at 1600 MHz. The emulator as built has the same parts.
    per = 10 * 512 + 11 + 2 * 508
    baes = tf.Cell("baes", "BAES", "Esther", "ECB", True, 512, 1, 0, 0.128 * 512 * 1200 / per,
                   per, clock_key="BAES", stalled=508, line="ECB mode encrypt")
    guide = tf.Cell("guide", "EstherAligned", "Esther", "ECB", True, 512, 1, 0,
                    0.128 * 512 * 1600 / per, per, stalled=508)
    assert ("store", "Esther") not in tf.part_names([baes, guide])
    f = tf.loso_one([baes, guide], "§3.3 Esther", {"Esther": 1600.0, "BAES": 1000.0},
                    {"BAES"}, {})
    assert f.mhz["BAES"] == pytest.approx(1200.0, rel=1e-3)
    assert abs(f.error(guide)) < 1e-3
    # Read as Nehemiah's (no per-store cost), the ECB line puts the BAES host at about
    # 1000 MHz and the §3.3 Esther cell comes out 20 % fast.
    f0 = tf.loso_one([baes, guide], "§3.3 Esther", {"Esther": 1600.0, "BAES": 1000.0},
                     {"BAES"}, {}, moved={("store", "Esther"): -2.0})
    assert f0.mhz["BAES"] == pytest.approx(1200.0 * (per - 2 * 508) / per, rel=1e-3)
    assert f0.error(guide) == pytest.approx(per / (per - 2 * 508) - 1, rel=1e-3)


def test_gladman_left_out_takes_his_misaligned_string_element_to_its_prior():
    # His bounce buffer copies 8 misaligned dwords a block (ECB, CBC, CFB, OFB); his
    # software CTR and his aligned cells copy none. The element's clocks are fitted to him
    # alone, so only the fit without him moves them (to their prior, InstLat's MOVUPS rows).
    ecb = tf.Cell("gladman", "Gladman", "Nehemiah", "ECB", True, 1000, 125, 125, 3.05,
                  48800.0, align_name="unaligned")
    ctr = tf.Cell(**{**ecb.__dict__, "mode": "CTR"})
    aligned = tf.Cell(**{**ecb.__dict__, "align_name": "aligned"})
    assert [tf.misaligned_elements(c) for c in (ecb, ctr, aligned)] == [8000, 0, 0]
    fits = tf.loso([ecb], {"Nehemiah": 1200.0}, set(), {},
                   {"Gladman": {("misaligned",): -1.5}})
    assert fits["Gladman"].predict(ecb) == pytest.approx(48800.0 - 1.5 * 8000)
    assert fits["Dedibox ratios"].predict(ecb) == pytest.approx(48800.0)


def test_misaligned_element_prior_is_instlats_misaligned_movups_pair_per_dword():
    # Nehemiah's InstLat: MOVUPS unaligned LS pair 19.33 against the aligned pair's 4.00, two
    # misaligned 16-byte accesses, 8 dwords; the load and store rows apart, 13.25 - 2.00 and
    # 13.50 - 3.75 for 4 dwords each (docs/timing.md, "REP string instructions").
    assert tf.MISALIGNED_PRIOR == pytest.approx(1.916, abs=1e-3)
    readings = dict((v, what) for what, v in tf.MISALIGNED_READINGS)
    assert sorted(round(v, 3) for v in readings) == [0.0, 1.916, 2.625]
    assert "the prior" in readings[tf.MISALIGNED_PRIOR]
    # Left out, Gladman's unaligned ECB of 1000 blocks (8000 misaligned dwords) is predicted
    # with the prior where the fit to him has 1.57.
    ecb = tf.Cell("gladman", "Gladman", "Nehemiah", "ECB", True, 1000, 125, 125, 3.05,
                  48800.0, align_name="unaligned")
    fits = tf.loso([ecb], {"Nehemiah": 1200.0}, set(), {}, tf.gladman_own(1.57))
    per_dword = (19.33 - 4.00) / 8
    assert fits["Gladman"].predict(ecb) == pytest.approx(48800.0 + (per_dword - 1.57) * 8000)
    assert fits["§3.3 Nehemiah"].predict(ecb) == pytest.approx(48800.0)
