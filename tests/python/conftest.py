"""pytest set-up for the padlock_emu tests.

The package comes from the build tree when PADLOCK_BUILD_DIR is set (its python/ folder
holds padlock_emu/ with _core*.so), otherwise from the installed package. The
padlock_emu.pytest_plugin hooks and fixtures (padlock_cpu, padlock_machine, padlock_model,
@pytest.mark.padlock_units, @pytest.mark.padlock_bits) are imported here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_build = os.environ.get("PADLOCK_BUILD_DIR")
if _build:
    _pkg = Path(_build).resolve() / "python"
    if not (_pkg / "padlock_emu").is_dir():
        raise RuntimeError(
            f"PADLOCK_BUILD_DIR={_build}: no python/padlock_emu there; configure with "
            "-DPADLOCK_BUILD_PYTHON=ON and build the padlock_py_core target"
        )
    sys.path.insert(0, str(_pkg))

# The test-side AES reference is shared with the integration tests (tests/integration/aes_ref.py).
sys.path.append(str(Path(__file__).resolve().parents[1] / "integration"))

import padlock_emu  # noqa: E402
from padlock_emu.pytest_plugin import (  # noqa: E402,F401
    padlock_machine,
    padlock_model,
    pytest_configure,
    pytest_generate_tests,
)


def pytest_report_header(config):  # type: ignore[no-untyped-def]
    return f"padlock_emu {padlock_emu.__version__} from {Path(padlock_emu.__file__).parent}"
