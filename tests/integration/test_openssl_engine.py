"""Debian's openssl finds its padlock engine usable under padlock-emu (docs/emulator.md).

OpenSSL's engine (engines/e_padlock.c with engines/asm/e_padlock-x86*.pl) detects PadLock
with CPUID: vendor "CentaurHauls", a Centaur extended leaf 0xC0000001, and in its EDX the
ACE pair (bits 6 and 7: present and enabled, guide §1.3) and the RNG pair (bits 2 and 3).
It then names itself "VIA PadLock (RNG|no-RNG, ACE|no-ACE)". OpenSSL switches its RNG use
off unconditionally (the commentary before padlock_rand_bytes), so the name always says
"no-RNG", on real VIA chips too; what the emulator decides is "ACE" and "[ available ]".
"""

from __future__ import annotations

import subprocess

import pytest

from realclients import HOST_OPENSSL, openssl_client

ACE_CIPHERS = [f"AES-{bits}-{mode}" for bits in (128, 192, 256)
               for mode in ("ECB", "CBC", "CFB", "OFB", "CTR")]


@pytest.fixture(params=["x86_64", "i386"])
def client(request):
    return openssl_client(request.param)


def engine_test(emulator_path, client, cpu=None):
    p = client.run(emulator_path, "/usr/bin/openssl", ["engine", "-c", "-t", "padlock"],
                   cpu=cpu, stats=False)
    return p.stdout.decode()


def test_host_has_no_padlock():
    """The baseline: natively, on this host's CPU, the engine is unavailable."""
    if not HOST_OPENSSL.is_file():
        pytest.skip("no host openssl")
    out = subprocess.run([str(HOST_OPENSSL), "engine", "-t", "padlock"], capture_output=True,
                         text=True).stdout
    assert "(padlock) VIA PadLock (no-RNG, no-ACE)" in out
    assert "[ unavailable ]" in out


def test_engine_available_with_ace(emulator_path, client):
    """nano for x86-64 and esther for i386: ACE found, the 15 AES ciphers registered."""
    out = engine_test(emulator_path, client)
    assert "(padlock) VIA PadLock (no-RNG, ACE)" in out, out
    assert "[ available ]" in out, out
    listed = out.split("[", 1)[1].split("]", 1)[0].replace(" ", "").split(",")
    assert sorted(listed) == sorted(ACE_CIPHERS), out


@pytest.mark.parametrize("cpu,ace", [("nehemiah-c5xl", False), ("nehemiah", True),
                                     ("esther-c5j-s9", True)])
def test_engine_follows_the_model_i386(emulator_path, cpu, ace):
    """§1.3: ACE is reported only by models that have it (C5XL: RNG only)."""
    client = openssl_client("i386")
    out = engine_test(emulator_path, client, cpu=cpu)
    if ace:
        assert "(padlock) VIA PadLock (no-RNG, ACE)" in out and "[ available ]" in out, out
    else:
        assert "(padlock) VIA PadLock (no-RNG, no-ACE)" in out, out
        assert "[ unavailable ]" in out, out
