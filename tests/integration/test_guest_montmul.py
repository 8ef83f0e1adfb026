"""guest_montmul: REP MONTMUL through the Montgomery context (§5.1, §6.4 MMTEST.C),
checked against Python integers as the independent computation.

The unreduced product the instruction leaves in T is fully determined: for any
digit-serial Montgomery algorithm with R = 2^BITS it is (A*B + m*M) / R with
m = -A*B*M^-1 mod R, which is < 2M when A, B < M. The guest then subtracts M once when
T >= M (§5.1 NOTES)."""

from __future__ import annotations

import random

import pytest

from guestrun import kv


def unreduced(a, b, m, bits):
    r = 1 << bits
    q = (-a * b * pow(m, -1, r)) % r
    return (a * b + q * m) // r


def modulus(rng, bits, top_gap=0):
    return rng.getrandbits(bits - top_gap) | 1 | (1 << (bits - 1 - top_gap))


def mul_cases():
    rng = random.Random(51)
    cases = []
    for bits in (256, 384, 512, 640, 1024, 1536, 2048, 4096, 8192, 32768):
        m = modulus(rng, bits, top_gap=rng.choice((0, 0, 1, 7)))
        cases.append((bits, m, rng.randrange(m), rng.randrange(m)))
    # One case whose unreduced result needs the final subtraction (T >= M), one that
    # does not, both at 512 bits.
    m = modulus(rng, 512)
    need, no_need = None, None
    while need is None or no_need is None:
        a, b = rng.randrange(m), rng.randrange(m)
        if unreduced(a, b, m, 512) >= m:
            need = need or (512, m, a, b)
        else:
            no_need = no_need or (512, m, a, b)
    cases += [need, no_need]
    # Edges: A = 0, A = 1, A = B = M - 1.
    m = modulus(rng, 256)
    cases += [(256, m, 0, 5), (256, m, 1, 1), (256, m, m - 1, m - 1)]
    return cases


MUL_CASES = mul_cases()


@pytest.mark.parametrize("bits,m,a,b", MUL_CASES,
                         ids=[f"{c[0]}bit-{i}" for i, c in enumerate(MUL_CASES)])
def test_montmul_product(runner, target, bits, m, a, b):
    """§5.1: T = A*B*R^-1 mod M (before the final subtraction), ECX = 0, EDX = 0, ESI
    unchanged on completion."""
    proc = runner.run("montmul", target, ["mul", bits, f"{m:x}", f"{a:x}", f"{b:x}"])
    out = kv(proc.stdout)
    r = 1 << bits
    assert int(out["t_raw"], 16) == unreduced(a, b, m, bits)
    assert int(out["t"], 16) == a * b * pow(r, -1, m) % m
    assert (out["ecx"], out["edx"], out["esi_same"]) == ("0", "0", "1")


def modexp_cases():
    rng = random.Random(64)
    cases = []
    for bits, ebits in ((256, 256), (512, 512), (1024, 1024), (2048, 2048), (2048, 17)):
        m = modulus(rng, bits)
        cases.append((bits, m, rng.randrange(m), rng.getrandbits(ebits) | (1 << (ebits - 1))))
    m = modulus(rng, 384)
    cases += [(384, m, 3, 0), (384, m, 3, 1), (384, m, m - 1, 65537)]
    return cases


MODEXP_CASES = modexp_cases()


@pytest.mark.parametrize("bits,m,base,exp", MODEXP_CASES,
                         ids=[f"{c[0]}bit-{i}" for i, c in enumerate(MODEXP_CASES)])
def test_montmul_modexp(runner, target, bits, m, base, exp):
    """§6.4: modular exponentiation built on REP MONTMUL equals pow()."""
    proc = runner.run("montmul", target, ["modexp", bits, f"{m:x}", f"{base:x}", f"{exp:x}"])
    out = kv(proc.stdout)
    assert int(out["r"], 16) == pow(base, exp, m)
    assert (out["ecx"], out["edx"], out["esi_same"]) == ("0", "0", "1")
