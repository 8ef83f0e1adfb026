"""Independent FIPS-197 key expansion for the KEYGN = 1 layouts of §3.2 (test-side reference).

ACE loads sixteen 128-bit values from ES:[EBX] when KEYGN = 1 (§3.2): for encryption the
key followed by the expanded schedule w[] (FIPS-197 Fig. 11), for decryption the
equivalent-inverse-cipher schedule dw[] (Fig. 15) with the last round key first and the
real key last. ACE needs these for 192/256-bit keys. test_xcrypt.py checks this module
against the FIPS-197 Appendix A expansions before using it.
"""

from __future__ import annotations

from typing import List


def _xtime(a: int) -> int:
    a <<= 1
    return (a ^ 0x11B) & 0xFF if a & 0x100 else a


def _gmul(a: int, b: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        a, b = _xtime(a), b >> 1
    return r


def _sbox() -> List[int]:
    # FIPS-197 §5.1.1: multiplicative inverse in GF(2^8), then the affine transformation.
    inv = [0] * 256
    for a in range(1, 256):
        for b in range(1, 256):
            if _gmul(a, b) == 1:
                inv[a] = b
                break
    box = []
    for a in range(256):
        x = inv[a]
        y = x
        for s in range(1, 5):
            y ^= ((x << s) | (x >> (8 - s))) & 0xFF
        box.append(y ^ 0x63)
    return box


SBOX = _sbox()


def expand_key(key: bytes) -> List[bytes]:
    """FIPS-197 §5.2 KeyExpansion: the Nr+1 round keys, 16 bytes each."""
    nk = len(key) // 4
    if nk not in (4, 6, 8):
        raise ValueError("AES keys are 16, 24 or 32 bytes")
    nr = nk + 6
    w = [list(key[4 * i : 4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (nr + 1)):
        t = list(w[i - 1])
        if i % nk == 0:
            t = t[1:] + t[:1]
            t = [SBOX[b] for b in t]
            t[0] ^= rcon
            rcon = _xtime(rcon)
        elif nk > 6 and i % nk == 4:
            t = [SBOX[b] for b in t]
        w.append([a ^ b for a, b in zip(w[i - nk], t)])
    flat = bytes(b for word in w for b in word)
    return [flat[16 * r : 16 * r + 16] for r in range(nr + 1)]


def _inv_mix_column(k: bytes) -> bytes:
    out = bytearray()
    for c in range(4):
        a = k[4 * c : 4 * c + 4]
        out += bytes(
            _gmul(a[0], m0) ^ _gmul(a[1], m1) ^ _gmul(a[2], m2) ^ _gmul(a[3], m3)
            for m0, m1, m2, m3 in ((14, 11, 13, 9), (9, 14, 11, 13), (13, 9, 14, 11), (11, 13, 9, 14))
        )
    return bytes(out)


def ace_key_ram(key: bytes, decrypt: bool) -> bytes:
    """The 256 bytes a program stores at ES:[EBX] for KEYGN = 1 (§3.2)."""
    rk = expand_key(key)
    if decrypt:
        nr = len(rk) - 1
        rk = [rk[nr]] + [_inv_mix_column(rk[nr - i]) for i in range(1, nr)] + [rk[0]]
    return b"".join(rk).ljust(256, b"\0")
