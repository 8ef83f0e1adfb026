"""guest_proc_self: the guest sees the modelled chip and itself, not the host
(docs/emulator.md, "What the guest sees"). /proc/cpuinfo is generated from the CPU model:
vendor CentaurHauls, family/model/stepping, brand, cpu MHz = --mhz, and flags with the
PadLock flags Linux prints (rng rng_en ace ace_en ace2 ace2_en phe phe_en pmm pmm_en) as
the model has the units (§1.3). /proc/self/maps and /proc/self/auxv describe the guest;
sysconf counts one processor."""

from __future__ import annotations

import subprocess

import pytest

from guestrun import kv

PADLOCK_FLAGS = ["rng", "rng_en", "ace", "ace_en", "ace2", "ace2_en", "phe", "phe_en", "pmm",
                 "pmm_en"]
# The units of each model (§1.1 table, docs/emulator.md "cpus").
MODEL_FLAGS = {
    "nehemiah-c5xl": ["rng", "rng_en"],
    "nehemiah-c5p": ["rng", "rng_en", "ace", "ace_en"],
    "esther": PADLOCK_FLAGS,
    "esther-c5j-s9": PADLOCK_FLAGS,
}


def cpuinfo(runner, arch, cpu, options=()):
    """The fields of /proc/cpuinfo as the guest reads it under `cpu` with `options`."""
    cmd = runner.command("proc_self", arch, ["cat", "/proc/cpuinfo"], cpu)
    cmd[2:2] = list(options)
    proc = subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    fields = {}
    for line in proc.stdout.decode().splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip()] = v.strip()
    return fields


def test_cpuinfo_esther(runner):
    """--cpu esther: CentaurHauls, family 6 model 10 stepping 8, all PadLock flags."""
    f = cpuinfo(runner, "i386", "esther")
    assert f["vendor_id"] == "CentaurHauls"
    assert (f["cpu family"], f["model"], f["stepping"]) == ("6", "10", "8")
    assert f["model name"] == "VIA Esther processor 1600MHz"
    assert f["cpu MHz"] == "1600.000"
    assert f["processor"] == "0"
    flags = f["flags"].split()
    assert flags[:4] == ["fpu", "vme", "de", "pse"]
    assert "sse2" in flags and "pni" in flags and "ssse3" not in flags and "lm" not in flags
    assert [x for x in flags if x in PADLOCK_FLAGS] == PADLOCK_FLAGS
    assert "fdiv_bug" in f  # a 32-bit kernel's lines: Esther has no long mode


@pytest.mark.parametrize("cpu", sorted(MODEL_FLAGS))
def test_cpuinfo_padlock_flags_follow_the_units(runner, cpu):
    f = cpuinfo(runner, "i386", cpu)
    assert [x for x in f["flags"].split() if x in PADLOCK_FLAGS] == MODEL_FLAGS[cpu]


def test_cpuinfo_nano_x86_64(runner, guest_dir):
    if not (guest_dir / "guest_proc_self_x86_64").is_file():
        pytest.skip("no x86_64 guests")
    f = cpuinfo(runner, "x86_64", "nano")
    assert (f["cpu family"], f["model"], f["stepping"]) == ("6", "15", "2")
    flags = f["flags"].split()
    assert "lm" in flags and "ssse3" in flags and "sse4_1" not in flags
    assert [x for x in flags if x in PADLOCK_FLAGS] == PADLOCK_FLAGS
    assert f["address sizes"] == "36 bits physical, 48 bits virtual"
    assert "fdiv_bug" not in f


def test_cpuinfo_mhz_is_the_option(runner):
    f = cpuinfo(runner, "i386", "esther", ["--mhz", "1234.5"])
    assert f["cpu MHz"] == "1234.500"
    assert f["bogomips"] == "2469.00"


def test_maps_describe_the_guest(runner, target):
    out = kv(runner.run("proc_self", target, ["maps"]).stdout)
    exe = str(runner.guest("proc_self", target.arch))
    assert out["code"] == f"r-xp {exe}"
    assert out["stack"] == "[stack]"
    assert out["heap"] == "[heap]"
    assert out["mmap"] == f"r--p {exe}"
    assert out["unmapped"] == "1"


def test_auxv_is_the_guests(runner, target):
    out = kv(runner.run("proc_self", target, ["auxv"]).stdout)
    assert out == {"auxv_pagesz": "4096", "auxv_entry_ok": "1", "auxv_random_ok": "1",
                   "auxv_end_ok": "1"}


def test_one_processor(runner, target):
    """glibc's sysconf reads /sys/devices/system/cpu/{online,possible}: one CPU."""
    out = runner.run("proc_self", target, ["nprocs"]).stdout.decode()
    assert out.strip() == "onln=1 conf=1"
