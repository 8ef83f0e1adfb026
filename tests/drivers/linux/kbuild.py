"""Builds the Linux 6.1 PadLock drivers, unmodified, as relocatable objects against our
shim (shim/kernel_shim.h, kernel_shim.c), for i386 and x86-64. The driver sources come
from fetch.sh's cache; each kernel header a driver includes is a generated one-line file
that includes the shim."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
GUEST_INCLUDE = HERE.parents[1] / "guest"
DRIVERS = {"aes": "drivers/crypto/padlock-aes.c", "sha": "drivers/crypto/padlock-sha.c",
           "rng": "drivers/char/hw_random/via-rng.c"}


def cache_dir() -> Path:
    env = os.environ.get("PADLOCK_LINUX_CACHE")
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return Path(env) if env else base / "padlock-emu" / "linux-6.1"


def source_dir() -> Path | None:
    src = cache_dir() / "src"
    ok = all((src / f).is_file() for f in [*DRIVERS.values(), "crypto/testmgr.h"])
    return src if ok else None


def _flags(bits: int) -> list[str]:
    common = ["-O2", "-g", "-c", "-fno-pic", "-fno-pie", "-ffreestanding", "-fno-builtin",
              "-fno-stack-protector", "-fno-tree-loop-distribute-patterns",
              "-fno-asynchronous-unwind-tables", "-std=gnu11", "-w"]
    if bits == 64:
        return ["-m64", "-mcmodel=small", "-mno-red-zone", "-DCONFIG_64BIT", "-DCONFIG_X86_64",
                *common]
    return ["-m32", "-march=i686", *common]


def build(driver: str, bits: int, out_dir: Path) -> tuple[Path, Path]:
    """(driver object, shim object) for `bits`; compiled once per content into out_dir."""
    gcc = shutil.which("gcc")
    src = source_dir()
    if gcc is None or src is None:
        raise FileNotFoundError("gcc or the driver sources (run tests/drivers/linux/fetch.sh)")
    stubs = out_dir / "include"
    for name in (HERE / "shim" / "headers.txt").read_text().split():
        path = stubs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('#include "kernel_shim.h"\n')
    inc = ["-I", str(src / "include"), "-I", str(stubs), "-I", str(HERE / "shim"),
           "-I", str(GUEST_INCLUDE)]
    outs = []
    for name, c_file in ((driver, src / DRIVERS[driver]), ("shim", HERE / "shim" / "kernel_shim.c")):
        key = hashlib.sha256(c_file.read_bytes() + (HERE / "shim" / "kernel_shim.h").read_bytes()
                             + str(bits).encode()).hexdigest()[:12]
        out = out_dir / f"{name}{bits}-{key}.o"
        if not out.exists():
            subprocess.run([gcc, *_flags(bits), *inc, "-o", str(out), str(c_file)], check=True,
                           capture_output=True, text=True)
        outs.append(out)
    return outs[0], outs[1]
