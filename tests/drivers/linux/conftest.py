"""pytest set-up for the Linux driver suite: the padlock_emu package from PADLOCK_BUILD_DIR
(as tests/python/conftest.py), the driver sources from fetch.sh's cache (tests skip with the
command to run when it is missing), the objects built once per session."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_build = os.environ.get("PADLOCK_BUILD_DIR")
if _build:
    sys.path.insert(0, str(Path(_build).resolve() / "python"))
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parents[1] / "integration"))  # aes_ref
sys.path.append(str(HERE.parents[1] / "python"))  # _cbuild

import kbuild  # noqa: E402


@pytest.fixture(scope="session")
def linux_src() -> Path:
    src = kbuild.source_dir()
    if src is None:
        reason = (f"no Linux 6.1 driver sources in {kbuild.cache_dir()}: run "
                  "tests/drivers/linux/fetch.sh")
        if os.environ.get("PADLOCK_REQUIRE_REAL_CLIENTS") == "1":  # scripts/test.sh (CI)
            pytest.fail(reason)
        pytest.skip(reason)
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    return src


@pytest.fixture(scope="session")
def objdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("linux-objects")
