"""The keys of the Unicorn and QEMU caches (docs/emulator.md, "Unicorn"; docs/system.md,
"Building QEMU") name the C compiler by its identity and version, never by its path: a
pip build, a clone whose CMake found /usr/bin/cc and one given /usr/bin/gcc share one
build of each, and another compiler gets its own. Each case configures a tree (no build)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def keys(tmp_path: Path, cc: str, cxx: str) -> tuple[str, str]:
    """(Unicorn's key, QEMU's key) as a configure with these compilers prints them."""
    build = tmp_path / Path(cc).name
    r = subprocess.run(["cmake", "-S", str(REPO), "-B", str(build), "-G", "Ninja",
                        f"-DCMAKE_C_COMPILER={cc}", f"-DCMAKE_CXX_COMPILER={cxx}",
                        "-DPADLOCK_BUILD_TESTS=OFF", "-DPADLOCK_BUILD_BENCH=OFF",
                        "-DPADLOCK_BUILD_PYTHON=OFF", "-DPADLOCK_BUILD_GUESTS=OFF"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    unicorn = re.search(r"padlock-emu: Unicorn's cache key ([0-9a-f]{16}) ", r.stdout)
    qemu = re.search(r"padlock-emu: QEMU's cache key ([0-9a-f]{16})$", r.stdout, re.M)
    assert unicorn and qemu, r.stdout
    return unicorn[1], qemu[1]


def test_the_same_compiler_by_three_paths_has_one_key(tmp_path):
    gcc = Path("/usr/bin/x86_64-linux-gnu-gcc-12")
    if not gcc.exists():
        pytest.skip("the key check names Debian 12's GCC 12 by its paths")
    by_cc = keys(tmp_path, "/usr/bin/cc", "/usr/bin/c++")
    by_gcc = keys(tmp_path, "/usr/bin/gcc", "/usr/bin/g++")
    by_triplet = keys(tmp_path, str(gcc), "/usr/bin/x86_64-linux-gnu-g++-12")
    assert by_cc == by_gcc == by_triplet


def test_another_compiler_has_its_own_keys(tmp_path):
    if shutil.which("clang") is None:
        pytest.skip("needs clang (scripts/setup.sh installs it for the fuzz targets)")
    by_gcc = keys(tmp_path, "/usr/bin/gcc", "/usr/bin/g++")
    by_clang = keys(tmp_path, shutil.which("clang"), shutil.which("clang++"))
    assert by_gcc[0] != by_clang[0] and by_gcc[1] != by_clang[1]
