"""Build the example driver and set up a Machine for it, once per CPU model and mode.

The suite compiles padlock_driver.c with the system gcc, in the forms a driver ships in:

- ``so``: a shared object (``gcc -shared -fPIC -nostdlib``): dynamic relocations
  (RELATIVE, 32/64, GLOB_DAT, JUMP_SLOT);
- ``o``: a relocatable object with the compiler's default code model (position
  independent on most distributions: GOT-relative relocations);
- ``o-nopic``: a relocatable object built with ``-fno-pic`` (absolute relocations);

each for i386 (``-m32``) and x86-64. The ``driver`` fixture loads one of them into a fresh
:class:`padlock_emu.Machine` of every CPU model (x86-64 only on models with long mode),
provides the driver's imports (memcpy, drv_warn, rng_wait as Python stubs; drv_max_blocks
as guest memory) and returns a :class:`Driver` with C-like helpers.

Run it with ``python -m pytest docs/examples/driver`` (with ``PADLOCK_BUILD_DIR`` pointing
at a build tree, or with the package installed); ``tests/python/test_examples.py`` runs it
in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "padlock_driver.c"

_build = os.environ.get("PADLOCK_BUILD_DIR")
if _build:
    sys.path.insert(0, str(Path(_build).resolve() / "python"))

import padlock_emu as pe  # noqa: E402
from padlock_emu.pytest_plugin import (  # noqa: E402,F401
    padlock_machine,
    padlock_model,
    pytest_configure,
    pytest_generate_tests as _padlock_generate_tests,
)

KINDS = {
    "so": ["-shared", "-fPIC", "-nostdlib"],
    "o": ["-c"],
    "o-nopic": ["-c", "-fno-pic"],
}
CFLAGS = ["-O2", "-ffreestanding", "-Wall", "-Wextra", "-Werror"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    _padlock_generate_tests(metafunc)
    if "driver_kind" in metafunc.fixturenames:
        metafunc.parametrize("driver_kind", list(KINDS))


@pytest.fixture(scope="session")
def driver_builds(tmp_path_factory: pytest.TempPathFactory) -> Dict[Tuple[str, int], Path]:
    """gcc's outputs by (kind, bits); a missing toolchain leaves a skip reason instead."""
    gcc = shutil.which("gcc")
    out: Dict[Tuple[str, int], Path] = {}
    if gcc is None:
        return out
    d = tmp_path_factory.mktemp("driver")
    for bits in (32, 64):
        for kind, flags in KINDS.items():
            path = d / f"padlock_driver_{bits}_{kind}{'.so' if kind == 'so' else '.o'}"
            cmd = [gcc, f"-m{bits}", *CFLAGS, *flags, "-o", str(path), str(SOURCE)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                if bits == 32 and "gnu/stubs-32.h" in r.stderr + r.stdout:
                    continue  # no i386 headers (gcc-multilib): those tests skip
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
            out[(kind, bits)] = path
    return out


@dataclass
class Driver:
    """A loaded padlock_driver with C-like helpers around Machine.call."""

    m: pe.Machine
    obj: pe.LoadedObject
    kind: str
    max_blocks: int  # address of drv_max_blocks
    warnings: List[Tuple[bytes, int]] = field(default_factory=list)
    waits: List[int] = field(default_factory=list)
    wait_cycles: int = 20_000  # how far rng_wait moves the virtual clock

    CTX_SIZE = 1024

    def new_ctx(self) -> int:
        return self.m.alloc(self.CTX_SIZE)

    def set_key(self, ctx: int, key: bytes) -> int:
        k = self.m.alloc(max(len(key), 1), data=key)
        return int(self.m.call("aes_set_key", ctx, k, len(key), ret="int"))

    def set_iv(self, ctx: int, iv: bytes) -> None:
        self.m.call("aes_set_iv", ctx, self.m.alloc(16, data=iv), ret="void")

    def crypt(self, fn: str, ctx: int, data: bytes, *, misalign: int = 0) -> bytes:
        src = self.m.alloc(len(data) + 16, data=b"", misalign=misalign)
        self.m.write(src, data)
        dst = self.m.alloc(len(data) + 16)
        rc = self.m.call(fn, ctx, src, dst, len(data), ret="int")
        assert rc == 0, f"{fn} returned {rc}"
        return self.m.read(dst, len(data))

    def sha256(self, data: bytes) -> bytes:
        src = self.m.alloc(max(len(data), 1), data=data)
        out = self.m.alloc(32)
        assert self.m.call("sha256_digest", src, len(data), out, ret="int") == 0
        return self.m.read(out, 32)

    def harvest(self, n: int, quality: int = 0, max_waits: int = 100) -> Tuple[int, bytes]:
        out = self.m.alloc(n + 8)
        r = int(self.m.call("rng_harvest", out, n, quality, max_waits, ret="long"))
        return r, self.m.read(out, n)

    def set_max_blocks(self, n: int) -> None:
        self.m.write_u32(self.max_blocks, n)


@pytest.fixture
def driver(padlock_machine: pe.Machine, padlock_bits: int, driver_kind: str,
           driver_builds) -> Driver:
    m = padlock_machine
    assert m.bits == padlock_bits
    path = driver_builds.get((driver_kind, m.bits))
    if path is None:
        pytest.skip(f"gcc cannot build {m.bits}-bit code here")
    max_blocks = m.alloc(4)
    m.define("drv_max_blocks", max_blocks)
    m.stub_libc()
    obj = m.load(path)
    d = Driver(m, obj, driver_kind, max_blocks)

    def drv_warn(machine: pe.Machine, message: int, value: int) -> None:
        d.warnings.append((machine.read_cstring(message), value))

    def rng_wait(machine: pe.Machine, waits: int) -> None:
        # A sleep: the RNG keeps accumulating bits while virtual time passes (§2.3).
        d.waits.append(waits)
        machine.advance(d.wait_cycles)

    m.stub("drv_warn", drv_warn)
    m.stub("rng_wait", rng_wait)
    return d
