"""Exceptions raised by padlock_emu.

``PadlockError`` is the base of every padlock_emu error. A PadLock instruction that
faults raises a :class:`PadlockFault` subclass named after the x86 exception the model
raised: :class:`InvalidOpcode` (#UD), :class:`GeneralProtection` (#GP) or
:class:`PageFault` (#PF). Set-up accesses to unmapped memory raise
:class:`UnmappedMemoryError` (also a ``LookupError``).
"""

from __future__ import annotations

from typing import Dict, Optional

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
    "raise_for_fault",
]


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


_FAULT_CLASSES = {
    _core.FaultKind.InvalidOpcode: InvalidOpcode,
    _core.FaultKind.GeneralProtection: GeneralProtection,
    _core.FaultKind.PageFault: PageFault,
}


def raise_for_fault(execution: "_core.Execution", cpu: str) -> None:
    """Raise the matching :class:`PadlockFault` if ``execution`` faulted; otherwise do nothing."""
    if execution.status == _core.Status.Faulted:
        raise _FAULT_CLASSES.get(execution.fault.kind, PadlockFault)(execution, cpu)
