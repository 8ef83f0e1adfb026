"""CPU models as exported from the C++ registry (models/cpus/*.hpp)."""

import pytest

import padlock_emu as pe
from padlock_emu import _core


EXPECTED_UNITS = {
    # README "CPU models" table; §1.1 "CPUID identification" table.
    "nehemiah-c5xl": ["RNG"],
    "nehemiah-c5p": ["RNG", "ACE"],
    "esther-c5j": ["RNG", "ACE", "ACE2", "PHE", "PMM"],
    "esther-c5j-s9": ["RNG", "ACE", "ACE2", "PHE", "PMM"],
    "nano": ["RNG", "ACE", "ACE2", "PHE", "PMM"],
    # docs/zhaoxin.md: the Nano 3000 and Zhaoxin parts, their later units from each
    # dump's C000_0001 EDX.
    "nano-3000": ["RNG", "ACE", "ACE2", "PHE", "PMM", "PHE2", "RSA", "RNG2"],
    "zx-c": ["RNG", "ACE", "ACE2", "PHE", "PMM", "PHE2", "CCS", "RSA", "RNG2"],
    "kx-5000": ["RNG", "ACE", "ACE2", "PHE", "PMM", "PHE2", "CCS", "RSA", "RNG2"],
    "kx-6000": ["RNG", "ACE", "ACE2", "PHE", "PMM", "PHE2", "CCS", "SM2", "RSA", "RNG2"],
    "kh-40000": ["RNG", "ACE", "ACE2", "PHE", "PMM", "PHE2", "CCS", "SM2", "RSA", "RNG2"],
    "kx-7000": ["RNG", "ACE", "ACE2", "PHE", "PMM", "PHE2", "CCS", "SM2", "RSA", "RNG2"],
}
# Every Nano 3000 and Zhaoxin dump leaves C000_0001 EDX[9] (ACE2 enabled) clear.
LATE = {"nano-3000", "zx-c", "kx-5000", "kx-6000", "kh-40000", "kx-7000"}


def test_model_list_and_units():
    models = {m.name: m for m in pe.cpus()}
    assert list(models) == list(EXPECTED_UNITS)
    for name, units in EXPECTED_UNITS.items():
        assert models[name].units.names == units


def test_cpuid_identification_section_1_1():
    # §1.1: family 6 everywhere; Nehemiah C5XL stepping 3, C5P and Esther stepping 8-F;
    # §7.1: model 9 = Nehemiah, 10 = Esther.
    by = {m.name: m for m in pe.cpus()}
    assert all(m.family == 6 for m in by.values() if m.name not in LATE)
    assert {m.family for m in by.values() if m.name in LATE} == {6, 7}
    assert (by["nehemiah-c5xl"].model, by["nehemiah-c5xl"].stepping) == (9, 3)
    assert by["nehemiah-c5p"].model == 9 and 8 <= by["nehemiah-c5p"].stepping <= 15
    assert (by["esther-c5j"].model, by["esther-c5j"].stepping) == (10, 8)
    assert by["esther-c5j"].ctr_errata and not by["esther-c5j-s9"].ctr_errata  # §3.1 ERRATA


def test_aliases_resolve():
    assert pe.cpu("esther").name == "esther-c5j"
    assert pe.cpu("nehemiah").name == "nehemiah-c5p"
    assert "esther" in pe.cpu("esther-c5j").aliases


def test_unknown_cpu_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown CPU model 'pentium'.*esther-c5j"):
        pe.cpu("pentium")
    with pytest.raises(ValueError, match="unknown CPU model 'pentium'"):
        pe.Model("pentium")


def test_every_param_has_a_source_a_unit_and_help():
    for m in pe.cpus():
        params = m.params
        assert params["default_mhz"].unit == "MHz"
        assert m.default_mhz.value == params["default_mhz"].value
        assert len(params) > 50
        for name, p in params.items():
            assert p.source, f"{m.name}: {name} has no source"
            assert p.unit, f"{m.name}: {name} has no unit"
            assert p.help, f"{m.name}: {name} has no help"
            assert p.name == name
            assert float(p) == p.value
    esther = pe.cpu("esther").params
    # The unit is the field's type (models/param.hpp).
    assert esther["memory.l2_ways"].unit == "ways"
    assert esther["pmm.cache_line_bytes"].unit == "bytes"
    assert esther["rng.raw_one_bias[3]"].unit == "probability"


def test_guide_figures_reach_python():
    esther = pe.cpu("esther").params
    # §3.3 REP XCRYPTECB table, one block: 9 / 45 / 76 SSE base clocks.
    assert [esther[f"ace.ecb_sse_base[0][{i}]"].value for i in range(3)] == [9, 45, 76]
    assert esther["ace.ecb_sse_base[0][1]"].source.startswith("§3.3")
    # §2.3 XSTORE execution clocks by EDX.
    assert [esther[f"rng.clocks_stored[{i}]"].value for i in range(4)] == [55, 310, 200, 120]
    # §5.2 K2.
    assert esther["pmm.k2"].value == 35


def test_binding_lists_every_params_field():
    # Fails when a field is declared in a *Params struct of models/cpu_model.hpp outside its
    # PADLOCK_*_FIELDS list (models/cpu_params.cpp walks the lists).
    assert _core._param_coverage_gaps() == []


def test_centaur_feature_flags_follow_units_section_1_3():
    f = pe.CENTAUR_FEATURES
    for cpu in pe.cpus():
        edx = pe.Model(cpu).cpuid(0xC0000001)[3]
        u = cpu.units
        for unit, present in (("RNG", u.rng), ("ACE", u.ace), ("ACE2", u.ace2), ("PHE", u.phe), ("PMM", u.pmm)):
            assert bool(edx & f[f"{unit}_PRESENT"]) == present, (cpu.name, unit)
            enabled = present and not (unit == "ACE2" and cpu.name in LATE)
            assert bool(edx & f[f"{unit}_ENABLED"]) == enabled, (cpu.name, unit)  # at RESET


def test_64_bit_needs_a_long_mode_cpu():
    with pytest.raises(ValueError, match="cannot run 64-bit code"):
        pe.Model("esther", bits=64)
    assert pe.Model("nano", bits=64).bits == 64


def test_fixture_is_parametrised_over_every_model(padlock_cpu):
    assert pe.cpu(padlock_cpu).name == padlock_cpu


@pytest.mark.padlock_units("PHE")
def test_units_marker_filters_models(padlock_cpu):
    assert "PHE" in pe.cpu(padlock_cpu).units.names
