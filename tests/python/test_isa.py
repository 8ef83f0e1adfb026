"""The instruction table, decoder and control word exported from isa/."""

import capstone
import pytest

import padlock_emu as pe


def test_table_has_every_instruction_in_id_order():
    rows = pe.instructions()
    assert [r.id for r in rows] == list(pe.InsnId.__members__.values())
    assert {r.guide_name for r in rows} >= {"XSTORE", "REP XSTORE", "REP XCRYPTCBC", "REP MONTMUL", "REP XSHA256"}


@pytest.mark.parametrize("row", pe.instructions(), ids=lambda r: r.guide_name.replace(" ", "_"))
def test_encoding_decodes_back_and_capstone_agrees(row):
    m = pe.Model("esther")
    code = m.encode(row.id)
    assert code[-3:] == bytes([0x0F, row.opcode2, row.modrm])
    d = pe.decode(code)
    assert d.status == pe.DecodeStatus.Ok and d.id == row.id and d.length == len(code)
    # Capstone (an independent decoder) names the same instruction. Capstone 5 predates the
    # late Nano's and Zhaoxin's rows: it decodes none of them, and SM2 as montmul (docs/isa.md).
    cs = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_32)
    if row.unit not in (pe.Unit.Rng, pe.Unit.Ace, pe.Unit.Phe, pe.Unit.Pmm):
        names = [i.mnemonic.split()[-1] for i in cs.disasm(code, 0x1000)]
        assert names == (["montmul"] if row.id == pe.InsnId.Sm2 else [])
        return
    insn = next(cs.disasm(code, 0x1000))
    assert insn.size == len(code)
    assert insn.mnemonic.split()[-1] == row.mnemonic


def test_address_size_prefix_section_3_1():
    m = pe.Model("esther")
    d = pe.decode(m.encode(pe.InsnId.XcryptCbc, 16))
    assert d.addr_size == 16 and d.id == pe.InsnId.XcryptCbc
    n = pe.Model("nano", bits=64)
    assert pe.decode(n.encode(pe.InsnId.Xsha1), pe.CpuMode.Long64).addr_size == 64
    assert pe.decode(n.encode(pe.InsnId.Xsha1, 32), pe.CpuMode.Long64).addr_size == 32


@pytest.mark.parametrize("row", pe.instructions(), ids=lambda r: r.guide_name.replace(" ", "_"))
def test_operand_size_prefix_follows_the_table(row):
    # §3.1, §4.1: 66h is an invalid instruction on XCRYPT/XSHA; §5.1: MONTMUL ignores it.
    d = pe.decode(b"\x66" + pe.Model("esther").encode(row.id))
    expected = pe.DecodeStatus.InvalidOpcode if row.opsize == pe.PrefixRule.Illegal else pe.DecodeStatus.Ok
    assert d.status == expected


def test_not_padlock():
    assert pe.decode(b"\x0f\xa2").status == pe.DecodeStatus.NotPadlock  # CPUID
    assert pe.decode(b"\x0f\xa2").id is None


@pytest.mark.parametrize(
    "field,kwargs",
    [
        ("rounds", dict(rounds=10)),
        ("dgest", dict(rounds=10, dgest=True)),
        ("align", dict(rounds=10, align=True)),
        ("ciphr", dict(rounds=10, ciphr=True)),
        ("keygn", dict(rounds=10, keygn=True)),
        ("inter", dict(rounds=10, inter=True)),
        ("decrypt", dict(rounds=10, decrypt=True)),
        ("ksize", dict(rounds=14, ksize=pe.KeySize.Aes256)),
    ],
)
def test_control_word_roundtrip_section_3_2(field, kwargs):
    cw = pe.ControlWord.make(**kwargs)
    back = pe.ControlWord.from_bytes(cw.to_bytes())
    for name, value in kwargs.items():
        assert getattr(back, name) == value
    # no other flag is set
    for flag in ("dgest", "align", "ciphr", "keygn", "inter", "decrypt"):
        if flag not in kwargs:
            assert getattr(back, flag) is False


def test_control_word_values_used_by_drivers():
    # §3.2 field table: AES-128 encrypt with hardware keys is ROUND = 10 (0x00A); decrypt sets
    # CW[9]; a 256-bit key needs KEYGN (bit 7) and KSIZE = 2 (bits 11:10).
    assert pe.ControlWord.make(rounds=10).raw == 0x00A
    assert pe.ControlWord.make(rounds=10, decrypt=True).raw == 0x20A
    assert pe.ControlWord.make(rounds=14, keygn=True, ksize=pe.KeySize.Aes256).raw == 0x88E
    assert pe.ControlWord(0).rounds == 16  # ROUND = 0 means 16 rounds
    assert pe.ControlWord.from_bytes(bytes(15) + b"\x01").reserved_nonzero


def test_diagnostics_table_is_exported():
    table = pe.diagnostics()
    assert len(table) == len(pe.Diag.__members__)
    for d in table:
        # A guide section, or for the late Nano's and Zhaoxin's units the GMI manual's or
        # the docs/ page that records the choice.
        assert (d.section.startswith(("§", "GMI §", "docs/fidelity/"))) and d.choice
        assert pe.Diag.__members__[d.name.replace("-", "_")] == d.id
