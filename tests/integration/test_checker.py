"""padlock-emu --check (docs/checker.md): each finding kind from its minimal guest
(tests/guest/check_kinds.c), the report formats (text on stderr, JSON Lines, SARIF 2.1.0)
and --check=error's exit status."""

from __future__ import annotations

import json
import subprocess

import jsonschema
import pytest

import sarif_schema

CHECK_ERROR_EXIT = 99

# case -> (cpu, kind, severity, guest exit status)
CASES = {
    "stale-key": ("esther", "stale-key", "error", 0),
    "stale-key-address": ("esther", "stale-key-address", "warning", 0),
    "overlap-partial": ("esther", "overlap-partial", "warning", 0),
    "dgest-in-place": ("esther", "dgest-in-place", "warning", 0),
    "ctr-erratum": ("esther", "ctr-erratum", "warning", 0),
    "prefetch-past-end": ("esther", "prefetch-past-end", "warning", 0),
    "xstore-overrun": ("esther", "xstore-overrun", "warning", 0),
    "cw-reserved": ("esther", "cw-reserved", "warning", 0),
    "unit-unavailable": ("nehemiah", "unit-unavailable", "error", -4),   # SIGILL
    "alignment-fault": ("esther", "alignment-fault", "error", -11),      # SIGSEGV
}


SIGILL, SIGSEGV = -4, -11
# Diagnostic-derived kinds (docs/fidelity.md), one case of tests/guest/check_diags.c each:
# case (= kind) -> (cpu, arch, severity, exit status of the faulty variant)
DIAG_CASES = {
    "repne-prefix": ("esther", "i386", "warning", 0),
    "missing-rep": ("esther", "i386", "error", SIGILL),
    "cw-ciphr": ("esther", "i386", "warning", 0),
    "cw-ksize-reserved": ("esther", "i386", "error", SIGSEGV),
    "cw-hw-keygen-not-128": ("esther", "i386", "error", SIGSEGV),
    "cw-dgest-nehemiah": ("nehemiah", "i386", "warning", 0),
    "cw-align-nehemiah": ("nehemiah", "i386", "warning", 0),
    "ctr-on-nehemiah": ("nehemiah", "i386", "error", SIGILL),
    "cw-dgest-mode": ("esther", "i386", "warning", 0),
    "cw-inter": ("esther", "i386", "warning", 0),
    "cw-keyram-16-rounds": ("esther", "i386", "warning", 0),
    "ctr-counter-wrap": ("esther", "i386", "warning", 0),
    "xsha-eax-beyond-ecx": ("esther", "i386", "warning", 0),
    "xsha-eax-not-block": ("esther", "i386", "warning", 0),
    "montmul-bad-ecx": ("esther", "i386", "error", SIGSEGV),
    "montmul-bad-state": ("esther", "i386", "error", SIGSEGV),
    "montmul-t-not-zero": ("esther", "i386", "warning", 0),
    "montmul-addr64": ("nano", "x86_64", "error", SIGILL),
}


def check_run(emulator, guest, cpu, args, tmp_path, mode="--check"):
    jsonl, sarif = tmp_path / "f.jsonl", tmp_path / "f.sarif"
    cmd = [str(emulator), "run", mode, "--check-jsonl", str(jsonl), "--check-sarif", str(sarif),
           "--cpu", cpu, str(guest)] + list(args)
    proc = subprocess.run(cmd, capture_output=True, timeout=120)
    findings = [json.loads(line) for line in jsonl.read_text().splitlines()]
    return proc, findings, json.loads(sarif.read_text())


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_kind_from_its_guest(emulator_path, guest_dir, tmp_path, case):
    """Exactly the case's finding, at main in check_kinds.c, with a line and a backtrace."""
    cpu, kind, severity, status = CASES[case]
    proc, findings, _ = check_run(emulator_path, guest_dir / "guest_check_kinds_i386", cpu,
                                  [case], tmp_path)
    assert proc.returncode == status, proc.stderr.decode()
    assert [(f["kind"], f["severity"]) for f in findings] == [(kind, severity)]
    f = findings[0]
    assert f["function"] == "main"
    assert f["file"].endswith("tests/guest/check_kinds.c") and f["line"] > 0
    assert f["chip"] and f["section"].startswith("§")
    assert f["backtrace"][0]["pc"] == f["pc"]
    assert "__libc_start_call_main" in [b.get("function") for b in f["backtrace"][1:]]
    text = proc.stderr.decode()
    assert f"padlock-emu: check: {severity} {kind} ({f['section']}) at {f['pc']} in main (" in text
    assert "padlock-emu: check: 1 finding" in text


@pytest.mark.parametrize("case", sorted(DIAG_CASES))
def test_each_diagnostic_kind_from_its_guest(emulator_path, guest_dir, tmp_path, case):
    """The faulty variant raises exactly its kind, at main in check_diags.c; the corrected
    variant (same work, done as the guide defines it) runs to the end with no finding."""
    cpu, arch, severity, status = DIAG_CASES[case]
    guest = guest_dir / f"guest_check_diags_{arch}"
    if not guest.is_file():
        pytest.skip(f"no {arch} guests in {guest_dir}")
    proc, findings, sarif = check_run(emulator_path, guest, cpu, [case], tmp_path)
    assert proc.returncode == status, proc.stderr.decode()
    assert [(f["kind"], f["severity"]) for f in findings] == [(case, severity)]
    f = findings[0]
    assert f["function"] == "main"
    assert f["file"].endswith("tests/guest/check_diags.c") and f["line"] > 0
    assert sarif["runs"][0]["results"][0]["ruleId"] == case
    fixed, clean, _ = check_run(emulator_path, guest, cpu, [case, "fixed"], tmp_path)
    assert fixed.returncode == 0, fixed.stderr.decode()
    assert fixed.stdout.decode() == f"done {case} fixed\n"
    assert clean == []


def test_stale_key_guest(emulator_path, guest_dir, tmp_path):
    """The stale_key guest's 'stale' case (new key, no EFLAGS store: §1.8 says the chip
    keeps the old key, test_guest_stale_key.py checks that result) is flagged; its
    'reload' case (PUSHF/POPF before the new key) has no finding."""
    _, findings, _ = check_run(emulator_path, guest_dir / "guest_stale_key_i386", "esther",
                               ["stale"], tmp_path)
    assert [f["kind"] for f in findings] == ["stale-key"]
    _, clean, _ = check_run(emulator_path, guest_dir / "guest_stale_key_i386", "esther",
                            ["reload"], tmp_path)
    assert clean == []


def test_check_error_exit_status_and_sarif(emulator_path, guest_dir, tmp_path):
    """The demo's deliberate stale key is an error: --check=error exits 99, --check exits 0;
    the SARIF log validates against the official SARIF 2.1.0 schema and carries the same
    finding."""
    guest = guest_dir / "guest_demo_i386"
    proc, findings, sarif = check_run(emulator_path, guest, "esther", [], tmp_path,
                                      "--check=error")
    assert proc.returncode == CHECK_ERROR_EXIT
    warn, _, _ = check_run(emulator_path, guest, "esther", [], tmp_path)
    assert warn.returncode == 0
    sarif_schema.validate(sarif)
    run = sarif["runs"][0]
    results = run["results"]
    assert [r["ruleId"] for r in results] == [f["kind"] for f in findings]
    stale = results[0]
    assert stale["ruleId"] == "stale-key" and stale["level"] == "error"
    assert run["tool"]["driver"]["rules"][stale["ruleIndex"]]["id"] == "stale-key"
    loc = stale["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith("tests/guest/demo.c")
    assert loc["logicalLocations"][0]["name"] == "main"
    assert loc["physicalLocation"]["address"]["absoluteAddress"] == int(findings[0]["pc"], 16)


def test_schema_rejects_a_broken_log():
    """Validation against the official schema is not vacuous: a result without a message, a
    bad level, a wrong version, an unknown property and a file URI with a space are each
    rejected."""
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
        {"message": {"text": "m"}, "level": "error", "locations": [
            {"physicalLocation": {"artifactLocation": {"uri": "file:///a%20b.c"},
                                  "address": {"absoluteAddress": 1}}}]}]}]}
    sarif_schema.validate(good)
    bad = [
        {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{}]}]},
        {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                       "results": [{"message": {"text": "m"}, "level": "bad"}]}]},
        {"version": "2.0.0", "runs": []},
        {"version": "2.1.0", "runs": [], "findings": []},
        {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
            {"message": {"text": "m"}, "locations": [
                {"physicalLocation": {"artifactLocation": {"uri": "file:///a b.c"}}}]}]}]},
    ]
    for doc in bad:
        with pytest.raises(jsonschema.ValidationError):
            sarif_schema.validate(doc)


def test_xsha_pad_only_is_a_note(emulator_path, guest_dir, tmp_path):
    """The Linux padlock-sha.c final step (EAX = ECX) is reported as a note, not a problem."""
    data = tmp_path / "f64.bin"
    data.write_bytes(bytes(range(64)))
    proc, findings, _ = check_run(emulator_path, guest_dir / "guest_sha_final_i386", "esther",
                                  ["256", str(data)], tmp_path, "--check=error")
    assert proc.returncode == 0
    assert [(f["kind"], f["severity"]) for f in findings] == [("xsha-pad-only", "note")]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_debian_openssl_engine_has_no_finding(emulator_path, tmp_path, arch):
    """Debian's OpenSSL padlock engine (i386 on Esther from the sysroot, x86-64 on Nano):
    every cipher mode it offers, encrypt and decrypt, under --check=error: it reloads the
    key whenever its saved context changes (padlock_verify_context), zeroes the control
    word and uses no undefined case, so there is no finding (docs/checker.md)."""
    from realclients import openssl_client

    client = openssl_client(arch)
    data = tmp_path / "in.bin"
    data.write_bytes(bytes(range(256)) * 97)  # whole blocks: -nopad
    modes = ["aes-128-cbc", "aes-192-ecb", "aes-256-cfb", "aes-128-ofb", "aes-256-ctr"]
    for mode in modes:
        for decrypt in ([], ["-d"]):
            jsonl = tmp_path / f"{mode}{len(decrypt)}.jsonl"
            p = client.run(emulator_path, "/usr/bin/openssl",
                           ["enc", *decrypt, "-nopad", "-engine", "padlock", f"-{mode}",
                            "-K", "00" * (int(mode.split("-")[1]) // 8), "-iv", "01" * 16, "-in", data,
                            "-out", tmp_path / "out.bin"],
                           stats=True, extra=("--check=error", "--check-jsonl", str(jsonl)))
            assert p.returncode == 0
            assert jsonl.read_text() == "", (mode, decrypt)
            assert "padlock-emu: check: 0 findings" in p.stderr.decode()
            assert "REP XCRYPT" in p.stderr.decode()  # the engine did the work
