"""The padlock-emu command line (docs/emulator.md): help, version, cpus, option errors, the
errors for programs it cannot run, exit status and death by signal, the environment.

The binary comes from $PADLOCK_EMU_BIN or a build directory (conftest.emulator_path).
Small guests are compiled here with gcc into tmp_path; tests that need a toolchain that
is missing are skipped with the reason."""

from __future__ import annotations

import json
import os
import re
import signal
import struct
import subprocess
from pathlib import Path

import pytest

HELLO = r"""
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
int main(int argc, char **argv) {
  printf("hello\n");
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--env") && i + 1 < argc) {
      const char *v = getenv(argv[++i]);
      printf("%s=%s\n", argv[i], v ? v : "(unset)");
    } else if (!strcmp(argv[i], "--exit") && i + 1 < argc) {
      return atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--segv")) {
      fflush(stdout);
      *(volatile int *)8 = 1;
    } else {
      printf("arg=%s\n", argv[i]);
    }
  }
  return 0;
}
"""


ARGV0 = r"""
#include <stdio.h>
int main(int argc, char **argv) { printf("argv0=%s\n", argv[0]); return 0; }
"""


def run(emu: Path, *args: str, env: dict | None = None, timeout: float = 60):
    full_env = dict(os.environ)
    for k in list(full_env):
        if k.startswith("PADLOCK_EMU_") and k != "PADLOCK_EMU_BIN":
            del full_env[k]
    if env:
        full_env.update(env)
    return subprocess.run([str(emu), *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout)


def compile_c(tmp_path: Path, name: str, source: str, flags: list[str]) -> Path:
    src = tmp_path / f"{name}.c"
    out = tmp_path / name
    src.write_text(source)
    r = subprocess.run(["gcc", *flags, "-o", str(out), str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"gcc {' '.join(flags)} failed: {r.stderr.strip()[:200]}")
    return out


@pytest.fixture
def hello32(tmp_path):
    return compile_c(tmp_path, "hello32", HELLO, ["-m32", "-static", "-O1"])


@pytest.fixture
def hello64(tmp_path):
    return compile_c(tmp_path, "hello64", HELLO, ["-m64", "-static", "-O1"])


def one_line_error(r) -> str:
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("padlock-emu: "), r.stderr
    return lines[0]


# --- help, version, cpus ----------------------------------------------------------------

def test_help(emulator_path):
    r = run(emulator_path, "--help")
    assert r.returncode == 0
    assert "padlock-emu run [OPTIONS] PROGRAM [ARGS...]" in r.stdout
    assert "cpus" in r.stdout


def test_run_help_lists_every_option(emulator_path):
    r = run(emulator_path, "run", "--help")
    assert r.returncode == 0
    for opt in ("--cpu", "--mhz", "--seed", "-E VAR=VALUE", "-U VAR", "--strace", "--stats",
                "--errata", "PADLOCK_EMU_CPU", "PADLOCK_EMU_SEED", "PADLOCK_EMU_MHZ",
                "PADLOCK_EMU_STRACE", "--memory direct|tlb", "PADLOCK_EMU_MEMORY",
                "nehemiah-c5xl", "esther-c5j", "nano"):
        assert opt in r.stdout, opt


def test_version(emulator_path):
    r = run(emulator_path, "--version")
    assert r.returncode == 0
    assert r.stdout.startswith("padlock-emu ")
    # Unicorn built from the pinned sdist with our patch (cmake/PadlockUnicorn.cmake)
    assert "Unicorn 2.1.4 with padlock-emu's patch" in r.stdout


def test_cpus_lists_models_units_and_steppings(emulator_path):
    r = run(emulator_path, "cpus")
    assert r.returncode == 0
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[1:] if line.strip()}
    assert set(rows) == {"nehemiah-c5xl", "nehemiah-c5p", "esther-c5j", "esther-c5j-s9", "nano",
                         "nano-3000", "zx-c", "kx-5000", "kx-6000", "kh-40000", "kx-7000"}
    assert "6/9/3" in rows["nehemiah-c5xl"] and "RNG" in rows["nehemiah-c5xl"]
    assert "ACE" not in rows["nehemiah-c5xl"]  # §1.1: C5XL has the RNG only
    assert "RNG,ACE " in rows["nehemiah-c5p"] + " "
    assert "RNG,ACE2,PHE,PMM" in rows["esther-c5j"]
    assert "CTR errata" in rows["esther-c5j"] and "CTR errata" not in rows["esther-c5j-s9"]
    assert "64-bit" in rows["nano"] and "32-bit" in rows["esther-c5j"]


def test_cpus_verbose_shows_params_with_units_and_sources(emulator_path):
    r = run(emulator_path, "cpus", "--verbose")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    blocks = r.stdout.split("\n\n")[1:]  # after the summary table: the models, x86 costs
    esther = next(b for b in blocks if b.startswith("esther-c5j:")).splitlines()
    rows = {ln.split()[0]: ln.split(None, 3) for ln in esther[2:] if not ln.startswith("  #")}
    # name, value, unit (from the field's type), source
    assert rows["default_mhz"][1:3] == ["1600", "MHz"]
    assert rows["ace.ecb_sse_base[0][0]"][1:3] == ["9", "clocks"]
    assert rows["ace.ecb_sse_base[0][0]"][3].startswith("§3.3")
    assert rows["pmm.k1_min"][1:3] == ["0.56", "ratio"]
    assert rows["rng.raw_one_bias[0]"][2] == "probability"
    assert rows["memory.mem_bytes_per_clock"][2] == "bytes/clock"
    assert rows["ace.prefetch_ecb"][2] == "(setting)"
    # Each field's help text once, on a "#" line before its first element.
    first = lines.index(next(ln for ln in lines if ln.split()[:1] == ["ace.chain_startup[0]"]))
    assert lines[first - 1].startswith("  # SSE start-up clocks")
    assert sum(ln.startswith("  # SSE start-up clocks") for ln in lines) == 11  # once per model
    # The calibrated clocks name their §3.3 table (models/cpus/calibrated.hpp).
    assert rows["ace.chain_per_block[0]"][3] == rows["ace.chain_startup[2]"][3]
    assert "matched to §3.3 \"1.6 GHz Esther with 16-byte aligned buffers\"" in r.stdout
    # x86 costs per core: core figures and the class fallback, with their sources
    assert "Esther (esther-c5j, esther-c5j-s9)" in r.stdout
    assert re.search(r"load-use latency\s+6 clocks\s+CentaurHauls00006A9_C5J_Esther_InstLatX86"
                     r"\.txt:39", r.stdout)
    assert re.search(r"class branch\s+1 clocks\s+choice", r.stdout)


def test_cpus_x86_lists_measured_forms_with_sources(emulator_path):
    r = run(emulator_path, "cpus", "--x86")
    assert r.returncode == 0
    # "ADD [m32], r32  L: 8.9c  T: 5.50c" and "BT r32, r32  T: 12.00c" in the Esther dump
    assert re.search(r"^  ADD m32, r32\s+L\s+8\.9 T\s+5\.5\s+"
                     r"CentaurHauls00006A9_C5J_Esther_InstLatX86\.txt:77$", r.stdout, re.M)
    assert re.search(r"^  BT r32, r32\s+L\s+- T\s+12\s+"
                     r"CentaurHauls00006A9_C5J_Esther_InstLatX86\.txt:148$", r.stdout, re.M)
    assert "ace.ecb_sse_base" not in r.stdout  # --x86 alone: no model constants


# --- usage errors: one line, non-zero status ----------------------------------------------

@pytest.mark.parametrize("args, text", [
    ([], "missing command"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["run"], "missing PROGRAM"),
    (["run", "--bogus", "x"], "unknown option '--bogus'"),
    (["run", "--cpu"], "needs a value"),
    (["run", "--cpu", "pentium", "x"], "unknown CPU model 'pentium'"),
    (["run", "--mhz", "fast", "x"], "invalid clock 'fast'"),
    (["run", "--mhz", "-5", "x"], "invalid clock '-5'"),
    (["run", "--seed", "-1", "x"], "invalid seed '-1'"),
    (["run", "--errata", "maybe", "x"], "--errata expects on or off"),
    (["run", "--memory", "fast", "x"], "--memory expects direct or tlb, got 'fast'"),
    (["run", "-E", "NOEQUALS", "x"], "-E expects VAR=VALUE"),
    (["cpus", "--bogus"], "unknown argument"),
    (["run", "--trace=", "x"], "option '--trace' needs a file name"),
    (["run", "--profile=", "x"], "option '--profile' needs a file name"),
    (["run", "--timing", "off", "--irq-hz", "100", "x"], "--irq-hz has no effect with --timing off"),
    (["run", "--trace", "t", "--trace-max", "1K", "x"], "--trace-max expects a size of at least 4K"),
    (["run", "--trace", "t", "--trace-max", "lots", "x"], "--trace-max expects a size"),
    (["run", "--trace", "t", "--trace-insn", "xcryptgcm", "x"], "unknown kind 'xcryptgcm'"),
    (["run", "--trace", "t", "--trace-range", "0x2000-0x1000", "x"], "is empty"),
    (["run", "--trace", "t", "--trace-window", "1ms", "x"], "--trace-window expects FROM:TO"),
    (["run", "--trace", "t", "--trace-window", "1h:", "x"], "invalid time '1h'"),
    (["run", "--trace-max", "1M", "x"], "give one of them"),
    (["run", "-cpu", "pentium", "x"], "unknown CPU model 'pentium'"),
])
def test_usage_errors(emulator_path, args, text):
    r = run(emulator_path, *args)
    assert r.returncode == 2
    assert text in one_line_error(r)


def test_bad_environment_variable(emulator_path, hello32):
    r = run(emulator_path, "run", str(hello32), env={"PADLOCK_EMU_CPU": "z80"})
    assert r.returncode == 2
    line = one_line_error(r)
    assert "unknown CPU model 'z80'" in line and "PADLOCK_EMU_CPU" in line
    r = run(emulator_path, "run", str(hello32), env={"PADLOCK_EMU_MEMORY": "softmmu"})
    assert r.returncode == 2
    line = one_line_error(r)
    assert "--memory expects direct or tlb, got 'softmmu'" in line
    assert "PADLOCK_EMU_MEMORY" in line


# --- programs that cannot run -----------------------------------------------------------

def test_not_an_elf(emulator_path, tmp_path):
    p = tmp_path / "script.sh"
    p.write_text("#!/bin/sh\necho hi\n")
    p.chmod(0o755)  # executable: the ELF check, not the permission check, refuses it
    r = run(emulator_path, "run", str(p))
    assert r.returncode == 1
    assert "not an ELF file" in one_line_error(r)


def test_missing_program(emulator_path, tmp_path):
    r = run(emulator_path, "run", str(tmp_path / "nope"))
    assert r.returncode == 1
    assert "No such file or directory" in one_line_error(r)


def test_truncated(emulator_path, hello32, tmp_path):
    data = hello32.read_bytes()
    for n in (30, 100, len(data) // 2):
        p = tmp_path / f"trunc{n}"
        p.write_bytes(data[:n])
        p.chmod(0o755)
        r = run(emulator_path, "run", str(p))
        assert r.returncode == 1
        assert "truncated" in one_line_error(r)


def test_wrong_machine(emulator_path, hello32, tmp_path):
    data = bytearray(hello32.read_bytes())
    struct.pack_into("<H", data, 18, 40)  # e_machine = EM_ARM
    p = tmp_path / "arm"
    p.write_bytes(bytes(data))
    p.chmod(0o755)
    r = run(emulator_path, "run", str(p))
    assert r.returncode == 1
    line = one_line_error(r)
    assert "wrong machine" in line and "ARM" in line


def test_64bit_program_on_32bit_model(emulator_path, hello64):
    for cpu in ("esther", "nehemiah", "nehemiah-c5xl", "esther-c5j-s9"):
        r = run(emulator_path, "run", "--cpu", cpu, str(hello64))
        assert r.returncode == 1
        assert "no long mode" in one_line_error(r)
    r = run(emulator_path, "run", "--cpu", "nano", str(hello64))
    assert r.returncode == 0 and r.stdout == "hello\n"


def test_dynamic_program(emulator_path, tmp_path):
    # Dynamically linked: the host's ld.so and libc (x86-64 guests default to the host root).
    exe = compile_c(tmp_path, "dyn", HELLO, ["-m64", "-O1"])
    r = run(emulator_path, "run", "--cpu", "nano", str(exe))
    assert r.returncode == 0 and r.stdout == "hello\n", r.stderr


def test_missing_interpreter(emulator_path, tmp_path):
    exe = compile_c(tmp_path, "dynx", HELLO,
                    ["-m64", "-O1", "-Wl,--dynamic-linker=/nonexistent/ld.so"])
    r = run(emulator_path, "run", "--cpu", "nano", str(exe))
    assert r.returncode == 1
    assert "cannot load its interpreter /nonexistent/ld.so: No such file or directory" in \
        one_line_error(r)


def test_sysroot_must_be_a_directory(emulator_path, hello64, tmp_path):
    r = run(emulator_path, "run", "--cpu", "nano", "-L", str(tmp_path / "none"), str(hello64))
    assert r.returncode == 2
    assert "is not a directory" in one_line_error(r)
    r = run(emulator_path, "run", "--cpu", "nano", str(hello64),
            env={"PADLOCK_EMU_SYSROOT": str(tmp_path / "none")})
    assert r.returncode == 2


# --- running: arguments, exit status, signals, environment -------------------------------

def test_arguments_and_exit_status(emulator_path, hello32):
    r = run(emulator_path, "run", str(hello32), "a b", "--exit", "42")
    assert r.returncode == 42
    assert r.stdout == "hello\narg=a b\n"
    assert r.stderr == ""


def test_options_after_program_belong_to_the_guest(emulator_path, hello32):
    r = run(emulator_path, "run", str(hello32), "--cpu", "x")
    assert r.returncode == 0
    assert "arg=--cpu\narg=x\n" in r.stdout


def test_death_by_signal_like_qemu_user(emulator_path, hello32):
    r = run(emulator_path, "run", str(hello32), "--segv")
    assert r.returncode == -signal.SIGSEGV  # the emulator killed itself with the signal
    assert r.stdout == "hello\n"             # output flushed first
    line = one_line_error(r)
    assert "SIGSEGV" in line and "mov dword ptr" in line and "address 0x8" in line
    # A shell sees 128 + N.
    sh = subprocess.run(["sh", "-c", f'"{emulator_path}" run "{hello32}" --segv; echo "rc=$?"'],
                        capture_output=True, text=True)
    assert f"rc={128 + signal.SIGSEGV}" in sh.stdout
    assert not list(Path.cwd().glob("core*")), "no core file"


def test_guest_environment(emulator_path, hello32):
    env = {"PADLOCK_CLI_A": "from-host", "PADLOCK_CLI_B": "drop-me"}
    r = run(emulator_path, "run", "-E", "PADLOCK_CLI_C=set", "-U", "PADLOCK_CLI_B", str(hello32),
            "--env", "PADLOCK_CLI_A", "--env", "PADLOCK_CLI_B", "--env", "PADLOCK_CLI_C", env=env)
    assert r.returncode == 0
    assert "PADLOCK_CLI_A=from-host\nPADLOCK_CLI_B=(unset)\nPADLOCK_CLI_C=set\n" in r.stdout


def test_strace_option_and_variable(emulator_path, hello32):
    r = run(emulator_path, "run", "--strace", str(hello32))
    assert r.returncode == 0
    assert " write(1, " in r.stderr and ") = 6" in r.stderr
    assert " exit_group(0) = ?" in r.stderr
    r = run(emulator_path, "run", str(hello32), env={"PADLOCK_EMU_STRACE": "1"})
    assert " exit_group(0) = ?" in r.stderr


def test_stats(emulator_path, hello32):
    r = run(emulator_path, "run", "--stats", str(hello32))
    assert r.returncode == 0
    assert "padlock-emu: stats: PadLock instructions" in r.stderr
    assert "padlock-emu: stats: diagnostics 0" in r.stderr


def test_help_names_every_alias(emulator_path):
    r = run(emulator_path, "run", "--help")
    for alias, name in (("nehemiah", "nehemiah-c5p"), ("esther", "esther-c5j"),
                        ("esther-late", "esther-c5j-s9")):
        assert f"{alias} = {name}" in r.stdout
    r = run(emulator_path, "run", "--cpu", "pentium", "x")
    assert "esther-late = esther-c5j-s9" in one_line_error(r)


def test_seed_is_decimal_or_hex_never_octal(emulator_path, hello32, tmp_path):
    seeds = {}
    for text in ("010", "10", "0xa", "8"):
        t = tmp_path / f"{text}.jsonl"
        assert run(emulator_path, "run", "--seed", text, "--trace", str(t),
                   str(hello32)).returncode == 0
        seeds[text] = json.loads(t.read_text().splitlines()[0])["seed"]
    assert seeds == {"010": 10, "10": 10, "0xa": 10, "8": 8}


@pytest.mark.parametrize("value, on", [("1", True), ("on", True), ("TRUE", True), ("yes", True),
                                       ("0", False), ("off", False), ("false", False),
                                       ("No", False), ("", False)])
def test_strace_variable_is_a_switch(emulator_path, hello32, value, on):
    r = run(emulator_path, "run", str(hello32), env={"PADLOCK_EMU_STRACE": value})
    assert r.returncode == 0
    assert (" exit_group(0) = ?" in r.stderr) == on


def test_strace_variable_rejects_other_words(emulator_path, hello32):
    r = run(emulator_path, "run", str(hello32), env={"PADLOCK_EMU_STRACE": "sometimes"})
    assert r.returncode == 2 and "PADLOCK_EMU_STRACE" in one_line_error(r)


def test_command_line_wins_over_a_bad_variable(emulator_path, hello32):
    """A variable is only read when its option is missing, so a wrong one cannot break a
    command line that overrides it."""
    for var, opt in (("PADLOCK_EMU_CPU", ["--cpu", "esther"]), ("PADLOCK_EMU_MHZ", ["--mhz", "800"]),
                     ("PADLOCK_EMU_SEED", ["--seed", "1"]),
                     ("PADLOCK_EMU_MEMORY", ["--memory", "tlb"])):
        r = run(emulator_path, "run", *opt, str(hello32), env={var: "bogus"})
        assert r.returncode == 0, (var, r.stderr)
        r = run(emulator_path, "run", str(hello32), env={var: "bogus"})
        assert r.returncode == 2 and var in one_line_error(r)


def test_e_and_u_split_on_commas_as_qemu(emulator_path, hello32):
    env = {"PADLOCK_CLI_X": "x", "PADLOCK_CLI_Y": "y"}
    r = run(emulator_path, "run", "-E", "PADLOCK_CLI_A=1,PADLOCK_CLI_B=2",
            "-U", "PADLOCK_CLI_X,PADLOCK_CLI_Y", str(hello32), "--env", "PADLOCK_CLI_A", "--env",
            "PADLOCK_CLI_B", "--env", "PADLOCK_CLI_X", "--env", "PADLOCK_CLI_Y", env=env)
    assert r.returncode == 0
    assert ("PADLOCK_CLI_A=1\nPADLOCK_CLI_B=2\nPADLOCK_CLI_X=(unset)\nPADLOCK_CLI_Y=(unset)\n"
            in r.stdout)
    # qemu-user's attached forms: -EVAR=VALUE, -UVAR
    r = run(emulator_path, "run", "-EPADLOCK_CLI_A=3", "-UPADLOCK_CLI_X", str(hello32), "--env",
            "PADLOCK_CLI_A", "--env", "PADLOCK_CLI_X", env=env)
    assert r.returncode == 0, r.stderr
    assert "PADLOCK_CLI_A=3\nPADLOCK_CLI_X=(unset)\n" in r.stdout


def test_qemu_single_dash_spellings(emulator_path, hello32, hello64):
    r = run(emulator_path, "run", "-cpu", "nano", "-seed", "3", "-strace", str(hello64))
    assert r.returncode == 0 and r.stdout == "hello\n"  # nano: the 64-bit program runs
    assert " exit_group(0) = ?" in r.stderr
    probe = compile_c(hello32.parent, "argv0", ARGV0, ["-m32", "-static", "-O1"])
    r = run(emulator_path, "run", "-0", "renamed", str(probe))
    assert r.stdout == "argv0=renamed\n"
    r = run(emulator_path, "run", "--argv0=other", str(probe))
    assert r.stdout == "argv0=other\n"


def test_stats_time_shares_partition_the_clock(emulator_path, guest_dir):
    r = run(emulator_path, "run", "--stats", str(guest_dir / "guest_host_alarm_xcrypt_i386"),
            "300")
    assert r.returncode == 0, r.stderr
    rows = dict(re.findall(r"time of ([^:]+): (\d+) cycles", r.stderr))
    total = int(re.search(r"total: (\d+) cycles", r.stderr)[1])
    parts = ("PadLock (all)", "x86 blocks", "cache/memory", "interrupts", "sleeping",
             "waiting for ACE")
    assert sum(int(rows[p]) for p in parts) == total
    assert int(rows["REP XCRYPTCBC"]) == int(rows["PadLock (all)"]) > 0
    shares = re.findall(r"time of (?!REP)[^:]+: \d+ cycles \(([0-9.]+)%\)", r.stderr)
    assert abs(sum(float(x) for x in shares) - 100) < 0.05


def test_cpu_from_environment(emulator_path, hello64):
    r = run(emulator_path, "run", str(hello64), env={"PADLOCK_EMU_CPU": "nano"})
    assert r.returncode == 0 and r.stdout == "hello\n"
    r = run(emulator_path, "run", "--cpu", "esther", str(hello64), env={"PADLOCK_EMU_CPU": "nano"})
    assert r.returncode == 1  # the command line wins


def test_cli_never_hangs_on_stdin(emulator_path, hello32):
    r = subprocess.run([str(emulator_path), "run", str(hello32)], input="", capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0


def test_every_spelling_in_the_run_help_is_an_option(emulator_path):
    """The parser and `run --help` come from one table (emulator/cli/run_option_table.cpp):
    each spelling the help names, qemu-user's included, is parsed: alone it asks for its
    value or for PROGRAM, never 'unknown option'."""
    text = run(emulator_path, "run", "--help").stdout
    labels = [line[2:] for line in text.splitlines() if line.startswith("  -")]
    qemu = [line for line in text.splitlines() if line.startswith("qemu-user spellings:")]
    assert len(labels) > 30 and len(qemu) == 1
    spellings = set(re.findall(r"(?<![\w\[-])-{1,2}[A-Za-z0-9][\w-]*", " ".join(labels + qemu)))
    assert {"--cpu", "-cpu", "-L", "--sysroot", "--check", "--trace-fn", "-V", "--net"} <= spellings
    for s in sorted(spellings):
        r = run(emulator_path, "run", s)
        assert "unknown option" not in r.stderr, (s, r.stderr)
        if s in ("-h", "--help", "-V", "--version"):
            assert r.returncode == 0, s
        else:
            assert r.returncode == 2, s
            assert "needs a value" in r.stderr or "missing PROGRAM" in r.stderr, (s, r.stderr)
