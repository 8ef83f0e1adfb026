"""The direct model API: memory, registers, execution, clock and diagnostics."""

import pytest

import padlock_emu as pe


def test_memory_roundtrip_across_pages():
    m = pe.Model("esther")
    m.map(0x10000, 3 * pe.PAGE_SIZE)
    data = bytes(range(256)) * 20
    m.write(0x10F00, data)
    assert m.read(0x10F00, len(data)) == data


def test_unmapped_access_raises():
    m = pe.Model("esther")
    with pytest.raises(pe.UnmappedMemoryError, match="0x5000 is not mapped"):
        m.read(0x5000, 1)
    with pytest.raises(LookupError):
        m.write(0x5000, b"x")
    assert issubclass(pe.UnmappedMemoryError, pe.PadlockError)


def test_alloc_places_buffers_and_guard_pages():
    m = pe.Model("esther")
    a = m.alloc(100, data=b"abc", misalign=3)
    assert a % 16 == 3 and m.read(a, 3) == b"abc"
    b = m.alloc(16)
    assert b >= a + pe.PAGE_SIZE  # a guard page separates them
    assert m.accessible(a - 3 + pe.PAGE_SIZE, 1, pe.Access.Read) == 0
    r = m.alloc(16, perm=pe.Perm.R)
    assert m.accessible(r, 16, pe.Access.Write) == 0 and m.accessible(r, 16, pe.Access.Read) == 16


def test_register_names_follow_x86_write_rules():
    m = pe.Model("nano", bits=64)
    m["rax"] = 0x1122334455667788
    assert (m["eax"], m["ax"]) == (0x55667788, 0x7788)
    m["ax"] = 0xAAAA  # 16-bit writes merge
    assert m["rax"] == 0x112233445566AAAA
    m["eax"] = 1  # 32-bit writes zero-extend
    assert m["rax"] == 1
    with pytest.raises(KeyError, match="unknown register"):
        m["xmm0"]
    assert set(m.regs()) == {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"}


def test_non_padlock_bytes_are_rejected():
    with pytest.raises(ValueError, match="not a PadLock instruction"):
        pe.Model("esther").step(b"\x0f\xa2")


def test_cr4_osfxsr_clear_is_invalid_opcode_section_1_2():
    m = pe.Model("esther")
    buf = m.alloc(16)
    m.advance(1_000_000)
    m.cr4_osfxsr = False
    with pytest.raises(pe.InvalidOpcode, match="XSTORE raised #UD on esther-c5j"):
        m.step(pe.InsnId.Xstore, edi=buf, edx=0, check=True)
    m.cr4_osfxsr = True
    assert m.step(pe.InsnId.Xstore, edi=buf, edx=0).status == pe.Status.Completed


def test_cr0_ts_set_is_device_not_available():
    """CR0.TS set: #NM, after the #UD checks (as for SSE: CR4[9] clear is still #UD)."""
    m = pe.Model("esther")
    buf = m.alloc(16)
    m.advance(1_000_000)
    m.cr0_ts = True
    with pytest.raises(pe.DeviceNotAvailable, match="#NM"):
        m.step(pe.InsnId.Xstore, edi=buf, edx=0, check=True)
    m.cr4_osfxsr = False
    with pytest.raises(pe.InvalidOpcode):
        m.step(pe.InsnId.Xstore, edi=buf, edx=0, check=True)
    m.cr4_osfxsr = True
    m.cr0_ts = False
    assert m.step(pe.InsnId.Xstore, edi=buf, edx=0).status == pe.Status.Completed


def test_fcr_bit_28_disables_ace_section_1_5():
    m = pe.Model("esther")
    fcr = m.rdmsr(pe.MSR_FCR)
    assert fcr & pe.FCR_PADLOCK_ENABLE
    assert m.wrmsr(pe.MSR_FCR, fcr & ~pe.FCR_PADLOCK_ENABLE)
    edx = m.cpuid(0xC0000001)[3]
    assert not edx & pe.CENTAUR_FEATURES["ACE_ENABLED"]
    assert edx & pe.CENTAUR_FEATURES["RNG_ENABLED"]  # FCR[28] leaves the RNG alone
    with pytest.raises(pe.InvalidOpcode):
        pe.xcrypt("ecb", 0x00A, bytes(16), None, bytes(32), machine=m)


def test_msr_absent_is_none():
    # §1.5: Nehemiah stepping 3 has no FCR.
    assert pe.Model("nehemiah-c5xl").rdmsr(pe.MSR_FCR) is None
    assert pe.Model("esther").rdmsr(pe.MSR_RNG) is not None


def test_operand_size_prefix_raises_invalid_opcode_section_3_1():
    m = pe.Model("esther")
    with pytest.raises(pe.InvalidOpcode):
        m.step(b"\x66\xf3\x0f\xa7\xc8", check=True)


def test_missing_rep_is_reported():
    m = pe.Model("esther")
    x = m.step(b"\x0f\xa6\xc8")  # XSHA1 without REP (§4.1: must be used with REP)
    assert x.status == pe.Status.Faulted and x.fault.kind == pe.FaultKind.InvalidOpcode
    assert [d.name for d in x.diagnostics] == ["missing-rep"]


def test_repne_is_reported_and_acts_as_rep():
    m = pe.Model("esther")
    buf = m.alloc(64)
    m.advance(1_000_000)
    x = m.step(b"\xf2\x0f\xa7\xc0", edi=buf, ecx=8, edx=0)
    assert x.decoded.id == pe.InsnId.RepXstore and x.decoded.repne
    assert "repne-prefix" in [d.name for d in x.diagnostics]
    assert x.status == pe.Status.Completed and m["ecx"] == 0


def test_clock_advances_by_cycles():
    m = pe.Model("esther")
    buf = m.alloc(16)
    m.now = 5_000_000
    x = m.step(pe.InsnId.Xstore, edi=buf, edx=0)
    assert x.start == 5_000_000 and m.now == 5_000_000 + x.cycles and x.cycles > 0
