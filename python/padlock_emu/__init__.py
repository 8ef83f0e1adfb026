"""padlock_emu: the VIA PadLock emulator from Python.

What is here today (see docs/python.md):

- the CPU models: :func:`cpus`, :func:`cpu` (names, units, every sourced constant);
- the PadLock instruction table, decoder and control word, exported from C++
  (:func:`instructions`, :func:`decode`, :class:`ControlWord`, :class:`InsnId`);
- the direct model API: :class:`Model` runs single PadLock instructions on buffers,
  and :func:`xcrypt`, :func:`xsha`, :func:`montmul`, :func:`xstore` wrap the guide's
  memory layouts for unit tests of buffer layouts;
- exceptions (:class:`PadlockFault` and its #UD/#GP/#PF subclasses);
- a pytest plugin (:mod:`padlock_emu.pytest_plugin`) with the ``padlock_machine`` fixture.

Running whole programs (``run``/``Emulator``) and the function-level ``Machine`` are
future API, documented in docs/python.md; they are not part of this package yet.
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
    GeneralProtection,
    InvalidOpcode,
    PadlockError,
    PadlockFault,
    PageFault,
    UnmappedMemoryError,
)
from .model import Model

__version__ = "0.1.0"

__all__ = [
    "Access", "ControlWord", "CpuMode", "CpuModel", "Decoded", "DecodeStatus", "Diag",
    "DiagEvent", "DiagInfo", "Execution", "Fault", "FaultKind", "Gpr", "InsnId", "InsnInfo",
    "KeySize", "Outcome", "Param", "Perm", "PrefixRule", "RegBit", "RngMsr", "Status", "Unit",
    "CENTAUR_FEATURES", "MSR_FCR", "MSR_RNG", "MSR_RNG_RESET", "FCR_PADLOCK_ENABLE", "PAGE_SIZE",
    "SHA_INITIAL_STATE", "decode", "diagnostics", "info", "instructions", "unit_name",
    "cpu", "cpus", "Model",
    "XCRYPT_MODES", "XSHA_ALGORITHMS", "XcryptResult", "XshaResult", "MontmulResult",
    "XstoreResult", "xcrypt", "xsha", "montmul", "xstore",
    "PadlockError", "PadlockFault", "InvalidOpcode", "GeneralProtection", "PageFault",
    "UnmappedMemoryError",
]
