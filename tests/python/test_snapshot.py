"""Machine.snapshot(), Machine.restore(), pickling and deepcopy; Ctrl-C during Machine.call.

A snapshot holds everything a call sees and changes (docs/python.md): running the same calls
after restoring it must give the same bytes and the same cycle counts, in this process and in
another one that unpickles it into a fresh Machine.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import padlock_emu as pe
from _cbuild import build
from test_machine import SOURCE as HARNESS_SOURCE

# The harness tests' snippet (ecb, cbc, tsc, spin, use_host over the host_add stub) and
# a REP XSTORE loop and a counter in .bss.
SOURCE = HARNESS_SOURCE + r"""
/* REP XSTORE of n bytes, EDX = 0 (guide §2.1); returns EAX, the status word. */
unsigned long xstore_n(void *buf, unsigned long n) {
  unsigned long status;
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xc0" : "+D"(buf), "+c"(n), "=a"(status) : "d"(0)
                   : "memory");
  return status;
}
unsigned counter;
unsigned bump(void) { return ++counter; }
"""

KEY_A = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
KEY_B = bytes(range(16))
BLOCK = bytes.fromhex("6bc1bee22e409f96e93d7e117393172a")
ECB_A = bytes.fromhex("3ad77bb40d7a3660a89ecaf32466ef97")  # SP 800-38A F.1.1, key A
CW = (0x00A).to_bytes(4, "little") + bytes(12)  # AES-128, 10 rounds, encrypt (§3.2)


def host_add(machine, a, b):  # a stub pickle can store (by reference)
    return a + b


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("snapshot"), SOURCE, 32,
                 ["-O1", "-shared", "-fPIC", "-nostdlib"], ".so")


def prepared(driver: Path) -> pe.Machine:
    """A machine with the driver, buffers, a loaded key A (EFLAGS[30] = 1) and RNG bits."""
    m = pe.Machine("esther", seed=5)
    m.stub("host_add", host_add)
    m.load(driver)
    m.buffers = {
        "key": m.alloc(256, data=KEY_A), "cw": m.alloc(16, data=CW),
        "src": m.alloc(4096, data=bytes(range(256)) * 16), "dst": m.alloc(4096),
        "iv": m.alloc(16, data=bytes(16)), "rng": m.alloc(256),
    }
    b = m.buffers
    m.call("ecb", b["src"], b["dst"], b["key"], b["cw"], 1)
    assert m.eflags30
    m.advance(50_000)  # the RNG fills its buffers
    return m


def workload(m: pe.Machine, b: dict) -> list:
    """Calls whose results depend on every part of the state: the key registers (a stale
    key with EFLAGS[30] = 1, §1.8), the RNG buffers and generators (§2.3), the cache model
    (XCRYPT's cycles), the clock (RDTSC) and memory (a counter in .bss)."""
    out = []

    def note(value):
        c = m.last_call
        out.append([value, c.cycles, c.instructions, c.padlock_cycles, m.now])

    m.write(b["key"], KEY_B)  # not loaded: EFLAGS[30] is still 1
    m.write(b["src"], BLOCK)
    note(m.call("ecb", b["src"], b["dst"], b["key"], b["cw"], 1, ret="void") or
         m.read(b["dst"], 16).hex())
    note(m.call("xstore_n", b["rng"], 40))
    out.append(m.read(b["rng"], 48).hex())
    # EFLAGS[30] is still 1 (no PUSHF in between): key A again, with the cache model's cost.
    note(m.call("cbc", b["src"], b["dst"], b["key"], b["iv"], b["cw"], 256))
    out.append(m.read(b["dst"], 4096).hex())
    note(m.call("tsc", ret="u64"))
    note(m.call("bump"))
    note(m.call("use_host", 2, 3))
    m.advance(12_345)
    note(m.call("xstore_n", b["rng"], 64))
    out.append(m.read(b["rng"], 72).hex())
    stats = m.stats()
    out.append([stats["cycles"], {k: [s.count, s.bytes, s.cycles, s.key_reloads]
                                  for k, s in stats["padlock"].items()}])
    return out


def test_restore_repeats_results_and_cycles(driver):
    m = prepared(driver)
    b = m.buffers
    snap = m.snapshot()
    assert snap.cpu == "esther-c5j" and snap.bits == 32 and snap.now == m.now
    first = workload(m, b)
    # The stale key: block encrypted under key A although key B was at EBX (§1.8).
    assert first[0][0] == ECB_A.hex()
    after = m.now
    m.restore(snap)
    assert m.now == snap.now < after and m.eflags30
    second = workload(m, b)
    assert second == first
    # And once more from the same snapshot.
    m.restore(snap)
    assert workload(m, b) == first


def test_restore_undoes_memory_mappings_and_registers(driver):
    m = prepared(driver)
    b = m.buffers
    m["esi"] = 0x1234
    snap = m.snapshot()
    m.write(b["src"], b"\xff" * 16)
    late = m.alloc(4096, data=b"late")
    m["esi"] = 0x5678
    m.force_key_reload()
    m.restore(snap)
    assert m.read(b["src"], 4) == bytes(range(4))
    assert m["esi"] == 0x1234 and m.eflags30
    with pytest.raises(pe.MachineError, match="not mapped"):
        m.read(late, 4)
    # The arena hands out the same address again.
    assert m.alloc(4096) == late


def test_restore_into_a_fresh_machine_and_pickle(driver):
    m = prepared(driver)
    snap = m.snapshot()
    expected = workload(m, m.buffers)
    fresh = pe.Machine("esther")  # another seed: the RNG state comes from the snapshot
    fresh.stub("host_add", host_add)
    fresh.restore(pickle.loads(pickle.dumps(snap)))
    assert [o.path for o in fresh.objects] == [str(driver)]
    assert fresh.symbol("xstore_n") == m.symbol("xstore_n")
    assert workload(fresh, m.buffers) == expected


def test_pickled_snapshot_round_trips_across_processes(driver, tmp_path):
    m = prepared(driver)
    snap = m.snapshot()
    expected = workload(m, m.buffers)
    (tmp_path / "snap.pickle").write_bytes(pickle.dumps(snap))
    (tmp_path / "buffers.json").write_text(json.dumps(m.buffers))
    script = f"""
import json, pickle, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import padlock_emu as pe
import test_snapshot as t
m = pe.Machine("esther")
m.stub("host_add", t.host_add)
m.restore(pickle.loads(open({str(tmp_path / "snap.pickle")!r}, "rb").read()))
print(json.dumps(t.workload(m, json.load(open({str(tmp_path / "buffers.json")!r})))))
"""
    env = dict(os.environ, PYTHONPATH=str(Path(pe.__file__).parents[1]))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(json.dumps(expected))


def test_pickle_and_deepcopy_a_machine(driver):
    m = prepared(driver)
    for twin in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert twin is not m and twin.stubs["host_add"].function is host_add
        assert twin.now == m.now and twin.eflags30
        assert workload(twin, m.buffers) == workload(copy.deepcopy(m), m.buffers)
    # The original was left alone by its copies.
    assert m.call("bump") == 1


def test_a_lambda_stub_does_not_pickle_but_its_snapshot_does(driver):
    m = pe.Machine("esther")
    m.stub("host_add", lambda machine, a, b: a + b)
    m.load(driver)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(m)
    assert pickle.loads(pickle.dumps(m.snapshot())).now == m.now
    assert copy.deepcopy(m).call("use_host", 1, 2) == 30


def test_snapshot_of_another_machine_is_refused_and_changes_nothing(driver):
    m = prepared(driver)
    snap = m.snapshot()
    for other in (pe.Machine("nano"), pe.Machine("nano", bits=64),
                  pe.Machine("esther", timing=False), pe.Machine("esther", mhz=1000)):
        other.advance(77)
        va = other.alloc(16, data=b"x" * 16)
        with pytest.raises(pe.SnapshotError):
            other.restore(snap)
        assert other.now == 77 and other.read(va, 16) == b"x" * 16 and not other.objects
    with pytest.raises(pe.SnapshotError, match="truncated"):
        m.restore(pe.Snapshot(**{**snap.__dict__, "machine": snap.machine[:-100]}))
    assert m.call("bump") == 1  # m is as it was


def test_no_snapshot_inside_a_call_or_with_the_checker(driver):
    m = pe.Machine("esther")
    seen = []

    def stub(machine, a, b):
        with pytest.raises(pe.MachineError, match="not while a call"):
            machine.snapshot()
        seen.append(True)
        return 0

    m.stub("host_add", stub)
    m.load(driver)
    m.call("use_host", 1, 2)
    assert seen == [True]
    with pytest.raises(pe.MachineError, match="checker"):
        pe.Machine("esther", check=True).snapshot()


CTRL_C_SCRIPT = r"""
import sys, time
import padlock_emu as pe
m = pe.Machine("esther")
m.stub("host_add", lambda machine, a, b: machine.call("spin") if a == 99 else a + b)
m.load(sys.argv[1])
for how in ("spin", "nested"):
    print("calling", flush=True)
    try:
        m.call("spin") if how == "spin" else m.call("use_host", 99, 0)
    except KeyboardInterrupt:
        print("interrupted", time.time(), flush=True)
    # usable: ordinary calls work afterwards
    print("after", m.call("use_host", 2, 3), m.call("bump"), flush=True)
"""


def test_ctrl_c_stops_a_long_call_and_the_machine_stays_usable(driver, tmp_path):
    """SIGINT during Machine.call (a spinning function, then one spinning in a call nested in
    a stub) raises KeyboardInterrupt within 100 ms; the next calls return normally."""
    env = dict(os.environ, PYTHONPATH=str(Path(pe.__file__).parents[1]))
    p = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT, str(driver)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    delays, after = [], []
    try:
        for _ in range(2):
            assert p.stdout.readline().strip() == "calling"
            time.sleep(0.5)  # the guest spins
            sent = time.time()
            p.send_signal(signal.SIGINT)
            line = p.stdout.readline().split()
            assert line[0] == "interrupted", (line, p.stderr.read())
            delays.append(float(line[1]) - sent)
            after.append(p.stdout.readline().split())
        assert p.wait(timeout=30) == 0, p.stderr.read()
    finally:
        p.kill()
    assert after == [["after", "50", "1"], ["after", "50", "2"]]
    assert all(0 <= d < 0.1 for d in delays), delays


def test_a_sigint_handler_of_the_program_gets_the_signal_and_the_call_is_interrupted(driver):
    m = pe.Machine("esther")
    m.stub("host_add", host_add)
    m.load(driver)
    seen = []
    old = signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
    sender = subprocess.Popen([sys.executable, "-c",
                               f"import os, signal, time; time.sleep(0.5); os.kill({os.getpid()}, signal.SIGINT)"])
    try:
        with pytest.raises(pe.CallInterrupted, match="interrupted"):
            m.call("spin")
    finally:
        signal.signal(signal.SIGINT, old)
        sender.wait(timeout=30)
    assert seen == [signal.SIGINT]
    assert m.call("use_host", 4, 5) == 90
