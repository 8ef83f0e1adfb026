"""padlock_emu.Machine, the function-level harness: loading, calls, stubs, faults, hooks.

C snippets are compiled at test time (gcc -m32 / -m64) as shared objects and object files.
The example driver's suite (docs/examples/driver, run by test_examples.py) covers the
PadLock functions of a real driver under every CPU model.
"""

from __future__ import annotations

import gc
import shutil
import signal
import subprocess
import weakref
from pathlib import Path

import pytest

import padlock_emu as pe
from _cbuild import build

SOURCE = r"""
#include <stdint.h>
extern long host_add(long a, long b);
extern long host_callback(long (*fn)(long), long x);
extern int counter_base;
int global_value = 41;
static int twice(int x) { return 2 * x; }
int call_twice(int x) { return twice(x); }
long sum8(long a, long b, long c, long d, long e, long f, long g, long h) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}
long use_host(long a, long b) { return host_add(a, b) * 10; }
long square(long x) { return x * x; }
long use_callback(long x) { return host_callback(square, x) + 1; }
int read_counter(void) { return counter_base; }
int *global_addr(void) { return &global_value; }
unsigned long long wide(unsigned a, unsigned b) { return ((unsigned long long)a << 32) | b; }
int negative(void) { return -22; }
int null_read(void) { return *(volatile int *)0; }
void store_to(int *p) { *p = 7; }
int divide(int a, int b) { return a / b; }
void trap(void) { __builtin_trap(); }
void breakpoint(void) { __asm__ volatile("int3"); }
long do_syscall(void) {
  long r;
#if defined(__x86_64__)
  __asm__ volatile("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11", "memory");
#else
  __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
#endif
  return r;
}
void spin(void) { for (;;) __asm__ volatile(""); }
void cpuid_vendor(char *out) {
  uint32_t a = 0, b, c, d;
  __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
  ((uint32_t *)out)[0] = b; ((uint32_t *)out)[1] = d; ((uint32_t *)out)[2] = c;
}
uint32_t centaur_features(void) {
  uint32_t a = 0xC0000001u, b, c, d;
  __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
  return d;
}
unsigned long long tsc(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return ((unsigned long long)hi << 32) | lo;
}
void store_eflags(void) {
#if defined(__x86_64__)
  __asm__ volatile("pushfq; popfq" ::: "memory", "cc");
#else
  __asm__ volatile("pushfl; popfl" ::: "memory", "cc");
#endif
}
/* REP XCRYPTECB / REP XCRYPTCBC on caller-provided buffers (guide §3.1). */
void ecb(const void *in, void *out, const void *key, const void *cw, unsigned long n) {
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xc8" : "+S"(in), "+D"(out), "+c"(n)
                   : "b"(key), "d"(cw) : "memory", "cc");
}
void *cbc(const void *in, void *out, const void *key, void *iv, const void *cw, unsigned long n) {
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xd0" : "+S"(in), "+D"(out), "+a"(iv), "+c"(n)
                   : "b"(key), "d"(cw) : "memory", "cc");
  return iv;
}
static const int table[8] = {2, 3, 5, 7, 11, 13, 17, 19};
int lookup(int i) { return table[i & 7]; }
static int target = 99;
int *pointer_to_target = &target;
int deref_pointer(void) { return *pointer_to_target; }
/* REPNE XSTORE: the guide leaves REPNE undefined (§2.1). */
void repne_xstore(void *buf) {
  unsigned long n = 8;
  __asm__ volatile(".byte 0xf2,0x0f,0xa7,0xc0" : "+D"(buf), "+c"(n) : "d"(0) : "eax", "memory");
}
"""

CANARY_SOURCE = r"""
int fill(char *dst, int n) {
  char buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = (char)(i + n);
  for (int i = 0; i < n; ++i) dst[i] = buf[i];
  return buf[n - 1];
}
"""

EXEC_SOURCE = r"""
int entry_value = 5;
int scale(int x) { return x * entry_value; }
void _start(void) { for (;;) {} }
"""

FORMS = {
    "so": (["-O1", "-shared", "-fPIC", "-nostdlib"], ".so"),
    "o": (["-O1", "-c"], ".o"),
    "o-nopic": (["-O1", "-c", "-fno-pic"], ".o"),
}

KEY = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
PT = bytes.fromhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
                   "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
ECB_CT = bytes.fromhex("3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"
                       "43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4")
CBC_IV = bytes(range(16))
CBC_CT = bytes.fromhex("7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
                       "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7")


@pytest.fixture(scope="session")
def cdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("harness")


def load(cdir: Path, cpu: str = "esther", bits: int = 32, form: str = "so", source: str = SOURCE,
         extra=()) -> pe.Machine:
    flags, suffix = FORMS[form]
    path = build(cdir, source, bits, [*flags, *extra], suffix)
    m = pe.Machine(cpu, bits=bits)
    counter = m.alloc(4)
    m.write_u32(counter, 1234)
    m.define("counter_base", counter)
    m.load(path)
    return m


MODES = [(32, "esther"), (64, "nano")]


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("bits,cpu", MODES)
def test_calls_in_shared_objects_and_object_files(cdir, bits, cpu, form):
    m = load(cdir, cpu, bits, form)
    obj = m.objects[0]
    assert obj.type == ("dyn" if form == "so" else "rel")
    assert m.call("call_twice", 21) == 42  # a call to a static function inside
    assert m.call("sum8", 1, 2, 3, 4, 5, 6, 7, 8) == 204  # 2 arguments on the x86-64 stack
    assert m.call("sum8", 1, 2, 3, 4, 5, 6, 7, -8, signed=True) == 76
    assert m.read_u32(m.call("global_addr")) == 41
    assert m.call("read_counter") == 1234  # data import bound by define()
    assert m.call("wide", 0x12345678, 0x9ABCDEF0, ret="u64") == 0x123456789ABCDEF0
    assert m.call("negative", ret="int") == -22
    assert m.call("negative", ret="uint") == 2**32 - 22
    m.stub("host_add", lambda machine, a, b: a + b)
    assert m.call("use_host", 3, 4) == 70
    assert m.stubs["host_add"].calls == 1
    assert set(obj.imports) == {"host_add", "host_callback"}
    info = m.last_call
    assert info.returned and info.stub_calls == 1 and info.instructions > 0
    assert info.cycles >= info.instructions


# Relocation types each form must contain (readelf -r), beyond those every form has.
EXPECTED_RELOCATIONS = {
    (32, "so"): {"R_386_RELATIVE", "R_386_GLOB_DAT", "R_386_JUMP_SLOT"},
    (32, "o"): {"R_386_PC32", "R_386_PLT32", "R_386_GOTPC", "R_386_GOTOFF", "R_386_GOT32X",
                "R_386_32"},
    (32, "o-nopic"): {"R_386_32", "R_386_PC32"},
    (64, "so"): {"R_X86_64_RELATIVE", "R_X86_64_GLOB_DAT", "R_X86_64_JUMP_SLOT"},
    (64, "o"): {"R_X86_64_PC32", "R_X86_64_PLT32", "R_X86_64_64"},
    (64, "o-nopic"): {"R_X86_64_32S", "R_X86_64_64", "R_X86_64_PC32", "R_X86_64_PLT32"},
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("bits,cpu", MODES)
def test_relocation_kinds(cdir, bits, cpu, form):
    """The snippet's forms exercise the relocation types the loader applies (checked
    with readelf), and code and data that depend on them work."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf")
    flags, suffix = FORMS[form]
    path = build(cdir, SOURCE, bits, flags, suffix)
    listing = subprocess.run([readelf, "-rW", str(path)], capture_output=True, text=True).stdout
    found = {w for w in listing.split() if w.startswith("R_")}
    assert EXPECTED_RELOCATIONS[(bits, form)] <= found
    m = load(cdir, cpu, bits, form)
    assert [m.call("lookup", i) for i in range(8)] == [2, 3, 5, 7, 11, 13, 17, 19]
    assert m.call("deref_pointer") == 99
    assert m.read_u32(m.read_word(m.symbol("pointer_to_target"))) == 99  # a relocated pointer


def test_stub_receives_arguments_and_can_call_back_into_the_guest(cdir):
    m = load(cdir)
    seen = []

    def host_callback(machine: pe.Machine, fn: int, x: int) -> int:
        seen.append((machine.symbolize(fn), x))
        return machine.call(fn, x)  # a nested call while use_callback is suspended

    m.stub("host_callback", host_callback)
    assert m.call("use_callback", 7) == 50
    assert seen == [("square", 7)]
    # The outer call's registers survived the nested one.
    assert m.call("use_callback", 3) == 10


def test_unstubbed_import_raises(cdir):
    m = load(cdir)
    with pytest.raises(pe.UnresolvedSymbolError, match="host_add"):
        m.call("use_host", 1, 2)
    with pytest.raises(pe.UnresolvedSymbolError):
        m.symbol("no_such_function")


def test_exception_in_a_stub_propagates_and_the_machine_stays_usable(cdir):
    m = load(cdir)

    def broken(machine, a, b):
        raise ValueError("stub failed")

    m.stub("host_add", broken)
    with pytest.raises(ValueError, match="stub failed"):
        m.call("use_host", 1, 2)
    assert m.call("call_twice", 5) == 10


@pytest.mark.parametrize("bits,cpu", MODES)
def test_faults_become_the_signals_linux_sends(cdir, bits, cpu):
    m = load(cdir, cpu, bits, "o")
    with pytest.raises(pe.GuestFault) as e:
        m.call("null_read")
    assert (e.value.signal, e.value.code, e.value.address, e.value.write) == (signal.SIGSEGV, 1, 0, False)
    assert e.value.function == "null_read" and not e.value.is_padlock
    ro = m.alloc(16, perm="r")
    with pytest.raises(pe.GuestFault) as e:
        m.call("store_to", ro + 8)
    assert (e.value.signal, e.value.code, e.value.address, e.value.write) == (signal.SIGSEGV, 2, ro + 8, True)
    with pytest.raises(pe.GuestFault) as e:
        m.call("divide", 1, 0)
    assert e.value.signal == signal.SIGFPE
    with pytest.raises(pe.GuestFault) as e:
        m.call("trap")
    assert (e.value.signal, e.value.trapno) == (signal.SIGILL, 6)
    assert "ud2" in e.value.disassembly
    with pytest.raises(pe.GuestFault) as e:
        m.call("breakpoint")
    assert e.value.signal == signal.SIGTRAP
    with pytest.raises(pe.UnsupportedSyscall) as e:
        m.call("do_syscall")
    assert e.value.number == (39 if bits == 64 else 20)
    with pytest.raises(pe.CallTimeout):
        m.call("spin", timeout=0.2)
    assert m.call("call_twice", 1) == 2  # still usable


@pytest.mark.parametrize("bits,cpu", MODES)
def test_stack_protector_reads_the_thread_pointer_canary(cdir, bits, cpu):
    path = build(cdir, CANARY_SOURCE, bits, ["-O1", "-c", "-fstack-protector-all"], ".o")
    m = pe.Machine(cpu, bits=bits)
    m.load(path)
    dst = m.alloc(64)
    assert m.call("fill", dst, 10) == 9 + 10
    assert m.read(dst, 3) == bytes([10, 11, 12])


@pytest.mark.parametrize("cpu", [c.name for c in pe.cpus()])
def test_cpuid_is_the_models_section_1_3(cdir, cpu):
    m = load(cdir, cpu)
    out = m.alloc(16)
    m.call("cpuid_vendor", out)
    assert m.read(out, 12) == (b"  Shanghai  " if cpu == "kx-5000" else b"CentaurHauls")
    assert m.call("centaur_features") == pe.Model(cpu).cpuid(0xC0000001)[3]


def test_rdtsc_reads_the_virtual_clock(cdir):
    m = load(cdir)
    before = m.now
    t = m.call("tsc", ret="u64")
    assert before < t <= m.now


def test_registers(cdir):
    m = load(cdir, "nano", 64)
    m["rax"] = 0xFFFF_FFFF_FFFF_FFFF
    m["eax"] = 1  # a 32-bit write zero-extends
    assert m["rax"] == 1
    m["rbx"] = 0x1122_3344_5566_7788
    m["bx"] = 0xAAAA  # a 16-bit write merges
    assert m["rbx"] == 0x1122_3344_5566_AAAA and m["bl"] == 0xAA
    assert set(m.regs()) >= {"rax", "r15", "rip", "rflags"}
    with pytest.raises(pe.MachineError):
        m["xyz"]
    m32 = load(cdir)
    with pytest.raises(pe.MachineError, match="64-bit"):
        m32["r8"]


def test_memory(cdir):
    m = pe.Machine("esther")
    a = m.alloc(100, data=b"abc", align=64, misalign=3, fill=0xEE)
    assert a % 64 == 3
    assert m.read(a, 5) == b"abc\xee\xee"
    assert m.page_perm(a) == "rw-"
    page = a & ~0xFFF
    with pytest.raises(pe.MachineError, match="not mapped"):
        m.read(page + 4096, 1)  # the guard page
    m.protect(a, 1, "r")
    assert m.page_perm(a) == "r--"
    m.write(a, b"x")  # the harness writes like a debugger
    assert m.read(a, 4) == b"xbc\xee"
    va = m.map(0x2000_0000, 5000, "rwx")
    assert m.page_perm(va + 4096) == "rwx"
    m.unmap(va, 8192)
    assert m.page_perm(va) == ""


@pytest.mark.parametrize("bits,cpu", MODES)
def test_chained_jump_into_another_page_sees_its_changes(bits, cpu):
    # `jmp rel32` from page A to page B's `mov eax, imm32; ret`: after the first call the
    # jump is chained to B's block (docs/emulator.md, "Unicorn"), so each change of B must
    # unlink it.
    m = pe.Machine(cpu, bits=bits)
    a = m.map(0x2000_0000, 8192, "rwx")
    b = a + 4096
    m.write(a, b"\xe9" + (b - (a + 5)).to_bytes(4, "little", signed=True))
    m.write(b, b"\xb8\x01\x00\x00\x00\xc3")
    assert [m.call(a) for _ in range(3)] == [1, 1, 1]
    m.write_u32(b + 1, 2)
    assert m.call(a) == 2
    m.protect(b, 4096, "r")
    with pytest.raises(pe.GuestFault) as e:
        m.call(a)
    assert (e.value.signal, e.value.address) == (signal.SIGSEGV, b)
    m.unmap(b, 4096)
    m.map(b, 4096, "rwx")
    m.write(b, b"\xb8\x04\x00\x00\x00\xc3")
    assert m.call(a) == 4


def test_executable_loads_at_its_address(cdir):
    path = build(cdir, EXEC_SOURCE, 32, ["-O1", "-static", "-nostdlib", "-no-pie", "-fno-pic"], "")
    m = pe.Machine("esther")
    obj = m.load(path)
    assert obj.type == "exec" and obj.start == 0x08048000
    assert m.call("scale", 7) == 35


def test_load_errors(cdir, tmp_path):
    path64 = build(cdir, SOURCE, 64, ["-O1", "-c"], ".o")
    with pytest.raises(pe.MachineError, match="64-bit ELF file, but this Machine is 32-bit"):
        pe.Machine("esther").load(path64)
    text = tmp_path / "not-elf.o"
    text.write_text("hello")
    with pytest.raises(pe.MachineError, match="not an ELF file"):
        pe.Machine("esther").load(text)
    with pytest.raises(pe.MachineError, match="no long mode"):
        pe.Machine("esther", bits=64)


def test_xcrypt_in_an_object_file_section_3_1(cdir):
    m = load(cdir, "esther", 32, "o")
    cw = m.alloc(16, data=(0x00A).to_bytes(16, "little"))  # AES-128, 10 rounds, hw key
    key = m.alloc(16, data=KEY)
    src, dst = m.alloc(64, data=PT), m.alloc(64)
    m.call("ecb", src, dst, key, cw, 4)
    assert m.read(dst, 64) == ECB_CT
    (ev,) = m.last_call.padlock
    assert ev.name == "REP XCRYPTECB" and ev.control_word.rounds == 10
    assert ev.regs["ecx"] == 4 and ev.regs_after["ecx"] == 0
    assert ev.cycles == m.last_call.padlock_cycles
    assert m.stats()["padlock"]["REP XCRYPTECB"].count == 1
    assert m.stats()["padlock"]["REP XCRYPTECB"].bytes == 64


def test_before_hook_changes_what_the_instruction_sees(cdir):
    m = load(cdir)
    cw = m.alloc(16, data=(0x00A).to_bytes(16, "little"))
    key = m.alloc(16, data=KEY)
    src, dst = m.alloc(64, data=PT), m.alloc(64)

    def one_block(machine: pe.Machine, ev: pe.PadlockEvent) -> None:
        assert not ev.executed and ev.regs["ecx"] == 4
        machine["ecx"] = 2

    m.hook_padlock(before=one_block)
    m.call("ecb", src, dst, key, cw, 4)
    assert m.read(dst, 64) == ECB_CT[:32] + bytes(32)


@pytest.mark.parametrize("bits,cpu", MODES)
def test_after_hook_sees_and_changes_the_registers_the_instruction_left(cdir, bits, cpu):
    """The after hook reads the registers the instruction wrote (ESI and EDI past the data,
    ECX 0) and what it writes stays, for a 32-bit guest too, whose registers Unicorn's i386
    target hands the instruction as a copy (docs/emulator.md, "Unicorn", item 12)."""
    m = load(cdir, cpu, bits)
    cw = m.alloc(16, data=(0x00A).to_bytes(16, "little"))
    key = m.alloc(16, data=KEY)
    src, dst = m.alloc(64, data=PT), m.alloc(64)
    seen = {}

    def after(machine: pe.Machine, ev: pe.PadlockEvent) -> None:
        seen.update(ecx=machine["ecx"], esi=machine["esi"], edi=machine["edi"])
        machine["ecx"] = 0x55

    m.hook_padlock(after=after)
    m.call("ecb", src, dst, key, cw, 4)
    assert m.read(dst, 64) == ECB_CT
    assert seen == {"ecx": 0, "esi": src + 64, "edi": dst + 64}
    assert m["ecx"] == 0x55


def test_interrupt_inside_rep_xcrypt_resumes_section_1_7(cdir):
    """An interrupt pending during REP XCRYPTCBC stops it between blocks with the registers
    updated; the harness takes it (EFLAGS[30] clears, §1.8) and the instruction resumes
    and finishes the message correctly."""
    m = load(cdir)
    cw = m.alloc(16, data=(0x00A).to_bytes(16, "little"))
    key = m.alloc(16, data=KEY)
    iv = m.alloc(16, data=CBC_IV)
    src, dst = m.alloc(64, data=PT), m.alloc(64)
    m.interrupt_at = m.now + 60  # after the key load, inside the block loop
    m.call("cbc", src, dst, key, iv, cw, 4)
    assert m.read(dst, 64) == CBC_CT
    evs = m.last_call.padlock
    assert [e.status for e in evs] == [pe.Status.Interrupted, pe.Status.Completed]
    assert 0 < evs[0].regs_after["ecx"] < 4 and evs[1].regs["ecx"] == evs[0].regs_after["ecx"]
    assert evs[1].eflags30 is False and evs[1].key_reloaded  # the interrupt stored EFLAGS
    assert m.interrupts_taken == 1 and m.interrupt_at is None


def test_pushf_clears_eflags30_section_1_8(cdir):
    m = load(cdir)
    m.eflags30 = True
    m.call("call_twice", 1)
    assert m.eflags30 is True  # ordinary code leaves it
    m.call("store_eflags")
    assert m.eflags30 is False  # PUSHF stores EFLAGS
    m.eflags30 = True
    m.force_key_reload()
    assert m.eflags30 is False


def test_undefined_cases_are_reported_as_diagnostics_section_2_1(cdir):
    m = load(cdir)
    m.advance(1_000_000)
    buf = m.alloc(32)
    m.call("repne_xstore", buf)
    assert "repne-prefix" in [name for name, _ in m.last_call.diagnostics]


def test_padlock_fault_under_the_harness_is_both_exceptions(cdir):
    m = load(cdir, "nehemiah-c5xl")  # RNG only: REP XCRYPT is #UD (§1.3)
    cw, key, buf = m.alloc(16), m.alloc(16), m.alloc(32)
    with pytest.raises(pe.InvalidOpcode) as e:
        m.call("ecb", buf, buf, key, cw, 2)
    assert isinstance(e.value, pe.GuestFault) and e.value.signal == signal.SIGILL
    assert e.value.si_addr == e.value.pc and e.value.function.startswith("ecb+")
    assert "REP XCRYPTECB raised #UD on nehemiah-c5xl" in str(e.value)


def test_a_machine_is_freed_when_dropped(cdir):
    m = load(cdir)
    m.stub("host_add", lambda machine, a, b: a + b)
    m.hook_padlock(after=lambda machine, ev: None)
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None


def test_padlock_machine_fixture(padlock_machine, padlock_cpu, padlock_bits):
    assert padlock_machine.cpu.name == padlock_cpu
    assert padlock_machine.bits == padlock_bits
    assert padlock_bits == 32 or padlock_machine.cpu.long_mode


@pytest.mark.parametrize("bits,cpu", MODES)
def test_syscall_hook_answers_system_calls(cdir, bits, cpu):
    m = load(cdir, cpu, bits, "o")
    seen = []
    m.hook_syscall(lambda m, nr: seen.append(nr) or 1234)
    assert m.call("do_syscall", ret="long") == 1234
    assert seen == [39 if bits == 64 else 20]  # getpid
    m.hook_syscall(lambda m, nr: None)  # not handled: as without a hook
    with pytest.raises(pe.UnsupportedSyscall):
        m.call("do_syscall")
    m.hook_syscall(None)
    with pytest.raises(pe.UnsupportedSyscall):
        m.call("do_syscall")


@pytest.mark.parametrize("bits,cpu", MODES)
def test_code_and_address_hooks(cdir, bits, cpu):
    m = load(cdir, cpu, bits, "o")
    lookup = m.symbol("lookup")
    hits = []
    remove = m.hook_address(lookup, lambda m, a: hits.append(a))
    assert [m.call("lookup", i) for i in range(3)] == [2, 3, 5]
    assert hits == [lookup] * 3
    remove()
    m.call("lookup", 1)
    assert len(hits) == 3  # removed: no more calls
    steps = []
    remove = m.hook_code(lambda m, a, n: steps.append((a, n)), lookup, lookup + 63)
    m.call("lookup", 4)
    remove()
    assert steps[0][0] == lookup and all(lookup <= a < lookup + 64 for a, _ in steps)
    assert len(steps) >= 2 and all(0 < n <= 15 for _, n in steps)


@pytest.mark.parametrize("bits,cpu", MODES)
def test_memory_hook_sees_loads_and_stores(cdir, bits, cpu):
    m = load(cdir, cpu, bits, "o")
    buf = m.alloc(16)
    events = []
    remove = m.hook_memory(lambda m, w, a, n, v: events.append((w, a, n, v)), buf, buf + 15)
    m.call("store_to", buf + 4)
    assert events == [(True, buf + 4, 4, 7)]
    assert m.read_u32(buf + 4) == 7
    remove()
    reads = []
    m.hook_memory(lambda m, w, a, n, v: reads.append((w, n)), write=False)
    assert m.call("deref_pointer") == 99
    assert (False, 4) in reads and all(not w for w, _ in reads)


def test_an_exception_in_a_hook_ends_the_call(cdir):
    m = load(cdir, "esther", 32, "o")

    def boom(m, a):
        raise ValueError("stop here")

    m.hook_address(m.symbol("lookup"), boom)
    with pytest.raises(ValueError, match="stop here"):
        m.call("lookup", 1)
