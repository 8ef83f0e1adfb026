"""Compile small C snippets for the harness tests (gcc, i386 and x86-64), cached per content."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Sequence

import pytest

_cache: Dict[str, Path] = {}


def build(tmp_root: Path, source: str, bits: int, flags: Sequence[str], suffix: str) -> Path:
    """``gcc -m<bits> <flags>`` of ``source``; skips the test when gcc cannot target ``bits``."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    key = hashlib.sha256(f"{bits}|{' '.join(flags)}|{source}".encode()).hexdigest()[:16]
    if key in _cache and _cache[key].exists():
        return _cache[key]
    src = tmp_root / f"{key}.c"
    out = tmp_root / f"{key}{suffix}"
    src.write_text(source)
    r = subprocess.run([gcc, f"-m{bits}", *flags, "-o", str(out), str(src)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if "gnu/stubs-32.h" in r.stderr or "cannot find -lc" in r.stderr:
            pytest.skip(f"gcc cannot build {bits}-bit code here")
        raise RuntimeError(f"gcc failed:\n{r.stderr}")
    _cache[key] = out
    return out
