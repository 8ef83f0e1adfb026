"""pytest integration: fixtures parametrised over the CPU models.

Enable it in a conftest.py with ``pytest_plugins = ["padlock_emu.pytest_plugin"]`` (in the
rootdir's conftest) or ``from padlock_emu.pytest_plugin import *``.

Fixtures:
    padlock_cpu: the name of a CPU model; a test using it runs once per model.
    padlock_bits: 32 or 64; a test using it runs once per (model, mode) the model has
        (64-bit only on models with long mode).
    padlock_machine: a fresh :class:`padlock_emu.Machine` (the function harness) of that
        model, 32-bit unless the test uses ``padlock_bits`` or ``padlock_bits(64)``.
    padlock_model: a fresh :class:`padlock_emu.Model` (the direct model API) of that model.

Markers:
    ``@pytest.mark.padlock_units("PHE")``: generate only the models that have all the
    named units (RNG, ACE, ACE2, PHE, PMM).
    ``@pytest.mark.padlock_bits(64)``: generate only these modes (and so only models with
    long mode for 64).
    ``@pytest.mark.padlock_timing(False)``: the ``padlock_machine`` and ``padlock_model``
    fixtures charge the units' clocks alone, as the guide's tables give them (a Machine
    charges as the CLI does by default, a Model the units' clocks; docs/timing.md).

Environment:
    ``PADLOCK_CPUS=esther,nano``: restrict the models (names or aliases).
"""

from __future__ import annotations

import os
from typing import Iterator, List, Sequence

import pytest

from . import _core
from .model import Model

__all__ = [
    "padlock_cpu_names",
    "pytest_configure",
    "pytest_generate_tests",
    "padlock_machine",
    "padlock_model",
]


def padlock_cpu_names(units: Sequence[str] = (), bits: int = 32) -> List[str]:
    """Names of the CPU models that have every unit in ``units`` (and long mode for
    ``bits=64``), honouring PADLOCK_CPUS."""
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
    return [m.name for m in models if need <= set(m.units.names) and (bits == 32 or m.long_mode)]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "padlock_units(*units): run only on CPU models that have these PadLock units "
        "(RNG, ACE, ACE2, PHE, PMM)",
    )
    config.addinivalue_line(
        "markers", "padlock_bits(*bits): run only in these modes (32, 64) of the harness"
    )
    config.addinivalue_line(
        "markers",
        "padlock_timing(on): True charges PadLock time as the CLI does with --timing on (cache "
        "stalls, the §3.3 overlap); False the units' clocks alone",
    )


def _timing(request: pytest.FixtureRequest, default: bool) -> bool:
    marker = request.node.get_closest_marker("padlock_timing")
    return bool(marker.args[0]) if marker is not None and marker.args else default


def _marker_args(metafunc: pytest.Metafunc, name: str) -> List[object]:
    out: List[object] = []
    for mark in metafunc.definition.iter_markers(name):
        out.extend(mark.args)
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "padlock_cpu" not in metafunc.fixturenames:
        return
    units = [str(u) for u in _marker_args(metafunc, "padlock_units")]
    bits_wanted = [int(b) for b in _marker_args(metafunc, "padlock_bits")]  # type: ignore[call-overload]
    if "padlock_bits" in metafunc.fixturenames:
        modes = bits_wanted or [32, 64]
        combos = [(c, b) for b in modes for c in padlock_cpu_names(units, b)]
        metafunc.parametrize(("padlock_cpu", "padlock_bits"), combos,
                             ids=[f"{c}-{b}" for c, b in combos])
    else:
        bits = bits_wanted[0] if bits_wanted else 32
        metafunc.parametrize("padlock_cpu", padlock_cpu_names(units, bits))


@pytest.fixture
def padlock_machine(request: pytest.FixtureRequest, padlock_cpu: str) -> Iterator[object]:
    """A fresh :class:`padlock_emu.Machine` of the CPU model ``padlock_cpu``."""
    from .machine import Machine

    bits = 32
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    if "padlock_bits" in params:
        bits = int(params["padlock_bits"])
    else:
        marker = request.node.get_closest_marker("padlock_bits")
        if marker is not None and marker.args:
            bits = int(marker.args[0])
    yield Machine(padlock_cpu, bits=bits, timing=_timing(request, True))


@pytest.fixture
def padlock_model(request: pytest.FixtureRequest, padlock_cpu: str) -> Iterator[Model]:
    """A fresh 32-bit :class:`Model` (direct model API) of the CPU model ``padlock_cpu``."""
    yield Model(padlock_cpu, timing=_timing(request, False))
