"""The function-level harness: load an ELF file and call its functions on an emulated VIA chip.

:class:`Machine` is one CPU model's processor with an empty user-mode address space. Load
an executable, a shared object or a relocatable object (``.o``) into it, call functions
with integer and pointer arguments (i386 cdecl or x86-64 SysV), and look at memory,
registers, EFLAGS[30] and every PadLock instruction on the way. Imported functions land on
stubs: Python callables that receive the machine and the arguments.

Everything architectural happens in C++ (``emulator/harness/machine.hpp``): Unicorn runs the code,
the PadLock models run PadLock instructions with the same rules as ``padlock-emu run``.

Example::

    m = Machine("esther")
    m.load("driver.so")
    m.stub("printk", lambda m, fmt: 0)
    buf = m.alloc(64, data=b"...")
    rc = m.call("driver_encrypt", buf, 64)
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import struct
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from . import _core
from .cpus import CpuLike
from .errors import MachineError, UnresolvedSymbolError, guest_fault
from .stats import padlock_stats

__all__ = ["Machine", "LoadedObject", "PadlockEvent", "CallInfo", "Stub", "Snapshot",
           "PROT_READ", "PROT_WRITE", "PROT_EXEC"]

PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4
PathLike = Union[str, "os.PathLike[str]"]
StubFunction = Callable[..., Optional[int]]
Hook = Callable[["Machine", "PadlockEvent"], None]

_ELF_TYPES = {1: "rel", 2: "exec", 3: "dyn"}
_STT_FUNC = 2


def _prot(perm: Union[int, str, "_core.Perm"]) -> int:
    """Page permissions from ``"rwx"`` letters, PROT_* bits or :class:`Perm`."""
    if isinstance(perm, str):
        bits = 0
        for ch in perm.lower():
            if ch not in "rwx-":
                raise ValueError(f"permissions are letters of 'rwx', not {perm!r}")
            bits |= {"r": PROT_READ, "w": PROT_WRITE, "x": PROT_EXEC, "-": 0}[ch]
        return bits
    bits = int(perm)
    if bits & ~7:
        raise ValueError(f"permission bits must be PROT_READ|PROT_WRITE|PROT_EXEC, not {bits:#x}")
    return bits


@dataclass
class LoadedObject:
    """An ELF file loaded into a :class:`Machine`.

    ``type`` is ``"exec"``, ``"dyn"`` (shared object or PIE) or ``"rel"`` (a ``.o``);
    ``start``/``end`` its pages; ``bias`` the load bias (ET_DYN) or start (ET_REL);
    ``symbols`` the defined symbols by name (their addresses); ``functions`` the
    function symbols; ``sections`` where a ``.o``'s sections went; ``imports`` the
    undefined symbols bound to stubs; ``relocations`` how many were applied.
    """

    path: str
    type: str
    start: int
    end: int
    bias: int
    entry: int
    symbols: Dict[str, int]
    functions: Dict[str, Tuple[int, int]]
    sections: Dict[str, int]
    imports: List[str]
    relocations: int
    skipped: List[str]

    def __contains__(self, name: str) -> bool:
        return name in self.symbols

    def __getitem__(self, name: str) -> int:
        return self.symbols[name]


@dataclass
class PadlockEvent:
    """One PadLock instruction, as a hook sees it.

    Before execution ``outcome`` is None; after it, ``outcome`` (a :class:`Outcome`) and
    ``regs_after`` are set. ``regs`` are the registers the model reads (``eax``.. or
    ``rax``..), ``eflags30`` EFLAGS[30] on entry (§1.8). ``control_word`` is the decoded
    16 bytes at EDX for REP XCRYPT (§3.2), else None.
    """

    pc: int
    now: int
    insn: Optional["_core.InsnId"]
    name: str
    decoded: "_core.Decoded"
    regs: Dict[str, int]
    eflags30: bool
    control_word: Optional["_core.ControlWord"]
    function: Optional[str]
    outcome: Optional["_core.Outcome"] = None
    regs_after: Optional[Dict[str, int]] = None
    eflags30_after: Optional[bool] = None

    @property
    def executed(self) -> bool:
        return self.outcome is not None

    @property
    def cycles(self) -> Optional[int]:
        return None if self.outcome is None else self.outcome.cycles

    @property
    def bytes(self) -> Optional[int]:
        return None if self.outcome is None else self.outcome.bytes

    @property
    def key_reloaded(self) -> Optional[bool]:
        return None if self.outcome is None else self.outcome.key_reloaded

    @property
    def status(self) -> Optional["_core.Status"]:
        return None if self.outcome is None else self.outcome.status


@dataclass
class CallInfo:
    """What the last :meth:`Machine.call` did.

    ``cycles`` is the virtual time the call took: one cycle per guest instruction plus the
    cycles the PadLock models charged (the same clock as ``padlock-emu run``);
    ``padlock`` lists the PadLock instructions it executed (:class:`PadlockEvent` after
    execution); ``diagnostics`` the undefined cases the models reported, as
    ``(name, pc)``.
    """

    function: str
    address: int
    args: Tuple[int, ...]
    returned: bool
    value: int
    value_hi: int
    cycles: int
    instructions: int
    padlock_cycles: int
    padlock_count: int
    stub_calls: int
    padlock: List[PadlockEvent] = field(default_factory=list)
    diagnostics: List[Tuple[str, int]] = field(default_factory=list)


@dataclass
class Stub:
    """A Python function standing in for an imported symbol (see :meth:`Machine.stub`)."""

    name: str
    function: StubFunction
    nargs: int
    calls: int = 0


@dataclass(frozen=True)
class Snapshot:
    """A :class:`Machine`'s state at one moment (:meth:`Machine.snapshot`).

    ``machine`` holds the architectural and model state as bytes
    (``emulator/harness/machine.hpp``: registers, x87/SSE, every mapped page, EFLAGS[30],
    ACE's key registers, the RNG's MSR, buffers and generators, the cache model, the
    virtual clock, statistics, the stub table); ``loader`` the loaded objects' symbols.
    It pickles, and :meth:`Machine.restore` loads it into any Machine of the same ``cpu``,
    ``bits``, ``mhz`` and ``timing``, in this process or another running the same build.
    """

    cpu: str
    bits: int
    mhz: float
    timing: bool
    now: int
    machine: bytes = field(repr=False)
    loader: bytes = field(repr=False)
    objects: Tuple["LoadedObject", ...] = field(repr=False)


def _machine_from_snapshot(options: Dict[str, Any], snap: Snapshot, stubs: List["Stub"]) -> "Machine":
    """A new Machine with ``options``, the stubs and the state of ``snap`` (unpickling)."""
    m = Machine(**options)
    for st in stubs:
        m._stubs[st.name] = Stub(st.name, st.function, st.nargs, st.calls)
    m.restore(snap)
    return m


def _nargs(fn: Callable[..., Any], name: str) -> int:
    """How many guest arguments a stub takes: its positional parameters after the machine."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 6
    n = 0
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return max(n - 1, 0) + 6
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            n += 1
    if n == 0:
        raise TypeError(f"stub {name!r}: the function must take the machine as its first argument")
    return n - 1


def _return_value(lo: int, hi: int, ret: str, bits: int) -> Optional[int]:
    """EAX/RAX (and EDX for 64-bit results on i386) as the C type ``ret``."""
    def signed(v: int, width: int) -> int:
        v &= (1 << width) - 1
        return v - (1 << width) if v >> (width - 1) else v

    if ret == "void":
        return None
    if ret in ("ulong", "ptr", "pointer"):
        return lo
    if ret == "long":
        return signed(lo, bits)
    if ret == "int":
        return signed(lo, 32)
    if ret in ("uint", "unsigned"):
        return lo & 0xFFFFFFFF
    if ret in ("u64", "i64"):
        v = lo if bits == 64 else (hi & 0xFFFFFFFF) << 32 | (lo & 0xFFFFFFFF)
        return signed(v, 64) if ret == "i64" else v
    raise ValueError(f"ret must be ulong, long, int, uint, u64, i64, ptr or void, not {ret!r}")


class Machine:
    """One CPU model's processor running functions from ELF files you load.

    Args:
        cpu: CPU model name or alias (``"esther"``, ``"nano"``...) or a CpuModel.
        bits: 32 (i386, cdecl) or 64 (x86-64, SysV; only CPU models with long mode).
        seed: RNG seed (XSTORE bits are reproducible from it).
        host_entropy: take RNG bits from the host instead.
        errata: apply the model's errata (the Esther stepping-8 CTR erratum, §6.6).
        mhz: core clock (converts the RNG's bit rates into cycles); default the model's.
        timing: True (the default) charges PadLock instructions as the CLI does with
            ``--timing on``: the cache model's memory stalls and the §3.3 overlap
            (docs/timing.md); False charges the units' clocks alone.
        check: run the PadLock checker on every PadLock instruction (docs/checker.md);
            :meth:`findings` returns what it found.

    Memory: :meth:`map`, :meth:`alloc`, :meth:`read`, :meth:`write` and the typed
    helpers. Registers: ``m["eax"]``. Loading: :meth:`load`, :meth:`symbol`,
    :meth:`define`. Calls: :meth:`call`, :attr:`last_call`. Imports: :meth:`stub`.
    PadLock: :attr:`eflags30`, :meth:`force_key_reload`, :meth:`hook_padlock`,
    :attr:`interrupt_at`.

    The machine has a stack (8 MiB below ``STACK_TOP``), a thread pointer (FS on x86-64,
    GS on i386) whose stack-protector canary is set, and no kernel: a system call stops
    the call with :class:`UnsupportedSyscall`. Addresses it hands out are below 2 GiB, so
    x86-64 objects built for the small code model link against anything.
    """

    def __init__(
        self,
        cpu: CpuLike = "esther",
        *,
        bits: int = 32,
        seed: int = 0,
        host_entropy: bool = False,
        errata: bool = True,
        mhz: Optional[float] = None,
        timing: bool = True,
        check: bool = False,
    ) -> None:
        if not getattr(_core, "HAS_EMULATOR", False):
            raise MachineError("this padlock_emu was built without the emulator (PADLOCK_BUILD_EMULATOR=OFF)")
        self._m = _core.Machine(cpu, bits=bits, seed=seed, host_entropy=host_entropy,
                                errata=errata, mhz=mhz, timing=timing)
        # What a copy is built with before its state is restored (pickling, deepcopy).
        self._options: Dict[str, Any] = dict(
            cpu=self._m.cpu.name, bits=bits, seed=seed, host_entropy=host_entropy,
            errata=errata, mhz=mhz, timing=timing, check=check)
        self._loader = _core.ObjectLoader(self._m)
        if check:
            self._m.enable_check(self._loader)
        self._check = bool(check)
        self._objects: List[LoadedObject] = []
        self._stubs: Dict[str, Stub] = {}
        self._before: List[Hook] = []
        self._after: List[Hook] = []
        self._events: Optional[List[PadlockEvent]] = None
        self.last_call: Optional[CallInfo] = None
        # The C++ side holds these callbacks; they reach this object through a weak
        # reference, so a Machine is freed as soon as Python drops it.
        ref = weakref.ref(self)

        def stub_handler(name: str, address: int) -> int:
            me = ref()
            return 0 if me is None else me._enter_stub(name)

        self._stub_handler = stub_handler
        self._m.set_stub_handler(stub_handler)

        def after(ev: "_core.PadlockEventData") -> None:
            me = ref()
            if me is not None:
                me._after_padlock(ev)

        def before(ev: "_core.PadlockEventData") -> None:
            me = ref()
            if me is not None:
                me._before_padlock(ev)

        self._hook_after, self._hook_before = after, before
        self._install_hooks()

    def __repr__(self) -> str:
        return f"<Machine {self.cpu.name} {self.bits}-bit, {len(self._objects)} objects>"

    # --- snapshots ---------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The machine's state now, to :meth:`restore` later, here or into another Machine
        (it pickles). Restored, calls repeat what they did after the snapshot: the same
        results, memory and cycle counts. Not from a stub or hook, and not with
        ``check=True`` (the checker's findings are not saved): MachineError."""
        return Snapshot(cpu=self.cpu.name, bits=self.bits, mhz=self.mhz,
                        timing=bool(self._options["timing"]), now=self.now,
                        machine=self._m.snapshot(), loader=self._loader.snapshot(),
                        objects=tuple(copy.deepcopy(self._objects)))

    def restore(self, snap: Snapshot) -> None:
        """Return to ``snap``'s state. Everything :meth:`snapshot` saved is replaced
        (memory, registers, units, clock, statistics, loaded objects, stub addresses); the
        stubs' Python functions and the hooks of this Machine stay.

        Raises:
            SnapshotError: ``snap`` comes from a Machine of another CPU model, bits, mhz or
                timing (nothing changes then).
        """
        if not isinstance(snap, Snapshot):
            raise TypeError(f"restore takes a Snapshot, not {type(snap).__name__}")
        self._m.restore(snap.machine)
        self._loader.restore(snap.loader)
        self._objects = list(copy.deepcopy(snap.objects))
        self.last_call = None
        for name in self._stubs:  # stubs registered since the snapshot keep an address
            self._m.stub_address(name)

    def __reduce__(self) -> Tuple[Any, ...]:
        # pickle and copy.deepcopy: a new Machine with this state and these stubs (pickle
        # stores their functions by reference, so lambdas do not pickle: pickle
        # m.snapshot() then). Hooks are not carried.
        return (_machine_from_snapshot, (dict(self._options), self.snapshot(),
                                         [copy.copy(s) for s in self._stubs.values()]))

    # --- identity ----------------------------------------------------------------------
    @property
    def cpu(self) -> "_core.CpuModel":
        return self._m.cpu

    @property
    def bits(self) -> int:
        return self._m.bits

    @property
    def word(self) -> int:
        """Pointer size in bytes (4 or 8)."""
        return self.bits // 8

    @property
    def mhz(self) -> float:
        return self._m.mhz

    @property
    def objects(self) -> List[LoadedObject]:
        return list(self._objects)

    # --- memory ------------------------------------------------------------------------
    def map(self, va: int, length: int, perm: Union[int, str] = "rw") -> int:
        """Map fresh zeroed pages at ``va`` (page aligned; the length is rounded up)."""
        page = _core.PAGE_SIZE
        self._m.map(va, (length + page - 1) // page * page, _prot(perm))
        return va

    def unmap(self, va: int, length: int) -> None:
        page = _core.PAGE_SIZE
        self._m.unmap(va, (length + page - 1) // page * page)

    def protect(self, va: int, length: int, perm: Union[int, str]) -> None:
        """Change the permissions of the pages covering ``[va, va+length)``."""
        self._m.protect(va, length, _prot(perm))

    def alloc(
        self,
        size: int,
        *,
        data: Optional[bytes] = None,
        align: int = 16,
        misalign: int = 0,
        perm: Union[int, str] = "rw",
        fill: int = 0,
    ) -> int:
        """Map fresh pages for a buffer and return its address.

        The buffer starts ``misalign`` bytes after an ``align``-aligned address at the start
        of newly mapped pages; an unmapped guard page follows the mapping. ``data`` is
        written at the start, the rest is ``fill``.
        """
        if size < 0 or misalign < 0 or align <= 0 or align & (align - 1):
            raise ValueError("size and misalign must be >= 0 and align a power of two")
        if data is not None and len(data) > size:
            raise ValueError(f"data ({len(data)} bytes) larger than the buffer ({size})")
        page = _core.PAGE_SIZE
        length = max(size + misalign, 1)
        mapped = (length + page - 1) // page * page
        base = self._m.reserve(mapped, max(align, page))
        self._m.map(base, mapped, PROT_READ | PROT_WRITE)
        if fill:
            self._m.write(base, bytes([fill]) * mapped)
        if data:
            self._m.write(base + misalign, bytes(data))
        if _prot(perm) != PROT_READ | PROT_WRITE:
            self._m.protect(base, mapped, _prot(perm))
        return base + misalign

    def read(self, va: int, length: int) -> bytes:
        """Bytes at ``va`` (permissions are ignored, as by a debugger; pages must be mapped)."""
        return self._m.read(va, length)

    def write(self, va: int, data: bytes) -> None:
        """Store bytes at ``va`` (permissions ignored; code translated from them is dropped)."""
        self._m.write(va, bytes(data))

    def read_u8(self, va: int) -> int:
        return self.read(va, 1)[0]

    def read_u16(self, va: int) -> int:
        return int(struct.unpack("<H", self.read(va, 2))[0])

    def read_u32(self, va: int) -> int:
        return int(struct.unpack("<I", self.read(va, 4))[0])

    def read_u64(self, va: int) -> int:
        return int(struct.unpack("<Q", self.read(va, 8))[0])

    def read_word(self, va: int) -> int:
        """A pointer-sized value (4 bytes on i386, 8 on x86-64)."""
        return self.read_u64(va) if self.bits == 64 else self.read_u32(va)

    def write_u32(self, va: int, value: int) -> None:
        self.write(va, struct.pack("<I", value & 0xFFFFFFFF))

    def write_u64(self, va: int, value: int) -> None:
        self.write(va, struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF))

    def write_word(self, va: int, value: int) -> None:
        (self.write_u64 if self.bits == 64 else self.write_u32)(va, value)

    def read_cstring(self, va: int, limit: int = 4096) -> bytes:
        """The NUL-terminated string at ``va`` (without the NUL), at most ``limit`` bytes."""
        out = bytearray()
        while len(out) < limit:
            chunk = self.read(va + len(out), min(64, _core.PAGE_SIZE - ((va + len(out)) % _core.PAGE_SIZE)))
            nul = chunk.find(b"\0")
            if nul >= 0:
                out += chunk[:nul]
                return bytes(out[:limit])
            out += chunk
        return bytes(out[:limit])

    def page_perm(self, va: int) -> str:
        """The page's permissions as ``"rwx"`` letters (``""`` unmapped, ``"---"`` PROT_NONE)."""
        f = self._m.page_flags(va)
        if not f & 8:
            return ""
        return "".join(c if f & b else "-" for c, b in (("r", 1), ("w", 2), ("x", 4)))

    # --- registers ---------------------------------------------------------------------
    def __getitem__(self, reg: str) -> int:
        return int(self._m.reg(reg))

    def __setitem__(self, reg: str, value: int) -> None:
        self._m.set_reg(reg, int(value) & ((1 << 64) - 1))

    def regs(self) -> Dict[str, int]:
        """The general registers, the instruction pointer and EFLAGS at the mode's width."""
        if self.bits == 64:
            names = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp"] + [
                f"r{i}" for i in range(8, 16)] + ["rip", "rflags"]
        else:
            names = ["eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "eip", "eflags"]
        return {n: self[n] for n in names}

    @property
    def eflags30(self) -> bool:
        """EFLAGS[30]: set, the next REP XCRYPT uses the key ACE already holds (§1.8, §3.2)."""
        return bool(self._m.eflags30)

    @eflags30.setter
    def eflags30(self, on: bool) -> None:
        self._m.eflags30 = bool(on)

    @property
    def cr4_osfxsr(self) -> bool:
        """CR4[9] (OSFXSR), set by default. Clear, every PadLock instruction raises #UD
        (§1.2: PadLock behaves as if disabled): a kernel that never enabled SSE."""
        return bool(self._m.cr4_osfxsr)

    @cr4_osfxsr.setter
    def cr4_osfxsr(self, on: bool) -> None:
        self._m.cr4_osfxsr = bool(on)

    @property
    def cr0_ts(self) -> bool:
        """CR0[3] (TS), clear by default. Set, every PadLock instruction raises #NM, as SSE
        does: a lazy-FPU kernel's state between a task switch and the next FPU use (older
        Linux kernels, whose drivers cleared TS with irq_ts_save or kernel_fpu_begin)."""
        return bool(self._m.cr0_ts)

    @cr0_ts.setter
    def cr0_ts(self, on: bool) -> None:
        self._m.cr0_ts = bool(on)

    def force_key_reload(self) -> None:
        """Clear EFLAGS[30], as storing EFLAGS does (§1.8): the next REP XCRYPT reloads
        the control word and key."""
        self._m.eflags30 = False

    # --- virtual time ------------------------------------------------------------------
    @property
    def now(self) -> int:
        """Virtual cycles so far: guest instructions plus PadLock cycles (RDTSC reads it)."""
        return int(self._m.now)

    def advance(self, cycles: int) -> None:
        """Move the virtual clock forward (the RNG accumulates bits meanwhile, §2.3)."""
        self._m.advance(cycles)

    @property
    def interrupt_at(self) -> Optional[int]:
        """A cycle at which one external interrupt becomes pending (§1.7), or None.

        A REP instruction that reaches an interruptible point after it stops there; the
        harness takes the interrupt (EFLAGS is stored: bit 30 clears, §1.8) and the
        instruction resumes from its updated registers. ``interrupts_taken`` counts them.
        """
        return self._m.interrupt_at

    @interrupt_at.setter
    def interrupt_at(self, cycle: Optional[int]) -> None:
        self._m.interrupt_at = cycle

    @property
    def interrupts_taken(self) -> int:
        return int(self._m.interrupts_taken)

    def rdmsr(self, msr: int) -> Optional[int]:
        """MSR 0x110B / 0x1107 as the chip answers; None where RDMSR raises #GP."""
        return self._m.rdmsr(msr)

    def wrmsr(self, msr: int, value: int) -> bool:
        return bool(self._m.wrmsr(msr, value))

    # --- loading and symbols -----------------------------------------------------------
    def load(self, path: PathLike, *, base: Optional[int] = None) -> LoadedObject:
        """Load an ELF executable, shared object or ``.o`` and return what was loaded.

        Executables go at their own addresses; shared objects, PIEs and ``.o`` files at
        ``base`` or the next free range. Relocations are applied (shared objects:
        ``R_*_RELATIVE``, ``32``/``64``, ``GLOB_DAT``, ``JUMP_SLOT``; ``.o``: absolute,
        PC-relative, PLT and GOT forms). Undefined symbols bind to symbols :meth:`define`
        gave, to objects loaded earlier, or else to a stub (see :meth:`stub`).
        """
        data = self._loader.load(os.fspath(path), base or 0)
        functions = {s.name: (s.address, s.size) for s in data.symbols if s.type == _STT_FUNC}
        symbols: Dict[str, int] = {}
        for s in data.symbols:  # global symbols win over local ones of the same name
            if s.name not in symbols or s.bind != 0:
                symbols[s.name] = s.address
        obj = LoadedObject(
            path=data.path, type=_ELF_TYPES.get(data.type, str(data.type)), start=data.start,
            end=data.end, bias=data.bias, entry=data.entry, symbols=symbols, functions=functions,
            sections=dict(data.sections), imports=list(data.imports),
            relocations=data.relocations, skipped=list(data.skipped))
        for line in obj.skipped:
            warnings.warn(f"{obj.path}: left alone: {line}", RuntimeWarning, stacklevel=2)
        self._objects.append(obj)
        return obj

    def define(self, name: str, address: int) -> None:
        """Bind ``name`` to ``address`` for objects loaded after this (data a test provides)."""
        self._loader.define(name, address)

    def symbol(self, name: str) -> int:
        """Address of a symbol of a loaded object (or of :meth:`define`).

        Raises:
            UnresolvedSymbolError: no loaded object defines it.
        """
        s = self._loader.find(name)
        if s is None:
            raise UnresolvedSymbolError(f"no loaded object defines {name!r}")
        return int(s.address)

    def symbolize(self, address: int) -> Optional[str]:
        """``function+0xoff`` for an address inside a loaded function (or a stub), else None."""
        stub = self._m.stub_at(address)
        if stub is not None:
            return f"{stub.name} (stub)"
        best: Optional[Tuple[int, str]] = None
        for obj in self._objects:
            if not obj.start <= address < obj.end:
                continue
            for name, (start, size) in obj.functions.items():
                if start <= address and (address < start + size or size == 0):
                    if best is None or start > best[0]:
                        best = (start, name)
        if best is None:
            return None
        off = address - best[0]
        return best[1] + (f"+0x{off:x}" if off else "")

    # --- stubs -------------------------------------------------------------------------
    def stub(self, name: str, function: Optional[StubFunction] = None, *,
             nargs: Optional[int] = None) -> Any:
        """Provide ``name`` (an imported function) as a Python function.

        ``function(machine, *args)`` receives the machine and the call's first ``nargs``
        integer arguments (by default as many as it has positional parameters after the
        machine; 6 for ``*args``) and returns the value for EAX/RAX (None means 0). It may
        read and write memory and registers and call guest functions. Register stubs before
        or after loading; usable as a decorator: ``@m.stub("kmalloc")``.
        """
        if function is None:
            return lambda fn: self.stub(name, fn, nargs=nargs)
        n = _nargs(function, name) if nargs is None else nargs
        self._stubs[name] = Stub(name, function, n)
        self._m.stub_address(name)  # so that weak references loaded later bind to it
        return function

    def stub_address(self, name: str) -> int:
        """The address guest code calls for ``name`` (created on first use)."""
        return int(self._m.stub_address(name))

    @property
    def stubs(self) -> Dict[str, Stub]:
        return dict(self._stubs)

    def arg(self, index: int) -> int:
        """Argument ``index`` of the function being entered (inside a stub)."""
        return int(self._m.arg(index))

    def _enter_stub(self, name: str) -> int:
        stub = self._stubs.get(name)
        if stub is None:
            importers = [o.path for o in self._objects if name in o.imports]
            raise UnresolvedSymbolError(
                f"guest code called {name!r}"
                + (f" (imported by {', '.join(importers)})" if importers else "")
                + f", which has no stub: register one with machine.stub({name!r}, fn)")
        stub.calls += 1
        args = [self._m.arg(i) for i in range(stub.nargs)]
        value = stub.function(self, *args)
        if value is None:
            return 0
        return int(value) & ((1 << self.bits) - 1)

    def stub_libc(self) -> None:
        """Stub the C library functions compilers emit calls to (memcpy, memset, memmove,
        memcmp, strlen) and malloc/calloc/free over :meth:`alloc` (see
        :mod:`padlock_emu.stubs`)."""
        from .stubs import LIBC

        for name, fn in LIBC.items():
            self.stub(name, fn)

    # --- calls -------------------------------------------------------------------------
    def call(self, function: Union[str, int], *args: int, timeout: Optional[float] = None,
             ret: str = "ulong", signed: bool = False) -> Optional[int]:
        """Call a function and return its result.

        ``function`` is a symbol name or an address. Arguments are integers (pointers are
        integers; negative values are two's complement) passed as i386 cdecl stack words or
        in RDI, RSI, RDX, RCX, R8, R9 and then the stack (SysV). ``ret`` is the C return
        type: ``"ulong"`` (the default: EAX or RAX as an unsigned word, pointers too),
        ``"long"``, ``"int"``, ``"uint"``, ``"u64"``/``"i64"`` (EDX:EAX on i386) or
        ``"void"`` (returns None). ``signed=True`` is ``ret="long"``. :attr:`last_call`
        tells what the call did.

        Raises:
            GuestFault: the code faulted (a signal: SIGSEGV, SIGILL...); for a PadLock
                fault the exception is also the matching PadlockFault (#UD, #GP, #PF).
            UnsupportedSyscall: the code made a system call.
            CallTimeout: ``timeout`` seconds passed.
            KeyboardInterrupt: Ctrl-C (SIGINT) stopped the guest (Python's default
                handler; a handler of the program's own runs instead, then CallInterrupted).
                The machine stays usable.
            UnresolvedSymbolError: an import without a stub was called.
        """
        _return_value(0, 0, "long" if signed else ret, self.bits)  # reject a bad ret early
        if isinstance(function, str):
            name, address = function, self.symbol(function)
        else:
            address = int(function)
            name = self.symbolize(address) or f"0x{address:x}"
        mask = (1 << self.bits) - 1
        words: List[int] = []
        for i, a in enumerate(args):
            if isinstance(a, bool) or isinstance(a, int):
                words.append(int(a) & mask)
            else:
                raise TypeError(f"argument {i} of {name}: integers and pointers only, not {type(a).__name__}")
        outer_events = self._events
        self._events = []
        events = self._events
        try:
            r = self._m.call(address, words, int((timeout or 0) * 1e6))
        finally:
            self._events = outer_events
        diags = [tuple(d) for d in self._m.take_diagnostics()]
        info = CallInfo(
            function=name, address=address, args=tuple(words), returned=r.returned,
            value=int(r.value) & mask, value_hi=int(r.value_hi) & mask, cycles=r.cycles,
            instructions=r.instructions, padlock_cycles=r.padlock_cycles,
            padlock_count=r.padlock_count, stub_calls=r.stub_calls, padlock=events,
            diagnostics=diags)  # type: ignore[arg-type]
        if outer_events is not None:
            outer_events.extend(events)
        self.last_call = info
        if not r.returned:
            raise guest_fault(r.fault, self.cpu.name, function=self.symbolize(r.fault.pc),
                              diagnostics=[d[0] for d in diags], call=info, machine=self)
        return _return_value(info.value, info.value_hi, "long" if signed else ret, self.bits)

    # --- PadLock hooks -----------------------------------------------------------------
    def hook_padlock(self, before: Optional[Hook] = None, after: Optional[Hook] = None) -> Callable[[], None]:
        """Call ``before(machine, event)`` and/or ``after(machine, event)`` around every
        PadLock instruction. ``before`` may change registers, memory and
        :attr:`eflags30`, and the instruction sees the change; ``after`` sees the
        :class:`Outcome`. Hooks must not :meth:`call`. Returns a function that removes
        them."""
        if before is not None:
            self._before.append(before)
        if after is not None:
            self._after.append(after)
        self._install_hooks()

        def remove() -> None:
            if before is not None and before in self._before:
                self._before.remove(before)
            if after is not None and after in self._after:
                self._after.remove(after)
            self._install_hooks()

        return remove

    # --- instruction, memory and system-call hooks ----------------------------------------
    def hook_code(self, callback: Callable[["Machine", int, int], None], begin: int = 0,
                  end: Optional[int] = None) -> Callable[[], None]:
        """Call ``callback(machine, address, size)`` before each instruction in
        ``[begin, end]`` (default: everywhere). It may read and write registers and memory,
        not :meth:`call`; an exception ends the call. Code it covers runs slower. Returns a
        function that removes the hook."""
        last = (1 << self.bits) - 1 if end is None else end
        hid = self._m.add_code_hook(begin, last, lambda a, n: callback(self, a, n))
        return lambda: self._m.remove_hook(hid)

    def hook_address(self, address: int, callback: Callable[["Machine", int], None]) -> Callable[[], None]:
        """Call ``callback(machine, address)`` each time the instruction at ``address`` is
        about to run (a breakpoint). Returns a function that removes the hook."""
        return self.hook_code(lambda m, a, n: callback(m, a), address, address)

    def hook_memory(self, callback: Callable[["Machine", bool, int, int, int], None], begin: int = 0,
                    end: Optional[int] = None, *, read: bool = True,
                    write: bool = True) -> Callable[[], None]:
        """Call ``callback(machine, write, address, size, value)`` on each guest load
        (``write`` False, ``value`` 0) or store (``value`` the stored value) touching
        ``[begin, end]``, by ordinary instructions (PadLock instructions' data goes through
        the models: see :meth:`hook_padlock`). Returns a function that removes the hook."""
        last = (1 << self.bits) - 1 if end is None else end
        hid = self._m.add_memory_hook(begin, last, read, write,
                                      lambda w, a, n, v: callback(self, w, a, n, v))
        return lambda: self._m.remove_hook(hid)

    def hook_syscall(self, callback: Optional[Callable[["Machine", int], Optional[int]]]) -> None:
        """Handle system calls (INT 0x80, SYSCALL): ``callback(machine, number)`` returns
        the result for EAX/RAX, and the guest goes on after the instruction; None leaves the
        call unhandled (:class:`UnsupportedSyscall`, as without a hook). ``None`` removes
        the hook. SYSENTER is never handled (it returns into a vDSO the harness lacks)."""
        if callback is None:
            self._m.set_syscall_hook(None)
            return

        def handle(number: int) -> bool:
            value = callback(self, number)
            if value is None:
                return False
            self["rax" if self.bits == 64 else "eax"] = value & ((1 << self.bits) - 1)
            return True

        self._m.set_syscall_hook(handle)

    def _install_hooks(self) -> None:
        self._m.set_padlock_hooks(self._hook_before if self._before else None, self._hook_after)

    def _event(self, ev: "_core.PadlockEventData", after: bool) -> PadlockEvent:
        regs = ev.regs_before(self.bits == 64)
        d = ev.decoded
        insn = d.id
        info = _core.info(insn) if insn is not None else None
        cw = None
        if info is not None and info.unit == _core.Unit.Ace:
            edx = regs["rdx" if self.bits == 64 else "edx"]
            edx &= (1 << d.addr_size) - 1
            try:
                cw = _core.ControlWord.from_bytes(self._m.read(edx, 16))
            except MachineError:
                cw = None
        out = PadlockEvent(
            pc=ev.pc, now=ev.now, insn=insn, name=info.guide_name if info else "?",
            decoded=d, regs=regs, eflags30=ev.eflags30_before, control_word=cw,
            function=self.symbolize(ev.pc))
        if after:
            out.outcome = ev.outcome
            out.regs_after = ev.regs_after(self.bits == 64)
            out.eflags30_after = ev.eflags30_after
        return out

    def _before_padlock(self, ev: "_core.PadlockEventData") -> None:
        e = self._event(ev, after=False)
        for h in list(self._before):
            h(self, e)

    def _after_padlock(self, ev: "_core.PadlockEventData") -> None:
        e = self._event(ev, after=True)
        if self._events is not None:
            self._events.append(e)
        for h in list(self._after):
            h(self, e)

    # --- statistics --------------------------------------------------------------------
    def stats(self) -> Dict[str, Any]:
        """All counters of the machine so far (``instructions``, ``diagnostics``...);
        ``padlock`` holds the PadLock instructions by kind (guide name) as
        :class:`PadlockStat`: count, bytes, cycles, faults, key reloads, interrupted."""
        s = dict(self._m.stats())
        s["padlock"] = padlock_stats(s["padlock"])
        s["cycles"] = self.now
        return s

    def disassemble(self, address: int) -> str:
        return str(self._m.disassemble(address))

    def findings(self) -> List[Dict[str, Any]]:
        """The PadLock checker's findings so far (``Machine(check=True)``; docs/checker.md):
        dicts with the keys of ``--check-jsonl`` records (``kind``, ``severity``,
        ``section``, ``pc``, ``function``, ``file``, ``line``, ``count``, ``message``,
        ``chip``, ``backtrace`` ...). Functions and lines come from the loaded objects."""
        if not self._check:
            raise MachineError("the checker is off: create the Machine with check=True")
        return [json.loads(text) for text in self._m.check_findings()]

    def findings_sarif(self) -> Dict[str, Any]:
        """The same findings as a SARIF 2.1.0 log (a dict; ``json.dump`` writes the file
        that code-review tools read), as ``--check-sarif`` writes it."""
        if not self._check:
            raise MachineError("the checker is off: create the Machine with check=True")
        names = " ".join(o.path for o in self._objects)
        return json.loads(self._m.check_sarif(names))


# The address-space layout every Machine uses (emulator/harness/machine.hpp): thread pointer, stub
# area (return sentinel and stubs), allocation arena, stack.
if getattr(_core, "HAS_EMULATOR", False):
    for _name in ("TLS_BASE", "STUB_BASE", "ARENA_BASE", "STACK_TOP", "STACK_SIZE"):
        setattr(Machine, _name, int(getattr(_core.Machine, _name)))
