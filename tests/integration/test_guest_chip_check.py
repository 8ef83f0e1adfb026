"""guest_chip_check: an instruction whose CPUID feature the modelled chip lacks raises #UD,
as on the chip (docs/emulator.md, "The chip check"). SSE2 on Nehemiah (SSE only), SSSE3 on
Esther and SSE4.1 on Nano die with SIGILL at the instruction itself, with the registers the
instructions before it in the same block left; a model with the feature runs it.
--chip-check warn reports the instruction once and runs it; off runs it silently."""

from __future__ import annotations

import signal
import subprocess

import pytest

# (arch, cpu, extension, the chip has it)
CASES = [
    ("i386", "nehemiah-c5xl", "sse2", False),
    ("i386", "nehemiah-c5p", "sse2", False),
    ("i386", "esther", "sse2", True),
    ("i386", "esther", "ssse3", False),
    ("x86_64", "nano", "ssse3", True),
    ("x86_64", "nano", "sse41", False),
]


def have(guest_dir, arch):
    if not (guest_dir / f"guest_chip_check_{arch}").is_file():
        pytest.skip(f"no {arch} guests")


@pytest.mark.parametrize("arch,cpu,ext,has", CASES, ids=[f"{a}-{c}-{e}" for a, c, e, _ in CASES])
def test_missing_feature_is_sigill(runner, guest_dir, arch, cpu, ext, has):
    have(guest_dir, arch)
    proc = runner.run("chip_check", (arch, cpu), [ext], check=False)
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == f"executing {ext}"
    if has:
        assert proc.returncode == 0, proc.stderr
        assert lines[1:] == [f"{ext} ok"]
    else:
        assert proc.returncode == -signal.SIGILL, proc.stderr
        assert lines[1:] == []
        err = proc.stderr.decode()
        assert "SIGILL (Illegal instruction) at 0x" in err
        assert f"not on CPU model" in err


@pytest.mark.parametrize("arch,cpu,ext", [(a, c, e) for a, c, e, h in CASES if not h])
def test_sigill_at_the_instruction_with_its_registers(runner, guest_dir, arch, cpu, ext):
    """the handler sees si_addr = the instruction and EAX = 3 from the two before it."""
    have(guest_dir, arch)
    proc = runner.run("chip_check", (arch, cpu), [ext, "handler"])
    assert proc.stdout.decode().splitlines()[1] == "sigill at=label eax=3"


def test_sse2_on_nehemiah_c5xl_pinned(runner, guest_dir):
    """The case the chip check exists for: SSE2 on a Nehemiah C5XL."""
    have(guest_dir, "i386")
    proc = runner.run("chip_check", ("i386", "nehemiah-c5xl"), ["sse2"], check=False)
    assert proc.returncode == -signal.SIGILL
    assert b"paddq xmm1, xmm0 (CPUID feature 'sse2': not on CPU model nehemiah-c5xl)" in \
        proc.stderr


@pytest.mark.parametrize("options", [["--stats"], ["--timing", "off"],
                                     ["--timing", "off", "--icount"]])
def test_every_execution_mode_checks(runner, guest_dir, options):
    have(guest_dir, "i386")
    cmd = runner.command("chip_check", "i386", ["sse2", "handler"], "nehemiah-c5xl")
    cmd[2:2] = options
    proc = subprocess.run(cmd, capture_output=True, timeout=120)
    assert proc.stdout.decode().splitlines()[1] == "sigill at=label eax=3", proc.stderr


@pytest.mark.parametrize("mode", ["warn", "off"])
def test_warn_and_off_run_it(runner, guest_dir, mode):
    have(guest_dir, "i386")
    cmd = runner.command("chip_check", "i386", ["sse2", "repeat", "5"], "nehemiah-c5xl")
    cmd[2:2] = ["--chip-check", mode]
    proc = subprocess.run(cmd, capture_output=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines() == ["executing sse2", "sse2 ok"]
    warnings = proc.stderr.decode().count("chip check:")
    if mode == "warn":
        assert warnings == 1  # once per instruction, however often it runs
        assert "paddq xmm1, xmm0 needs CPUID feature 'sse2', which CPU model 'nehemiah-c5xl' " \
            "does not have" in proc.stderr.decode()
    else:
        assert warnings == 0 and proc.stderr == b""


# Debian's openssl picks its code by CPUID (OPENSSL_ia32cap), and so does glibc (its
# ifuncs): under the chip check it must run on every model, PadLock or not.
MODELS = [("i386", "nehemiah-c5xl"), ("i386", "nehemiah-c5p"), ("i386", "esther"),
          ("i386", "esther-c5j-s9"), ("x86_64", "nano")]


@pytest.mark.parametrize("arch,cpu", MODELS, ids=[f"{a}-{c}" for a, c in MODELS])
def test_debian_openssl_runs_on_every_model(emulator_path, tmp_path, arch, cpu):
    from realclients import host_openssl, openssl_client

    client = openssl_client(arch)
    data = bytes(range(256)) * 400
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    args = ["enc", "-aes-128-cbc", "-K", "000102030405060708090a0b0c0d0e0f", "-iv",
            "0f0e0d0c0b0a09080706050403020100", "-in", src]
    emu = client.run(emulator_path, "/usr/bin/openssl", ["dgst", "-sha256", "-r", src], cpu=cpu,
                     stats=False)
    assert emu.stdout.split()[0] == host_openssl(["dgst", "-sha256", "-r", src]).split()[0]
    assert b"chip check" not in emu.stderr and b"SIGILL" not in emu.stderr
    # The engine refuses AES on a chip without ACE, natively too (Nehemiah C5XL).
    engine = [] if cpu == "nehemiah-c5xl" else ["-engine", "padlock"]
    enc = client.run(emulator_path, "/usr/bin/openssl", ["enc", *engine, *args[1:]], cpu=cpu,
                     stats=False)
    assert enc.stdout == host_openssl(args)
