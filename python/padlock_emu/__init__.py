"""padlock_emu: the VIA PadLock emulator from Python.

What is here today (see docs/python.md):

- the CPU models: :func:`cpus`, :func:`cpu` (names, units, every sourced constant);
- the PadLock instruction table, decoder and control word, exported from C++
  (:func:`instructions`, :func:`decode`, :class:`ControlWord`, :class:`InsnId`);
- the direct model API: :class:`Model` runs single PadLock instructions on buffers,
  and :func:`xcrypt`, :func:`xsha`, :func:`montmul`, :func:`xstore` wrap the guide's
  memory layouts for unit tests of buffer layouts;
- whole programs under the emulator: :func:`run` and the reusable :class:`Emulator`,
  returning a :class:`Result` (exit status or signal, output, PadLock statistics);
- the function-level harness :class:`Machine`: load an executable, shared object or
  ``.o``, call its functions, stub its imports, hook its PadLock instructions;
- exceptions (:class:`PadlockFault` and its #UD/#GP/#PF subclasses, :class:`GuestFault`
  for faults under the harness);
- a pytest plugin (:mod:`padlock_emu.pytest_plugin`) with the ``padlock_machine`` and
  ``padlock_model`` fixtures.
"""

from __future__ import annotations

from . import _core
from ._core import (
    Access,
    ControlWord,
    CpuMode,
    CpuModel,
    Decoded,
    DecodeStatus,
    Diag,
    DiagEvent,
    DiagInfo,
    Execution,
    Fault,
    FaultKind,
    Gpr,
    InsnId,
    InsnInfo,
    KeySize,
    Outcome,
    Param,
    Perm,
    PrefixRule,
    RegBit,
    RngMsr,
    Status,
    Unit,
    CENTAUR_FEATURES,
    MSR_FCR,
    MSR_FCR57,
    MSR_RNG,
    MSR_RNG_RESET,
    FCR_PADLOCK_ENABLE,
    PAGE_SIZE,
    SHA_INITIAL_STATE,
    decode,
    diagnostics,
    info,
    instructions,
    unit_name,
)
from .cpus import cpu, cpus
from .direct import (
    XCRYPT_MODES,
    XSHA_ALGORITHMS,
    MontmulResult,
    XcryptResult,
    XshaResult,
    XstoreResult,
    montmul,
    xcrypt,
    xsha,
    xstore,
)
from .errors import (
    CallInterrupted,
    CallTimeout,
    DeviceNotAvailable,
    GeneralProtection,
    GuestDeviceNotAvailable,
    GuestFault,
    GuestGeneralProtection,
    GuestInvalidOpcode,
    GuestPageFault,
    GuestTimeout,
    InvalidOpcode,
    LoadError,
    MachineError,
    PadlockError,
    PadlockFault,
    PageFault,
    SnapshotError,
    UnmappedMemoryError,
    UnresolvedSymbolError,
    UnsupportedSyscall,
)
from .machine import (CallInfo, LoadedObject, Machine, PadlockEvent, PROT_EXEC, PROT_READ,
                      PROT_WRITE, Snapshot)
from .model import Model
from .run import Emulator, Result, RunStats, features, guest_program, run
from .stats import PadlockStat

__version__ = "0.1.0"

__all__ = [
    "Access", "ControlWord", "CpuMode", "CpuModel", "Decoded", "DecodeStatus", "Diag",
    "DiagEvent", "DiagInfo", "Execution", "Fault", "FaultKind", "Gpr", "InsnId", "InsnInfo",
    "KeySize", "Outcome", "Param", "Perm", "PrefixRule", "RegBit", "RngMsr", "Status", "Unit",
    "CENTAUR_FEATURES", "MSR_FCR", "MSR_FCR57", "MSR_RNG", "MSR_RNG_RESET", "FCR_PADLOCK_ENABLE", "PAGE_SIZE",
    "SHA_INITIAL_STATE", "decode", "diagnostics", "info", "instructions", "unit_name",
    "cpu", "cpus", "Model",
    "XCRYPT_MODES", "XSHA_ALGORITHMS", "XcryptResult", "XshaResult", "MontmulResult",
    "XstoreResult", "xcrypt", "xsha", "montmul", "xstore",
    "PadlockError", "PadlockFault", "InvalidOpcode", "GeneralProtection", "PageFault",
    "DeviceNotAvailable", "UnmappedMemoryError",
    "run", "Emulator", "Result", "RunStats", "PadlockStat", "features", "guest_program",
    "Machine", "LoadedObject", "PadlockEvent", "CallInfo", "PROT_READ", "PROT_WRITE", "PROT_EXEC",
    "GuestFault", "GuestInvalidOpcode", "GuestGeneralProtection", "GuestPageFault",
    "GuestDeviceNotAvailable", "UnsupportedSyscall", "CallTimeout", "CallInterrupted", "UnresolvedSymbolError", "GuestTimeout", "LoadError",
    "MachineError", "Snapshot", "SnapshotError",
]
