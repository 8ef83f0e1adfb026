"""REP MONTMUL through padlock_emu.montmul (§5.1, §5.2): the exact T values of
tests/vectors/pmm/montmul.vec, and Python's pow() as the independent reference for
T = A * B * 2^-bits (mod M), possibly not reduced below M."""

import math
import random

import pytest

import padlock_emu as pe
from vectors import VECTOR_DIR, read_vectors

MONTMUL_VECTORS = read_vectors(VECTOR_DIR / "pmm/montmul.vec")


def big(rec, key):
    return int(rec[key], 16)


@pytest.mark.padlock_units("PMM")
@pytest.mark.parametrize("rec", MONTMUL_VECTORS, ids=lambda r: f"{r.section}-{r['Bits']}-{r.source}")
def test_montmul_vectors(padlock_cpu, rec):
    # Exact T, including the records with a wrong mZeroPrime (§6.5 word-serial loop).
    r = pe.montmul(big(rec, "A"), big(rec, "B"), big(rec, "M"), rec.num("Bits"),
                   m_zero_prime=rec.num("MZeroPrime"), cpu=padlock_cpu)
    assert r.t == big(rec, "T")


def operands(bits, seed):
    rnd = random.Random(seed)
    m = rnd.getrandbits(bits) | (1 << (bits - 1)) | 1  # odd, full size
    return rnd.randrange(m), rnd.randrange(m), m


@pytest.mark.padlock_units("PMM")
@pytest.mark.parametrize("bits", [256, 384, 512, 1024, 2048])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_montgomery_product_matches_pow(padlock_cpu, bits, seed):
    a, b, m = operands(bits, seed)
    r = pe.montmul(a, b, m, bits, cpu=padlock_cpu)
    assert r.t % m == a * b * pow(2, -bits, m) % m
    assert r.t < 2 * m  # §5.1 notes: at most one subtraction of M is left to software
    # §5.1: ECX and EDX are zero at the end.
    assert (r.ecx, r.edx) == (0, 0)


@pytest.mark.padlock_units("PMM")
def test_overflow_case_needs_the_final_subtraction(padlock_cpu):
    # Operands near M make T >= M likely; the result must still be congruent.
    bits = 512
    m = (1 << bits) - 569  # odd
    hits = 0
    for k in range(1, 40):
        a, b = m - k, m - 2 * k
        r = pe.montmul(a, b, m, bits, cpu=padlock_cpu)
        assert r.t % m == a * b * pow(2, -bits, m) % m and r.t < 2 * m
        hits += r.t >= m
    assert hits > 0


def test_cycles_follow_the_section_5_2_formula():
    # C = 1024 * (4 N^2 + K1 N) + K2 with N = bits / 1024, 0.56 <= K1 <= 1.06, K2 ~ 35.
    bits = 4096
    a, b, m = operands(bits, 9)
    r = pe.montmul(a, b, m, bits)
    n = bits / 1024
    # Whole clocks: allow the rounding of the fractional K1 * N term.
    assert math.floor(1024 * (4 * n * n + 0.56 * n) + 35) <= r.cycles <= math.ceil(1024 * (4 * n * n + 1.06 * n) + 35)


@pytest.mark.parametrize("bits", [128, 200, 32768 + 128])
def test_invalid_ecx_is_general_protection(bits):
    # §5.1: 256 <= ECX <= 32768 and ECX mod 128 = 0; the guide is silent otherwise
    # (Diag montmul-bad-ecx: #GP before any access).
    m = (1 << (bits - 1)) | 1
    with pytest.raises(pe.GeneralProtection) as e:
        pe.montmul(3, 5, m, bits)
    assert "montmul-bad-ecx" in e.value.diagnostics


def test_no_pmm_is_invalid_opcode():
    with pytest.raises(pe.InvalidOpcode, match="REP MONTMUL raised #UD on nehemiah-c5p"):
        pe.montmul(3, 5, (1 << 255) | 1, 256, cpu="nehemiah")


def test_even_modulus_is_rejected_before_running():
    with pytest.raises(ValueError, match="odd"):
        pe.montmul(3, 5, 1 << 255, 256)
