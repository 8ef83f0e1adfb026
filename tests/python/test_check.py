"""The PadLock checker from Python (docs/checker.md): ``run(check=...)`` and
``Machine(check=True)``."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

import padlock_emu as pe
import sarif_schema
from _cbuild import build
from test_run import guest

# Decrypt, then encrypt with another control word and key, no EFLAGS store between: the
# encrypt runs with EFLAGS[30] = 1 (§1.8). The encrypt's line is marked.
SOURCE = r"""
#include <stdint.h>
static uint8_t cw[2][16] __attribute__((aligned(16)));
static uint8_t key[2][16] __attribute__((aligned(16)));
static uint8_t buf[16] __attribute__((aligned(16)));
static void ecb(const void *k, const void *c) {
  void *si = buf, *di = buf;
  unsigned long cx = 1;
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xc8"
                   : "+S"(si), "+D"(di), "+c"(cx) : "b"(k), "d"(c) : "memory");
}
int decrypt_then_encrypt(void) {
  cw[0][0] = 0x0a;
  cw[1][0] = 0x0a;
  cw[1][1] = 0x02;
#if defined(__x86_64__)
  __asm__ volatile("pushfq; popfq");
#else
  __asm__ volatile("pushfl; popfl");
#endif
  ecb(key[1], cw[1]);
  ecb(key[0], cw[0]); /* ENCRYPT */
  return 0;
}
"""
ENCRYPT_LINE = next(i for i, line in enumerate(SOURCE.splitlines(), 1) if "ENCRYPT" in line)


def test_run_check_lists_findings_and_sets_check_failed(tmp_path):
    sarif = tmp_path / "f.sarif"
    r = pe.run([guest("check_kinds"), "stale-key"], cpu="esther", check="error",
               check_sarif=sarif)
    assert [(f["kind"], f["function"]) for f in r.findings] == [("stale-key", "main")]
    assert r.check_failed and r.exit_code == 0
    assert "padlock-emu: check: error stale-key" in r.log
    assert json.loads(sarif.read_text())["runs"][0]["results"][0]["ruleId"] == "stale-key"
    warn = pe.run([guest("check_kinds"), "overlap-partial"], cpu="esther", check=True)
    assert [f["kind"] for f in warn.findings] == ["overlap-partial"] and not warn.check_failed
    off = pe.run([guest("check_kinds"), "stale-key"], cpu="esther")
    assert off.findings is None and not off.check_failed


@pytest.mark.parametrize("cpu,bits", [("esther", 32), ("nano", 64)])
def test_machine_check_names_function_and_line(tmp_path_factory, cpu, bits):
    obj = build(tmp_path_factory.mktemp("check"), SOURCE, bits, ["-O2", "-g", "-c"], ".o")
    m = pe.Machine(cpu, bits=bits, check=True)
    m.load(obj)
    m.call("decrypt_then_encrypt")
    found = m.findings()
    assert [(f["kind"], f["severity"], f["function"]) for f in found] == \
        [("stale-key", "error", "decrypt_then_encrypt")]
    assert Path(found[0]["file"]).suffix == ".c" and found[0]["line"] == ENCRYPT_LINE


def test_machine_sarif_file_uri_is_percent_encoded(tmp_path_factory):
    """A source under a directory with a space and a '#' gets a valid file URI (SARIF §3.4.3,
    RFC 3986) that decodes back to the path; the log validates against the official schema."""
    where = tmp_path_factory.mktemp("src dir #x")
    obj = build(where, SOURCE + "/* uri */\n", 32, ["-O2", "-g", "-c"], ".o")
    m = pe.Machine("esther", bits=32, check=True)
    m.load(obj)
    m.call("decrypt_then_encrypt")
    sarif = m.findings_sarif()
    sarif_schema.validate(sarif)
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert " " not in uri["uri"] and "%20" in uri["uri"] and "%23" in uri["uri"]
    parsed = urlparse(uri["uri"])
    assert parsed.scheme == "file" and unquote(parsed.path) == m.findings()[0]["file"]
    assert Path(unquote(parsed.path)).parent == where


# Ring-0 code writing the RNG's MSR 0x110B through the harness (WRMSR is not run as a guest
# instruction): a write's diagnostics (§2.2) are findings, with the writer in the backtrace.
MSR_SOURCE = r"""
void shim_wrmsr(unsigned msr, unsigned lo, unsigned hi);
int set_rng_msr(unsigned lo) {
  shim_wrmsr(0x110b, lo, 0); /* WRMSR */
  __asm__ volatile("" ::: "memory");
  return 0;
}
"""
WRMSR_LINE = next(i for i, line in enumerate(MSR_SOURCE.splitlines(), 1) if "WRMSR" in line)
ENBL, FLTR = 1 << 6, 1 << 14
# kind -> (cpu, a value with the undefined field, the corrected value)
MSR_CASES = {
    "rng-msr-reserved": ("esther", ENBL | 1 << 5, ENBL),  # bit 5 is RES
    "rng-field-reserved": ("esther", ENBL | FLTR, ENBL),  # no string filter on Esther
    "rng-fcnt-low": ("nehemiah-c5p", ENBL | FLTR | 4 << 16, ENBL | FLTR | 8 << 16),
}


@pytest.mark.parametrize("kind", sorted(MSR_CASES))
def test_machine_check_reports_msr_write_diagnostics(tmp_path_factory, kind):
    cpu, bad, good = MSR_CASES[kind]
    obj = build(tmp_path_factory.mktemp("msr"), MSR_SOURCE, 32, ["-O1", "-g", "-c"], ".o")
    m = pe.Machine(cpu, bits=32, check=True)
    m.stub("shim_wrmsr", lambda mm, msr, lo, hi: mm.wrmsr(msr, lo | hi << 32) and 0)
    m.load(obj)
    m.call("set_rng_msr", good)
    assert m.findings() == []
    m.call("set_rng_msr", bad)
    found = m.findings()
    assert [(f["kind"], f["insn"]) for f in found] == [(kind, "WRMSR")]
    assert f"WRMSR 0x110b <- {bad:#x}" in found[0]["message"]
    caller = found[0]["backtrace"][1]
    assert caller["function"] == "set_rng_msr" and caller["line"] == WRMSR_LINE


def test_machine_without_check_has_no_findings():
    with pytest.raises(pe.MachineError):
        pe.Machine("esther").findings()
