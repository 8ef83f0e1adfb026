"""Exceptions raised by padlock_emu.

``PadlockError`` is the base of every padlock_emu error. A PadLock instruction that
faults raises a :class:`PadlockFault` subclass named after the x86 exception the model
raised: :class:`InvalidOpcode` (#UD), :class:`GeneralProtection` (#GP) or
:class:`PageFault` (#PF). Set-up accesses to unmapped memory raise
:class:`UnmappedMemoryError` (also a ``LookupError``).

Under the function harness (:class:`padlock_emu.Machine`) a call that faults raises a
:class:`GuestFault`, which carries the signal Linux would deliver (``signal``,
``address``, ``pc``...). When a PadLock instruction faulted, the exception is also the
matching :class:`PadlockFault` subclass: ``GuestGeneralProtection`` is both a
``GuestFault`` (SIGSEGV) and a ``GeneralProtection`` (#GP).
"""

from __future__ import annotations

import signal as _signal
from typing import Any, Dict, List, Optional, Sequence

from . import _core

PadlockError = _core.PadlockError
UnmappedMemoryError = _core.UnmappedMemoryError

__all__ = [
    "PadlockError",
    "UnmappedMemoryError",
    "PadlockFault",
    "InvalidOpcode",
    "GeneralProtection",
    "PageFault",
    "DeviceNotAvailable",
    "raise_for_fault",
    "MachineError",
    "SnapshotError",
    "LoadError",
    "GuestFault",
    "GuestInvalidOpcode",
    "GuestGeneralProtection",
    "GuestPageFault",
    "GuestDeviceNotAvailable",
    "UnsupportedSyscall",
    "CallTimeout",
    "CallInterrupted",
    "UnresolvedSymbolError",
    "GuestTimeout",
    "guest_fault",
]

# Present when the module was built with the emulator (run, Emulator, Machine).
MachineError = getattr(_core, "MachineError", PadlockError)
SnapshotError = getattr(_core, "SnapshotError", MachineError)
LoadError = getattr(_core, "LoadError", PadlockError)


class PadlockFault(PadlockError):  # type: ignore[misc, valid-type]
    """A PadLock instruction raised an x86 exception.

    Attributes:
        kind: the model's :class:`padlock_emu.FaultKind`.
        address: the first faulting linear address (#PF) or the misaligned pointer (#GP);
            0 for #UD.
        write: True when a #PF was caused by a store.
        insn: the instruction's :class:`padlock_emu.InsnId` (None if it did not decode).
        cpu: name of the CPU model.
        execution: the :class:`padlock_emu.Execution` (outcome, decoded instruction,
            diagnostics).
        diagnostics: names of the diagnostics the model reported.
        layout: buffer addresses by name when raised by xcrypt/xsha/montmul/xstore,
            else empty.
    """

    def __init__(self, execution: "_core.Execution", cpu: str) -> None:
        self.execution = execution
        self.kind = execution.fault.kind
        self.address: int = execution.fault.address
        self.write: bool = execution.fault.write
        self.insn: Optional[_core.InsnId] = execution.decoded.id
        self.cpu = cpu
        self.diagnostics = [d.name for d in execution.diagnostics]
        self.layout: Dict[str, int] = {}
        name = _core.info(self.insn).guide_name if self.insn is not None else "instruction"
        text = f"{name} raised {_core.fault_name(self.kind)} on {cpu}"
        if self.kind != _core.FaultKind.InvalidOpcode:
            text += f" at 0x{self.address:x}"
            if self.kind == _core.FaultKind.PageFault:
                text += " (write)" if self.write else " (read)"
        for d in execution.diagnostics:
            text += f"; {d.name} ({d.info.section}): {d.info.choice}"
        super().__init__(text)


class InvalidOpcode(PadlockFault):
    """#UD: the unit is absent or disabled, CR4[9] is clear, or the prefixes are illegal (§1.2, §1.3)."""


class GeneralProtection(PadlockFault):
    """#GP: for example a pointer that must be 16-byte aligned is not (§3.1, §4.1, §5.1)."""


class PageFault(PadlockFault):
    """#PF: a byte the instruction had to access is not mapped or lacks the permission (§1.7)."""


class DeviceNotAvailable(PadlockFault):
    """#NM: CR0.TS is set (ring-0 code: ``Machine.cr0_ts``, ``Model.cr0_ts``); PadLock runs in
    the SSE datapath (§1.2 note) and faults as SSE does."""


_FAULT_CLASSES = {
    _core.FaultKind.InvalidOpcode: InvalidOpcode,
    _core.FaultKind.GeneralProtection: GeneralProtection,
    _core.FaultKind.PageFault: PageFault,
    _core.FaultKind.DeviceNotAvailable: DeviceNotAvailable,
}


def raise_for_fault(execution: "_core.Execution", cpu: str) -> None:
    """Raise the matching :class:`PadlockFault` if ``execution`` faulted; otherwise do nothing."""
    if execution.status == _core.Status.Faulted:
        raise _FAULT_CLASSES.get(execution.fault.kind, PadlockFault)(execution, cpu)


# --- the function harness -------------------------------------------------------------

_SEGV_CODES = {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 0x80: "SI_KERNEL"}


def _signal_name(signo: int) -> str:
    try:
        return _signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


class GuestFault(PadlockError):  # type: ignore[misc, valid-type]
    """A call under :class:`padlock_emu.Machine` stopped on a fault.

    Attributes:
        signal: the signal Linux would deliver (``signal.SIGSEGV``, ``SIGILL``...), 0 if none.
        signal_name: its name (``"SIGSEGV"``).
        code: the ``si_code`` (``SEGV_MAPERR`` = 1, ``SEGV_ACCERR`` = 2, ``SI_KERNEL`` = 0x80 ...).
        si_addr: the signal's address: the first faulting byte of a page fault, the PC
            for SIGILL, 0 for a #GP (as Linux reports it).
        address: ``si_addr``, except for PadLock faults, where it is the model's fault
            address as for every :class:`PadlockFault` (the misaligned pointer of a #GP).
        pc: address of the faulting instruction; ``function``: it as ``symbol+offset``.
        disassembly: the instruction (Capstone, or the guide's name for PadLock).
        trapno: the x86 exception vector (14 #PF, 13 #GP, 6 #UD ...).
        write: True when a page fault was caused by a store.
        is_padlock: a PadLock instruction faulted; then ``insn`` and ``kind`` (a
            :class:`padlock_emu.FaultKind`) describe the model's fault.
        cpu: the CPU model's name; ``diagnostics``: undefined cases the model reported.
        call: the :class:`padlock_emu.CallInfo` of the call, ``machine``: the Machine
            (its registers and memory are as the fault left them).
    """

    def __init__(self, fault: Any, cpu: str, *, function: Optional[str] = None,
                 diagnostics: Sequence[str] = (), call: Any = None, machine: Any = None) -> None:
        self.fault = fault
        self.signal: int = fault.signo
        self.signal_name = _signal_name(fault.signo) if fault.signo else ""
        self.code: int = fault.code
        self.si_addr: int = fault.address
        self.address: int = fault.padlock.address if fault.is_padlock else fault.address
        self.pc: int = fault.pc
        self.function = function
        self.disassembly: str = fault.disassembly
        self.trapno: int = fault.trapno
        self.write: bool = fault.write
        self.is_padlock: bool = fault.is_padlock
        self.insn: Optional[_core.InsnId] = fault.insn
        self.kind = fault.padlock.kind if fault.is_padlock else None
        self.cpu = cpu
        self.diagnostics: List[str] = list(diagnostics)
        self.call = call
        self.machine = machine
        # PadlockFault's attributes, for the Guest* subclasses that are also PadlockFaults.
        self.execution = None
        self.layout: Dict[str, int] = {}
        Exception.__init__(self, self._message())

    def _message(self) -> str:
        where = f"pc 0x{self.pc:x}"
        if self.function:
            where += f" in {self.function}"
        if self.is_padlock:
            name = _core.info(self.insn).guide_name if self.insn is not None else "PadLock instruction"
            text = f"{self.signal_name}: {name} raised {_core.fault_name(self.kind)} on {self.cpu}"
            if self.kind == _core.FaultKind.GeneralProtection:
                text += f" (pointer 0x{self.address:x})"
            elif self.kind == _core.FaultKind.PageFault:
                text += f" at 0x{self.address:x} ({'write' if self.write else 'read'})"
            text += f", {where}"
        else:
            text = f"{self.signal_name or 'stopped'}"
            if self.signal == _signal.SIGSEGV and self.code in (1, 2):
                text += (f" ({_SEGV_CODES[self.code]}) {'writing' if self.write else 'reading'}"
                         f" 0x{self.address:x}")
            text += f" at {where}: {self.disassembly}"
        for d in self.diagnostics:
            text += f"; diagnostic {d}"
        return text


class GuestInvalidOpcode(GuestFault, InvalidOpcode):
    """SIGILL from a PadLock instruction the chip does not have or does not allow (#UD, §1.3)."""


class GuestGeneralProtection(GuestFault, GeneralProtection):
    """SIGSEGV (SI_KERNEL) from a PadLock #GP, e.g. a pointer that must be 16-byte aligned (§3.1)."""


class GuestPageFault(GuestFault, PageFault):
    """SIGSEGV from a PadLock instruction's page fault (§1.7)."""


class GuestDeviceNotAvailable(GuestFault, DeviceNotAvailable):
    """A PadLock #NM (trapno 7) in harness code run with ``Machine.cr0_ts`` set."""


class UnsupportedSyscall(GuestFault):
    """The function made a system call (int 0x80, syscall, sysenter); the harness has no kernel.

    ``number`` is the system-call number. Stub the function that makes the call instead.
    """

    def __init__(self, fault: Any, cpu: str, **kw: Any) -> None:
        self.number: int = fault.syscall_number
        super().__init__(fault, cpu, **kw)

    def _message(self) -> str:
        where = f"pc 0x{self.pc:x}" + (f" in {self.function}" if self.function else "")
        return (f"system call {self.number} ({self.disassembly}) at {where}: the function "
                "harness provides no system calls; stub the function that makes it")


class CallTimeout(GuestFault, TimeoutError):
    """The call did not return within its ``timeout``."""

    def _message(self) -> str:
        where = f"pc 0x{self.pc:x}" + (f" in {self.function}" if self.function else "")
        return f"the call did not return in time; stopped at {where}: {self.disassembly}"


class CallInterrupted(GuestFault):
    """SIGINT (Ctrl-C) stopped the call and the program's own SIGINT handler did not raise
    (with Python's default handler, :meth:`Machine.call` raises KeyboardInterrupt instead).
    The machine stays usable: the next call starts afresh."""

    def _message(self) -> str:
        where = f"pc 0x{self.pc:x}" + (f" in {self.function}" if self.function else "")
        return f"the call was interrupted (SIGINT) at {where}: {self.disassembly}"


class UnresolvedSymbolError(PadlockError, LookupError):  # type: ignore[misc, valid-type]
    """A symbol is not defined by any loaded object, or guest code called an import with no stub."""


class GuestTimeout(PadlockError, TimeoutError):  # type: ignore[misc, valid-type]
    """:func:`padlock_emu.run` killed the guest after ``timeout`` seconds; ``result`` has its output."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


_GUEST_PADLOCK_CLASSES = {
    _core.FaultKind.InvalidOpcode: GuestInvalidOpcode,
    _core.FaultKind.GeneralProtection: GuestGeneralProtection,
    _core.FaultKind.PageFault: GuestPageFault,
    _core.FaultKind.DeviceNotAvailable: GuestDeviceNotAvailable,
}


def guest_fault(fault: Any, cpu: str, **kw: Any) -> GuestFault:
    """The exception for a :class:`_core.MachineFault` (see :class:`GuestFault`)."""
    kinds = getattr(_core, "StopKind", None)
    if kinds is not None and fault.kind == kinds.Syscall:
        return UnsupportedSyscall(fault, cpu, **kw)
    if kinds is not None and fault.kind == kinds.Timeout:
        return CallTimeout(fault, cpu, **kw)
    if kinds is not None and fault.kind == getattr(kinds, "Interrupted", None):
        return CallInterrupted(fault, cpu, **kw)
    if fault.is_padlock:
        return _GUEST_PADLOCK_CLASSES.get(fault.padlock.kind, GuestFault)(fault, cpu, **kw)
    return GuestFault(fault, cpu, **kw)
