"""docs/python.md: every Python example with an output block prints exactly that output.

Each example runs in a fresh interpreter (``import padlock_emu as pe`` first) in a
directory holding what the page builds: the example driver compiled with the page's gcc
commands, and ``build`` pointing at the build tree (PADLOCK_BUILD_DIR) for the guest
programs. The pytest example (a conftest.py and a test file) runs under pytest -v.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

import padlock_emu as pe

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "python.md"


def blocks() -> List[Tuple[str, str, int]]:
    """(code, expected output, line) for each ```python block followed by an output block."""
    text = DOC.read_text()
    out = []
    for m in re.finditer(r"```python\n((?:(?!```).)*)```\n```\n((?:(?!```).)*)```", text, re.S):
        out.append((m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1))
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pydocs")
    text = DOC.read_text()
    for line in text.splitlines():
        if line.startswith("gcc ") and "docs/examples/driver/padlock_driver.c" in line:
            args = [str(ROOT / a) if a.startswith("docs/") else a for a in shlex.split(line)]
            r = subprocess.run(args, cwd=d, capture_output=True, text=True)
            if r.returncode != 0:
                pytest.skip(f"cannot build the example driver: {r.stderr[-300:]}")
    build = os.environ.get("PADLOCK_BUILD_DIR")
    if build:
        (d / "build").symlink_to(Path(build).resolve())
    return d


def _pythonpath() -> str:
    return os.pathsep.join([str(Path(os.path.abspath(pe.__file__)).parent.parent)] + sys.path)


@pytest.mark.parametrize("code,expected,line",
                         [pytest.param(*b, id=f"line{b[2]}") for b in blocks()])
def test_example_output_is_current(workdir, code, expected, line):
    if "build/tests/guest" in code and not (workdir / "build").exists():
        pytest.skip("needs the guest programs: set PADLOCK_BUILD_DIR")
    env = dict(os.environ, PYTHONPATH=_pythonpath())
    if code.startswith("# conftest.py"):
        pytest.skip("the conftest.py half of the pytest example")
    if code.startswith("# test_"):
        name = code.split()[1]
        conftest = re.search(r"```python\n# conftest.py\n(.*?)```", DOC.read_text(), re.S).group(1)
        (workdir / "conftest.py").write_text(conftest)
        (workdir / name).write_text(code)
        r = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", name],
                           cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
        (workdir / "conftest.py").unlink()
        got = [ln for ln in r.stdout.splitlines() if " PASSED" in ln or " FAILED" in ln]
        want = expected.strip().splitlines()
        assert [g.split()[0] for g in got] == [w.split()[0] for w in want], r.stdout[-3000:]
        assert all(" PASSED" in g for g in got)
        return
    r = subprocess.run([sys.executable, "-c", "import padlock_emu as pe\n" + code], cwd=workdir,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"docs/python.md:{line}: the example failed:\n{r.stderr[-3000:]}"
    assert r.stdout.strip() == expected.strip(), (
        f"docs/python.md:{line}: the example's output changed; it now prints:\n{r.stdout}")


def test_readme_python_example_runs_anywhere(tmp_path):
    """README.md's Python example, run from a directory with no build tree in it: the
    package finds its demo program itself (padlock_emu.guest_program)."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"```python\n((?:(?!```).)*)```\n```\n((?:(?!```).)*)```", text, re.S)
    assert m, "README.md has no Python example with its output"
    try:
        pe.guest_program("demo")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    env = dict(os.environ, PYTHONPATH=_pythonpath())
    r = subprocess.run([sys.executable, "-c", m.group(1)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == m.group(2).strip()
