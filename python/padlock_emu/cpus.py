"""The CPU models, as the C++ registry (models/cpus/) defines them."""

from __future__ import annotations

from typing import List, Union

from . import _core

__all__ = ["cpus", "cpu", "CpuLike"]

CpuLike = Union[str, "_core.CpuModel"]


def cpus() -> List["_core.CpuModel"]:
    """All CPU models, in the order ``padlock-emu cpus`` lists them.

    Each :class:`CpuModel` has ``name``, ``aliases``, ``core``, ``description``,
    ``family``/``model``/``stepping``, ``default_mhz`` (a :class:`Param`), ``units``
    (``units.names`` e.g. ``['RNG', 'ACE', 'ACE2', 'PHE', 'PMM']``), ``params`` (every
    sourced constant by dotted name, each a :class:`Param` with ``value``, ``unit``,
    ``source`` and the field's ``help``) and ``settings`` (flags and counts that are not
    sourced constants).
    """
    return list(_core.cpu_models())


def cpu(name: CpuLike) -> "_core.CpuModel":
    """A CPU model by name or alias (``"esther"``, ``"nehemiah-c5p"``...).

    Raises:
        ValueError: no model has that name or alias.
    """
    if isinstance(name, _core.CpuModel):
        return name
    found = _core.find_cpu_model(name)
    if found is None:
        raise ValueError(_core.unknown_cpu_model_message(name))
    return found
