"""Guest registers that generated code keeps in host registers (docs/emulator.md, "Unicorn").

Our Unicorn patches keep EAX, ECX, EDX, ESI and ESP (RAX, RCX, RDX, RSI and RSP for
64-bit guests) in host registers across blocks, and store them to the CPU state only where
C code reads it: leaving generated code, helper calls, the softmmu slow path and a host
fault in generated code. tests/guest/pinned_regs.c changes registers just before each
such place in the same block (a fault, a store into its own block, helpers that read and
write registers, a timer signal) and prints what it sees; the host running the same binary
is the reference. The x86-64 build's values have their upper halves set, which a 32-bit
store or copy would lose."""

from __future__ import annotations

import pytest

from guestrun import run_in_mode, run_native

ARCHES = ["i386", "x86_64"]
GROUPS = ["fault_load", "fault_store", "fault_push", "fault_rmw", "smc", "helpers", "async"]


@pytest.fixture(scope="module")
def native(runner):
    return {arch: run_native(runner.guest("pinned_regs", arch), []) for arch in ARCHES}


def groups(stdout: bytes) -> dict[str, str]:
    return {line.split()[0]: line for line in stdout.decode().splitlines()}


@pytest.mark.parametrize(
    "arch,memory,timing",
    [(a, m, t) for a in ARCHES for m in ("direct", "tlb") for t in ("off", "on")],
)
def test_registers_match_the_host(runner, native, arch, memory, timing):
    emulated = groups(run_in_mode(runner, "pinned_regs", arch, memory, timing, timeout=120))
    expected = groups(native[arch])
    assert list(emulated) == GROUPS
    for name in GROUPS:
        assert emulated[name] == expected[name], name


def test_the_host_sees_what_the_cases_intend(native):
    """The reference itself: one signal per fault, the values each case set, the rewritten
    immediate, CPUID's untouched registers, and the loop stopped by its timer signal."""
    for arch in ARCHES:
        out = groups(native[arch])
        high = "7e57" if arch == "x86_64" else ""  # the guest's SEED_HIGH
        assert list(out) == GROUPS
        for kind in ("load", "store", "push", "rmw"):
            line = out[f"fault_{kind}"]
            assert "signals=1 " in line and " addr=+0 " in line, line
            assert f" b={high}1213" in line and f" di={high}3435" in line, line
        assert out["smc"].endswith("di=600dc0de")
        assert out["helpers"].endswith("cpuid_ok=1")
        assert out["async"] == "async consts_ok=1 count_ok=1"
