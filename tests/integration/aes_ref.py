"""A small pure-Python AES (FIPS-197) and the SP 800-38A modes, used by the integration
tests as the independent computation the guests' output is compared with. It does not
depend on any crypto package, so the tests run on a bare Python. Slow, but the tests only
feed it a few blocks.

The S-box comes from its definition (GF(2^8) inverse and affine map); the module checks
itself against FIPS-197 Appendix C.1 on import."""

from __future__ import annotations


def _xtime(a: int) -> int:
    a <<= 1
    return (a ^ 0x11B) & 0xFF if a & 0x100 else a


def _gmul(a: int, b: int) -> int:
    p = 0
    while b:
        if b & 1:
            p ^= a
        a = _xtime(a)
        b >>= 1
    return p


def _make_sbox() -> tuple[list[int], list[int]]:
    sbox = [0] * 256
    for x in range(256):
        inv = 0
        if x:
            inv = 1
            base, e = x, 254
            while e:
                if e & 1:
                    inv = _gmul(inv, base)
                base = _gmul(base, base)
                e >>= 1
        s = inv
        for i in range(1, 5):
            s ^= ((inv << i) | (inv >> (8 - i))) & 0xFF
        sbox[x] = s ^ 0x63
    inv_sbox = [0] * 256
    for x, s in enumerate(sbox):
        inv_sbox[s] = x
    return sbox, inv_sbox


SBOX, INV_SBOX = _make_sbox()
_MUL = {c: [_gmul(x, c) for x in range(256)] for c in (2, 3, 9, 11, 13, 14)}


def expand_key(key: bytes) -> list[bytes]:
    """FIPS-197 §5.2: the Nr+1 round keys."""
    nk = len(key) // 4
    if len(key) not in (16, 24, 32):
        raise ValueError("AES key must be 16, 24 or 32 bytes")
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
    return [bytes(sum(w[4 * r : 4 * r + 4], [])) for r in range(nr + 1)]


def ace_key_ram(key: bytes, decrypt: bool) -> bytes:
    """The 256 bytes a program stores at ES:[EBX] for KEYGN = 1 (§3.2): the key and w[]
    (FIPS-197 Fig. 11) to encrypt; to decrypt, the equivalent-inverse-cipher schedule dw[]
    (Fig. 15) in the order it is used, last round key first and the real key last."""
    rk = expand_key(key)
    if decrypt:
        nr = len(rk) - 1
        rk = [rk[nr]] + [bytes(_mix(list(rk[nr - i]), inverse=True)) for i in range(1, nr)] + [rk[0]]
    return b"".join(rk).ljust(256, b"\0")


def _add(s: list[int], k: bytes) -> list[int]:
    return [a ^ b for a, b in zip(s, k)]


def _shift_rows(s: list[int], inverse: bool = False) -> list[int]:
    out = [0] * 16
    for c in range(4):
        for r in range(4):
            src = (c + r) % 4 if not inverse else (c - r) % 4
            out[4 * c + r] = s[4 * src + r]
    return out


def _mix(s: list[int], inverse: bool = False) -> list[int]:
    m = (14, 11, 13, 9) if inverse else (2, 3, 1, 1)
    out = []
    for c in range(4):
        col = s[4 * c : 4 * c + 4]
        for r in range(4):
            v = 0
            for k in range(4):
                coef = m[(k - r) % 4]
                v ^= col[k] if coef == 1 else _MUL[coef][col[k]]
            out.append(v)
    return out


def encrypt_block(key: bytes, block: bytes) -> bytes:
    rk = expand_key(key)
    s = _add(list(block), rk[0])
    for r in range(1, len(rk)):
        s = [SBOX[b] for b in s]
        s = _shift_rows(s)
        if r != len(rk) - 1:
            s = _mix(s)
        s = _add(s, rk[r])
    return bytes(s)


def decrypt_block(key: bytes, block: bytes) -> bytes:
    rk = expand_key(key)
    s = _add(list(block), rk[-1])
    for r in range(len(rk) - 2, -1, -1):
        s = _shift_rows(s, inverse=True)
        s = [INV_SBOX[b] for b in s]
        s = _add(s, rk[r])
        if r != 0:
            s = _mix(s, inverse=True)
    return bytes(s)


def _blocks(data: bytes) -> list[bytes]:
    if len(data) % 16:
        raise ValueError("data must be a whole number of blocks")
    return [data[i : i + 16] for i in range(0, len(data), 16)]


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def ecb(key: bytes, data: bytes, decrypt: bool = False) -> bytes:
    f = decrypt_block if decrypt else encrypt_block
    return b"".join(f(key, b) for b in _blocks(data))


def cbc(key: bytes, iv: bytes, data: bytes, decrypt: bool = False) -> bytes:
    out, prev = [], iv
    for b in _blocks(data):
        if decrypt:
            out.append(_xor(decrypt_block(key, b), prev))
            prev = b
        else:
            prev = encrypt_block(key, _xor(b, prev))
            out.append(prev)
    return b"".join(out)


def cfb(key: bytes, iv: bytes, data: bytes, decrypt: bool = False) -> bytes:
    """CFB-128: the ciphertext block is fed back in both directions."""
    out, prev = [], iv
    for b in _blocks(data):
        o = _xor(b, encrypt_block(key, prev))
        out.append(o)
        prev = b if decrypt else o
    return b"".join(out)


def ofb(key: bytes, iv: bytes, data: bytes) -> bytes:
    out, stream = [], iv
    for b in _blocks(data):
        stream = encrypt_block(key, stream)
        out.append(_xor(b, stream))
    return b"".join(out)


def ctr16(key: bytes, counter_block: bytes, data: bytes) -> bytes:
    """CTR as ACE implements it (§3.1): bytes 0-13 are a fixed nonce, bytes 14-15 a
    big-endian 16-bit counter incremented once per block (wrapping within 16 bits)."""
    out = []
    nonce, ctr = counter_block[:14], int.from_bytes(counter_block[14:], "big")
    for b in _blocks(data):
        out.append(_xor(b, encrypt_block(key, nonce + ctr.to_bytes(2, "big"))))
        ctr = (ctr + 1) & 0xFFFF
    return b"".join(out)


def _self_test() -> None:
    # FIPS-197 Appendix C.1 (AES-128).
    key = bytes(range(16))
    pt = bytes.fromhex("00112233445566778899aabbccddeeff")
    ct = bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a")
    if encrypt_block(key, pt) != ct or decrypt_block(key, ct) != pt:
        raise AssertionError("aes_ref fails FIPS-197 C.1")


_self_test()
