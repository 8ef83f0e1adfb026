"""Installed means working (docs/system.md, "Installed"; docs/python.md, "Installing"):
`cmake --install` into a prefix, and `pip install .` into a fresh venv, give a padlock-emu
whose subcommands work from the install alone. The checks run in a mount namespace where
the source tree and the build tree are empty (`unshare -m` and a tmpfs over each), from a
folder outside them, so that a path into either, compiled in, fails here.

The venv's installs build the whole project (minutes): they run with PADLOCK_TEST_PIP=1,
which scripts/test.sh sets.
The real boot needs the cached QEMU: it skips without it, except under
PADLOCK_REQUIRE_SYSTEM=1 (scripts/test.sh), where it fails."""

from __future__ import annotations

import os
import resource
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README_EXAMPLE = ('import padlock_emu as pe\n'
                  'r = pe.run([pe.guest_program("demo")], cpu="esther")\n'
                  'print(r.exit_code, r.stdout.decode().splitlines()[-1])\n')


def build_dir() -> Path:
    build = os.environ.get("PADLOCK_BUILD_DIR")
    if not build or not (Path(build) / "CMakeCache.txt").is_file():
        pytest.skip("needs a configured build tree: set PADLOCK_BUILD_DIR")
    return Path(build).resolve()


def hidden(cmd: list[str], cwd: Path, env: dict | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """`cmd` with the source and build trees hidden under empty tmpfs mounts."""
    # A build tree inside the source tree is hidden with it.
    trees = {REPO} | ({build_dir()} if not build_dir().is_relative_to(REPO) else set())
    mounts = " && ".join(f"mount -t tmpfs none {shlex.quote(str(d))}" for d in sorted(trees))
    script = f'{mounts} && cd {shlex.quote(str(cwd))} && exec "$@"'
    # An install runs without the test suite's pointer at the build tree's binary (the
    # console script would honour it: docs/python.md).
    env = {k: v for k, v in (os.environ if env is None else env).items()
           if k != "PADLOCK_EMU_BIN"}
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                        *map(str, cmd)], capture_output=True, text=True, env=env,
                       timeout=timeout)
    if "unshare:" in r.stderr and "Operation not permitted" in r.stderr:
        pytest.skip("hiding the trees needs unshare -m (root)")
    return r


@pytest.fixture(scope="module")
def work(tmp_path_factory, guest_dir) -> Path:
    """A folder outside the trees, with the demo guest in it."""
    d = tmp_path_factory.mktemp("outside")
    shutil.copy(guest_dir / "guest_demo_i386", d)
    return d


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    build = build_dir()
    d = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--build", str(build), "--target", "padlock-emu", "padlock_system",
                    "padlock_manpage"], check=True, capture_output=True)
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(d)], check=True,
                   capture_output=True)
    return d


# A warm `pip install .` (docs/python.md, "Installing"): the Unicorn and QEMU caches and
# ccache hold what an earlier install of the same sources built. Its CPU time (user and
# system of pip and everything it ran) is held to 3 minutes of the two cores CI has, a
# figure that does not depend on what else the machine runs.
WARM_INSTALL_CPU_S = 2 * 180


def pip_install(d: Path) -> tuple[float, float]:
    """A fresh venv at d with this tree installed: (wall seconds, CPU seconds)."""
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    r = subprocess.run([str(d / "bin" / "pip"), "install", "-q", str(REPO)],
                       capture_output=True, text=True)
    wall = time.monotonic() - start
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.returncode == 0, r.stderr[-3000:]
    return wall, (done.ru_utime + done.ru_stime) - (used.ru_utime + used.ru_stime)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """The second of two installs into fresh venvs: the first fills the caches."""
    if os.environ.get("PADLOCK_TEST_PIP") != "1":
        pytest.skip("pip install . builds the whole project: set PADLOCK_TEST_PIP=1")
    cold = pip_install(tmp_path_factory.mktemp("venv-first"))
    d = tmp_path_factory.mktemp("venv")
    warm = pip_install(d)
    print(f"pip install .: first {cold[0]:.0f} s ({cold[1]:.0f} s CPU), "
          f"again {warm[0]:.0f} s ({warm[1]:.0f} s CPU)")
    assert warm[1] <= WARM_INSTALL_CPU_S, (cold, warm)
    return d


def stand_in_qemu(tmp: Path) -> dict:
    """PADLOCK_QEMU_DIR with a qemu-system-i386 that prints the library it was given."""
    qemu = tmp / "qemu" / "bin" / "qemu-system-i386"
    qemu.parent.mkdir(parents=True, exist_ok=True)
    qemu.write_text('#!/bin/sh\necho "PADLOCK-LIB $PADLOCK_SYSTEM_LIB"\n')
    qemu.chmod(0o755)
    env = dict(os.environ, PADLOCK_QEMU_DIR=str(tmp / "qemu"))
    env.pop("PADLOCK_SYSTEM_LIB", None)
    return env


def check_install(exe: Path, lib: Path, work: Path) -> None:
    r = hidden([exe, "run", "--cpu", "esther", "--trace", "t.jsonl", "guest_demo_i386"], work)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "all checks passed", r.stderr
    r = hidden([exe, "trace", "summary", "t.jsonl"], work)
    assert r.returncode == 0 and "REP XCRYPTECB" in r.stdout, r.stderr
    r = hidden([exe, "cpus"], work)
    assert r.returncode == 0 and "esther-c5j" in r.stdout, r.stderr
    r = hidden([exe, "system", "--kernel", "k"], work, env=stand_in_qemu(work))
    assert r.returncode == 0 and r.stdout.startswith("PADLOCK-LIB "), r.stdout + r.stderr
    assert Path(r.stdout.split()[1]).resolve() == lib.resolve(), r.stdout


def boot(exe: Path, work: Path) -> None:
    """The README's system command from the install, the trees hidden."""
    r = hidden([exe, "system", "--debian-kernel", "i386", "--cpu", "esther"], work, timeout=600)
    if "no QEMU at" in r.stderr and os.environ.get("PADLOCK_REQUIRE_SYSTEM") != "1":
        pytest.skip("system mode's QEMU is not built (target padlock-qemu)")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert "PADLOCK-SELFTEST cbc-aes-padlock cbc(aes) passed" in lines, r.stdout
    assert "PADLOCK-SELFTEST sha256-padlock sha256 passed" in lines, r.stdout
    assert lines[-1] == "PADLOCK-DONE"


def test_prefix_install_works_alone(prefix, work):
    check_install(prefix / "bin" / "padlock-emu", prefix / "lib" / "libpadlock-system.so", work)


def test_prefix_install_without_its_library_says_so(prefix, work, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(prefix, broken, symlinks=True)
    (broken / "lib" / "libpadlock-system.so").unlink()
    r = hidden([broken / "bin" / "padlock-emu", "system", "--kernel", "k"], work,
               env=stand_in_qemu(tmp_path))
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith("padlock-emu: system: no libpadlock-system.so at "
                               f"{broken}/bin/../lib/libpadlock-system.so or "), r.stderr
    assert r.stderr.count("\n") == 1 and "--target padlock_system" in r.stderr


def test_prefix_install_boots_debians_kernel(prefix, work):
    boot(prefix / "bin" / "padlock-emu", work)


def test_venv_install_works_alone(venv, work):
    site = next((venv / "lib").glob("python3*/site-packages/padlock_emu"))
    check_install(venv / "bin" / "padlock-emu", site / "lib" / "libpadlock-system.so", work)
    r = hidden([venv / "bin" / "python", "-c", README_EXAMPLE], work)
    assert r.returncode == 0 and r.stdout == "0 all checks passed\n", r.stderr


def test_venv_install_boots_debians_kernel(venv, work):
    boot(venv / "bin" / "padlock-emu", work)
