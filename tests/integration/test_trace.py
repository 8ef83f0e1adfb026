"""--trace, --chrome-trace and `padlock-emu trace summary|diff` on the guest programs
(traces/README.md, docs/profiling.md). Expected values come from the guest programs'
documented behaviour, the SP 800-38A vectors and the FNV-1a definition, not from the
emulator's own output."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tracerun import run_with

KEY = "2b7e151628aed2a6abf7158809cf4f3c"  # SP 800-38A F.2 (AES-128)
IV = "000102030405060708090a0b0c0d0e0f"
PLAIN = ("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
         "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
CBC = ("7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
       "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7")  # F.2.1
KEY256 = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"  # F.2.5
CBC256 = ("f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
          "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b")


def fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def reg(regs: dict, name: str) -> int:
    """A register by its 32-bit name from a record's in/out (rcx on x86-64 guests)."""
    return int(regs.get(name, regs.get("r" + name[1:], "")), 16)


def read_trace(path: Path):
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "run" and lines[-1]["type"] == "end"
    return lines[0], lines[1:-1], lines[-1]


def emu(emulator_path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(emulator_path), *map(str, args)], capture_output=True, text=True)


def test_xcrypt_records(runner, target, tmp_path):
    """CBC encryption one block per REP XCRYPTCBC, then decryption after a reload (§3.1,
    §3.2, §1.8): control word fields, registers, reloads, results."""
    t = tmp_path / "t.jsonl"
    run_with(runner, "aes", target, ["cbc", "hw", "enc", KEY, IV, PLAIN, "--split", "1",
                                     "--roundtrip"], ["--trace", t])
    run, recs, end = read_trace(t)
    assert (run["program"], run["cpu"], run["arch"]) == (
        f"guest_aes_{target.arch}", {"esther": "esther-c5j"}.get(target.cpu, target.cpu),
        target.arch)
    enc, dec = recs[:4], recs[4:]
    assert len(recs) == 8 and all(r["insn"] == "REP XCRYPTCBC" for r in recs)
    for i, r in enumerate(recs):
        assert r["seq"] == i and r["mnemonic"] == "xcryptcbc" and r["unit"] == "ACE"
        assert r["status"] == "completed" and r["bytes"] == 16 and r["blocks"] == 1
        assert reg(r["in"], "ecx") == 1 and reg(r["out"], "ecx") == 0
        assert reg(r["out"], "esi") - reg(r["in"], "esi") == 16
        cw = r["cw"]
        assert (cw["mode"], cw["rounds"], cw["ksize"], cw["keygen"]) == ("cbc", 10, "128",
                                                                          "hardware")
        assert cw["raw"] == ("0x0000000a" if r in enc else "0x0000020a")  # §3.2 CRYPT bit
        assert cw["crypt"] == ("encrypt" if r in enc else "decrypt")
        assert r["cycles"] > 0 and r["diag"] == []
    # §1.8: the key is loaded by the first instruction of each direction only; the
    # others run with EFLAGS[30] = 1 and the cached control word.
    assert [r["key_reloaded"] for r in recs] == [True, False, False, False] * 2
    assert [r["cw"]["source"] for r in recs] == ["memory", "cached", "cached", "cached"] * 2
    assert [r["eflags30_in"] for r in recs] == [False, True, True, True] * 2
    assert all(r["eflags30_out"] for r in recs)
    # Results: each ciphertext block is SP 800-38A's; its digest is FNV-1a of those bytes.
    cipher = bytes.fromhex(CBC)
    for i, r in enumerate(enc):
        assert r["result"]["len"] == 16
        assert int(r["result"]["fnv1a64"], 16) == fnv1a64(cipher[16 * i:16 * i + 16])
        # §3.1: CBC encryption points EAX at the last ciphertext block it stored.
        assert r["iv"] == cipher[16 * i:16 * i + 16].hex()
    plain = bytes.fromhex(PLAIN)
    for i, r in enumerate(dec):
        assert int(r["result"]["fnv1a64"], 16) == fnv1a64(plain[16 * i:16 * i + 16])
        # §3.1: CBC decryption leaves the last ciphertext block in the memory at EAX.
        assert r["iv"] == cipher[16 * i:16 * i + 16].hex()
    # Virtual time only moves forward; each record starts after the previous one ended.
    cycles = [r["cycle"] for r in recs]
    assert all(b >= a + r["cycles"] for a, b, r in zip(cycles, cycles[1:], recs))
    assert end["instructions"] == 8 and end["exit_code"] == 0
    assert end["padlock_cycles"] == sum(r["cycles"] for r in recs)


def test_control_word_of_a_software_schedule(runner, target, tmp_path):
    """KEYGN = 1 with a 256-bit key, decryption with ALIGN (§3.2): rounds 14."""
    t = tmp_path / "t.jsonl"
    out = run_with(runner, "aes", target, ["cbc", "sw", "dec", KEY256, IV, CBC256, "--align"],
                   ["--trace", t]).stdout.decode()
    assert f"out={PLAIN[:128]}" in out
    _, recs, _ = read_trace(t)
    cw = recs[0]["cw"]
    assert (cw["ksize"], cw["keygen"], cw["crypt"], cw["rounds"], cw["align"],
            cw["digest"]) == ("256", "memory", "decrypt", 14, True, False)
    assert int(recs[0]["result"]["fnv1a64"], 16) == fnv1a64(bytes.fromhex(PLAIN))


def test_fault_and_restart(runner, target, tmp_path):
    """§1.7: REP XCRYPTCBC faults on the output page after 3 blocks; the handler maps it
    back and the same instruction resumes: the second record is the restart."""
    t = tmp_path / "t.jsonl"
    out = run_with(runner, "segv_xcrypt", target, ["out", "prot", "enc"],
                   ["--trace", t]).stdout.decode()
    _, recs, _ = read_trace(t)
    assert [r["status"] for r in recs] == ["faulted", "completed"]
    assert [r["restarted"] for r in recs] == [False, True]
    first, second = recs
    assert first["pc"] == second["pc"]
    assert first["fault"]["kind"] == "#PF" and first["fault"]["write"] is True
    assert int(first["fault"]["addr"], 16) % 4096 == 0  # the page boundary
    # What the guest's SIGSEGV handler saw: ECX = 3 and ESI/EDI 48 bytes on, and the
    # block at EAX; at the end the last ciphertext block.
    seen = dict(line.split("=", 1) for line in out.split() if "=" in line)
    assert reg(first["out"], "ecx") == int(seen["fault_ecx"]) == 3
    assert reg(first["out"], "esi") - reg(first["in"], "esi") == int(seen["fault_esi_adv"])
    assert first["bytes"] == 48
    assert first["iv"] == seen["fault_eaxmem"]
    assert second["iv"] == seen["out"][-32:]
    for r in ("ecx", "esi", "edi", "eax"):  # resumes from the registers the fault left
        assert reg(second["in"], r) == reg(first["out"], r)
    assert reg(second["out"], "ecx") == 0


def test_undefined_case_is_a_diagnostic(runner, tmp_path):
    """A diagnostic raised by the model shows in the record that raised it (§3.2: DGEST
    in CTR mode is not defined)."""
    t = tmp_path / "t.jsonl"
    proc = run_with(runner, "aes", ("i386", "esther"),
                    ["ctr", "hw", "enc", KEY, IV, PLAIN[:32], "--digest"], ["--trace", t],
                    check=False)
    _, recs, _ = read_trace(t)
    assert "diagnostic:" in proc.stderr.decode()
    name = re.search(r"diagnostic: (\S+) at", proc.stderr.decode())[1]
    assert recs[0]["diag"] == [name]


def test_same_seed_same_trace(runner, target, tmp_path):
    """Reproducible: the same run twice gives byte-identical files; another --seed gives
    other RNG results, and `trace diff` says so (exit 1)."""
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for path, seed in ((a, 3), (b, 3), (c, 4)):
        run_with(runner, "xstore", target, ["1"], ["--seed", seed, "--trace", path])
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_chrome_trace_is_valid_json_with_documented_fields(runner, target, emulator_path,
                                                          tmp_path):
    files = {"a": b"abc", "b": b"q" * 70000}
    for n, d in files.items():
        (tmp_path / n).write_bytes(d)
    c, t = tmp_path / "c.json", tmp_path / "t.jsonl"
    run_with(runner, "sha", target, ["256", *files],
             ["--chrome-trace", c, "--trace", t, "--mhz", 1000], cwd=tmp_path)
    doc = json.loads(c.read_text())
    run, recs, end = read_trace(t)
    assert doc["otherData"]["cpu"] == run["cpu"] and doc["otherData"]["mhz"] == 1000
    events = doc["traceEvents"]
    for e in events:
        assert {"name", "ph", "pid", "tid"} <= e.keys()
        if e["ph"] != "M":
            assert isinstance(e["ts"], (int, float))
    xs = [e for e in events if e["ph"] == "X"]
    for e in xs:
        assert e["dur"] >= 0 and e["cat"] in ("padlock", "syscall")
    padlock = [e for e in xs if e["cat"] == "padlock"]
    assert [e["name"] for e in padlock] == [r["insn"] for r in recs] == ["REP XSHA256"] * 2
    for e, r in zip(padlock, recs):
        # The axis is virtual time: cycles / MHz = microseconds.
        assert e["ts"] == pytest.approx(r["cycle"] / 1000, abs=1e-6)
        # dur: the time the instruction held the clock (int_cycles; §3.3 overlap).
        assert e["dur"] == pytest.approx(r["int_cycles"] / 1000, abs=1e-6)
        assert e["args"]["bytes"] == r["bytes"] and e["args"]["fn"] == r["fn"]
    syscalls = {e["name"] for e in xs if e["cat"] == "syscall"}
    assert {"write", "exit_group"} <= syscalls
    assert any(n in syscalls for n in ("read", "openat", "open"))
    counters = [e for e in events if e["ph"] == "C"]
    last = {e["name"]: e["args"] for e in counters}
    assert last["padlock cycles"]["PHE"] == sum(r["cycles"] for r in recs)
    assert last["padlock bytes"]["PHE"] == sum(len(d) for d in files.values())
    assert last["padlock bytes"]["ACE"] == 0
    stamps = [e["ts"] for e in events if e["ph"] != "M"]
    assert stamps == sorted(stamps)
    assert stamps[-1] == pytest.approx(end["cycle"] / 1000, abs=1e-6)


def test_summary_table(runner, target, emulator_path, tmp_path):
    for n, size in (("x", 3), ("y", 1000), ("z", 64)):
        (tmp_path / n).write_bytes(b"z" * size)
    t = tmp_path / "t.jsonl"
    run_with(runner, "sha", target, ["1", "x", "y", "z"], ["--trace", t], cwd=tmp_path)
    _, recs, _ = read_trace(t)
    proc = emu(emulator_path, "trace", "summary", t)
    assert proc.returncode == 0, proc.stderr
    cycles = sum(r["cycles"] for r in recs)
    row = re.search(r"^REP XSHA1\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)%", proc.stdout, re.M)
    assert row and (int(row[1]), int(row[2]), int(row[3]), row[4]) == (3, 1067, cycles, "100.0")
    assert re.search(rf"^main\s+REP XSHA1\s+3\s+1067\s+{cycles}\s", proc.stdout, re.M), proc.stdout


def test_diff_pinpoints_the_ctr_erratum(runner, emulator_path, tmp_path):
    """--errata off changes a result: ctr_errata runs 8 one-block REP XCRYPTCTRs (not
    affected), then one 8-block REP XCRYPTCTR, instruction #8, whose counter ends at
    0xff08 with the Esther stepping-8 erratum and at 0xff07 without (§3.1, §6.6; the
    guest prints both expectations). What the guest does afterwards may differ too."""
    a, b = tmp_path / "on.jsonl", tmp_path / "off.jsonl"
    out = run_with(runner, "ctr_errata", ("i386", "esther"), ["8"], ["--trace", a]).stdout
    run_with(runner, "ctr_errata", ("i386", "esther"), ["8"], ["--errata", "off", "--trace", b])
    expect = dict(line.split("=", 1) for line in out.decode().split() if "=" in line)
    proc = emu(emulator_path, "trace", "diff", a, b)
    assert proc.returncode == 1
    assert "run.errata: true | false" in proc.stdout
    assert "first divergence: instruction #8, REP XCRYPTCTR" in proc.stdout
    iv = re.search(r'^  iv: "([0-9a-f]{32})" \| "([0-9a-f]{32})"$', proc.stdout, re.M)
    assert iv, proc.stdout
    assert (iv[1][-4:], iv[2][-4:]) == (expect["expect_errata"], expect["expect_clean"])
    # Instructions #0..#7 (the one-block references) agree.
    assert re.search(r"^instructions differing: \d+ of \d+ compared$", proc.stdout, re.M)


def test_diff_pinpoints_a_changed_cycle_constant(runner, emulator_path, tmp_path):
    """Another CPU model has other ACE clock constants (Nehemiah C5P's ACE against
    Esther's ACE2, `padlock-emu cpus --verbose`): the first REP XCRYPTCBC differs in
    `cycles`, with the values each trace recorded."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    args = ["cbc", "hw", "enc", KEY, IV, PLAIN]
    run_with(runner, "aes", ("i386", "esther"), args, ["--trace", a])
    run_with(runner, "aes", ("i386", "nehemiah-c5p"), args, ["--trace", b])
    ca, cb = read_trace(a)[1][0]["cycles"], read_trace(b)[1][0]["cycles"]
    assert ca != cb
    proc = emu(emulator_path, "trace", "diff", a, b)
    assert proc.returncode == 1
    assert 'run.cpu: "esther-c5j" | "nehemiah-c5p"' in proc.stdout
    assert "first divergence: instruction #0, REP XCRYPTCBC" in proc.stdout
    assert f"  cycles: {ca} | {cb}\n" in proc.stdout


def test_diff_pinpoints_an_edited_record(runner, target, emulator_path, tmp_path):
    """An injected change in one record (one cycle more for instruction #2) is reported
    at that instruction and field; with --ignore cycles the traces compare equal apart
    from what follows from it."""
    a = tmp_path / "a.jsonl"
    run_with(runner, "stale_key", target, ["reload"], ["--trace", a])
    lines = a.read_text().splitlines()
    rec = json.loads(lines[3])
    assert rec["seq"] == 2
    b = tmp_path / "b.jsonl"
    lines[3] = lines[3].replace(f'"cycles":{rec["cycles"]},', f'"cycles":{rec["cycles"] + 1},')
    b.write_text("\n".join(lines) + "\n")
    proc = emu(emulator_path, "trace", "diff", a, b)
    assert proc.returncode == 1
    assert "first divergence: instruction #2, REP XCRYPTECB" in proc.stdout
    assert f"  cycles: {rec['cycles']} | {rec['cycles'] + 1}\n" in proc.stdout
    assert emu(emulator_path, "trace", "diff", "--ignore", "cycles", a, b).returncode == 0
    same = emu(emulator_path, "trace", "diff", a, a)
    assert same.returncode == 0 and "same:" in same.stdout


def test_trace_command_errors(runner, emulator_path, tmp_path):
    assert emu(emulator_path, "trace").returncode == 2
    assert emu(emulator_path, "trace", "summary", tmp_path / "none").returncode == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    proc = emu(emulator_path, "trace", "diff", bad, bad)
    assert proc.returncode == 2 and "bad.jsonl:1:" in proc.stderr
    proc = emu(emulator_path, "run", "--trace", tmp_path / "no" / "dir" / "t",
               runner.guest("hello", "i386"))
    assert proc.returncode == 1 and "cannot write the trace" in proc.stderr
