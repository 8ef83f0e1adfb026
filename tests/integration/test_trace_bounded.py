"""Long runs: --trace-max caps each trace file and says so, the --trace-* filters keep
only the asked-for records, a ".gz" name compresses, and a non-UTF-8 program name still
gives valid JSON (docs/profiling.md, "Long runs")."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from realclients import openssl_client

XCRYPT_LOOP = "host_alarm_xcrypt"  # REP XCRYPTCBC over 4 KB, ITERATIONS times


def emu(runner, *args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(runner.emulator), "run", *[str(a) for a in args]],
                          capture_output=True, text=True, timeout=timeout)


def jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f]


def insns(recs: list[dict]) -> list[dict]:
    return [r for r in recs if r["type"] == "insn"]


def test_trace_max_caps_both_files_and_says_so(runner, target, tmp_path):
    t, c = tmp_path / "t.jsonl", tmp_path / "c.json"
    cap = 64 * 1024
    p = emu(runner, "--cpu", target.cpu, "--trace", t, "--chrome-trace", c, "--trace-max", "64K",
            runner.guest(XCRYPT_LOOP, target.arch), "2000")
    assert p.returncode == 0, p.stderr
    assert t.stat().st_size <= cap and c.stat().st_size <= cap
    assert t.stat().st_size > cap - 4096  # filled, not stopped early
    recs = jsonl(t)
    end = recs[-1]
    assert end["type"] == "end" and end["exit_code"] == 0
    kept = len(insns(recs))
    assert end["dropped"] == end["instructions"] - kept > 0
    assert [r["seq"] for r in insns(recs)] == list(range(kept))
    chrome = json.loads(c.read_text())
    assert chrome["traceEvents"][-1]["args"]["dropped"] > 0
    assert f"--trace {t} reached --trace-max 65536 bytes at PadLock instruction #{kept}" in p.stderr
    assert f"{c} reached --trace-max" in p.stderr
    assert f"{t}: {end['dropped']} events left out by --trace-max" in p.stderr


def test_without_a_cap_nothing_is_dropped(runner, target, tmp_path):
    t = tmp_path / "t.jsonl"
    p = emu(runner, "--cpu", target.cpu, "--trace", t, runner.guest(XCRYPT_LOOP, target.arch),
            "200")
    assert p.returncode == 0 and "trace-max" not in p.stderr
    recs = jsonl(t)
    assert "dropped" not in recs[-1] and len(insns(recs)) == recs[-1]["instructions"]


def test_gzip_by_extension(runner, target, tmp_path):
    plain, packed = tmp_path / "t.jsonl", tmp_path / "t.jsonl.gz"
    for path in (plain, packed):
        p = emu(runner, "--cpu", target.cpu, "--trace", path,
                runner.guest(XCRYPT_LOOP, target.arch), "300")
        assert p.returncode == 0, p.stderr
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    assert packed.stat().st_size * 5 < plain.stat().st_size
    c = tmp_path / "c.json.gz"
    assert emu(runner, "--cpu", target.cpu, "--chrome-trace", c,
               runner.guest(XCRYPT_LOOP, target.arch), "10").returncode == 0
    assert json.loads(gzip.decompress(c.read_bytes()))["traceEvents"][-1]["name"] == "exit"
    # trace summary reads the compressed file as it reads the plain one
    s1 = subprocess.run([str(runner.emulator), "trace", "summary", str(plain)],
                        capture_output=True, text=True)
    s2 = subprocess.run([str(runner.emulator), "trace", "summary", str(packed)],
                        capture_output=True, text=True)
    assert s1.returncode == s2.returncode == 0 and s1.stdout == s2.stdout


def test_unsupported_compression_is_refused(runner, target, tmp_path):
    p = emu(runner, "--cpu", target.cpu, "--trace", tmp_path / "t.jsonl.zst",
            runner.guest("hello", target.arch))
    assert p.returncode == 1 and "not .zst" in p.stderr
    assert not (tmp_path / "t.jsonl.zst").exists()


def test_filters_keep_only_what_was_asked(runner, tmp_path):
    """guest_demo runs every unit once; each filter keeps its part of the full trace."""
    demo = runner.guest("demo", "i386")
    full = tmp_path / "full.jsonl"
    assert emu(runner, "--trace", full, demo).returncode == 0
    every = insns(jsonl(full))
    assert {r["unit"] for r in every} == {"ACE", "PHE", "PMM", "RNG"}

    def kept(*opts) -> list[dict]:
        t = tmp_path / "f.jsonl"
        p = emu(runner, "--trace", t, *opts, demo)
        assert p.returncode == 0, p.stderr
        recs = jsonl(t)
        assert recs[-1]["instructions"] == len(every)  # the end record counts them all
        return insns(recs)

    assert kept("--trace-insn", "phe") == [r for r in every if r["unit"] == "PHE"]
    assert kept("--trace-insn", "REP XSHA1,montmul") == [
        r for r in every if r["insn"] in ("REP XSHA1", "REP MONTMUL")]
    assert kept("--trace-insn", "xstore") == [r for r in every if "XSTORE" in r["insn"]]
    pc = int(every[2]["pc"], 16)
    assert kept("--trace-range", f"{pc:#x}-{pc + 1:#x}") == [
        r for r in every if int(r["pc"], 16) == pc]
    fn = every[0]["fn"]
    assert kept("--trace-fn", fn) == [r for r in every if r["fn"] == fn]
    t0 = every[3]["cycle"]
    assert kept("--trace-window", f"{t0}:") == [r for r in every if r["cycle"] >= t0]
    assert kept("--trace-window", f":{t0}") == [r for r in every if r["cycle"] < t0]
    us = t0 / 1600  # the default clock of esther: cycles / MHz = microseconds
    assert kept("--trace-window", f"{us}us:") == [r for r in every if r["cycle"] >= t0]
    # Whatever the cycle, its time in decimal converts back to it (t0 depends on the
    # environment's size, so each cycle near it stands in for another environment).
    for t in range(t0 - 40, t0 + 40):
        assert kept("--trace-window", f"{t / 1600}us:") == [r for r in every if r["cycle"] >= t]


def test_syscall_events_follow_the_kind_filter(runner, tmp_path):
    demo = runner.guest("demo", "i386")
    cats = {}
    for kinds in ("ace", "ace,syscall"):
        c = tmp_path / f"{kinds}.json"
        assert emu(runner, "--chrome-trace", c, "--trace-insn", kinds, demo).returncode == 0
        cats[kinds] = {e.get("cat") for e in json.loads(c.read_text())["traceEvents"]}
    assert "syscall" not in cats["ace"] and "syscall" in cats["ace,syscall"]


def test_non_utf8_program_name_gives_valid_json(runner, target, tmp_path):
    odd = os.fsencode(str(tmp_path)) + b"/prog\xff\xfe"
    shutil.copy(runner.guest("hello", target.arch), odd)
    p = subprocess.run([os.fsencode(str(runner.emulator)), b"run", b"--cpu",
                        target.cpu.encode(), b"--trace", b"t.jsonl", b"--chrome-trace", b"c.json",
                        odd], cwd=tmp_path, capture_output=True)
    assert p.returncode == 0, p.stderr
    run = jsonl(tmp_path / "t.jsonl")[0]
    assert run["program"] == "prog\ufffd\ufffd"
    chrome = json.loads((tmp_path / "c.json").read_bytes().decode("utf-8"))
    assert chrome["otherData"]["program"] == "prog\ufffd\ufffd"


def test_openssl_speed_trace_stays_under_100M(emulator_path, tmp_path):
    """The long run that once wrote gigabytes: openssl speed for one second per size."""
    client = openssl_client("i386")
    t = tmp_path / "t.jsonl"
    p = client.run(emulator_path, "/usr/bin/openssl",
                   ["speed", "-engine", "padlock", "-evp", "aes-128-cbc", "-seconds", "1"],
                   cpu="esther", stats=False, timeout=900,
                   extra=("--trace", str(t), "--trace-max", "100M"))
    assert t.stat().st_size <= 100 << 20
    assert b"reached --trace-max 104857600 bytes" in p.stderr
    end = jsonl(t)[-1]
    assert end["type"] == "end" and end["dropped"] > 0
