"""Run whole guest programs: :func:`run` and the reusable :class:`Emulator` behind it.

The program runs in this process under the C++ emulator (``emulator/linux/process.hpp``), the
same code as ``padlock-emu run``: Linux system calls, signals, the chosen VIA chip's CPUID
and PadLock units. Its stdin, stdout and stderr are memory files for the duration of the
run; :class:`Result` returns what it wrote, how it ended and what the PadLock units did.

One run at a time per process: the guest shares this process's descriptor table, and the
run holds the GIL (use processes, e.g. pytest-xdist, for parallel runs).
"""

from __future__ import annotations

import json
import os
import signal as _signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _core
from .cpus import CpuLike, cpu as _find_cpu
from .errors import GuestTimeout, PadlockError
from .stats import PadlockStat, padlock_stats

__all__ = ["run", "Emulator", "Result", "RunStats", "features", "guest_program"]

PathLike = Union[str, "os.PathLike[str]"]
EnvLike = Union[Mapping[str, str], Sequence[str], None]


def features() -> Dict[str, bool]:
    """Which optional run options this build's emulator supports (``irq_hz``, ``trace``,
    ``chrome_trace``, ``profile``, ``sysroot``, ``timing``, ``cache_x86``, ``memory``)."""
    if not getattr(_core, "HAS_EMULATOR", False):
        return {}
    return dict(_core.run_features())


def guest_program(name: str = "demo", arch: str = "i386") -> Path:
    """A guest program of the repository's (tests/guest): ``demo`` (every PadLock unit once,
    checked) or ``sha`` (``sha 1|256 FILE...``), for ``arch`` ``"i386"`` or ``"x86_64"``.

    An installed package ships them in ``padlock_emu/guests/``; a build tree's package
    (``<build>/python/padlock_emu``) finds ``<build>/tests/guest``. Raises FileNotFoundError
    when neither has it (the build could not link static i386 programs: gcc-multilib)."""
    file = f"guest_{name}_{arch}"
    here = Path(__file__).parent
    for d in (here / "guests", here.parent.parent / "tests" / "guest"):
        if (d / file).is_file():
            return d / file
    raise FileNotFoundError(f"{file}: not in {here / 'guests'} (built without gcc-multilib?)")


@dataclass
class RunStats:
    """What a run did.

    ``cycles``: virtual cycles at exit (the clock RDTSC reads); ``instructions``: guest
    instructions counted (all of them with ``icount=True``; 0 without, the default); ``padlock``: PadLock instructions by kind (guide name,
    e.g. ``"REP XSHA1"``) with counts, bytes, cycles, faults, key reloads and interrupts;
    ``padlock_cycles``: their total; ``diagnostics``: undefined cases met, by name;
    ``syscalls``, ``signals_delivered``, ``eflags30_clears``; ``mhz`` the clock used.
    """

    cycles: int
    instructions: int
    padlock_cycles: int
    padlock: Dict[str, PadlockStat]
    diagnostics: Dict[str, int]
    syscalls: int
    signals_delivered: int
    eflags30_clears: int
    mhz: float

    @property
    def seconds(self) -> float:
        """The run's virtual time on the modelled chip."""
        return self.cycles / (self.mhz * 1e6)

    def count(self, kind: str) -> int:
        """Executions of a kind (``"REP XCRYPTCBC"``), 0 if none."""
        s = self.padlock.get(kind)
        return s.count if s else 0


@dataclass
class Result:
    """How a guest program ended and what it did.

    ``exit_code`` is its exit status (None when a signal killed it); ``signal`` the signal
    that killed it (None when it exited); ``returncode`` both in subprocess's convention
    (negative for a signal). ``stdout``/``stderr`` are the bytes it wrote; ``log`` the
    emulator's own messages (the fatal-signal line, diagnostics, strace, stats). ``trace``
    holds the ``--trace`` records (dicts, one per line of the JSON Lines file) when asked.
    ``findings`` holds the PadLock checker's findings (dicts as ``--check-jsonl`` writes
    them, docs/checker.md) when the run had ``check``; ``check_failed`` is True when
    ``check="error"`` and one of them has severity error.
    """

    argv: List[str]
    cpu: str
    exit_code: Optional[int]
    signal: Optional[int]
    stdout: bytes
    stderr: bytes
    log: str
    stats: RunStats
    core: bool = False
    timed_out: bool = False
    trace: Optional[List[Dict[str, Any]]] = None
    profile: Optional[Union[str, Path]] = None
    chrome_trace: Optional[Path] = None
    findings: Optional[List[Dict[str, Any]]] = None
    check_failed: bool = False

    @property
    def returncode(self) -> int:
        return -self.signal if self.signal else int(self.exit_code or 0)

    @property
    def signal_name(self) -> Optional[str]:
        return _signal.Signals(self.signal).name if self.signal else None

    def check(self) -> "Result":
        """Raise :class:`PadlockError` unless the program exited with status 0."""
        if self.returncode != 0:
            how = f"was killed by {self.signal_name}" if self.signal else f"exited with {self.exit_code}"
            raise PadlockError(f"{' '.join(self.argv)} {how} on {self.cpu}\n{self.log}{self.stderr.decode(errors='replace')}")
        return self


def _env_list(env: EnvLike) -> List[str]:
    if env is None:
        return [f"{k}={v}" for k, v in os.environ.items()]
    if isinstance(env, Mapping):
        return [f"{k}={v}" for k, v in env.items()]
    out = [str(e) for e in env]
    for e in out:
        if "=" not in e:
            raise ValueError(f"environment entries are NAME=VALUE, not {e!r}")
    return out


@dataclass
class Emulator:
    """Reusable settings for running guest programs; :meth:`run` runs one.

    Args:
        cpu: CPU model name or alias (default ``"esther"``).
        mhz: core clock in MHz (default: the model's); converts the RNG's bit rates and,
            where the emulator keeps virtual time, the guest's clocks.
        env: the guest's environment: a mapping or ``NAME=VALUE`` strings; None passes
            this process's environment, as the CLI does.
        sysroot: directory where absolute guest paths are looked up first (``-L``).
        seed: RNG seed (XSTORE bits, ``AT_RANDOM``, ``getrandom``); None means 0.
        irq_hz: periodic interrupts per second of virtual time (needs the emulator's
            interrupt model; otherwise NotImplementedError). None: the emulator's default.
        timing: False selects the emulator's fast functional mode (``--timing off``: host
            clocks, no per-block costs); None: the emulator's default.
        errata: apply the model's errata (§6.6).
        icount: count every guest instruction (``stats.instructions``), as the CLI's
            ``--icount``; off by default: counting runs the block hook on every block,
            which made runs twice as slow as the CLI's.
        cache_x86: run ordinary loads and stores through the cache model too (``--cache-x86``).
        memory: ``"direct"`` (default) or ``"tlb"``, as the CLI's ``--memory``.
        strace: log system calls into ``Result.log``.
        timeout: wall-clock seconds before the guest is killed (GuestTimeout).
    """

    cpu: CpuLike = "esther"
    mhz: Optional[float] = None
    env: EnvLike = None
    sysroot: Optional[PathLike] = None
    seed: Optional[int] = None
    irq_hz: Optional[float] = None
    timing: Optional[bool] = None
    errata: bool = True
    icount: bool = False
    strace: bool = False
    timeout: Optional[float] = None
    cache_x86: bool = False
    memory: Optional[str] = None

    def run(
        self,
        argv: Sequence[PathLike],
        *,
        stdin: bytes = b"",
        env: EnvLike = None,
        trace: Union[bool, PathLike, None] = None,
        chrome_trace: Optional[PathLike] = None,
        profile: Union[bool, PathLike, None] = None,
        timeout: Optional[float] = None,
        program: Optional[PathLike] = None,
        check: Union[bool, str, None] = None,
        check_sarif: Optional[PathLike] = None,
        gdb: Optional[int] = None,
    ) -> Result:
        """Run ``argv`` (``argv[0]`` is the program, unless ``program`` names it).

        ``trace=True`` collects the JSON Lines trace (one record per PadLock instruction)
        into ``Result.trace``; a path also keeps the file. ``profile`` is a path for the
        callgrind profile (``True``: ``Result.profile`` holds its text). ``env`` replaces
        the emulator's ``env`` for this run. ``check`` runs the PadLock checker
        (``True`` or ``"warn"``; ``"error"`` also sets ``Result.check_failed`` on an error
        finding, as ``--check=error``): ``Result.findings`` lists the findings, the text
        report is in ``Result.log``, ``check_sarif`` also writes the SARIF 2.1.0 log there.
        ``gdb=PORT`` waits for gdb on 127.0.0.1:PORT before the first instruction
        (``target remote :PORT``; docs/debugging.md).

        Raises:
            LoadError: the program cannot be run (not an ELF file, 64-bit on a 32-bit
                model, a missing interpreter ...).
            GuestTimeout: the timeout passed; its ``result`` holds the output so far.
            NotImplementedError: an option this emulator build does not support.
        """
        if not getattr(_core, "HAS_EMULATOR", False):
            raise NotImplementedError("this padlock_emu was built without the emulator")
        args = [os.fspath(a) for a in argv]
        if not args and program is None:
            raise ValueError("argv is empty: give at least the program")
        prog = os.fspath(program) if program is not None else args[0]
        if gdb == 0 and not isinstance(gdb, bool):
            # The CLI's -g 0 names the port it picked in its log, which a run from Python
            # returns only at the end (Result.log).
            raise ValueError("gdb=0: give the TCP port gdb is to connect to (-g 0 is the CLI's)")
        model = _find_cpu(self.cpu)
        envp = _env_list(env if env is not None else self.env)
        tmp: List[Path] = []

        def out_path(value: Union[bool, PathLike, None], suffix: str) -> str:
            if value is None or value is False:
                return ""
            if value is True:
                fd, name = tempfile.mkstemp(prefix="padlock-emu-", suffix=suffix)
                os.close(fd)
                tmp.append(Path(name))
                return name
            return os.fspath(value)

        trace_file = out_path(trace, ".jsonl")
        chrome_file = out_path(chrome_trace, ".json")
        profile_file = out_path(profile, ".callgrind")
        if check is True or (check is None and check_sarif is not None):
            check = "warn"
        check_mode = check or ""
        if not isinstance(check_mode, str):
            raise TypeError(f"--check takes warn or error, not '{check_mode}'")
        check_file = out_path(bool(check_mode) or None, ".jsonl")
        limit = timeout if timeout is not None else self.timeout
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            raw = _core.run_guest(
                args, prog, model, mhz=self.mhz, envp=envp, stdin=bytes(stdin),
                seed=self.seed, errata=self.errata, strace=self.strace,
                stats=False, icount=self.icount,
                sysroot=os.fspath(self.sysroot) if self.sysroot else "",
                irq_hz=self.irq_hz, trace=trace_file, chrome_trace=chrome_file,
                profile=profile_file, timeout=float(limit or 0.0), timing=self.timing,
                check=check_mode, check_jsonl=check_file,
                check_sarif=os.fspath(check_sarif) if check_sarif is not None else "",
                gdb=gdb,
                cache_x86=self.cache_x86, memory=self.memory or "")
            st = raw["stats"]
            stats = RunStats(
                cycles=raw["cycles"], instructions=st["instructions"],
                padlock_cycles=st["padlock_cycles"], padlock=padlock_stats(st["padlock"]),
                diagnostics=dict(st["diagnostics"]), syscalls=st["syscalls"],
                signals_delivered=st["signals_delivered"],
                eflags30_clears=st["eflags30_clears"], mhz=raw["mhz"])
            result = Result(
                argv=args, cpu=model.name,
                exit_code=raw["exit_code"] if raw["exited"] else None,
                signal=None if raw["exited"] else raw["signal"],
                stdout=raw["stdout"], stderr=raw["stderr"], log=raw["log"], stats=stats,
                core=raw["core"], timed_out=raw["timed_out"], check_failed=raw["check_error"])
            if check_file:
                result.findings = [json.loads(line) for line in
                                   Path(check_file).read_text().splitlines() if line.strip()]
            if trace_file:
                result.trace = _read_trace(Path(trace_file))
            if profile_file:
                text = _read_output(Path(profile_file), "profile")
                result.profile = text if profile is True else Path(profile_file)
            if chrome_file:
                _check_output(Path(chrome_file), "chrome_trace")  # not read: it can be huge
                result.chrome_trace = None if chrome_trace is True else Path(chrome_file)
        finally:
            for p in tmp:
                try:
                    p.unlink()
                except OSError:
                    pass
        if result.timed_out:
            raise GuestTimeout(f"{' '.join(args)} did not finish within {limit} s on {model.name}", result)
        return result


def _check_output(path: Path, what: str) -> None:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise PadlockError(f"the emulator wrote no {what} ({path}: {e.strerror})") from None
    if size == 0:
        raise PadlockError(f"the emulator wrote an empty {what} file ({path})")


def _read_output(path: Path, what: str) -> str:
    _check_output(path, what)
    return path.read_text()


def _read_trace(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in _read_output(path, "trace").splitlines() if line.strip()]


def run(
    argv: Sequence[PathLike],
    cpu: CpuLike = "esther",
    mhz: Optional[float] = None,
    env: EnvLike = None,
    stdin: bytes = b"",
    sysroot: Optional[PathLike] = None,
    seed: Optional[int] = None,
    irq_hz: Optional[float] = None,
    trace: Union[bool, PathLike, None] = None,
    profile: Union[bool, PathLike, None] = None,
    timeout: Optional[float] = None,
    **options: Any,
) -> Result:
    """Run a guest program under the emulator and return its :class:`Result`.

    ``padlock_emu.run(["build/tests/guest/guest_sha_i386", "1", "abc.txt"], cpu="esther")``.
    The keyword arguments are those of :class:`Emulator` and :meth:`Emulator.run`
    (``errata``, ``timing``, ``icount``, ``strace``, ``chrome_trace``, ``program``,
    ``check``, ``check_sarif``, ``gdb``).
    """
    run_kw = {k: options.pop(k)
              for k in ("chrome_trace", "program", "check", "check_sarif", "gdb")
              if k in options}
    emu = Emulator(cpu=cpu, mhz=mhz, env=env, sysroot=sysroot, seed=seed, irq_hz=irq_hz,
                   timeout=timeout, **options)
    return emu.run(argv, stdin=stdin, trace=trace, profile=profile, **run_kw)
