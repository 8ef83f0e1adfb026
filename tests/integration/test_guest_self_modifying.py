"""Direct memory (docs/emulator.md, "Direct memory") against the softmmu TLB.

Guests run with --memory direct by default: generated code addresses guest memory
through %gs, host pages carry the guest's protections, and pages with translated code are
write-protected so that stores to them drop that code. guest_self_modifying writes code
every way a program can (a C store, a store inside the very block it rewrites, read()
from a pipe, a store after mprotect made the page read-only), loads across 4 GiB (i386)
and loads and stores past the window of a 64-bit guest (x86-64); the values it prints are
what an x86 must give (and what the host gives running the same binary natively, checked
where the host can). The same values must come out with --memory tlb, and the PadLock
guests must print the same bytes under both memory modes."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from guestrun import kv, run_native

ROUNDS = 200
EXPECTED = {
    "other_block": str(ROUNDS * (ROUNDS + 1) // 2),  # each call sees its own rewrite
    "same_block": "0x600dc0de 0x600dc0de",  # precise: the block saw its own store
    "read_into": "0x12345678",              # the system call's write dropped the code
    "protected": f"{int(signal.SIGSEGV)} 0",  # a guest fault at the stored address
    "after": "9",
}


def emulate(runner, arch, cpu, memory, name="self_modifying", args=(str(ROUNDS),)):
    cmd = [str(runner.emulator), "run", "--cpu", cpu, "--memory", memory,
           str(runner.guest(name, arch)), *args]
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    assert p.returncode == 0, (memory, p.returncode, p.stdout[-800:], p.stderr[-800:])
    return p.stdout


@pytest.mark.parametrize("memory", ["direct", "tlb"])
def test_self_modifying_code_i386(runner, memory):
    out = kv(emulate(runner, "i386", "esther", memory))
    assert {k: out.get(k) for k in EXPECTED} == EXPECTED
    assert out["wrap"] == str(int(signal.SIGSEGV))  # into the guard page: a guest fault
    # Sums past 4 GiB wrap: a[0] loaded, a[1] stored, a[2] += 5, LEA gives &a[1],
    # CMPXCHG8B swaps 5 for 9, and 0x1000 - 4 faults at 0xffc.
    assert out["ea_wrap"] == f"11 77 38 1 9 {int(signal.SIGSEGV)}:0xffc"


# Past the window (2^36 to 2^40 bytes): the bound test sends them to the TLB path, which
# refuses them with the exact address; 2^39 lies inside a 1 TiB window, unmapped.
FAR = " ".join(f"{int(signal.SIGSEGV)}:{a:#x} {int(signal.SIGSEGV)}:{a:#x}"
               for a in (1 << 39, 1 << 40, 1 << 44, 0x7FFFFFFFF000))


@pytest.mark.parametrize("memory", ["direct", "tlb"])
def test_self_modifying_code_x86_64(runner, memory):
    out = kv(emulate(runner, "x86_64", "nano", memory))
    assert {k: out.get(k) for k in EXPECTED} == EXPECTED
    assert out["far"] == FAR


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_self_modifying_code_matches_the_host(runner, arch):
    native = run_native(runner.guest("self_modifying", arch), [str(ROUNDS)])
    cpu = "esther" if arch == "i386" else "nano"
    assert emulate(runner, arch, cpu, "direct") == native


# PadLock guests whose output is deterministic: identical bytes under both memory modes.
SAME_OUTPUT = [
    ("demo", ()),
    ("stale_key", ("stale",)),
    ("segv_xcrypt", ("out", "prot", "enc")),
    ("segv_xcrypt", ("in", "unmap", "dec")),
    ("montmul", ("modexp", "1024", "f" * 255 + "1", "1234567", "abcdef")),
    ("xstore", ()),
]


@pytest.mark.parametrize("arch, cpu", [("i386", "esther"), ("x86_64", "nano")])
@pytest.mark.parametrize("name, args", SAME_OUTPUT, ids=lambda v: "-".join(v) if isinstance(v, tuple) else v)
def test_padlock_guests_same_under_both_memory_modes(runner, arch, cpu, name, args):
    direct = emulate(runner, arch, cpu, "direct", name, args)
    tlb = emulate(runner, arch, cpu, "tlb", name, args)
    assert direct == tlb


def test_memory_mode_from_environment(runner):
    # PADLOCK_EMU_MEMORY sets the default; the guest must not notice either way, and
    # --stats names the mode that ran (so a setting that is parsed but not applied shows).
    cmd = [str(runner.emulator), "run", "--cpu", "esther", "--stats",
           str(runner.guest("self_modifying", "i386")), "10"]
    outs = []
    for mode in ("tlb", "direct"):
        env = dict(os.environ, PADLOCK_EMU_MEMORY=mode)
        p = subprocess.run(cmd, capture_output=True, timeout=120, env=env)
        assert p.returncode == 0, p.stderr[-500:]
        assert f"padlock-emu: stats: guest memory {mode}\n" in p.stderr.decode()
        outs.append(p.stdout)
    assert outs[0] == outs[1]
    assert kv(outs[0])["other_block"] == "55"


@pytest.mark.parametrize("arch, cpu, options, env, mode", [
    ("i386", "esther", [], {}, "direct"),  # the default
    ("i386", "esther", ["--memory", "tlb"], {"PADLOCK_EMU_MEMORY": "direct"}, "tlb"),
    ("i386", "esther", ["--memory", "direct"], {"PADLOCK_EMU_MEMORY": "tlb"}, "direct"),
    ("x86_64", "nano", [], {}, "direct"),
    ("x86_64", "nano", ["--memory", "tlb"], {}, "tlb"),
])
def test_memory_mode_that_ran(runner, arch, cpu, options, env, mode):
    cmd = [str(runner.emulator), "run", "--cpu", cpu, "--stats", *options,
           str(runner.guest("hello", arch))]
    base = {k: v for k, v in os.environ.items() if k != "PADLOCK_EMU_MEMORY"}
    p = subprocess.run(cmd, capture_output=True, timeout=120, env={**base, **env})
    assert p.returncode == 0, p.stderr[-500:]
    assert f"padlock-emu: stats: guest memory {mode}\n" in p.stderr.decode()
