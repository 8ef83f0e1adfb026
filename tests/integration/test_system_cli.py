"""`padlock-emu system` without a real boot (docs/system.md, "Output" and "Installed"):
a shell script stands in for QEMU (PADLOCK_QEMU_DIR), printing what SeaBIOS and the test
init print, so that the console's filtering, the missing pieces and the signals are
checked in a second. test_system_boot.py boots the real kernels."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

# SeaBIOS's first bytes on the serial console: ESC c (reset the terminal) and ESC [?7l
# (line wrap off), as a boot log shows them; then the kernel and the test init. The init's
# first line once followed "Booting from ROM.." with no line end: the kernel's reset of the
# UART had dropped the rest of SeaBIOS's line (a nano boot of 6.1.0-50-amd64 under load).
BIOS = r"\033c\033[?7l\033[2J\033[0mSeaBIOS (version 1.16.2-debian-1.16.2-1)\r\n"
CONSOLE = (BIOS + r"[    0.000000] Linux version 6.1.0\r\n"
           r"Booting from ROM..PADLOCK-KERNEL 6.1.0-50-686\r\n"
           r"PADLOCK-CPU  VIA Esther processor 1600MHz\r\n"
           r"[    2.5] alg: skcipher: ecb-aes-padlock-broken encryption test failed\r\n"
           r"AFALG cbc-aes cbc-aes-padlock ok\r\n"
           r"some other line\r\n")
SENT = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stand_in(tmp_path: Path, body: str, binary: str = "qemu-system-i386") -> dict:
    """PADLOCK_QEMU_DIR with a QEMU (qemu-system-i386 unless named) that runs `body` (sh)."""
    qemu = tmp_path / "qemu" / "bin" / binary
    qemu.parent.mkdir(parents=True)
    qemu.write_text("#!/bin/sh\n" + body + "\n")
    qemu.chmod(0o755)
    env = dict(os.environ, PADLOCK_QEMU_DIR=str(tmp_path / "qemu"))
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env


def system(emulator_path, env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(emulator_path), "system", "--kernel", "k", *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_result_lines_only_and_no_escape_codes(emulator_path, tmp_path):
    env = stand_in(tmp_path, f"printf '{CONSOLE}PADLOCK-DONE\\r\\n'")
    r = system(emulator_path, env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "PADLOCK-KERNEL 6.1.0-50-686",
        "PADLOCK-CPU  VIA Esther processor 1600MHz",
        "[    2.5] alg: skcipher: ecb-aes-padlock-broken encryption test failed",
        "AFALG cbc-aes cbc-aes-padlock ok",
        "PADLOCK-DONE"]
    assert "\033" not in r.stdout + r.stderr


def test_console_shows_everything_but_the_escape_codes(emulator_path, tmp_path):
    env = stand_in(tmp_path, f"printf '{CONSOLE}'")
    r = system(emulator_path, env, "--console")
    assert r.returncode == 0, r.stderr
    assert "\033" not in r.stdout
    lines = r.stdout.replace("\r", "").splitlines()
    assert lines[0] == "SeaBIOS (version 1.16.2-debian-1.16.2-1)"
    assert "some other line" in lines and "[    0.000000] Linux version 6.1.0" in lines


@pytest.mark.parametrize("body, why", [
    ("printf 'Kernel panic - not syncing: VFS\\r\\n'; exit 0", "no result lines"),
    (f"printf '{CONSOLE}'; exit 3", "QEMU exited with status 3"),
])
def test_a_failed_boot_shows_the_consoles_tail(emulator_path, tmp_path, body, why):
    env = stand_in(tmp_path, body)
    r = system(emulator_path, env)
    assert r.returncode == (3 if "3" in why else 1), r.stderr
    assert why in r.stderr
    assert "\033" not in r.stderr
    assert ("Kernel panic" if "panic" in body else "some other line") in r.stderr


def wait_started(proc: subprocess.Popen, marker: Path) -> None:
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)


@pytest.mark.parametrize("stubborn", [False, True], ids=["qemu-ends", "qemu-ignores"])
@pytest.mark.parametrize("sig", SENT, ids=lambda s: s.name)
def test_a_signal_ends_a_boot_within_a_second(emulator_path, tmp_path, sig, stubborn):
    """QEMU gets the signal (its handler shuts down, and the models' library writes its
    outputs at exit); one that does not end in 0.7 s is killed. padlock-emu then ends by
    the same signal, as `run` does, with the result lines it read on stdout."""
    marker = tmp_path / "started"
    trap = "trap '' INT TERM HUP" if stubborn else "trap 'echo PADLOCK-STOPPED; exit 0' INT TERM HUP"
    env = stand_in(tmp_path, f"{trap}\nprintf 'PADLOCK-CPU x\\r\\n'; touch {marker}\n"
                             "while :; do sleep 0.05; done")
    proc = subprocess.Popen([str(emulator_path), "system", "--kernel", "k"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in SENT])
    wait_started(proc, marker)
    start = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    seconds = time.monotonic() - start
    assert seconds < 1.0, seconds
    assert proc.returncode == -sig, err
    assert out.splitlines()[0] == "PADLOCK-CPU x"
    assert ("PADLOCK-STOPPED" in out) == (not stubborn), out


def test_missing_library_is_one_line_and_status_2(emulator_path, tmp_path):
    env = stand_in(tmp_path, "echo QEMU-RAN")
    env["PADLOCK_SYSTEM_LIB"] = str(tmp_path / "nowhere" / "libpadlock-system.so")
    r = system(emulator_path, env)
    assert r.returncode == 2 and "QEMU-RAN" not in r.stdout
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("padlock-emu: system: cannot load the models' library "
                               f"{tmp_path}/nowhere/libpadlock-system.so: "), r.stderr


def test_missing_qemu_is_one_line_and_status_2(emulator_path, tmp_path):
    env = dict(os.environ, PADLOCK_QEMU_DIR=str(tmp_path))
    r = system(emulator_path, env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"no QEMU at {tmp_path}/bin/qemu-system-i386" in r.stderr
    assert "--target padlock-qemu" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--memory", "lots"], "system: invalid --memory 'lots': expected megabytes of guest RAM"),
    (["--memory", "8"], "system: invalid --memory '8'"),
    (["--cpu", "pentium"], "unknown CPU model 'pentium'; known: nehemiah-c5xl, "),
])
def test_system_options_share_runs_checks(emulator_path, args, message):
    """--cpu has run's message (emulator/options/option_checks.hpp); --memory is checked
    before QEMU sees it."""
    r = subprocess.run([str(emulator_path), "system", "--kernel", "k", *args],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("padlock-emu: " + message), r.stderr
    run = subprocess.run([str(emulator_path), "run", "--cpu", "pentium", "x"],
                         capture_output=True, text=True)
    if "--cpu" in args:
        assert run.stderr == r.stderr


def test_help_names_every_pinned_suite_and_the_default(emulator_path):
    """--debian-suite's help lists the suites emulator/system/debian-kernels.txt pins, each
    with its kernel, and bookworm as the default (docs/system.md, "Debian's suites")."""
    pins = Path(__file__).resolve().parents[2] / "emulator/system/debian-kernels.txt"
    suites = {line.split()[0] for line in pins.read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    r = subprocess.run([str(emulator_path), "system", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())  # the list wraps across lines
    assert "bookworm (default;" in text
    for suite in suites:
        assert f"{suite} (" in text, suite


@pytest.mark.parametrize("args, binary, cpu", [
    ([], "qemu-system-i386", "esther-c5j"),
    (["--x86-64"], "qemu-system-x86_64", "nano"),
    (["--x86-64", "--cpu", "kx-6000"], "qemu-system-x86_64", "kx-6000"),
])
def test_the_default_cpu_follows_the_kernels_width(emulator_path, tmp_path, args, binary, cpu):
    """Without --cpu a 64-bit kernel boots on nano, a 32-bit one on esther (docs/system.md,
    "CPU models")."""
    env = stand_in(tmp_path, 'echo "PADLOCK-ARGS $*"; printf "PADLOCK-DONE\\r\\n"', binary)
    r = system(emulator_path, env, *args)
    line = next(l for l in r.stdout.splitlines() if l.startswith("PADLOCK-ARGS"))
    assert f" -cpu {cpu} " in line + " ", line


@pytest.mark.parametrize("args", [["--x86-64", "--cpu", "esther"],
                                  ["--x86-64", "--cpu", "nehemiah-c5xl"]])
def test_a_64_bit_kernel_on_a_32_bit_cpu_is_one_line(emulator_path, tmp_path, args):
    """Such a kernel stops at "This kernel requires an x86-64 CPU" and halts: refused before
    QEMU starts, not left to hang."""
    env = stand_in(tmp_path, "echo QEMU-RAN", "qemu-system-x86_64")
    r = system(emulator_path, env, *args)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr == (f"padlock-emu: system: --cpu {args[2]} has no long mode and cannot boot "
                        "a 64-bit kernel; choose a model that 'padlock-emu cpus' does not mark "
                        "32-bit\n"), r.stderr
