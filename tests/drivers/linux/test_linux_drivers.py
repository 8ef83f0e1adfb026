"""Linux 6.1's drivers/crypto/padlock-aes.c and padlock-sha.c, unmodified, on every CPU
model through the function harness: the kernel's own test vectors (crypto/testmgr.h) for
aes, ecb(aes), cbc(aes), sha1 and sha256 through the drivers' entry points, in the
kernel's segmentation configurations (one segment, multi-segment walks, misaligned
buffers; for hashes digest, init+update+final, finup, export/import between updates), and
the decrypt-then-encrypt stale control word the PadLock checker must report
(docs/checker.md). README.md in this folder says how the drivers are built."""

from __future__ import annotations

import re

import pytest

import aes_ref
import kbuild
import padlock_emu as pe
import sarif_schema
import testmgr

ENODEV = 19
# (cpu, bits): every model in 32-bit mode, and 64-bit where the model has long mode.
TARGETS = [(c.name, 32) for c in pe.cpus()] + [(c.name, 64) for c in pe.cpus() if c.long_mode]
IDS = [f"{c}-{'i386' if b == 32 else 'x86_64'}" for c, b in TARGETS]
CIPHER_ARRAYS = {"aes": "aes_tv_template", "ecb(aes)": "aes_tv_template",
                 "cbc(aes)": "aes_cbc_tv_template"}
HASH_ARRAYS = {"sha1": "sha1_tv_template", "sha256": "sha256_tv_template"}
# kernel_shim.c glue_shash's feeding modes
HOWS = {"digest": 0, "init+update+final": 1, "init+update+finup": 2, "export/import": 3}
SEGMENTS = [0, 16, 48]  # 0: one segment; else the walk's segment size in bytes
HASH_SEGMENTS = [0, 1, 7, 64]


class Driver:
    """One driver loaded into a Machine with the shim, its module init run."""

    def __init__(self, src, objdir, driver: str, cpu: str, bits: int, check: bool = False):
        obj, shim = kbuild.build(driver, bits, objdir)
        self.m = pe.Machine(cpu, bits=bits, check=check)
        # CR0.TS is ring-0 state: the shim reaches the harness's (kernel_shim.h).
        self.m.stub("shim_read_cr0_ts", lambda mm: int(mm.cr0_ts))
        self.m.stub("shim_write_cr0_ts", lambda mm, ts: setattr(mm, "cr0_ts", bool(ts)))
        self.m.load(shim)
        self.m.load(obj)
        self.init = self.m.call("shim_module_init") & 0xFFFFFFFF

    def buf(self, data: bytes, misalign: int = 0) -> int:
        a = self.m.alloc(len(data) + 32)
        a = (a + 15) // 16 * 16 + misalign
        self.m.write(a, data)
        return a

    def cipher(self, name: str, key: bytes) -> int:
        h = self.m.call("glue_cipher_new", self.buf(name.encode() + b"\0"), self.buf(key),
                        len(key))
        assert h != 0, f"{name}: not registered or setkey failed"
        return h

    def crypt(self, h: int, decrypt: bool, data: bytes, iv: bytes | None = None, seg: int = 0,
              misalign: int = 0, irq_save: bool = True) -> bytes:
        """One request. irq_save: store EFLAGS first (clearing EFLAGS[30], §1.8), as the
        kernel does between two requests in local_irq_save's PUSHF or an interrupt; the
        harness runs nothing between calls by itself."""
        if irq_save:
            self.m.force_key_reload()
        src = self.buf(data, misalign)
        dst = self.buf(bytes(len(data)), misalign)
        ivp = self.buf(iv) if iv is not None else 0
        assert self.m.call("glue_cipher_crypt", h, int(decrypt), ivp, src, dst, len(data),
                           seg) == 0
        return self.m.read(dst, len(data))

    def digest(self, name: str, how: int, data: bytes, seg: int, misalign: int = 0) -> bytes:
        h = self.m.call("glue_shash_new", self.buf(name.encode() + b"\0"))
        assert h != 0
        out = self.buf(bytes(32))
        assert self.m.call("glue_shash", h, how, self.buf(data, misalign), len(data), seg,
                           out) == 0
        return self.m.read(out, 32 if name == "sha256" else 20)


def has_unit(cpu: str, unit: str) -> bool:
    return bool(getattr(pe.cpu(cpu).units, unit))


@pytest.mark.parametrize("cpu,bits", TARGETS, ids=IDS)
@pytest.mark.parametrize("alg", sorted(CIPHER_ARRAYS))
def test_aes_vectors(linux_src, objdir, cpu, bits, alg):
    """testmgr's AES vectors through aes / ecb(aes) / cbc(aes), both directions, in every
    segmentation; on a model without ACE the driver's init refuses (-ENODEV)."""
    drv = Driver(linux_src, objdir, "aes", cpu, bits)
    if not has_unit(cpu, "ace"):
        assert drv.init == (-ENODEV) & 0xFFFFFFFF
        return
    assert drv.init == 0
    vecs = testmgr.vectors(linux_src / "crypto" / "testmgr.h", CIPHER_ARRAYS[alg])
    checked = 0
    for v in vecs:
        iv = v.get("iv") if alg == "cbc(aes)" else None
        configs = [(0, 0)] if alg == "aes" else [(s, 0) for s in SEGMENTS] + [(0, 1), (32, 4)]
        for seg, misalign in configs:
            h = drv.cipher(alg, v["key"])
            ct = drv.crypt(h, False, v["ptext"], iv, seg, misalign)
            assert ct == v["ctext"], (v["klen"], v["len"], seg, misalign)
            pt = drv.crypt(h, True, v["ctext"], iv, seg, misalign)
            assert pt == v["ptext"], (v["klen"], v["len"], seg, misalign)
            checked += 1
    assert checked >= len(vecs)


@pytest.mark.parametrize("cpu,bits", TARGETS, ids=IDS)
@pytest.mark.parametrize("alg", sorted(HASH_ARRAYS))
def test_sha_vectors(linux_src, objdir, cpu, bits, alg):
    """testmgr's SHA-1/SHA-256 vectors in every feeding mode and segment size: the 64-byte
    vector's final() issues REP XSHA with EAX = ECX on the non-Nano path (xsha-pad-only).
    Without PHE the driver's init refuses (-ENODEV)."""
    drv = Driver(linux_src, objdir, "sha", cpu, bits)
    if not has_unit(cpu, "phe"):
        assert drv.init == (-ENODEV) & 0xFFFFFFFF
        # Forced past the CPUID check, the driver's final step meets the missing unit:
        # REP XSHA raises #UD (§1.3), SIGILL.
        h = drv.m.call("glue_shash_new_alg", drv.m.symbol(f"{alg}_alg"))
        with pytest.raises(pe.GuestFault) as fault:
            drv.m.call("glue_shash", h, HOWS["digest"], drv.buf(b"abc"), 3, 0, drv.buf(bytes(32)))
        assert fault.value.signal_name == "SIGILL" and fault.value.is_padlock
        assert fault.value.insn.name == ("Xsha1" if alg == "sha1" else "Xsha256")
        assert fault.value.function.startswith(f"padlock_{alg}_finup")
        return
    assert drv.init == 0
    for v in testmgr.vectors(linux_src / "crypto" / "testmgr.h", HASH_ARRAYS[alg]):
        for how_name, how in HOWS.items():
            for seg in HASH_SEGMENTS:
                for misalign in (0, 3):
                    got = drv.digest(alg, how, v["plaintext"], seg, misalign)
                    assert got == v["digest"], (v["psize"], how_name, seg, misalign)


def _line_of_call(source: str, function: str, call: str) -> int:
    """The line of `call` inside `function` in the driver source."""
    lines = source.splitlines()
    start = next(i for i, text in enumerate(lines)
                 if re.match(rf"static (int|void) {function}\(", text))
    return next(i for i in range(start, len(lines)) if call in lines[i]) + 1


# The driver's paths that leave a stale control word when nothing stores EFLAGS between
# two requests: (algorithm, first request decrypts?, function and call of the second).
STALE = {
    # ecb_aes_decrypt records cword.encrypt as the last one used: the next ecb_aes_encrypt
    # skips PUSHF/POPF.
    "ecb-decrypt-then-encrypt": ("ecb(aes)", True, "ecb_aes_encrypt", "padlock_xcrypt_ecb("),
    # padlock_aes_decrypt resets against cword.encrypt: after padlock_aes_encrypt it skips
    # PUSHF/POPF.
    "aes-encrypt-then-decrypt": ("aes", False, "padlock_aes_decrypt", "ecb_crypt("),
}


@pytest.mark.parametrize("case", sorted(STALE))
@pytest.mark.parametrize("cpu,bits", [("esther", 32), ("nano", 64)],
                         ids=["esther-i386", "nano-x86_64"])
def test_stale_control_word_is_reported(linux_src, objdir, cpu, bits, case):
    """Two requests on one context with no EFLAGS store between: the second runs with
    EFLAGS[30] = 1 and another control word and key in memory. §1.8: they are not
    reloaded, so the second request repeats the first one's direction and key. The checker
    reports it at the driver's function and line."""
    alg, first_decrypts, function, call = STALE[case]
    drv = Driver(linux_src, objdir, "aes", cpu, bits, check=True)
    key, block = bytes(range(16)), bytes.fromhex("00112233445566778899aabbccddeeff")
    h = drv.cipher(alg, key)
    drv.crypt(h, first_decrypts, block)
    assert drv.m.findings() == []
    second = drv.crypt(h, not first_decrypts, block, irq_save=False)
    same_direction = aes_ref.decrypt_block if first_decrypts else aes_ref.encrypt_block
    assert second == same_direction(key, block)  # the guide's prediction
    findings = drv.m.findings()
    assert [(f["kind"], f["severity"], f["function"]) for f in findings] == \
        [("stale-key", "error", function)]
    source = (linux_src / kbuild.DRIVERS["aes"]).read_text()
    assert findings[0]["file"].endswith("drivers/crypto/padlock-aes.c")
    line = _line_of_call(source, function, call)
    assert findings[0]["line"] == line
    # The same finding as SARIF 2.1.0 for code review, valid against the official schema.
    sarif = drv.m.findings_sarif()
    sarif_schema.validate(sarif)
    loc = sarif["runs"][0]["results"][0]["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith(kbuild.DRIVERS["aes"])
    assert loc["physicalLocation"]["region"]["startLine"] == line
    assert loc["logicalLocations"][0]["name"] == function


def test_requests_with_eflags_stored_between_have_no_finding(linux_src, objdir):
    """With EFLAGS stored between requests (the kernel's usual case) the same sequences are
    correct and the checker is silent."""
    drv = Driver(linux_src, objdir, "aes", "esther", 32, check=True)
    key, block = bytes(range(16)), bytes.fromhex("00112233445566778899aabbccddeeff")
    for alg in ("ecb(aes)", "aes"):
        h = drv.cipher(alg, key)
        for decrypt in (True, False, True):
            want = (aes_ref.decrypt_block if decrypt else aes_ref.encrypt_block)(key, block)
            assert drv.crypt(h, decrypt, block) == want
    assert drv.m.findings() == []


KEY, BLOCK = bytes(range(16)), bytes.fromhex("00112233445566778899aabbccddeeff")
MSR_FCR, FCR_PADLOCK = 0x1107, 1 << 28


def _ring0_driver(linux_src, objdir, driver: str = "aes") -> Driver:
    drv = Driver(linux_src, objdir, driver, "esther", 32, check=True)
    assert drv.init == 0
    return drv


def _ecb_line(linux_src) -> int:
    source = (linux_src / kbuild.DRIVERS["aes"]).read_text()
    return _line_of_call(source, "ecb_aes_encrypt", "padlock_xcrypt_ecb(")


def test_ring0_osfxsr_clear_is_invalid_opcode(linux_src, objdir):
    """CR4[9] clear (a kernel that never enabled SSE): §1.2 "PadLock behaves as if it were
    disabled", so padlock-aes.c's REP XCRYPTECB raises #UD; the checker names the driver's
    line and says why. With CR4[9] set again the same request is right."""
    drv = _ring0_driver(linux_src, objdir)
    h = drv.cipher("ecb(aes)", KEY)
    drv.m.cr4_osfxsr = False
    with pytest.raises(pe.GuestFault) as fault:
        drv.crypt(h, False, BLOCK)
    assert fault.value.signal_name == "SIGILL" and fault.value.trapno == 6
    assert fault.value.is_padlock and fault.value.insn.name == "XcryptEcb"
    findings = drv.m.findings()
    assert [(f["kind"], f["function"], f["line"]) for f in findings] == \
        [("unit-unavailable", "ecb_aes_encrypt", _ecb_line(linux_src))]
    assert findings[0]["message"].endswith("with CR4[9] (OSFXSR) clear]")
    drv.m.cr4_osfxsr = True
    assert drv.crypt(h, False, BLOCK) == aes_ref.encrypt_block(KEY, BLOCK)


def test_ring0_cr0_ts_needs_kernel_fpu_begin_or_irq_ts_save(linux_src, objdir):
    """CR0.TS set (a lazy-FPU kernel after a task switch): the driver's REP XCRYPTECB raises
    #NM (vector 7) and the checker reports fpu-not-available at its line. Inside the shim's
    kernel_fpu_begin/end, or irq_ts_save/irq_ts_restore, TS is clear and the request is
    right; each pair leaves TS set again, as it found it."""
    drv = _ring0_driver(linux_src, objdir)
    h = drv.cipher("ecb(aes)", KEY)
    want = aes_ref.encrypt_block(KEY, BLOCK)
    drv.m.cr0_ts = True
    with pytest.raises(pe.GuestFault) as fault:
        drv.crypt(h, False, BLOCK)
    assert fault.value.trapno == 7 and fault.value.is_padlock
    assert [(f["kind"], f["severity"], f["function"], f["line"]) for f in drv.m.findings()] == \
        [("fpu-not-available", "error", "ecb_aes_encrypt", _ecb_line(linux_src))]
    assert drv.m.cr0_ts
    drv.m.call("kernel_fpu_begin")
    assert not drv.m.cr0_ts
    assert drv.crypt(h, False, BLOCK) == want
    drv.m.call("kernel_fpu_end")
    assert drv.m.cr0_ts
    state = drv.m.call("irq_ts_save")
    assert state == 1 and not drv.m.cr0_ts
    assert drv.crypt(h, False, BLOCK) == want
    drv.m.call("irq_ts_restore", state)
    assert drv.m.cr0_ts
    assert len(drv.m.findings()) == 1  # nothing new inside the pairs


def test_ring0_cr0_ts_faults_every_unit(linux_src, objdir):
    """#NM is not an ACE rule: padlock-sha.c's REP XSHA faults the same way with TS set."""
    drv = _ring0_driver(linux_src, objdir, "sha")
    drv.m.cr0_ts = True
    with pytest.raises(pe.GuestFault) as fault:
        drv.digest("sha1", HOWS["digest"], b"abc", 0)
    assert fault.value.trapno == 7 and fault.value.insn.name == "Xsha1"
    assert [f["kind"] for f in drv.m.findings()] == ["fpu-not-available"]


def test_ring0_fcr_write_disables_ace(linux_src, objdir):
    """A WRMSR clearing FCR[28] (MSR 0x1107, §1.5) disables ACE after the driver loaded:
    its REP XCRYPTECB raises #UD (§1.3) and the checker reports unit-unavailable; setting
    the bit again enables it."""
    drv = _ring0_driver(linux_src, objdir)
    h = drv.cipher("ecb(aes)", KEY)
    fcr = drv.m.rdmsr(MSR_FCR)
    assert fcr is not None and fcr & FCR_PADLOCK
    assert drv.m.wrmsr(MSR_FCR, fcr & ~FCR_PADLOCK)
    with pytest.raises(pe.GuestFault) as fault:
        drv.crypt(h, False, BLOCK)
    assert fault.value.signal_name == "SIGILL"
    findings = drv.m.findings()
    assert [(f["kind"], f["function"]) for f in findings] == \
        [("unit-unavailable", "ecb_aes_encrypt")]
    assert not findings[0]["message"].endswith("(OSFXSR) clear]")  # the detail: FCR
    assert drv.m.wrmsr(MSR_FCR, fcr)
    assert drv.crypt(h, False, BLOCK) == aes_ref.encrypt_block(KEY, BLOCK)


# A plain XSTORE loop with the quality factor via-rng uses (EDX = 3: one random byte per
# store, §2.1), waiting between attempts: the reference stream for the same seed.
XSTORE_LOOP = r"""
#include <stdint.h>
static uint32_t datum[4] __attribute__((aligned(16)));
static void spin(uint64_t cycles) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  const uint64_t end = ((uint64_t)hi << 32 | lo) + cycles;
  uint64_t now;
  do {
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    now = (uint64_t)hi << 32 | lo;
  } while (now < end);
}
int xstore_bytes(uint8_t *out, int n) {
  int got = 0;
  for (int i = 0; i < n; ++i) {
    for (int t = 0; t < 20; ++t) {
      uint32_t eax;
      void *di = datum;
      __asm__ volatile(".byte 0x0f,0xa7,0xc0" : "=a"(eax), "+D"(di) : "d"(3) : "memory");
      if (eax & 0xF) {
        out[got++] = (uint8_t)datum[0];
        break;
      }
      spin(20000);
    }
  }
  return got;
}
"""
MSR_RNG, RNG_ENABLE, NOISE_SRC1, NOISE_SRC2 = 0x110B, 1 << 6, 1 << 8, 1 << 9


def _rng_machine(cpu: str, bits: int, seed: int, check: bool = False) -> pe.Machine:
    m = pe.Machine(cpu, bits=bits, seed=seed, check=check)
    # rdmsr/wrmsr are ring-0 instructions: the shim's shim_rdmsr/shim_wrmsr reach the
    # modelled MSRs through the harness.
    m.stub("shim_rdmsr", _rdmsr_stub)
    m.stub("shim_wrmsr", lambda mm, msr, lo, hi: mm.wrmsr(msr, lo | hi << 32) and 0)
    return m


def _rdmsr_stub(mm: pe.Machine, msr: int) -> int:
    """shim_rdmsr returns a u64: on i386 in EDX:EAX (the stub's return value is EAX)."""
    value = mm.rdmsr(msr) or 0
    if mm.bits == 32:
        mm["edx"] = value >> 32
    return value


@pytest.mark.parametrize("cpu,bits", TARGETS, ids=IDS)
def test_via_rng_reads_the_xstore_stream(linux_src, objdir, tmp_path, cpu, bits):
    """drivers/char/hw_random/via-rng.c: init sets up MSR 0x110B as its code says (enable,
    noise source 1, source 2 on Nehemiah stepping > 7 and Esther; nothing on Nano, which has
    no such MSR), then data_present/data_read deliver one byte per XSTORE (quality factor
    EDX = 3): exactly the bytes a plain XSTORE loop reads with the same seed, after the
    same MSR write (a load reset, §2.2, discards the buffer being filled) where the driver
    makes one. The checker watches the MSR writes too."""
    from _cbuild import build as cbuild  # tests/python: compiled, cached snippets

    obj, shim = kbuild.build("rng", bits, objdir)
    m = _rng_machine(cpu, bits, seed=5, check=True)
    m.load(shim)
    m.load(obj)
    assert m.call("shim_module_init") == 0
    out = m.alloc(64)
    assert m.call("glue_rng_read", out, 32, 1) == 32
    got = m.read(out, 32)
    # Under the checker: via-rng sets noise source 1 (SRC, bits 9:8) on every part, and
    # §2.2 reserves SRC before Nehemiah stepping 8 (docs/checker.md).
    reserved_src = pe.cpu(cpu).model == 9 and pe.cpu(cpu).stepping < 8
    assert [f["kind"] for f in m.findings()] == (["rng-field-reserved"] if reserved_src else [])
    model = pe.cpu(cpu)
    msr = m.rdmsr(MSR_RNG)
    ref = _rng_machine(cpu, bits, seed=5)
    if model.model >= 0x0F:  # Nano: via_rng_init leaves the RNG as it is (bits 3:0 count)
        # What a fresh machine reads: the reset value, or on family-7 Zhaoxin the fixed
        # value of 0x110B there (docs/zhaoxin.md, "MSR 0x1257").
        reset = ref.rdmsr(MSR_RNG)
        assert msr is None or msr & ~0xF == (reset or 0) & ~0xF
    else:
        assert msr & RNG_ENABLE
        src2 = (model.model == 9 and model.stepping > 7) or model.model >= 10
        assert bool(msr & NOISE_SRC2) == src2, hex(msr)
        ref.wrmsr(MSR_RNG, msr & ~0xF)  # the same load reset
    ref.load(cbuild(tmp_path, XSTORE_LOOP, bits, ["-O2", "-c"], ".o"))
    buf = ref.alloc(64)
    assert ref.call("xstore_bytes", buf, 32) == 32
    assert got == ref.read(buf, 32)
