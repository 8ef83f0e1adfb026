"""traces/trace.schema.json, the machine-readable form of traces/README.md, against the
golden traces (tests/golden/), which test_trace_golden.py keeps byte-identical to what
padlock-emu writes: every record validates, keys come in the documented order, and the end
record's totals are the sums of the instruction records."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "traces/trace.schema.json").read_text())
GOLDEN = sorted((REPO / "tests/golden").glob("*.jsonl"))


@functools.cache
def validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def errors(record: dict) -> list[str]:
    return [e.message for e in validator().iter_errors(record)]


def test_there_are_golden_traces():
    assert len(GOLDEN) >= 30


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_trace_follows_the_schema(path: Path):
    records = [json.loads(line) for line in path.read_text().splitlines()]
    v = validator()
    for n, r in enumerate(records, 1):
        bad = [e.message for e in v.iter_errors(r)]
        assert not bad, f"{path.name}:{n}: {bad}"
        order = list(SCHEMA["$defs"][r["type"]]["properties"])
        assert sorted(r, key=order.index) == list(r), f"{path.name}:{n}: key order"
    assert [r["type"] for r in records] == ["run"] + ["insn"] * (len(records) - 2) + ["end"]
    insns, end = records[1:-1], records[-1]
    assert end["instructions"] == len(insns)
    assert end["padlock_cycles"] == sum(r["cycles"] for r in insns)
    assert [r["seq"] for r in insns] == list(range(len(insns)))
    width = 8 if records[0]["arch"] == "i386" else 16
    assert all(len(r["pc"]) == 2 + width for r in insns)


GOOD_INSN = {
    "type": "insn", "seq": 0, "cycle": 0, "pc": "0x08049eae", "fn": "main", "cpu": "esther-c5j",
    "insn": "XSTORE", "mnemonic": "xstore", "unit": "RNG", "addr_size": 32,
    "in": {"edx": "0x00000000", "edi": "0x080f0000"}, "out": {"eax": "0x00000048"},
    "eflags30_in": False, "eflags30_out": False, "status": "completed", "restarted": False,
    "bytes": 8, "blocks": 2, "cycles": 55, "int_cycles": 55, "key_reloaded": False,
    "result": None, "diag": [],
}


def test_the_schema_accepts_a_documented_record():
    assert errors(GOOD_INSN) == []


@pytest.mark.parametrize("change", [
    {"pc": "0x8049eae"},                        # 7 hex digits
    {"unit": "AES"},                            # no such unit
    {"status": "faulted"},                      # faulted without its fault
    {"diag": ["Missing_Rep"]},                  # not a stable diagnostic name
    {"in": {"xmm0": "0x00000000"}},             # not a general register
    {"cyles": 55},                              # a misspelt key
], ids=["short-pc", "unit", "fault-missing", "diag-name", "register", "misspelt"])
def test_the_schema_rejects(change: dict):
    assert errors({**GOOD_INSN, **change}) != []


def test_an_end_record_has_an_exit_code_or_a_signal_not_both():
    end = {"type": "end", "cycle": 1, "instructions": 0, "padlock_cycles": 0}
    assert errors({**end, "exit_code": 0}) == []
    assert errors({**end, "signal": 2}) == []
    assert errors(end) != []
    assert errors({**end, "exit_code": 0, "signal": 2}) != []
