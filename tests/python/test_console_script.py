"""The padlock-emu console script (padlock_emu.cli)."""

import os
import subprocess
import sys

import pytest

import padlock_emu as pe
from padlock_emu import cli


def test_missing_binary_is_a_clear_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PADLOCK_EMU_BIN", str(tmp_path / "nope"))
    assert cli.main(["cpus"]) == 127
    assert "does not exist" in capsys.readouterr().err


def test_cli_runs_the_packaged_binary():
    try:
        path = cli.binary_path()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    assert os.access(path, os.X_OK)
    # The same padlock_emu this test imported (build tree or installed package).
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(pe.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [pkg_parent, env.get("PYTHONPATH")]))
    env.pop("PADLOCK_EMU_BIN", None)
    out = subprocess.run(
        [sys.executable, "-m", "padlock_emu.cli", "cpus"], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 0, out.stderr
    for cpu in pe.cpus():
        assert cpu.name in out.stdout
