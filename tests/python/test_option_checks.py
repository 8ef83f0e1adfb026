"""One validation for every entry point (emulator/options/option_checks.hpp): a bad
option given to padlock_emu.run raises ValueError (TypeError for a value of the wrong type)
with exactly the line the CLI prints for the same value, and the CLI refuses it too."""

from __future__ import annotations

import subprocess

import pytest

import padlock_emu as pe
from padlock_emu.cli import binary_path

# (Python keyword arguments, the CLI's options for the same values, Python's exception)
BAD = [
    ({"mhz": -5}, ["--mhz", "-5"], ValueError),
    ({"mhz": 0.5}, ["--mhz", "0.5"], ValueError),
    ({"mhz": 0}, ["--mhz", "0"], ValueError),
    ({"mhz": "fast"}, ["--mhz", "fast"], TypeError),
    ({"irq_hz": "abc"}, ["--irq-hz", "abc"], TypeError),
    ({"irq_hz": -1}, ["--irq-hz", "-1"], ValueError),
    ({"mhz": 1, "irq_hz": 100000}, ["--mhz", "1", "--irq-hz", "100000"], ValueError),
    ({"seed": -1}, ["--seed", "-1"], ValueError),
    ({"seed": "x"}, ["--seed", "x"], TypeError),
    ({"cpu": "pentium"}, ["--cpu", "pentium"], ValueError),
    ({"memory": "softmmu"}, ["--memory", "softmmu"], ValueError),
    ({"check": "loud"}, ["--check=loud"], ValueError),
    ({"gdb": 70000}, ["-g", "70000"], ValueError),
    ({"sysroot": "/nonexistent-sysroot"}, ["-L", "/nonexistent-sysroot"], ValueError),
]


def cli_message(options: list[str]) -> str:
    r = subprocess.run([str(binary_path()), "run", *options, "/bin/true"],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("padlock-emu: "), r.stderr
    return lines[0][len("padlock-emu: "):]


@pytest.mark.parametrize("kwargs, options, error", BAD,
                         ids=[" ".join(o) for _, o, _ in BAD])
def test_python_raises_the_clis_message(kwargs, options, error):
    if not pe.features():
        pytest.skip("this padlock_emu was built without the emulator")
    message = cli_message(options)
    with pytest.raises(error) as e:
        pe.run([pe.guest_program("demo")], **kwargs)
    assert str(e.value) == message


def test_good_values_still_run():
    """The checks refuse only what the CLI refuses: 1 MHz with interrupts off, a seed."""
    r = pe.run([pe.guest_program("demo")], mhz=1, irq_hz=0, seed=7)
    assert r.exit_code == 0 and r.stats.mhz == 1
