"""Counters of PadLock instructions, shared by :func:`padlock_emu.run` and :class:`Machine`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping

__all__ = ["PadlockStat", "padlock_stats"]


@dataclass(frozen=True)
class PadlockStat:
    """One kind of PadLock instruction (e.g. ``"REP XCRYPTCBC"``) over a run or a machine.

    ``count`` executions (faulting and interrupted ones included), ``bytes`` processed
    (encrypted, hashed, stored), ``cycles`` charged, ``faults``, ``key_reloads`` (REP XCRYPT
    with EFLAGS[30] = 0, §1.8) and ``interrupted`` (stopped at an interruptible point, §1.7).
    """

    count: int
    bytes: int
    cycles: int
    faults: int
    key_reloads: int
    interrupted: int


def padlock_stats(raw: Mapping[str, Mapping[str, Any]]) -> Dict[str, PadlockStat]:
    """The C++ Stats table (by guide name) as :class:`PadlockStat` values."""
    return {name: PadlockStat(**{k: int(v) for k, v in row.items()}) for name, row in raw.items()}
