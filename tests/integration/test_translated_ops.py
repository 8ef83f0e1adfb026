"""Operations our Unicorn patch translates inside the block (docs/emulator.md, "Unicorn").

The carry after ADC and SBB is computed in the generated code rather than by
helper_cc_compute_c, and the SSE2 integer operations of compiled loops (PADD/PSUB, PAND/
PANDN/POR/PXOR, PCMPEQ/PCMPGT, PMULUDQ, the dword and qword unpacks, PSHUFD, the shifts by
an immediate, MOVD/MOVQ to xmm) are TCG vector or integer operations. The results must be
the x86's: tests/guest/translated_ops.c hashes each group's results over edge values and
pseudo-random operands, and the host running the same binary is the reference. PSRLDQ and
PSLLDQ, still helpers, are there as a control."""

from __future__ import annotations

import pytest

from guestrun import run_in_mode, run_native

ARCHES = ["i386", "x86_64"]


@pytest.fixture(scope="module")
def native(runner):
    return {arch: run_native(runner.guest("translated_ops", arch), []) for arch in ARCHES}


def groups(stdout: bytes) -> dict[str, str]:
    return dict(line.split() for line in stdout.decode().splitlines())


@pytest.mark.parametrize("timing", ["off", "on"])
@pytest.mark.parametrize("memory", ["direct", "tlb"])
@pytest.mark.parametrize("arch", ARCHES)
def test_translated_ops_match_the_host(runner, native, arch, memory, timing):
    emulated = groups(run_in_mode(runner, "translated_ops", arch, memory, timing, timeout=120))
    expected = groups(native[arch])
    wrong = sorted(name for name in expected if emulated.get(name) != expected[name])
    assert not wrong, f"groups that differ from the host: {wrong}"
    assert emulated.keys() == expected.keys()


def test_every_group_is_there(native):
    """The guest ran every group on both architectures, 64-bit ADC/SBB on x86-64 only."""
    names = {arch: set(groups(out)) for arch, out in native.items()}
    assert {"adc8", "sbb32", "wide_compare", "paddd", "pmuludq", "pshufd", "psraw",
            "movd"} <= names["i386"]
    assert names["x86_64"] - names["i386"] == {"adc64", "sbb64"}
    assert len(names["i386"]) == 42
