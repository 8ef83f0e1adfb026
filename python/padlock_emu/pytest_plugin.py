"""pytest integration: fixtures parametrised over the CPU models.

Enable it in a conftest.py with ``pytest_plugins = ["padlock_emu.pytest_plugin"]`` (in the
rootdir's conftest) or ``from padlock_emu.pytest_plugin import *``.

Fixtures:
    padlock_cpu: the name of a CPU model; a test using it runs once per model.
    padlock_machine: a fresh :class:`padlock_emu.Model` for that CPU model.

Marker:
    ``@pytest.mark.padlock_units("PHE")``: generate only the models that have all the
    named units (RNG, ACE, ACE2, PHE, PMM).

Environment:
    ``PADLOCK_CPUS=esther,nano``: restrict the models (names or aliases).
"""

from __future__ import annotations

import os
from typing import Iterator, List, Sequence

import pytest

from . import _core
from .model import Model

__all__ = ["padlock_cpu_names", "pytest_configure", "pytest_generate_tests", "padlock_machine"]


def padlock_cpu_names(units: Sequence[str] = ()) -> List[str]:
    """Names of the CPU models that have every unit in ``units``, honouring PADLOCK_CPUS."""
    wanted = os.environ.get("PADLOCK_CPUS")
    models = list(_core.cpu_models())
    if wanted:
        chosen = []
        for name in (w.strip() for w in wanted.split(",") if w.strip()):
            found = _core.find_cpu_model(name)
            if found is None:
                raise pytest.UsageError(f"PADLOCK_CPUS: unknown CPU model {name!r}")
            chosen.append(found)
        models = chosen
    need = {u.upper() for u in units}
    return [m.name for m in models if need <= set(m.units.names)]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "padlock_units(*units): run only on CPU models that have these PadLock units "
        "(RNG, ACE, ACE2, PHE, PMM)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "padlock_cpu" not in metafunc.fixturenames:
        return
    units: List[str] = []
    for mark in metafunc.definition.iter_markers("padlock_units"):
        units.extend(mark.args)
    metafunc.parametrize("padlock_cpu", padlock_cpu_names(units))


@pytest.fixture
def padlock_machine(padlock_cpu: str) -> Iterator[Model]:
    """A fresh 32-bit :class:`Model` of the CPU model ``padlock_cpu``."""
    yield Model(padlock_cpu)
