"""Running a guest with extra `padlock-emu run` options (--trace, --profile,
--chrome-trace ...), for the trace and profile tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

from guestrun import Runner, Target


def run_with(runner: Runner, name: str, target: Target | tuple, args=(), options=(),
             cpu: str | None = None, cwd: Path | None = None, check: bool = True,
             timeout: float = 300) -> subprocess.CompletedProcess:
    arch, default_cpu = (target.arch, target.cpu) if isinstance(target, Target) else target
    cmd = runner.command(name, arch, args, cpu or default_cpu)
    cmd[2:2] = [str(o) for o in options]  # after "padlock-emu run"
    proc = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=cwd,
                          stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)}\n  exit {proc.returncode}\n  stderr: "
                             f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return proc
