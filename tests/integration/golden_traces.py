"""Golden traces: record the guest programs' --trace files in a reproducible way, and
compare them with tests/golden/ (traces/README.md).

A guest's addresses depend on what the C library sees at start-up: argv, the environment
and the length of /proc/self/exe all move the stack and the heap. So every run here uses
the same view on every machine: an empty environment, the program copied into a fresh
sysroot and started as /guest/<file> (padlock-emu -L makes that its argv[0],
AT_EXECFN and /proc/self/exe), input files with fixed names and contents in the working
directory, stdin from /dev/null and stdout into a pipe.

Used by tests/integration/test_trace_golden.py and, to regenerate the files,
    scripts/update_golden_traces.sh   (python3 tests/integration/golden_traces.py --update)
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO / "tests" / "golden"
RUNS_FILE = GOLDEN_DIR / "runs.txt"


@dataclass(frozen=True)
class GoldenRun:
    name: str
    guest: str
    arch: str
    cpu: str
    options: tuple[str, ...]
    args: tuple[str, ...]

    @property
    def golden(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.jsonl"

    def program(self) -> str:
        return f"guest_{self.guest}_{self.arch}"


def read_runs(path: Path = RUNS_FILE) -> list[GoldenRun]:
    runs = []
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if len(f) < 5:
            raise ValueError(f"{path}:{lineno}: expected NAME GUEST ARCH CPU OPTIONS ARGS...")
        options = () if f[4] == "-" else tuple(o for o in f[4].split(",") if o)
        runs.append(GoldenRun(f[0], f[1], f[2], f[3], options, tuple(f[5:])))
    names = [r.name for r in runs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"{path}: duplicate names {sorted(dup)}")
    return runs


def _pattern(n: int) -> bytes:
    """n bytes from SHA-256 in counter mode: the same on every machine and Python."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(counter.to_bytes(8, "little")).digest()
        counter += 1
    return bytes(out[:n])


# The input files runs may name (FIPS 180-2 examples, edge sizes, a larger file).
INPUTS = {
    "abc.txt": b"abc",
    "fips448.txt": b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
    "empty.bin": b"",
    "zeros5000.bin": bytes(5000),
    "pattern100003.bin": _pattern(100003),
}


def record(run: GoldenRun, emulator: Path, guest_dir: Path, out: Path,
           timeout: float = 600) -> subprocess.CompletedProcess:
    """Runs `run` under `emulator` with --trace `out`. The guest's exit status is not
    checked (some runs end by a signal on purpose); the trace's end record holds it."""
    binary = guest_dir / run.program()
    if not binary.is_file():
        raise FileNotFoundError(f"{binary} (build target padlock_guests)")
    with tempfile.TemporaryDirectory(prefix="padlock-golden-") as tmp:
        root = Path(tmp) / "root"
        (root / "guest").mkdir(parents=True)
        shutil.copy2(binary, root / "guest" / run.program())
        work = Path(tmp) / "work"
        work.mkdir()
        for name, data in INPUTS.items():
            (work / name).write_bytes(data)
        cmd = [str(emulator), "run", "-L", str(root), "--cpu", run.cpu, *run.options,
               "--trace", str(out), f"/guest/{run.program()}", *run.args]
        proc = subprocess.run(cmd, cwd=work, env={}, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout)
    if not out.is_file() or '"type":"end"' not in out.read_text().splitlines()[-1]:
        raise RuntimeError(f"{' '.join(cmd)}: no complete trace (exit {proc.returncode})\n"
                           f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return proc


def main(argv: list[str] | None = None) -> int:
    from guestrun import find_emulator, find_guest_dir  # noqa: E402 (same directory)

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite tests/golden/*.jsonl")
    ap.add_argument("--emulator", type=Path, default=None)
    ap.add_argument("--guests", type=Path, default=None, help="<build>/tests/guest")
    ap.add_argument("names", nargs="*", help="only these runs (default: all)")
    a = ap.parse_args(argv)
    emulator = a.emulator or find_emulator()
    guests = a.guests or find_guest_dir()
    if emulator is None or guests is None:
        print("golden_traces: padlock-emu or the guest programs not found "
              "(PADLOCK_EMU_BIN, PADLOCK_GUEST_DIR)", file=sys.stderr)
        return 2
    runs = read_runs()
    if a.names:
        unknown = set(a.names) - {r.name for r in runs}
        if unknown:
            print(f"golden_traces: unknown runs {sorted(unknown)}", file=sys.stderr)
            return 2
        runs = [r for r in runs if r.name in a.names]
    status = 0
    for run in runs:
        target = run.golden if a.update else Path(tempfile.mkdtemp()) / f"{run.name}.jsonl"
        record(run, emulator, guests, target)
        if a.update:
            print(f"wrote {target.relative_to(REPO)}")
            continue
        diff = subprocess.run([str(emulator), "trace", "diff", str(run.golden), str(target)],
                              capture_output=True, text=True)
        print(f"{run.name}: {'same' if diff.returncode == 0 else 'DIFFERENT'}")
        if diff.returncode != 0:
            print(diff.stdout + diff.stderr)
            status = 1
    if a.update:
        known = {r.golden.name for r in read_runs()}
        for stale in sorted(GOLDEN_DIR.glob("*.jsonl")):
            if stale.name not in known:
                print(f"note: {stale.relative_to(REPO)} is not in runs.txt (delete it?)")
    return status


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
