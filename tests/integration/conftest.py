"""Fixtures for the integration tests: the padlock-emu CLI and the guest programs.

Set PADLOCK_EMU_BIN and PADLOCK_GUEST_DIR to point at a build; otherwise the build
directories under the repository (build*/) and PATH are searched (see guestrun.py).
Tests that need a missing piece are skipped with the reason, never silently passed."""

from __future__ import annotations

import pytest

from guestrun import TARGETS, Runner, Target, find_emulator, find_guest_dir


@pytest.fixture(scope="session")
def emulator_path():
    path = find_emulator()
    if path is None or not path.is_file():
        pytest.skip("padlock-emu not found: build it or set PADLOCK_EMU_BIN")
    return path


@pytest.fixture(scope="session")
def guest_dir():
    path = find_guest_dir()
    if path is None or not path.is_dir():
        pytest.skip("guest programs not found: build target padlock_guests or set "
                    "PADLOCK_GUEST_DIR")
    return path


@pytest.fixture(scope="session")
def runner(emulator_path, guest_dir) -> Runner:
    return Runner(emulator_path, guest_dir)


@pytest.fixture(params=[Target(a, c) for a, c in TARGETS], ids=lambda t: t.id)
def target(request, guest_dir) -> Target:
    """Each guest runs as i386 under --cpu esther and as x86-64 under --cpu nano."""
    t: Target = request.param
    if not (guest_dir / f"guest_hello_{t.arch}").is_file():
        pytest.skip(f"no {t.arch} guests in {guest_dir} (gcc could not build them)")
    return t
