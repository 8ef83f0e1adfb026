"""The direct model API: one CPU's PadLock units, flat memory and registers.

:class:`Model` runs single PadLock instructions on buffers you lay out yourself, without
an ELF and without Unicorn. Everything architectural happens in C++ (``isa::decode`` and
``Padlock::execute``); this class only adds a buffer allocator and register names.

Example::

    m = Model("esther")
    buf = m.alloc(16)
    m["edi"], m["edx"] = buf, 0
    m.advance(1_000_000)             # let the RNG accumulate bits
    x = m.step(InsnId.Xstore)
    print(x.status, m["eax"] & 0x1F)
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple, Union

from . import _core
from .cpus import CpuLike
from .errors import raise_for_fault

__all__ = ["Model"]

# Register names -> (Gpr, size). "eax" reads the low 32 bits and writes zero-extended, as
# an x86 32-bit register write does; "ax" reads/writes the low 16 bits; "rax" is 64-bit.
_REGS: Dict[str, Tuple["_core.Gpr", int]] = {}
for _name, _gpr in _core.Gpr.__members__.items():
    _low = _name.lower()
    _REGS[_low] = (_gpr, 16)
    _REGS["e" + _low] = (_gpr, 32)
    _REGS["r" + _low] = (_gpr, 64)


def _reg(name: str) -> Tuple["_core.Gpr", int]:
    try:
        return _REGS[name.lower()]
    except KeyError:
        raise KeyError(f"unknown register {name!r}; use eax..edi, rax..rdi or ax..di") from None


class Model(_core.Model):
    """One CPU model's PadLock units with flat memory (FlatMemory) and registers (ArchState).

    Args:
        cpu: CPU model name or alias (see :func:`padlock_emu.cpus`), or a CpuModel.
        bits: 32 (protected mode) or 64 (long mode, CPU models with ``long_mode`` only).
        seed: RNG seed; the RNG's bits are reproducible from it.
        host_entropy: take RNG bits from the host instead of the seed.
        errata: apply the model's errata (the Esther stepping-8 CTR erratum, §6.6).
        mhz: core clock; defaults to the model's ``default_mhz``.
        arena: first address :meth:`alloc` hands out.
        timing: False (the default) charges the units' clocks alone, as the guide's tables
            give them (everything in L1, one instruction after the other). True charges as
            the CLI does with ``--timing on`` and :class:`Machine` by default: the cache
            model's memory stalls and the §3.3 overlap (docs/timing.md).

    Registers are read and written by name: ``m["esi"] = addr``; ``m["eax"]``.
    ``eflags30`` is EFLAGS[30] (§1.8), ``cr4_osfxsr`` is CR4[9] (§1.2), ``cr0_ts`` is CR0[3]
    (set: every PadLock instruction raises #NM, as SSE does), ``now`` the virtual
    clock in cycles (each :meth:`step` advances it by the instruction's cycles).
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
        arena: int = 0x0010_0000,
        timing: bool = False,
    ) -> None:
        super().__init__(cpu, bits=bits, seed=seed, host_entropy=host_entropy, errata=errata, mhz=mhz,
                         timing=timing)
        self._next = arena

    # --- registers -------------------------------------------------------------------
    def __getitem__(self, reg: str) -> int:
        gpr, size = _reg(reg)
        return self.get_reg(gpr, size)

    def __setitem__(self, reg: str, value: int) -> None:
        gpr, size = _reg(reg)
        self.set_reg(gpr, value, size)

    def regs(self) -> Dict[str, int]:
        """All eight registers at the mode's width (eax.. in 32-bit mode, rax.. in 64-bit)."""
        prefix = "r" if self.bits == 64 else "e"
        return {prefix + n.lower(): self[prefix + n.lower()] for n in _core.Gpr.__members__}

    # --- memory ----------------------------------------------------------------------
    def alloc(
        self,
        size: int,
        *,
        data: Optional[bytes] = None,
        align: int = 16,
        misalign: int = 0,
        perm: Union[int, "_core.Perm"] = _core.Perm.RW,
        fill: int = 0,
    ) -> int:
        """Map fresh pages for a buffer and return its address.

        The buffer starts ``misalign`` bytes after an ``align``-aligned address at the start
        of newly mapped pages, and an unmapped guard page follows the mapping, so accesses
        far past the end fault. ``data`` (if given) is written at the start; the rest is
        ``fill``. Addresses stay below 4 GiB so they work in 32-bit mode.
        """
        if size < 0 or misalign < 0 or align <= 0 or align & (align - 1):
            raise ValueError("size and misalign must be >= 0 and align a power of two")
        page = _core.PAGE_SIZE
        base = self._next
        addr = base + misalign
        length = max(size + misalign, 1)
        mapped = (length + page - 1) // page * page
        if base + mapped >= 1 << 32:
            raise MemoryError("the 4 GiB allocation arena is exhausted")
        self.map(base, mapped, int(perm))
        self._next = base + mapped + page  # leave a guard page
        if fill:
            self.write(base, bytes([fill]) * mapped)
        if data is not None:
            if len(data) > size:
                raise ValueError(f"data ({len(data)} bytes) larger than the buffer ({size})")
            self.write(addr, data)
        return addr

    # --- execution -------------------------------------------------------------------
    def step(
        self,
        insn: Union["_core.InsnId", bytes],
        *,
        addr_size: int = 0,
        check: bool = False,
        **regs: int,
    ) -> "_core.Execution":
        """Set registers from keyword arguments, then execute one PadLock instruction.

        ``insn`` is a table row (:class:`InsnId`), encoded canonically (REP where required,
        67h when ``addr_size`` differs from the mode's), or raw instruction bytes decoded
        by ``isa::decode``. With ``check=True`` a fault raises a :class:`PadlockFault`.
        """
        for name, value in regs.items():
            self[name] = value
        if isinstance(insn, (bytes, bytearray)):
            x = self.execute_bytes(bytes(insn))
        else:
            x = self.execute(insn, addr_size)
        if check:
            raise_for_fault(x, self.cpu.name)
        return x
