"""README's first usage command runs exactly as written after `bash scripts/demo.sh`: the
script links the CLI into /usr/local/bin (here PADLOCK_LINK_DIR, a temporary folder on
PATH), and the command, run from the repository's root with nothing else of ours on PATH,
prints what README shows."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from test_docs_commands import matches

REPO = Path(__file__).resolve().parents[2]


def first_usage_session() -> tuple[str, list[str]]:
    text = (REPO / "README.md").read_text()
    usage = text[text.index("## Usage"):]
    block = re.search(r"```\n\$ (padlock-emu [^\n]*)\n(.*?)```", usage, re.S)
    return block[1], block[2].splitlines()


def test_readme_first_command_after_demo(tmp_path):
    build = os.environ.get("PADLOCK_BUILD_DIR")
    if not build or Path(build).resolve() != REPO / "build":
        pytest.skip("README's commands name build/: needs PADLOCK_BUILD_DIR=<repository>/build")
    links = tmp_path / "bin"
    links.mkdir()
    env = dict(os.environ, PADLOCK_LINK_DIR=str(links), BUILD_DIR="build")
    r = subprocess.run(["bash", "scripts/demo.sh"], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"padlock-emu is on PATH: {links}/padlock-emu -> {REPO}/build/emulator/padlock-emu" \
        in r.stdout
    command, expected = first_usage_session()
    assert command == "padlock-emu run --cpu esther build/tests/guest/guest_demo_i386"
    shell = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True, text=True,
                           env={"PATH": f"{links}:/usr/bin:/bin", "LC_ALL": "C"})
    assert shell.returncode == 0, shell.stderr
    assert matches(expected, shell.stdout.splitlines()) is None, shell.stdout
