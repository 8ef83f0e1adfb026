"""The ``padlock-emu`` console script: runs the C++ CLI installed inside the package.

The wheel installs the emulator binary as ``padlock_emu/bin/padlock-emu`` (with its
libcapstone in ``padlock_emu/lib``); in a build tree ``padlock_emu/bin/padlock-emu`` is a
symlink to ``emulator/padlock-emu``. ``PADLOCK_EMU_BIN`` overrides both.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

__all__ = ["binary_path", "main"]


def binary_path() -> Path:
    """Path of the padlock-emu binary this package runs.

    Raises:
        FileNotFoundError: no binary (the package was built without the emulator).
    """
    env = os.environ.get("PADLOCK_EMU_BIN")
    if env:
        path = Path(env)
        if not path.is_file():
            raise FileNotFoundError(f"PADLOCK_EMU_BIN={env} does not exist")
        return path
    path = Path(os.path.abspath(__file__)).parent / "bin" / "padlock-emu"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist: this padlock_emu was built without the emulator "
            "(PADLOCK_BUILD_EMULATOR=OFF); set PADLOCK_EMU_BIN to a padlock-emu binary"
        )
    return path


def main(argv: Optional[List[str]] = None) -> int:
    """Replace this process with ``padlock-emu`` and the given arguments (default sys.argv[1:])."""
    args = sys.argv[1:] if argv is None else argv
    try:
        path = binary_path()
    except FileNotFoundError as e:
        print(f"padlock-emu: {e}", file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(str(path), ["padlock-emu", *args])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
