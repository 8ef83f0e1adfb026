"""REP XCRYPT through padlock_emu.xcrypt (§3.1-§3.3, §1.7, §1.8).

Known answers come from tests/vectors/aes/fips197.vec (FIPS-197 Appendix C) and
tests/vectors/aes/sp800_38a.vec (SP 800-38A Appendix F). KEYGN = 1 key layouts come from
tests/integration/aes_ref.py, checked here against the FIPS-197 Appendix A expansions.
"""

import pytest

import padlock_emu as pe
from aes_ref import ace_key_ram, expand_key  # tests/integration/aes_ref.py
from vectors import VECTOR_DIR, read_vectors

VECTORS = read_vectors(VECTOR_DIR / "aes/fips197.vec") + read_vectors(VECTOR_DIR / "aes/sp800_38a.vec")
KSIZE = {16: pe.KeySize.Aes128, 24: pe.KeySize.Aes192, 32: pe.KeySize.Aes256}


def mode_of(rec):
    return "ecb" if rec.section.startswith("C.") else rec.section.lower()


def units_for(mode):
    return ["ACE2"] if mode == "ctr" else ["ACE"]  # CTR is ACE2 only (§0 note, §7.1)


def cases():
    for rec in VECTORS:
        key = rec.hex("Key")
        for keygn in ([False, True] if len(key) == 16 else [True]):  # §3.2: only 128-bit keys are hardware-generated
            yield pytest.param(rec, keygn, id=f"{rec.source}-{mode_of(rec)}{len(key) * 8}-{'mem' if keygn else 'hw'}key")


def control_word(key, keygn, decrypt=False, **kw):
    return pe.ControlWord.make(rounds=len(key) // 4 + 6, keygn=keygn, decrypt=decrypt, ksize=KSIZE[len(key)], **kw)


def key_bytes(key, keygn, decrypt_schedule=False):
    return ace_key_ram(key, decrypt_schedule) if keygn else key


def test_reference_key_expansion_matches_fips197_appendix_a():
    # FIPS-197 A.1, A.2, A.3: the last word of each expansion.
    assert expand_key(bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"))[-1][-4:].hex() == "b6630ca6"
    assert expand_key(bytes.fromhex("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b"))[-1][-4:].hex() == "01002202"
    k256 = bytes.fromhex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
    assert expand_key(k256)[-1][-4:].hex() == "706c631e"


@pytest.mark.parametrize("rec,keygn", list(cases()))
def test_known_answer_encrypt(padlock_cpu, rec, keygn):
    mode = mode_of(rec)
    cpu = pe.cpu(padlock_cpu)
    if not set(units_for(mode)) <= set(cpu.units.names):
        pytest.skip(f"{cpu.name} has no {units_for(mode)}")
    key, data = rec.hex("Key"), rec.hex("In")
    iv = rec.hex("IV") if "IV" in rec else None
    r = pe.xcrypt(mode, control_word(key, keygn), key_bytes(key, keygn), iv, data, cpu=cpu)
    assert r.output.hex() == rec["Out"]
    # §3.1 register rules: ECX = 0, ESI and EDI advanced by the bytes stored.
    assert r.ecx == 0
    assert r.esi == r.layout["src"] + len(data)
    assert r.edi == r.layout["dst"] + len(data)
    # §1.8: EFLAGS[30] was 0, so the key was loaded and EFLAGS[30] is now 1.
    assert r.key_reloaded and r.eflags30


@pytest.mark.parametrize("rec,keygn", list(cases()))
def test_known_answer_decrypt(padlock_cpu, rec, keygn):
    mode = mode_of(rec)
    cpu = pe.cpu(padlock_cpu)
    if not set(units_for(mode)) <= set(cpu.units.names):
        pytest.skip(f"{cpu.name} has no {units_for(mode)}")
    key, data = rec.hex("Key"), rec.hex("Out")
    iv = rec.hex("IV") if "IV" in rec else None
    # ECB and CBC decrypt with the inverse cipher and need the dw[] schedule (§3.2);
    # CFB, OFB and CTR run the forward cipher in both directions.
    inverse = mode in ("ecb", "cbc")
    r = pe.xcrypt(mode, control_word(key, keygn, decrypt=True), key_bytes(key, keygn, inverse), iv, data, cpu=cpu)
    assert r.output.hex() == rec["In"]


@pytest.mark.padlock_units("ACE")
@pytest.mark.parametrize("mode", ["cbc", "cfb", "ofb", "ctr"])
def test_returned_iv_continues_the_stream_section_3_1(padlock_cpu, mode):
    # Splitting a message in two REP XCRYPTs, with the IV the first one leaves at EAX
    # (§3.1 "Initialization vector pointer"), gives the one-shot result.
    if mode == "ctr" and "ACE2" not in pe.cpu(padlock_cpu).units.names:
        pytest.skip("CTR is ACE2 only")
    rec = next(r for r in VECTORS if mode_of(r) == mode and len(r.hex("Key")) == 16)
    key, iv, data = rec.hex("Key"), rec.hex("IV"), rec.hex("In")
    cw = control_word(key, False)
    first = pe.xcrypt(mode, cw, key, iv, data[:32], cpu=padlock_cpu)
    next_iv = first.iv
    if mode == "ctr" and pe.cpu(padlock_cpu).ctr_errata:
        # §6.6 erratum (Esther stepping 8): with an even ECX the counter is incremented one
        # extra time; staged encryption must set the counter itself.
        counter = int.from_bytes(iv[14:], "big")
        assert int.from_bytes(next_iv[14:], "big") == (counter + 2 + 1) & 0xFFFF
        next_iv = iv[:14] + ((counter + 2) & 0xFFFF).to_bytes(2, "big")
    second = pe.xcrypt(mode, cw, key, next_iv, data[32:], cpu=padlock_cpu)
    assert (first.output + second.output).hex() == rec["Out"]


def test_cbc_encrypt_moves_eax_section_3_1():
    # §3.1 table: "CBC encryption: the value in EAX itself is changed"; the IV memory stays.
    rec = next(r for r in VECTORS if mode_of(r) == "cbc")
    key, iv, data = rec.hex("Key"), rec.hex("IV"), rec.hex("In")
    r = pe.xcrypt("cbc", control_word(key, False), key, iv, data)
    assert r.eax != r.layout["iv"]
    assert r.machine.read(r.layout["iv"], 16) == iv
    assert r.iv == r.output[-16:]


def test_ctr_increments_the_big_endian_16_bit_counter_section_3_1():
    rec = next(r for r in VECTORS if mode_of(r) == "ctr")
    key, iv, data = rec.hex("Key"), rec.hex("IV"), rec.hex("In")
    r = pe.xcrypt("ctr", control_word(key, False), key, iv, data, cpu="esther-c5j-s9")
    assert r.eax == r.layout["iv"]
    assert r.iv == iv[:14] + ((int.from_bytes(iv[14:], "big") + 4) & 0xFFFF).to_bytes(2, "big")


@pytest.mark.parametrize("blocks", [1, 2, 3, 4])
def test_ctr_erratum_on_esther_stepping_8_section_6_6(blocks):
    # §6.6: when the initial ECX is a multiple of 2 the counter is incremented once more;
    # the ciphertext of a single instruction is still right.
    rec = next(r for r in VECTORS if mode_of(r) == "ctr")
    key, iv, data = rec.hex("Key"), rec.hex("IV"), rec.hex("In")[: 16 * blocks]
    r = pe.xcrypt("ctr", control_word(key, False), key, iv, data, cpu="esther-c5j")
    assert r.output.hex() == rec["Out"][: 32 * blocks]
    extra = 1 if blocks % 2 == 0 else 0
    assert int.from_bytes(r.iv[14:], "big") == (int.from_bytes(iv[14:], "big") + blocks + extra) & 0xFFFF
    # Model(errata=False) turns the erratum off.
    m = pe.Model("esther-c5j", errata=False)
    plain = pe.xcrypt("ctr", control_word(key, False), key, iv, data, machine=m)
    assert int.from_bytes(plain.iv[14:], "big") == (int.from_bytes(iv[14:], "big") + blocks) & 0xFFFF


@pytest.mark.parametrize(
    "blocks,loaded,cached",
    [
        # §3.3 REP XCRYPTECB table, R = 10: (SSE clocks, integer clocks).
        (1, (45 + 20, 61), (9 + 20, 17)),
        # The guide's worked example: ECX = 2, EFLAGS:30 = 1 -> 31 clocks for a following
        # SSE instruction and 12 for integer code.
        (2, (47 + 20, 56), (11 + 20, 12)),
    ],
)
def test_ecb_cycles_match_the_guide_section_3_3(blocks, loaded, cached):
    rec = next(r for r in VECTORS if r.section == "ECB" and len(r.hex("Key")) == 16)
    key, data = rec.hex("Key"), rec.hex("In")[: 16 * blocks]
    m = pe.Model("esther")
    first = pe.xcrypt("ecb", 0x00A, key, None, data, machine=m)  # EFLAGS:30 = 0, hardware key
    assert (first.cycles, first.int_cycles) == loaded
    again = pe.xcrypt("ecb", 0x00A, key, None, data, machine=m, eflags30=True)
    assert (again.cycles, again.int_cycles) == cached
    assert not again.key_reloaded and again.output == first.output


@pytest.mark.padlock_units("ACE")
def test_stale_key_when_eflags30_is_left_set_section_1_8(padlock_model):
    ecb = [r for r in VECTORS if mode_of(r) == "ecb" and len(r.hex("Key")) == 16]
    key1, key2 = ecb[0].hex("Key"), ecb[1].hex("Key")
    data, expected2 = ecb[1].hex("In"), ecb[1]["Out"]
    with_key1 = pe.xcrypt("ecb", 0x00A, key1, None, data, cpu=padlock_model.cpu).output
    m = padlock_model
    pe.xcrypt("ecb", 0x00A, key1, None, data, machine=m)
    stale = pe.xcrypt("ecb", 0x00A, key2, None, data, machine=m, eflags30=True)
    assert not stale.key_reloaded
    assert stale.output == with_key1 and stale.output.hex() != expected2
    fresh = pe.xcrypt("ecb", 0x00A, key2, None, data, machine=m, eflags30=False)
    assert fresh.key_reloaded and fresh.output.hex() == expected2


def test_xsha_clears_eflags30_section_1_8():
    m = pe.Model("esther")
    r = pe.xcrypt("ecb", 0x00A, bytes(16), None, bytes(32), machine=m)
    assert r.eflags30 and m.eflags30
    h = pe.xsha("sha1", b"abc", machine=m, eflags30=True)
    assert not h.eflags30


@pytest.mark.padlock_units("ACE")
def test_misaligned_buffer_is_general_protection_section_3_1(padlock_cpu):
    with pytest.raises(pe.GeneralProtection, match=r"REP XCRYPTCBC raised #GP .* at 0x[0-9a-f]+4\b") as e:
        pe.xcrypt("cbc", 0x00A, bytes(16), bytes(16), bytes(64), cpu=padlock_cpu, src_misalign=4)
    assert e.value.address == e.value.layout["src"]
    assert e.value.address % 16 == 4


def test_align_bit_allows_unaligned_cbc_on_esther_section_3_2():
    rec = next(r for r in VECTORS if mode_of(r) == "cbc" and len(r.hex("Key")) == 16)
    key, iv, data = rec.hex("Key"), rec.hex("IV"), rec.hex("In")
    r = pe.xcrypt("cbc", control_word(key, False, align=True), key, iv, data, src_misalign=5, dst_misalign=9)
    assert r.output.hex() == rec["Out"]
    # ECB still requires alignment with ALIGN = 1 (§3.2 ALIGN).
    with pytest.raises(pe.GeneralProtection):
        pe.xcrypt("ecb", control_word(key, False, align=True), key, None, data, src_misalign=5)


def test_page_fault_on_output_leaves_registers_section_1_7():
    m = pe.Model("esther")
    with pytest.raises(pe.PageFault) as e:
        pe.xcrypt("cbc", 0x00A, bytes(16), bytes(16), bytes(64), machine=m, dst_perm=pe.Perm.R)
    err = e.value
    assert err.write and err.address == err.layout["dst"]
    assert "(write)" in str(err)
    # Nothing was stored, so no register moved (§1.7).
    assert (m["ecx"], m["esi"], m["edi"]) == (4, err.layout["src"], err.layout["dst"])


def test_ctr_on_nehemiah_is_invalid_opcode():
    with pytest.raises(pe.InvalidOpcode, match="ctr-on-nehemiah") as e:
        pe.xcrypt("ctr", 0x00A, bytes(16), bytes(16), bytes(16), cpu="nehemiah")
    assert e.value.diagnostics == ["ctr-on-nehemiah"]


def test_no_ace_is_invalid_opcode_section_1_3():
    with pytest.raises(pe.InvalidOpcode, match="REP XCRYPTECB raised #UD on nehemiah-c5xl"):
        pe.xcrypt("ecb", 0x00A, bytes(16), None, bytes(16), cpu="nehemiah-c5xl")


def test_interrupted_xcrypt_resumes_section_1_7():
    rec = next(r for r in VECTORS if mode_of(r) == "cbc" and len(r.hex("Key")) == 16)
    key, iv = rec.hex("Key"), rec.hex("IV")
    data = rec.hex("In") * 16  # 64 blocks
    whole = pe.xcrypt("cbc", 0x00A, key, iv, data)
    part = pe.xcrypt("cbc", 0x00A, key, iv, data, interrupt_at=200)
    assert not part.completed and 0 < part.ecx < 64
    assert part.esi == part.layout["src"] + 16 * (64 - part.ecx)
    m = part.machine
    # The interrupt saved EFLAGS with bit 30 cleared (§1.8), so the re-executed instruction
    # reloads the key; the OS re-executes until it completes.
    m.eflags30 = False
    while m.step(pe.InsnId.XcryptCbc).status != pe.Status.Completed:
        m.eflags30 = False
    assert m.read(part.layout["dst"], len(data)) == whole.output


def test_bad_mode_name():
    with pytest.raises(KeyError):
        pe.xcrypt("gcm", 0, bytes(16), None, b"")
