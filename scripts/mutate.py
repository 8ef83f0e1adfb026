#!/usr/bin/env python3
"""The mutation check (docs/reliability.md, "Mutation check"): small semantic changes to the
units, timing, virtual time, signal frames, the loader, the CLI, threads, the gdb stub, the
sandbox, /proc and system mode's C ABI, each applied alone, built incrementally, run against
the tests that should notice, and reverted. A mutation the tests do not notice ("survivor")
is a hole in the tests.

usage: scripts/mutate.py [--build DIR] [--only ID[,ID...]] [--list] [--check]

  --build DIR  a configured build tree with the emulator (default build/)
  --only       run these mutations only
  --list       print the mutations and exit
  --check      verify that every mutation's text occurs exactly once, and exit

Each mutation restores its file with `git checkout` afterwards, also on failure or Ctrl-C;
the script refuses to start when a file it mutates has uncommitted changes. Exit status 0
when every mutation was killed. Run it before resolving work that touches models/, time or
the CLI, and quote the kill rate."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Test:
    """One test run: a CTest binary with a gtest filter, or pytest with arguments."""
    kind: str  # "gtest" or "pytest"
    target: str  # gtest: the test binary (build target); pytest: file[::test]
    filter: str = ""  # gtest: --gtest_filter; pytest: -k expression


def gtest(binary: str, filt: str) -> Test:
    return Test("gtest", binary, filt)


def pytest(path: str, k: str = "") -> Test:
    return Test("pytest", path, k)


@dataclass(frozen=True)
class Mutation:
    id: str
    area: str
    file: str
    find: str
    replace: str
    tests: tuple[Test, ...]


M = Mutation
CLI = ("padlock-emu",)
# The address-space policy's and guest memory's unit tests (tests/unit/emulator/linux/vm/).
VM_POLICY = "emulator/linux/vm/address_space_policy.cpp"
VM_USER = "emulator/linux/vm/user_memory.cpp"
VM_GTESTS = (gtest("test_emulator",
                   "AddressSpacePolicyTest.*:ReadImpliesExecTest.*:MaxMemoryTest.*"),)
USER_GTESTS = (gtest("test_emulator", "UserMemory.*"),)
FUTEX_WORDS = "emulator/linux/threads/futex_words.cpp"
FUTEX_GTESTS = (gtest("test_emulator", "FutexWordsTest.*"),)
SCHEDULER = "emulator/linux/threads/scheduler.cpp"
TRAP = "emulator/exec/padlock_call.cpp"
FILES = "emulator/linux/files/guest_files.cpp"
HOST_STOP = "emulator/linux/host_stop/host_stop.cpp"
FILES_GTESTS = (gtest("test_emulator", "GuestFilesTest.*"),)
TRAP_GTESTS = (gtest("test_emulator", "PadlockTrapTest.*"),)
SCHED_GTESTS = (gtest("test_emulator", "SchedulerTest.*"),)
# The §3.3 SSE clocks after each ECB case, inline and with the hook on every block.
SSE_WAIT_TESTS = (pytest("tests/integration/test_timing.py", "ecb_table or inline_block_costs"),)

MUTATIONS: list[Mutation] = [
    # --- unit register results, faults and restart state --------------------------------
    M("ace-esi-advance", "ACE registers", "models/ace/ace_unit.cpp",
      "reg_set(s_, Gpr::SI, ea_add(esi_, 16 * k, asz_), asz_);",
      "reg_set(s_, Gpr::SI, ea_add(esi_, 16 * (k ? k - 1 : 0), asz_), asz_);",
      (gtest("test_ace", "*"),)),
    M("ace-ecx-left", "ACE restart state", "models/ace/ace_unit.cpp",
      "reg_set(s_, Gpr::CX, ecx_ - k, asz_);", "reg_set(s_, Gpr::CX, 0, asz_);",
      (gtest("test_ace", "*"),)),
    M("ace-iv-pointer", "ACE registers (EAX = last IV)", "models/ace/ace_unit.cpp",
      "reg_set(s_, Gpr::AX, dgest_ ? edi_ : ea_add(edi_, 16 * (k - 1), asz_), asz_);",
      "reg_set(s_, Gpr::AX, dgest_ ? edi_ : ea_add(edi_, 16 * k, asz_), asz_);",
      (gtest("test_ace", "*"),)),
    M("xsha-eax-final", "PHE registers", "models/phe/phe_unit.cpp",
      "reg_set(s, Gpr::AX, ecx, as);  // §4.1",
      "reg_set(s, Gpr::AX, ecx - 1, as);  // §4.1",
      (gtest("test_phe", "*"),)),
    M("xsha-eax-restart", "PHE restart state", "models/phe/phe_unit.cpp",
      "      reg_set(s, Gpr::AX, done, as);\n",
      "      reg_set(s, Gpr::AX, done - kBlock, as);\n",
      (gtest("test_phe", "*"),)),
    M("xsha-fault-commits", "PHE faults", "models/phe/phe_unit.cpp",
      "    if (got < want) return run.fault(FaultKind::PageFault, fault_at, false);\n"
      "    if (want == until_irq || env.host_stop_requested())",
      "    if (got < want) return run.finish(Status::Completed);\n"
      "    if (want == until_irq || env.host_stop_requested())",
      (gtest("test_phe", "*"),)),
    M("montmul-restart-edx", "PMM restart state", "models/pmm/pmm_unit.cpp",
      "reg_set(s, Gpr::DX, job.last_u, 32);", "reg_set(s, Gpr::DX, 0, 32);",
      (gtest("test_pmm", "*"),)),
    M("montmul-ecx-end", "PMM registers", "models/pmm/pmm_unit.cpp",
      "  reg_set(s, Gpr::CX, 0, 32);\n", "  reg_set(s, Gpr::CX, 1, 32);\n",
      (gtest("test_pmm", "*"),)),
    M("xstore-edi", "RNG registers", "models/rng/rng_unit.cpp",
      "reg_set(s, Gpr::DI, ea_add(edi, q.random_bytes, as), as);  // DF ignored",
      "reg_set(s, Gpr::DI, ea_add(edi, q.stores * 4, as), as);  // DF ignored",
      (gtest("test_rng", "*"),)),
    M("xstore-empty-stores", "RNG: no bytes available", "models/rng/rng_unit.cpp",
      "  if (acc.full() == 0) {\n    // §2.1: fewer than 8 bytes available",
      "  if (false) {\n    // §2.1: fewer than 8 bytes available",
      (gtest("test_rng", "*"), pytest("tests/integration/test_guest_xstore.py"))),
    # --- the late Nano's and Zhaoxin's units (PHE2, GMI) ----------------------------------
    M("phe2-ecx-countdown", "PHE2 and SM3 registers (the ECX-counted loop)", "models/unit_run.hpp",
      "    reg_set(s, Gpr::CX, ecx, as);\n", "    reg_set(s, Gpr::CX, ecx + 1, as);\n",
      (gtest("test_gmi", "Phe2*:Sm3*"),)),
    M("phe2-state-order", "PHE2 compression", "models/phe/sha512_portable.cpp",
      "      v[4] += t1;", "      v[4] += t2;", (gtest("test_gmi", "Phe2*"),)),
    M("phe2-ecx-zero", "PHE2 ECX = 0", "models/phe/phe2_unit.cpp",
      "  if (ecx == 0) {", "  if (ecx == 0 && false) {", (gtest("test_gmi", "Phe2*"),)),
    M("sm3-pad-length", "SM3 padding", "models/gmi/sm3_unit.cpp",
      "  const uint64_t bits = ecx * 8;", "  const uint64_t bits = ecx * 8 + 8;",
      (gtest("test_gmi", "Sm3*"),)),
    M("sm3-eax-result", "SM3 registers", "models/gmi/sm3_unit.cpp",
      "  reg_set(s, Gpr::AX, ecx, as);", "  reg_set(s, Gpr::AX, 0, as);",
      (gtest("test_gmi", "Sm3*"),)),
    M("sm3-esi-pad-mode", "SM3 registers (EAX = 0: ESI past the message)",
      "models/gmi/sm3_unit.cpp", "  commit();\n  reg_set(s, Gpr::SI, esi, as);\n",
      "  commit();\n", (gtest("test_gmi", "Sm3*"),)),
    M("sm3-ebx-select", "SM3 EBX", "models/gmi/sm3_unit.cpp",
      "  if (ebx != kSm3Select) {", "  if (ebx == 0) {", (gtest("test_gmi", "Sm3*"),)),
    M("sm4-cbc-chain", "SM4 CBC", "models/gmi/sm4_unit.cpp",
      "          std::memcpy(iv, in, kBlock);", "          std::memcpy(iv, ks, kBlock);",
      (gtest("test_gmi", "Sm4*"),)),
    M("sm4-cfb-feedback", "SM4 CFB", "models/gmi/sm4_unit.cpp",
      "        std::memcpy(iv, cw.decrypt ? in : out, kBlock);",
      "        std::memcpy(iv, out, kBlock);", (gtest("test_gmi", "Sm4*"),)),
    M("sm4-ctr-carry", "SM4 CTR counter", "models/gmi/sm4_unit.cpp",
      "        iv[14] = static_cast<uint8_t>(ctr >> 8);",
      "        iv[14] = static_cast<uint8_t>(ctr >> 8);\n        if (ctr == 0x10000) ++iv[13];",
      (gtest("test_gmi", "Sm4*"),)),
    M("sm4-mac-edi", "SM4 MAC", "models/gmi/sm4_unit.cpp",
      "    if (!mac) edi = ea_add(edi, kBlock, as);", "    edi = ea_add(edi, kBlock, as);",
      (gtest("test_gmi", "Sm4*"),)),
    M("sm4-iv-writeback", "SM4 IV at EDX", "models/gmi/sm4_unit.cpp",
      "    if (uses_iv) mem.write(edx, iv, kBlock);", "",
      (gtest("test_gmi", "Sm4*"),)),
    M("sm4-key-schedule", "SM4 key expansion", "models/gmi/sm4.cpp",
      "  return b ^ rotl(b, 13) ^ rotl(b, 23);", "  return b ^ rotl(b, 13) ^ rotl(b, 22);",
      (gtest("test_gmi", "Sm4*"),)),
    M("sm2-range-check", "SM2 verify", "models/gmi/sm2.cpp",
      "  mpz_add(big_r, big_r, mpz_roinit_n(x, x1_limbs, 4));\n", "",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm2-dbl-alpha", "SM2 Jacobian doubling", "models/gmi/sm2.cpp",
      "    f.add(alpha, t, alpha);  // 3 (X - delta)(X + delta)", "    alpha = t;",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm2-dbl-z", "SM2 Jacobian doubling", "models/gmi/sm2.cpp",
      "    f.sub(q.z, t, delta);", "    q.z = t;", (gtest("test_gmi", "Sm2*"),)),
    M("sm2-add-same-point", "SM2 sum: a point added to itself", "models/gmi/sm2.cpp",
      "      if (is_zero(r)) return dbl(q);\n      q.z = Fe{};\n",
      "      if (is_zero(r)) return;\n      q.z = Fe{};\n",
      (gtest("test_gmi", "Sm2.LadderEdgeCases*"),)),
    M("sm2-add-negative", "SM2 sum: a point added to its negative", "models/gmi/sm2.cpp",
      "      q.z = Fe{};\n      return;", "      return;",
      (gtest("test_gmi", "Sm2.LadderEdgeCases*"),)),
    M("sm2-madd-same-point", "SM2 multiples of P: P + P", "models/gmi/sm2.cpp",
      "      if (is_zero(r)) return dbl(q);\n      q.z = Fe{};  // q = -a",
      "      if (is_zero(r)) return;\n      q.z = Fe{};  // q = -a",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm2-base-table-entry", "SM2 table of j·16^i·G: one wrong entry", "models/gmi/sm2.cpp",
      "        entry[i][j] = c.to_affine(q);",
      "        entry[i][j] = c.to_affine(q);\n        if (i == 40 && j == 8) entry[i][j] = base;",
      (gtest("test_gmi", "Sm2.EveryTableEntry*"),)),
    M("sm2-base-table-step", "SM2 table of j·16^i·G: the step to 16^(i+1)·G", "models/gmi/sm2.cpp",
      "      c.add(q, base);\n      base = c.to_affine(q);", "      base = c.to_affine(q);",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm2-multiples", "SM2 multiples j·P: one wrong", "models/gmi/sm2.cpp",
      "    multiple[j] = multiple[j - 1];", "    multiple[j] = multiple[j == 13 ? 11 : j - 1];",
      (gtest("test_gmi", "Sm2.EveryTableEntry*"),)),
    M("sm2-window", "SM2 4-bit windows of a scalar", "models/gmi/sm2.cpp",
      "i < 48 ? k.l2 : k.l3", "i < 48 ? k.l2 : k.l2", (gtest("test_gmi", "Sm2*"),)),
    M("sm2-final-sum", "SM2 [s]G + [t]P", "models/gmi/sm2.cpp",
      "  c.add(q, tp);\n  return q;", "  return q;", (gtest("test_gmi", "Sm2*"),)),
    M("sm2-affine-x", "SM2 affine x1", "models/gmi/sm2.cpp",
      "    f.mul(a.x, q.x, zi2);", "    f.mul(a.x, q.x, zi);", (gtest("test_gmi", "Sm2*"),)),
    M("sm2-reduce-carry", "SM2 field: a sum or product past 2^256", "models/gmi/sm2.cpp",
      "  return (carry != 0 || borrow == 0) ? d : a;", "  return borrow == 0 ? d : a;",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm2-sub-borrow", "SM2 field: a difference below 0", "models/gmi/sm2.cpp",
      "    r = borrow != 0 ? add_carry(d, kPrime, carry) : d;", "    r = d;\n    (void)carry;",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm2-mont-carry", "SM2 field: Montgomery product's carries", "models/gmi/sm2.cpp",
      "  x = u128{a.l3} * ci + t.t3 + hi(x);", "  x = u128{a.l3} * ci + t.t3;",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm2-on-curve", "SM2 key on the curve", "models/gmi/sm2.cpp",
      "    f.add(r, r, f.b);\n", "", (gtest("test_gmi", "Sm2*"),)),
    M("sm2-edx-verify", "SM2 EDX", "models/gmi/sm2_unit.cpp",
      "  if (static_cast<uint32_t>(s[Gpr::DX]) != kSm2Verify) {",
      "  if (static_cast<uint32_t>(s[Gpr::DX]) == 0) {", (gtest("test_gmi", "Sm2*"),)),
    M("not-modelled-ud", "not-modelled stop", "models/padlock.cpp",
      "    return Outcome::faulted(FaultKind::NotModelled);\n  }",
      "    return Outcome::fault_ud();\n  }",
      (gtest("test_gmi", "NotModelled*"), pytest("tests/python/test_zx_units.py", "unmodelled"))),
    M("sm2-resolve", "F2 0F A6 C0 without SM2", "models/padlock.cpp",
      "  if (d.id != isa::InsnId::Sm2 || cpu_.units.sm2) return d;",
      "  if (true) return d;", (gtest("test_gmi", "Sm2*"),)),
    M("not-modelled-exit", "not-modelled stop (CLI)", "emulator/linux/padlock_trap.cpp",
      "  result_.exit_code = kNotModelledExit;", "  result_.exit_code = 0;",
      (pytest("tests/python/test_zx_units.py", "unmodelled"),)),
    # --- EFLAGS[30] and the CTR erratum -----------------------------------------------------
    M("eflags30-not-set", "EFLAGS[30]", "models/ace/ace_unit.cpp",
      "      s_.set_eflags30(true);  // §1.8: set after loading",
      "      s_.set_eflags30(false);  // §1.8: set after loading",
      (gtest("test_ace", "*"),)),
    M("eflags30-signal", "EFLAGS[30] at signal delivery", "emulator/linux/signal/delivery.cpp",
      "  // §1.8: signal delivery stores EFLAGS, so EFLAGS[30] is 0 in the handler.\n"
      "  clear_eflags30();",
      "  // §1.8: signal delivery stores EFLAGS, so EFLAGS[30] is 0 in the handler.",
      (gtest("test_emulator", "*Eflags30*:*Signal*"),
       pytest("tests/integration/test_guest_stale_key.py"))),
    M("ctr-erratum-parity", "CTR erratum", "models/ace/ace_unit.cpp",
      "if (errata && k % 2 == 0) extra = 1;", "if (errata && k % 2 == 1) extra = 1;",
      (gtest("test_ace", "*"), pytest("tests/integration/test_guest_ctr_errata.py"))),
    # --- interrupt points and timing tables -------------------------------------------------
    M("ace-interrupt-min-left", "interrupt points", "models/ace/ace_unit.cpp",
      "if (env.interrupt_at == kNever || n <= min_left) return kNever;",
      "if (env.interrupt_at == kNever || n <= min_left + 1) return kNever;",
      (gtest("test_ace", "*"),)),
    M("pmm-interrupt-pending", "interrupt points", "models/pmm/pmm_unit.cpp",
      "    clock.due_at = 0;", "    clock.due_at = std::numeric_limits<double>::infinity();",
      (gtest("test_pmm", "*"),)),
    M("ace-ecb-table", "timing table (ACE ECB)", "models/ace/ace_timing.cpp",
      "    c.sse_total_ = clocks(c.base_ + 2 * r);",
      "    c.sse_total_ = clocks(c.base_ + 2 * r + 1);",
      (gtest("test_ace", "*"), gtest("test_timing", "*"),
       pytest("tests/integration/test_timing.py", "ecb"))),
    M("ace-chain-table", "timing table (ACE chained modes)", "models/ace/ace_timing.cpp",
      "  double sse = c.base_ + static_cast<double>(charged) * c.per_block_;",
      "  double sse = c.base_ + static_cast<double>(charged + 1) * c.per_block_;",
      (gtest("test_ace", "*"), gtest("test_timing", "*"))),
    M("xsha-table", "timing table (PHE)", "models/phe/phe_unit.cpp",
      "  run.clocks += timing.padding;", "  run.clocks += 2 * timing.padding;",
      (gtest("test_phe", "*"), gtest("test_timing", "*"))),
    # --- timing v3 parts (docs/timing.md, "Calibration") ----------------------------------
    M("ace-dgest-part", "timing (digest mode)", "models/ace/ace_timing.cpp",
      "  if (digest) c.per_block_ += p.dgest_per_block;",
      "  if (digest) c.per_block_ += 0;",
      (gtest("test_ace", "*Digest*"),)),
    M("ace-round-clocks", "timing (rounds hide part of a store)", "models/ace/ace_timing.cpp",
      "std::max(0.0, r - 10.0), p.store_hidden_by_rounds.value));",
      "std::max(0.0, r - 10.0), 0.0));",
      (gtest("test_ace", "AceTiming.*"),)),
    M("ace-rounds-hide-at-most", "timing (rounds hide no more than R - 10)",
      "models/ace/ace_timing.cpp",
      "r - std::min(std::max(0.0, r - 10.0), p.store_hidden_by_rounds.value)",
      "r - p.store_hidden_by_rounds.value",
      (gtest("test_ace", "AceTiming.*"),)),
    M("esther-store-hidden", "timing (Esther's rounds hide part of a store)",
      "models/cpus/families.hpp",
      "  a.store_hidden_by_rounds = kEstherStoreHiddenByRounds;",
      "",
      (gtest("test_ace", "AceTiming.*"), gtest("test_cpu", "*"))),
    M("nano-store-hidden", "timing (Nano has no store to hide)", "models/cpus/nano.hpp",
      "  a.store_hidden_by_rounds = {0, \"none: no per-store cost to hide (nano_memory)\"};",
      "",
      (gtest("test_ace", "AceTiming.*"),)),
    M("ace-chain-rounds", "timing (rounds in the chaining modes)", "models/ace/ace_timing.cpp",
      "  c.per_block_ = std::max(0.0, c.per_block_ + round_clocks(p, rounds) - 10.0);\n", "",
      (gtest("test_ace", "AceTiming.*"),)),
    M("esther-store-drain", "timing (Esther's per-store cost)", "models/cpus/families.hpp",
      "      .store_drain_clocks = kEstherStoreDrain,",
      "      .store_drain_clocks = {0, kNoStoreStall},",
      (gtest("test_cpu", "*EsthersStoreCost*"),)),
    M("esther-store-instlat-row", "timing (Esther's per-store cost: InstLat's load/store pair)",
      "models/cpus/families.hpp", "    5.92 - 3.92,", "    2.75 - 2.17,",
      (gtest("test_cpu", "*EsthersStoreCost*"),
       pytest("tests/integration/test_timing.py", "baes_run_with_one_clock"))),
    M("loso-misaligned-prior", "calibration (Gladman left out: InstLat's misaligned pair)",
      "scripts/timing_fit.py", "MISALIGNED_PRIOR = MISALIGNED_LS_PAIR",
      "MISALIGNED_PRIOR = MISALIGNED_LOAD",
      (pytest("tests/python/test_timing_fit.py", "misaligned_element_prior"),)),
    M("loso-gladman-own", "calibration (Gladman left out: his element to its prior)",
      "scripts/timing_fit.py",
      "    return {\"Gladman\": {(\"misaligned\",): MISALIGNED_PRIOR - misaligned_fitted}}",
      "    return {\"Gladman\": {(\"misaligned\",): -misaligned_fitted}}",
      (pytest("tests/python/test_timing_fit.py", "misaligned_element_prior"),)),
    M("esther-aligned-ctr", "timing (aligned CTR)", "models/cpus/families.hpp",
      "{{kEstherAlignedCbc, kEstherAlignedCfb, kEstherAlignedOfb, kEstherAlignedCtr}}",
      "{{kEstherAlignedCbc, kEstherAlignedCfb, kEstherAlignedOfb, kEstherUnalignedCtr}}",
      (gtest("test_cpu", "*Calibrated*"),
       pytest("tests/integration/test_timing.py", "ctr_errata_phase"))),
    M("nehemiah-one-chain-restart", "timing (one chain restart for every mode)",
      "models/cpus/families.hpp",
      "                     kNehemiahChainReload,\n                     kNehemiahChainReload,\n"
      "                     {0,",
      "                     kNehemiahChainReload,\n                     {0, \"\"},\n"
      "                     {0,",
      (gtest("test_ace", "AceTiming.*"),)),
    M("ace-ctr-pairs", "timing (aligned CTR pays for whole pairs)", "models/ace/ace_timing.cpp",
      "  return (n + g - 1) / g * g;", "  return n;",
      (gtest("test_ace", "AceTiming.*"),
       pytest("tests/integration/test_timing.py", "ctr_errata_phase"))),
    M("ace-ctr-pairs-align", "timing (the pair rule is ALIGN = 0's)", "models/ace/ace_timing.cpp",
      "  if (m != ChainMode::Ctr || unaligned || n == 0) return n;",
      "  if (m != ChainMode::Ctr || n == 0) return n;",
      (gtest("test_ace", "AceTiming.*"),)),
    # --- the short instruction's host shortcuts (docs/emulator.md, "Figures") -------------
    M("ace-ecb-memo-blocks", "timing (the last ECB clocks kept: block count)",
      "models/ace/ace_unit.cpp",
      "    if (!valid || rounds != r || n != blocks || ks != k) {",
      "    if (!valid || rounds != r || ks != k) {",
      (gtest("test_ace", "AceTiming.*"),)),
    M("ace-ecb-memo-key-state", "timing (the last ECB clocks kept: EFLAGS[30], KEYGN)",
      "models/ace/ace_unit.cpp",
      "    if (!valid || rounds != r || n != blocks || ks != k) {",
      "    if (!valid || rounds != r || n != blocks) {",
      (gtest("test_ace", "AceTiming.*"),)),
    M("ace-ecb-memo-rounds", "timing (the last ECB clocks kept: rounds)",
      "models/ace/ace_unit.cpp",
      "    if (!valid || rounds != r || n != blocks || ks != k) {",
      "    if (!valid || n != blocks || ks != k) {",
      (gtest("test_ace", "AceTiming.*"),)),
    M("ace-clocks-round-half", "timing (clocks rounded half up)", "models/ace/ace_timing.cpp",
      "  return whole + (c - static_cast<double>(whole) >= 0.5 ? 1 : 0);",
      "  return whole;",
      (gtest("test_ace", "AceTiming.*"),)),
    M("ace-probe-first-group", "ACE faults (the input after the first group)",
      "models/ace/ace_unit.cpp",
      "        first + ace::probe(mem_, ea_add(esi_, first, asz_), in_len - first, asz_, Access::Read);",
      "        in_len;",
      (gtest("test_ace", "*Fault*"),)),
    M("ace-probe-wrap", "ACE faults (operands across the address-size wrap)",
      "models/ace/ace_memory.hpp",
      "  if (len <= bytes_to_wrap(ea, asz)) return mem.accessible(ea, len, access);",
      "  return mem.accessible(ea, len, access);",
      (gtest("test_ace", "*"),)),
    M("ace-fresh-outcome", "ACE result (the default Outcome it starts from)",
      "models/ace/ace_engine.cpp", "const Outcome kFreshOutcome{};",
      "const Outcome kFreshOutcome = Outcome::faulted(FaultKind::None);",
      (gtest("test_ace", "*"),)),
    M("padlock-resolved", "F2 0F A6 C0 without SM2 (by reference)", "models/padlock.hpp",
      "    if (d.id != isa::InsnId::Sm2 || cpu_.units.sm2) return d;",
      "    if (true) return d;", (gtest("test_gmi", "Sm2*"),)),
    M("padlock-call-gpr32-write", "PadLock registers written back (i386 target)",
      "emulator/exec/padlock_call.cpp",
      "    for (int i = 0; i < 8; ++i) c.live32[i] = static_cast<uint32_t>(c.state.gpr[i]);",
      "    for (int i = 0; i < 6; ++i) c.live32[i] = static_cast<uint32_t>(c.state.gpr[i]);",
      (pytest("tests/integration/test_trace_golden.py"),)),
    M("ace-groups-shift", "ACE faults (input groups of a power-of-two size, by a shift)",
      "models/ace/ace_unit.cpp",
      "    return (g & (g - 1)) == 0 ? (n + g - 1) >> std::countr_zero(g) : (n + g - 1) / g;",
      "    return (g & (g - 1)) == 0 ? n >> std::countr_zero(g) : (n + g - 1) / g;",
      (gtest("test_ace", "*Fault*"),)),
    M("decode-memo-tail", "the decoded instruction kept by PC (its last bytes compared)",
      "emulator/exec/padlock_call.cpp", "  return a[0] == b[0] && a[1] == b[1];",
      "  return a[0] == b[0];", (gtest("test_emulator", "PadlockTrapTest.*"),)),
    M("translate-code-write", "guest memory: a PadLock store into translated code",
      "emulator/memory/address_space.cpp",
      "    if (!((need & kPageWrite) && (f & kPageCode) && on_code_write_ != nullptr)) return base_ + va;",
      "    return base_ + va;",
      (gtest("test_emulator", "AddressSpace.OnePageWriteIntoCodeDropsTheCode"),
       pytest("tests/integration/test_guest_self_modifying.py"))),
    M("cache-all-hit-out", "cache model: an all-hit stream repeated (its output compared)",
      "models/timing/cache_model.hpp",
      "    if (h.valid && h.in == in && h.in_len == in_len && h.out == out && h.out_len == out_len) {",
      "    if (h.valid && h.in == in && h.in_len == in_len && h.out_len == out_len) {",
      (gtest("test_timing", "*"),)),
    M("aes-ni-key-schedule", "ACE result (AES-NI reads the schedule in place)",
      "models/ace/aes_x86.cpp", "  K.k = reinterpret_cast<const __m128i*>(rk.k);",
      "  K.k = reinterpret_cast<const __m128i*>(rk.k) + 1;", (gtest("test_ace", "*"),)),
    M("phe-sha256-dedibox", "timing (SHA-256 block)", "models/cpus/families.hpp",
      "      .sha256_block_overhead = calibrated::kSha256BlockOverhead,",
      "      .sha256_block_overhead = {512.0 / 2.26 - 64 * 3, \"\"},",
      (gtest("test_phe", "*Dedibox*"),)),
    M("pmm-short-tail", "timing (short REP MONTMUL)", "models/pmm/pmm_timing.hpp",
      "    const double hidden = std::max(tail_hidden_min, std::min(backlog, backlog_max));",
      "    const double hidden = std::min(backlog, backlog_max);",
      (gtest("test_pmm", "MontmulTiming.*"),)),
    M("nano-align", "timing (Nano's ALIGN path)", "models/cpus/nano.hpp",
      "        a.chain_per_block[i].value + kNanoRealignPerBlock / kNanoHardwareAlignGain, kAlign};",
      "        a.chain_per_block[i].value + kNanoRealignPerBlock * 10, kAlign};",
      (gtest("test_ace", "*Misaligned*"),)),
    M("irq-cost", "interrupt cost", "emulator/time/virtual_time.cpp",
      "    now_ += cfg_.irq_cycles;", "    now_ += cfg_.irq_cycles / 2;",
      (pytest("tests/integration/test_timing.py", "interrupts_cost"),)),
    # --- §3.3's SSE wait tested in generated code (docs/emulator.md, "Unicorn", item 23) ------
    M("sse-wait-not-flagged", "SSE blocks never wait for ACE", "emulator/linux/process.cpp",
      "  if (hooked == BlockCache::kSlotSse && wait_ready_) return c | UC_BLOCK_COST_WAIT_READY;",
      "  if (hooked == BlockCache::kSlotSse && wait_ready_) return c;",
      SSE_WAIT_TESTS),
    M("sse-wait-end-not-start", "the SSE wait compares the block's end",
      "cmake/unicorn/patches/block-cost-ready.patch",
      "+    tcg_gen_addi_i64(tcg_ctx, tready, tready, cost);",
      "+    tcg_gen_addi_i64(tcg_ctx, tready, tready, 0);",
      SSE_WAIT_TESTS),
    # --- the cache model's shortcuts (docs/timing.md, "PadLock timing parts") ----------------
    M("cache-repeat-out-moved", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "  if (out_len != 0 && out - from_out != moved) return false;\n", "",
      (gtest("test_timing", "CacheModel.*"),)),
    M("cache-repeat-advance", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "moved_from(last_in_, last_out_, in, out, out_len, &moved) && moved == ref_.advance) {",
      "moved_from(last_in_, last_out_, in, out, out_len, &moved)) {",
      (gtest("test_timing", "CacheModel.*"),)),
    M("cache-repeat-no-compare", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "    if (state_b_ == ref_.start) return take_repeat(in, out);",
      "    return take_repeat(in, out);", (gtest("test_timing", "CacheModel.*"),)),
    M("cache-repeat-unproven", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "  if (just_recorded_ && cand_.same_lengths(in_len, out_len) &&",
      "  if (cand_.same_lengths(in_len, out_len) &&", (gtest("test_timing", "CacheModel.*"),)),
    M("cache-repeat-any-move", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "  if (moved % period_bytes != 0 && (0 - moved) % period_bytes != 0) return false;\n", "",
      (gtest("test_timing", "CacheModel.*"),)),
    M("cache-repeat-l2-unmoved", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "  l2_.shift_lines(r.advance);\n", "", (gtest("test_timing", "CacheModel.*"),)),
    M("cache-repeat-access-kept", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "  just_recorded_ = settled_ = false;  // ref_ stays true of any later state\n", "",
      (gtest("test_timing", "CacheModel.*"),)),
    M("cache-repeat-split-resume", "cache model: repeated stream", "models/timing/cache_model.cpp",
      "    if (state_b_ == ref_.start) return take_repeat(in, out);",
      "    if (false) return take_repeat(in, out);", (gtest("test_timing", "CacheModel.*"),)),
    M("cache-base-victim", "cache model: lines against a base", "models/timing/cache_model.cpp",
      "v = {true, set[way].dirty, set[way].line + base_};",
      "v = {true, set[way].dirty, set[way].line};", (gtest("test_timing", "CacheModel.*"),)),
    M("cache-base-save", "cache model: lines against a base", "models/timing/cache_model.cpp",
      "      if (way.stamp != 0) way.line += base_;", "",
      (gtest("test_timing", "CacheModel.*"),)),
    # --- every virtual-time source at a non-default --mhz -----------------------------------
    M("clock-ns-fixed-mhz", "clock_gettime", "emulator/time/virtual_time.cpp",
      "  const int64_t e = static_cast<int64_t>(ns_of(now_));",
      "  const int64_t e = static_cast<int64_t>(now_ * 1000 / 1600);",
      (pytest("tests/integration/test_timing.py", "mhz"),)),
    M("times-ticks", "times()", "emulator/linux/syscall/time.cpp",
      "    t.tms_utime = static_cast<clock_t>(c.p.vtime().cpu_ns() / (kNsPerSec / hz));",
      "    t.tms_utime = static_cast<clock_t>(c.p.vtime().cpu_ns() / (kNsPerSec / hz) / 2);",
      (pytest("tests/integration/test_timing.py", "mhz"),)),
    M("rdtsc-mhz", "RDTSC", "emulator/exec/padlock_call.cpp",
      "  const uint64_t t = clock_.now();", "  const uint64_t t = clock_.now() / 2;",
      (pytest("tests/integration/test_timing.py", "mhz"), gtest("test_emulator", "PadlockTrapTest.*"))),
    M("timer-cycles", "timers (setitimer, timer_create)", "emulator/time/virtual_time.cpp",
      "  const long double c = static_cast<long double>(ns) * cfg_.mhz / 1000.0L;",
      "  const long double c = static_cast<long double>(ns) * 1600 / 1000.0L;",
      (pytest("tests/integration/test_timing.py", "mhz"),)),
    # --- signal frames ----------------------------------------------------------------------
    M("handler-flags", "signal frames (DF in the handler)", "emulator/linux/signal/signal_frame.hpp",
      "inline constexpr uint64_t kHandlerClearFlags = 0x10500;",
      "inline constexpr uint64_t kHandlerClearFlags = 0x10100;",
      (gtest("test_emulator", "*Signal*"), pytest("tests/integration/test_reliability.py", "df"))),
    M("altstack-overflow", "signal frames (alternate stack)",
      "emulator/linux/signal/signal_frame.hpp",
      "  return !s.on_altstack(orig_sp) || s.on_altstack(frame);", "  return true;",
      (pytest("tests/integration/test_reliability.py", "altstack"),)),
    M("sa-restart", "signal frames (SA_RESTART)", "emulator/linux/signal/delivery.cpp",
      "    ctx.ip -= static_cast<uint64_t>(last_syscall_len_);", "",
      (gtest("test_emulator", "*Signal*:*Syscall*"),
       pytest("tests/integration/test_guest_host_signals.py"),
       pytest("tests/integration/test_reliability.py", "restart"))),
    # --- the loader ---------------------------------------------------------------------------
    M("loader-congruence", "loader (p_offset vs p_vaddr)", "emulator/loader/elf_loader.cpp",
      "if (h.filesz != 0 && ((h.vaddr - h.offset) & (kPage - 1)) != 0) {",
      "if (false) {",
      (pytest("tests/integration/test_reliability.py", "congruent"),)),
    M("loader-interp-overlap", "loader (interpreter overlap)", "emulator/loader/elf_loader.cpp",
      "    if (must_be_free && !mem.range_free(start, end - start)) {",
      "    if (false) {",
      (pytest("tests/integration/test_reliability.py", "interpreter"),)),
    M("loader-bss-tail", "loader (bss zeroing)", "emulator/loader/elf_loader.cpp",
      "        const uint64_t from = std::max(p, bss), to = std::min(p + kPage, bss_end);",
      "        const uint64_t from = std::max(p, bss) + 1, to = std::min(p + kPage, bss_end);",
      (gtest("test_emulator", "*Loader*:*Elf*"), pytest("tests/integration/test_reliability.py"))),
    M("exec-permission", "loader (execute permission)", "emulator/linux/process.cpp",
      "  require_exec_permission(program);\n", "",
      (pytest("tests/integration/test_reliability.py", "permission"),)),
    # --- function symbols through libdwfl (docs/profiling.md) --------------------------------
    M("symbols-weak-as-local", "symbols: a weak alias before a local one",
      "emulator/observe/profile/function_symbols.cpp",
      "  return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;",
      "  return bind == STB_GLOBAL ? 0 : 1;",
      (gtest("test_emulator", "FunctionSymbols.*"),)),
    M("symbols-section-end", "symbols: a size-less last symbol ends with its section",
      "emulator/observe/profile/debug_info.cpp",
      "      section_end = shdr->sh_addr + shdr->sh_size + (link - sym.st_value);",
      "      section_end = shdr->sh_addr + 2 * shdr->sh_size + (link - sym.st_value);",
      (gtest("test_emulator", "FunctionSymbols.*"),)),
    M("symbols-objects-too", "symbols: only functions", "emulator/observe/profile/debug_info.cpp",
      "(type != STT_FUNC && type != STT_GNU_IFUNC) ||",
      "(type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT) ||",
      (gtest("test_emulator", "FunctionSymbols.*"),)),
    M("symbols-module-bias", "symbols: link-time addresses of a PIE",
      "emulator/observe/profile/debug_info.cpp", "    const uint64_t link = addr - bias;",
      "    const uint64_t link = addr - bias + 0x1000;",
      (gtest("test_emulator", "FunctionSymbols.*:ObjectMap.*"),
       pytest("tests/integration/test_profile.py", "shared_objects"))),
    # --- the guest's boundary: path resolution, the descriptor table, sandboxed sockets --------
    M("proc-follow-link", "served /proc paths (a link's target)", "emulator/linux/proc_lookup.cpp",
      "    if (r.entry != ProcEntry::kNone || !follow) return r;", "    return r;",
      (pytest("tests/integration/test_guest_boundary.py", "spelling"),)),
    M("proc-own-pid", "served /proc paths (the guest's pid directory)",
      "emulator/linux/proc_lookup.cpp", "  const bool own = pid == p.identity().pid;",
      "  const bool own = pid == 1;",
      (pytest("tests/integration/test_guest_boundary.py", "spelling"),)),
    M("proc-root-depth", "served /proc paths (the procfs root)", "emulator/linux/proc_lookup.cpp",
      "    if (st.st_ino == kProcRootIno) return depth;",
      "    if (st.st_ino == kProcRootIno) return depth + 1;",
      (pytest("tests/integration/test_guest_boundary.py", "spelling"),)),
    M("proc-refused", "served /proc paths (the emulator's smaps)",
      "emulator/linux/proc_lookup.cpp", '    {"smaps", ProcEntry::kRefused},\n', "",
      (pytest("tests/integration/test_guest_boundary.py", "proc_self_entry"),)),
    M("maps-run-code", "/proc/self/maps runs (code marks do not split a run)",
      "emulator/memory/address_space.cpp",
      "    const uint64_t i = run_of(l + (page & mask), n, want, same);",
      "    const uint64_t i = run_of(l + (page & mask), n, want);",
      (gtest("test_emulator", "AddressSpace.NextRun*"),)),
    M("maps-run-leaves", "/proc/self/maps runs (across a 1 GiB leaf)",
      "emulator/memory/address_space.cpp", "    if (i < n) break;\n  }\n  *end = page * kPageSize;",
      "    break;\n  }\n  *end = page * kPageSize;",
      (gtest("test_emulator", "AddressSpace.NextRun*"),)),
    M("self-mem-user-pages", "/proc/self/mem (user pages only)", "emulator/linux/syscall/file.cpp",
      "  const uint64_t top = p.vm().layout().system_page;",
      "  const uint64_t top = p.mem().size();",
      (pytest("tests/integration/test_guest_boundary.py", "gdt"),)),
    M("self-mem-shared", "/proc/self/mem (no forced write to a shared mapping)",
      "emulator/linux/syscall/file.cpp",
      "    if ((f & kPageShared) && !(f & kPageWrite)) return at > pos ? at - pos : 0;", "",
      (pytest("tests/integration/test_guest_boundary.py", "forces"),)),
    M("fd-table-args", "descriptor table (descriptor arguments)",
      "emulator/linux/syscall/dispatch.cpp",
      "    if (e.args[i] == 'f' && f.emulator_fd(static_cast<int32_t>(a[i]))) return true;",
      "    if (e.args[i] == 'F' && f.emulator_fd(static_cast<int32_t>(a[i]))) return true;",
      (pytest("tests/integration/test_guest_boundary.py", "descriptors"),)),
    M("fd-table-child", "descriptor table (a forked child's outputs)",
      "emulator/linux/process.cpp", "      if (before.count(fd) == 0) files_.host_fds.insert(fd);",
      "      if (before.count(fd) == 0) (void)fd;",
      (pytest("tests/integration/test_guest_boundary.py", "descriptors"),)),
    M("sock-bind-dir", "sandboxed sockets (bind's directory)", "emulator/linux/sandbox.cpp",
      "  if (binds) {", "  if (!binds) {",
      (pytest("tests/integration/test_guest_boundary.py", "socket"),)),
    M("sock-abstract", "sandboxed sockets (abstract names)", "emulator/linux/sandbox.cpp",
      "  if (un->sun_path[0] == '\\0') return net_ ? 0 : -EACCES;  // an abstract name",
      "  if (un->sun_path[0] == '\\0') return 0;  // an abstract name",
      (pytest("tests/integration/test_guest_boundary.py", "socket or net"),)),
    M("sock-family", "sandboxed sockets (other families)", "emulator/linux/sandbox.cpp",
      "  if (a->sa_family != AF_UNIX) return net_ ? 0 : -EACCES;",
      "  if (a->sa_family != AF_UNIX) return 0;",
      (pytest("tests/integration/test_guest_boundary.py", "socket"),)),
    M("sandbox-at-name", "sandboxed names (unlink, mkdir, rename, link, symlink)",
      "emulator/linux/syscall/file.cpp", "  if (!c.files.sandbox().active()) {\n    n.dir = dirfd;",
      "  if (true) {\n    n.dir = dirfd;", (pytest("tests/integration/test_sandbox.py"),)),
    M("stat-times-stride", "stat's times (both ABIs' layouts)", "emulator/linux/abi_structs.cpp",
      "    offset += 2 * sizeof(T);", "    offset += sizeof(T);",
      (gtest("test_emulator", "AbiStructs.*"),)),
    M("sock-host-address", "sandboxed sockets (the address bind, connect, sendto, sendmsg pass)",
      "emulator/linux/syscall/socket.cpp",
      "  return sandboxed(c, h.addr, h.len, binds, h.rewritten);", "  return 0;",
      (pytest("tests/integration/test_guest_boundary.py", "socket"),)),
    M("fd-table-poll", "descriptor table (poll's pollfd array)",
      "emulator/linux/syscall/poll_wait.cpp",
      "  if (std::any_of(fds.begin(), fds.end(), [&](int fd) { return c.files.emulator_fd(fd); })) {",
      "  if (false) {",
      (pytest("tests/integration/test_guest_boundary.py", "descriptors_are_not"),)),
    M("fd-table-select", "descriptor table (select's sets)",
      "emulator/linux/syscall/poll_wait.cpp",
      "        if (c.files.emulator_fd(static_cast<int>(fd))) return -EBADF;\n", "",
      (pytest("tests/integration/test_guest_boundary.py", "descriptors_are_not"),)),
    M("process-vm-protections", "process_vm_writev (the remote side's protections)",
      "emulator/linux/syscall/process_vm.cpp",
      "  const uint8_t remote_need = write ? kPageWrite : kPageRead;",
      "  const uint8_t remote_need = 0;",
      (pytest("tests/integration/test_guest_boundary.py", "process_vm_on_itself"),)),
    M("process-vm-user-pages", "process_vm_readv (user pages only)",
      "emulator/linux/syscall/process_vm.cpp",
      "  const uint64_t top = p.vm().layout().system_page;",
      "  const uint64_t top = p.mem().size();",
      (pytest("tests/integration/test_guest_boundary.py", "process_vm_on_itself and i386"),)),
    M("process-vm-partial", "process_vm_readv (the bytes moved before a fault)",
      "emulator/linux/syscall/process_vm.cpp",
      "        return moved > 0 ? static_cast<int64_t>(moved) : -EFAULT;\n      }",
      "        return -EFAULT;\n      }",
      (pytest("tests/integration/test_guest_boundary.py", "process_vm_on_itself"),)),
    M("process-vm-other", "process_vm_readv (another process)",
      "emulator/linux/syscall/process_vm.cpp", "  if (pid != c.p.identity().pid) {",
      "  if (pid == 0) {",
      (pytest("tests/integration/test_guest_boundary.py", "process_vm_of_another"),)),
    M("exec-proc-self-exe", "execve of /proc/self/exe (the guest program)",
      "emulator/linux/syscall/exec.cpp",
      "    if (names_the_emulator(c.p, program)) program = c.p.identity().exe_path;", "",
      (pytest("tests/integration/test_faithful_faults.py", "proc_self_exe"),)),
    M("fault-ac-cr0", "#AC (CR0.AM, as Linux sets it)", "emulator/cpu/cpu.cpp",
      "  uint64_t cr0 = reg(UC_X86_REG_CR0) | (1u << 18);", "  uint64_t cr0 = reg(UC_X86_REG_CR0);",
      (pytest("tests/integration/test_faithful_faults.py", "fault_as_on_linux and ac"),)),
    M("fault-ac-address", "#AC (si_addr 0, as Linux's do_trap)",
      "emulator/linux/signal/exception_signals.cpp",
      "    {17, {SIGBUS, kBusAdraln, false}},", "    {17, {SIGBUS, kBusAdraln, true}},",
      (pytest("tests/integration/test_faithful_faults.py", "fault_as_on_linux and ac"),)),
    M("loader-phentsize", "loader (e_phentsize)", "emulator/loader/elf_loader.cpp",
      '  if (phentsize != entry) return "bad e_phentsize (not the size of a program header)";',
      '  if (phentsize < entry) return "bad e_phentsize (not the size of a program header)";',
      (pytest("tests/integration/test_elf_limits.py", "phentsize"),)),
    M("loader-phdr-table-size", "loader (program header table size)",
      "emulator/loader/elf_loader.cpp",
      "  if (entry * phnum > 65536) return",
      "  if (entry * phnum > 65536 * 64) return",
      (pytest("tests/integration/test_elf_limits.py", "one_more or 65535"),)),
    M("exec-phdr-table", "execve (ENOEXEC before the point of no return)",
      "emulator/linux/syscall/exec.cpp",
      "  if (program_header_table_error(is64, phentsize, phnum) != nullptr) return -ENOEXEC;\n",
      "",
      (pytest("tests/integration/test_elf_limits.py", "phentsize"),)),
    # --- every run stoppable ------------------------------------------------------------------
    M("stop-phe-batch", "host stop (PHE batches)", "models/unit_interface.hpp",
      "    return host_stop == nullptr ? UINT64_MAX : kHostStopBatch / unit_bytes;",
      "    return host_stop == nullptr ? UINT64_MAX : UINT64_MAX / unit_bytes;",
      (pytest("tests/integration/test_stop.py", "max_time and huge and not mac and off"),)),
    M("stop-phe-cut", "host stop (PHE interrupt point)", "models/phe/phe_unit.cpp",
      "    if (want == until_irq || env.host_stop_requested()) return run.finish(Status::Interrupted);",
      "    if (want == until_irq) return run.finish(Status::Interrupted);",
      (pytest("tests/integration/test_stop.py", "max_time and huge and not mac and off"),)),
    M("stop-ace-cut", "host stop (ACE interrupt point)", "models/ace/ace_unit.cpp",
      "    if (k < st.k && env.host_stop_requested() && x.interruptible_after(k)) {",
      "    if (false) {",
      (pytest("tests/integration/test_stop.py", "max_time and huge-mac and off"),)),
    M("stop-deadline-flag", "host stop (--max-time's watchdog)", HOST_STOP,
      "  out_of_time_.store(true);\n  flag_.store(true);\n",
      "  out_of_time_.store(true);\n",
      (gtest("test_emulator", "HostStopTest.*"),
       pytest("tests/integration/test_stop.py", "max_time and huge and not mac and off"))),
    M("stop-kill-flag", "host stop (a kill from another thread)", HOST_STOP,
      "  killed_.store(true);\n  flag_.store(true);\n", "  killed_.store(true);\n",
      (gtest("test_emulator", "HostStopTest.*"),)),
    M("identity-auxv", "/proc/self/auxv (the saved vector)", "emulator/linux/process.cpp",
      "    if (!ok || type == AT_NULL) break;", "    break;",
      (gtest("test_emulator", "Arches/ProcessIdentityTest.*"),)),
    M("getrandom-salt", "getrandom's stream from --seed", "emulator/linux/process.cpp",
      "    kernel_.random = GuestRandom(opts_.seed, GuestRandom::kGetrandomSalt);",
      "    kernel_.random = GuestRandom(opts_.seed, GuestRandom::kAtRandomSalt);",
      (gtest("test_emulator", "Arches/SyscallTest.Identity/*"),)),
    M("stop-rearm-ending", "host stop (rearm while the run ends)",
      "emulator/linux/host_stop/host_stop.hpp",
      "  void rearm() { flag_.store(out_of_time_.load() || killed_.load()); }",
      "  void rearm() { flag_.store(out_of_time_.load()); }",
      (gtest("test_emulator", "HostStopTest.*"),)),
    M("stop-signal-flag", "host stop (host signals)", "emulator/linux/signal/host_signals.cpp",
      "  if (std::atomic<bool>* stop = g_host_stop.load()) stop->store(true);\n", "",
      (pytest("tests/integration/test_stop.py", "sigterm and huge and not mac and off"),)),
    M("stop-core-flag", "host stop (the core hands it to the units)", "emulator/exec/core.cpp",
      "  env.host_stop = host_stop_;\n", "",
      (pytest("tests/integration/test_stop.py", "sigterm and huge and not mac and off"),)),
    # --- CLI options and environment variables ------------------------------------------------
    M("env-memory", "PADLOCK_EMU_MEMORY", "emulator/cli/cli.cpp",
      '    o.direct_memory = parse_memory(v, " (from PADLOCK_EMU_MEMORY)");',
      '    (void)parse_memory(v, " (from PADLOCK_EMU_MEMORY)");',
      (pytest("tests/integration/test_guest_self_modifying.py", "memory_mode"),)),
    M("opt-memory", "--memory", "emulator/cli/run_option_table.cpp",
      "     [](I& i, S v) { i.run.direct_memory = emu::parse_memory(v, \"\"); }},",
      "     [](I& i, S v) { (void)emu::parse_memory(v, \"\"); }},",
      (pytest("tests/integration/test_guest_self_modifying.py", "memory_mode"),)),
    M("env-seed", "PADLOCK_EMU_SEED", "emulator/cli/cli.cpp",
      '    o.seed = parse_seed(v, " (from PADLOCK_EMU_SEED)");',
      '    (void)parse_seed(v, " (from PADLOCK_EMU_SEED)");',
      (pytest("tests/integration/test_guest_xstore.py", "seed"),)),
    M("env-mhz", "PADLOCK_EMU_MHZ", "emulator/cli/cli.cpp",
      '    o.mhz = parse_mhz(v, " (from PADLOCK_EMU_MHZ)");',
      '    (void)parse_mhz(v, " (from PADLOCK_EMU_MHZ)");',
      (pytest("tests/integration/test_timing.py", "environment"),)),
    M("opt-errata", "--errata", "emulator/cli/run_option_table.cpp",
      '[](I& i, S v) { i.run.errata = emu::parse_on_off("--errata", v); }},',
      '[](I& i, S v) { i.run.errata = !emu::parse_on_off("--errata", v); }},',
      (pytest("tests/integration/test_timing.py", "errata"),
       pytest("tests/integration/test_guest_ctr_errata.py"))),
    M("opt-irq-hz", "--irq-hz", "emulator/cli/run_option_table.cpp",
      "     [](I& i, S v) { i.run.irq_hz = emu::parse_irq_hz(v); }},",
      "     [](I& i, S v) { (void)emu::parse_irq_hz(v); }},",
      (pytest("tests/integration/test_cli.py"), pytest("tests/integration/test_timing.py"))),
    M("opt-unset-env", "-U", "emulator/cli/run_option_table.cpp",
      "  std::erase_if(env, [&](const std::string& e) { return e.compare(0, name.size(), name) "
      "== 0; });",
      "  (void)env;",
      (pytest("tests/integration/test_cli.py"),)),
    M("opt-table-attached", "-Lsysroot, -EVAR=1: a value attached to its letter",
      "emulator/cli/cli.cpp",
      "                          : a == s || (o.attached && a.size() > n && a.compare(0, n, s) == 0);",
      "                          : a == s;",
      (pytest("tests/integration/test_cli.py", "qemu or e_and_u"),)),
    M("opt-table-equals", "--opt=value", "emulator/cli/cli.cpp",
      "      if (n > 2 && spelling[1] == '-' && a.size() > n) {\n        v = a.substr(n + 1);",
      "      if (n > 2 && spelling[1] == '-' && a.size() > n) {\n        v = a.substr(n);",
      (pytest("tests/integration/test_cli.py", "usage_errors"),)),
    M("opt-table-help-rows", "run --help: every labelled row", "emulator/cli/cli.cpp",
      "    if (o.label == nullptr) continue;  // documented with the entry above",
      "    if (o.label == nullptr || o.takes == Takes::Flag) continue;",
      (pytest("tests/integration/test_cli.py", "help"),)),
    M("opt-min-mhz", "--mhz minimum", "emulator/options/option_checks.cpp",
      "  if (mhz < kMinMhz) {", "  if (mhz < 0) {",
      (pytest("tests/integration/test_reliability.py", "clock"),)),
    # --- behaviour the Process split and the folder renames must keep -----------------------
    M("futex-wake-n-plus-1", "FUTEX_WAKE count", "emulator/linux/threads/thread_table.cpp",
      "    if (++woken >= n) break;  // Linux wakes one even when asked for none",
      "    if (++woken > n) break;  // Linux wakes one even when asked for none",
      (gtest("test_emulator", "ThreadTableTest.*"),
       pytest("tests/integration/test_futex_wake.py"))),
    # --- the threads' table (emulator/linux/threads/thread_table.cpp) -----------------------
    M("futex-wake-newest-first", "futex waiters: oldest first",
      "emulator/linux/threads/thread_table.cpp",
      "        t->requeue_pi_to == 0 && (t->bitset & bitset) != 0 &&\n"
      "        (first == nullptr || t->wait_seq < first->wait_seq)) {",
      "        t->requeue_pi_to == 0 && (t->bitset & bitset) != 0 &&\n"
      "        (first == nullptr || t->wait_seq > first->wait_seq)) {",
      (gtest("test_emulator", "ThreadTableTest.*"),)),
    M("futex-wake-bitset", "FUTEX_WAKE_BITSET", "emulator/linux/threads/thread_table.cpp",
      "t->requeue_pi_to == 0 && (t->bitset & bitset) != 0 &&",
      "t->requeue_pi_to == 0 &&", (gtest("test_emulator", "ThreadTableTest.*"),)),
    M("futex-requeue-count", "FUTEX_CMP_REQUEUE's result",
      "emulator/linux/threads/thread_table.cpp",
      "  return woken + moved;", "  return woken;", (gtest("test_emulator", "ThreadTableTest.*"),)),
    M("futex-timeout-result", "a futex wait's timeout", "emulator/linux/threads/thread_table.cpp",
      "      wake(*t, t->futex_addr != 0 ? -ETIMEDOUT : 0);", "      wake(*t, 0);",
      (gtest("test_emulator", "ThreadTableTest.*"),)),
    M("sigwait-mask-running", "rt_sigtimedwait's mask back",
      "emulator/linux/threads/thread_table.cpp",
      "    (&t == &running() ? running_blocked_ : t.blocked) = t.sigwait_mask;",
      "    t.blocked = t.sigwait_mask;", (gtest("test_emulator", "ThreadTableTest.*"),)),
    M("round-robin-reversed", "the round robin's order",
      "emulator/linux/threads/thread_table.cpp",
      "    const size_t k = (cur_ + i) % n;", "    const size_t k = (cur_ + n - i) % n;",
      (gtest("test_emulator", "ThreadTableTest.*"),)),
    M("drop-dead-running-index", "dead threads leave the table",
      "emulator/linux/threads/thread_table.cpp", "      if (i < cur_) --cur_;\n", "",
      (gtest("test_emulator", "ThreadTableTest.*"),)),
    M("futex-wait-value-check", "FUTEX_WAIT on a changed word",
      "emulator/linux/syscall/task.cpp",
      "  if (v != static_cast<uint32_t>(c.a[2])) return -EAGAIN;\n", "",
      (gtest("test_emulator", "Arches/SyscallTest.Futex*"),)),
    M("gdb-thread-register-write", "gdb: a switched-out thread's register write",
      "emulator/linux/threads/thread_table.cpp", "  if (t != nullptr) t->ctx = regs;\n", "",
      (gtest("test_emulator", "ThreadTableTest.*"),
       pytest("tests/integration/test_gdb.py", "threads_are_listed"))),
    # --- the address-space policy and guest memory (emulator/linux/vm/) ---------------------
    M("vm-mmap-len0", "mmap: length 0", VM_POLICY,
      "  if (len == 0 || !aligned(offset) ||", "  if (!aligned(offset) ||", VM_GTESTS),
    M("vm-mmap-noreplace", "mmap: MAP_FIXED_NOREPLACE", VM_POLICY,
      "    if ((flags & kMapFixedNoreplace) && !mem_.range_free(addr, len)) return -EEXIST;\n", "",
      VM_GTESTS),
    M("vm-mmap-hint-aligned", "mmap: an unaligned hint", VM_POLICY,
      "    if (addr != 0 && aligned(addr) && mem_.range_free(addr, len)) {",
      "    if (addr != 0 && mem_.range_free(addr, len)) {", VM_GTESTS),
    M("vm-read-implies-exec", "READ_IMPLIES_EXEC", VM_POLICY,
      "  if ((f & kPageRead) && config_.read_implies_exec) f |= kPageExec;",
      "  if (f & kPageRead) f |= kPageExec;", VM_GTESTS),
    M("vm-max-memory-cap", "--max-memory (RLIMIT_AS)", VM_POLICY,
      "mem_.mapped_bytes() > config_.max_memory - adding);",
      "mem_.mapped_bytes() >= config_.max_memory - adding);", VM_GTESTS),
    M("vm-invalidate-code", "code dropped only where it may be", VM_POLICY,
      "  if (mem_.may_hold_code(va, len)) host_.drop_code(va, len);",
      "  host_.drop_code(va, len);", VM_GTESTS),
    M("vm-munmap-names", "munmap: /proc/self/maps forgets the range", VM_POLICY,
      "  map_names_.clear(addr, len);\n", "", VM_GTESTS),
    M("vm-mprotect-hole", "mprotect: ENOMEM for unmapped pages", VM_POLICY,
      "  if (!user_range(addr, len) || !mem_.range_mapped(addr, len)) return -ENOMEM;",
      "  if (!user_range(addr, len)) return -ENOMEM;", VM_GTESTS),
    M("vm-brk-below-start", "brk: below the start, the current break", VM_POLICY,
      "  if (addr < l.brk_start) return static_cast<int64_t>(l.brk);",
      "  if (addr < l.brk_start) return -EINVAL;", VM_GTESTS),
    M("vm-brk-shrink", "brk: a lowered break unmaps its pages", VM_POLICY,
      "    mem_.unmap_keep_pages(new_end, std::min(old_end, kept) - new_end);\n", "", VM_GTESTS),
    M("vm-mremap-maymove", "mremap: ENOMEM without MREMAP_MAYMOVE", VM_POLICY,
      "  if (!(flags & kMremapMaymove)) return -ENOMEM;\n", "", VM_GTESTS),
    M("vm-mremap-protection", "mremap: a moved range keeps its protection", VM_POLICY,
      "    mem_.protect(dst, new_len, prot);", "    mem_.protect(dst, new_len, prot | kPageWrite);",
      VM_GTESTS),
    M("vm-mremap-names", "mremap: the names move along", VM_POLICY,
      "    map_names_.move(old_addr, std::min(old_len, new_len), dst);\n", "", VM_GTESTS),
    M("user-write-access", "EFAULT for a store to a read-only page", VM_USER,
      "  return mem_->translate(va, len, write ? Access::Write : Access::Read);",
      "  return mem_->translate(va, len, Access::Read);", USER_GTESTS),
    M("user-cstring-limit", "a string's length limit", VM_USER,
      "    const uint64_t n = std::min<uint64_t>(chunk, max - out.size());",
      "    const uint64_t n = chunk;", USER_GTESTS),
    M("user-word-width", "pointer-sized words (i386)", VM_USER,
      "  if (wide_) return put(va, v);", "  return put(va, v);", USER_GTESTS),
    # --- futex words with an owner (emulator/linux/threads/futex_words.cpp) -----------------
    M("futex-pi-handover-waiters", "FUTEX_UNLOCK_PI keeps FUTEX_WAITERS", FUTEX_WORDS,
      "  user_.put(uaddr, static_cast<uint32_t>(next->tid) | kWaiters | owner_died);",
      "  user_.put(uaddr, static_cast<uint32_t>(next->tid) | owner_died);", FUTEX_GTESTS),
    M("futex-pi-edeadlk", "FUTEX_LOCK_PI by the owner", FUTEX_WORDS,
      "  if (owner == me) return -EDEADLK;\n", "", FUTEX_GTESTS),
    M("futex-pi-esrch", "FUTEX_LOCK_PI: no such owner", FUTEX_WORDS,
      "  if (threads_.find_live(static_cast<int>(owner)) == nullptr) return -ESRCH;\n", "",
      FUTEX_GTESTS),
    M("futex-unlock-pi-eperm", "FUTEX_UNLOCK_PI by another thread", FUTEX_WORDS,
      "  if ((v & kTidMask) != static_cast<uint32_t>(threads_.running_tid())) return -EPERM;\n",
      "", FUTEX_GTESTS),
    M("robust-owner-died-word", "a dead owner's robust word", FUTEX_WORDS,
      "  user_.put(uaddr, (v & kWaiters) | kOwnerDied);",
      "  user_.put(uaddr, v | kOwnerDied);", FUTEX_GTESTS),
    M("robust-pending-wake", "the robust list's pending entry", FUTEX_WORDS,
      "  if (pending && !pi && v == 0) {", "  if (false) {", FUTEX_GTESTS),
    M("robust-other-owner", "a robust word another thread owns", FUTEX_WORDS,
      "  if ((v & kTidMask) != static_cast<uint32_t>(tid)) return;\n", "", FUTEX_GTESTS),
    M("robust-exit-all-dead", "exit_group: dead threads' lists were walked", FUTEX_WORDS,
      "    if (t.state == GuestThread::State::Dead) continue;\n", "", FUTEX_GTESTS),
    M("switch-eflags30", "EFLAGS[30] at a thread switch", SCHEDULER,
      "    // §1.8 steps 3 and 5: the switched-in thread's EFLAGS is loaded with bit 30 = 0.\n"
      "    host_.clear_eflags30();",
      "    // §1.8 steps 3 and 5: the switched-in thread's EFLAGS is loaded with bit 30 = 0.",
      SCHED_GTESTS + (pytest("tests/integration/test_switch_key.py"),)),
    # --- the trap host Process and the harness share (emulator/exec/padlock_call.cpp) ----
    M("trap-next-pc", "the PC after a completed PadLock instruction",
      "emulator/exec/padlock_call.hpp",
      "    return r.outcome.status == Status::Completed ? c.pc + c.decoded.length : c.pc;",
      "    return c.pc + c.decoded.length;", TRAP_GTESTS),
    M("trap-write-back", "registers written back after the core ran", TRAP,
      "  finish_call(cpu_, c);\n  return &r;", "  return &r;", TRAP_GTESTS),
    M("trap-rdtsc-moves", "RDTSC moves the clock", TRAP, "  clock_.advance(1);\n", "",
      TRAP_GTESTS),
    M("trap-hooks-rdtsc", "both owners hook RDTSC to the virtual clock", "emulator/cpu/uc_hooks.hpp",
      "        {UC_HOOK_INSN, reinterpret_cast<void*>(rdtsc), UC_X86_INS_RDTSC},\n", "",
      (pytest("tests/python/test_machine.py", "rdtsc"),)),
    # --- the descriptors (emulator/linux/files/guest_files.cpp) ------------------------------
    M("files-dup-timerfd", "a duplicate shares its timerfd", FILES,
      "  if (auto it = timerfds.find(from); it != timerfds.end()) timerfds[to] = it->second;\n", "",
      FILES_GTESTS),
    M("files-dup-forgets", "a dup onto a descriptor forgets its old file", FILES,
      "  closed(to);\n", "", FILES_GTESTS),
    M("files-close-self-mem", "close forgets /proc/self/mem's offset", FILES,
      "  self_mem.erase(fd);\n", "", FILES_GTESTS),
    # --- the scheduler (emulator/linux/threads/scheduler.cpp) -------------------------------
    M("sched-switch-same-thread", "the scheduler: a switch only to another thread", SCHEDULER,
      "  if (next != table_.running_index()) {", "  if (true) {", SCHED_GTESTS),
    M("sched-wake-result", "the scheduler: a woken thread's result", SCHEDULER,
      "    host_.set_syscall_result(t.result);\n", "", SCHED_GTESTS),
    M("sched-cleartid-wake", "exit: CLONE_CHILD_CLEARTID wakes a joiner", SCHEDULER,
      "  if (word != 0 && user_.put(word, uint32_t{0})) table_.futex_wake(word, 1, ~0u);",
      "  if (word != 0) user_.put(word, uint32_t{0});", SCHED_GTESTS),
    M("sched-leader-status", "exit: the first thread's status is the process's", SCHEDULER,
      "    host_.exit_group(main_exited_ ? main_exit_code_ : code);", "    host_.exit_group(code);",
      SCHED_GTESTS),
    M("sched-idle-deadline", "every thread waits: time moves to the first deadline", SCHEDULER,
      "    host_.sleep_until(first);", "    host_.sleep_until(first + 1);", SCHED_GTESTS),
    M("gdb-amd64-rsi-rdi", "gdb register slots (amd64)", "emulator/gdb/x86_registers.cpp",
      '{"rsi", 64, "int64", F::Core, S::Gpr, 6},    {"rdi", 64, "int64", F::Core, S::Gpr, 7},',
      '{"rsi", 64, "int64", F::Core, S::Gpr, 7},    {"rdi", 64, "int64", F::Core, S::Gpr, 6},',
      (pytest("tests/integration/test_gdb_registers.py"),)),
    M("sandbox-beneath", "--sandbox (\"..\" and links)", "emulator/linux/sandbox.cpp",
      "(root->in_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH);",
      "(root->in_root ? RESOLVE_IN_ROOT : 0);",
      (gtest("test_emulator", "Sandbox.*"), pytest("tests/integration/test_sandbox.py"))),
    M("cpuinfo-padlock-flags", "/proc/cpuinfo (PadLock flags)", "emulator/linux/guest_proc.cpp",
      "  add_flags(flags, c1.edx, kWord5);\n", "",
      (gtest("test_emulator", "CpuInfo.*"),
       pytest("tests/integration/test_guest_proc.py", "cpuinfo"))),
    M("system-abi-long-mode", "system mode's C ABI (long mode)",
      "emulator/system/padlock_system.cpp",
      "  return p->units.model().long_mode ? 1 : 0;", "  return 0;",
      (gtest("test_system", "PadlockSystemModel.*"),)),
    # --- system mode's --debian-suite (docs/system.md, "Debian's suites") ------------------
    M("system-suite-name", "--debian-suite validation", "emulator/cli/system_cmd.cpp",
      'find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-")',
      'find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-;")',
      (pytest("tests/integration/test_system_boot.py", "usage_errors"),)),
    M("system-suite-exit", "--debian-suite without a pinned kernel", "emulator/cli/system_cmd.cpp",
      "      if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return 2;\n", "",
      (pytest("tests/integration/test_system_boot.py", "usage_errors"),)),
    M("system-cpu-long-mode", "system: a 64-bit kernel needs long mode",
      "emulator/cli/system_cmd.cpp", "  if (bits64 && !cpu->long_mode)", "  if (false)",
      (pytest("tests/integration/test_system_cli.py", "32_bit_cpu"),)),
    M("system-default-cpu-64", "system: nano by default for a 64-bit kernel",
      "emulator/cli/system_cmd.cpp", 'o.cpu = bits64 ? "nano" : "esther";', 'o.cpu = "esther";',
      (pytest("tests/integration/test_system_cli.py", "kernels_width"),)),
    M("opt-max-memory-fit", "--max-memory beyond 64 bits", "emulator/options/option_checks.cpp",
      "  if (digits_and_unit && !parse_size(s, bytes)) {", "  if (false) {",
      (pytest("tests/integration/test_cli_messages.py", "max_memory"),)),
    M("hint-i386-sysroot", "the i386 sysroot hint", "emulator/linux/process.cpp",
      "    if (exit_code_ == kLdSoMissingLibrary && !id_.guest64 && !elf_.interp.empty() &&",
      "    if (exit_code_ == kLdSoMissingLibrary && id_.guest64 && !elf_.interp.empty() &&",
      (pytest("tests/integration/test_cli_messages.py", "i386"),)),
    M("trace-chrome-sniff", "trace summary of a Chrome trace", "emulator/trace_reader/trace_file.cpp",
      '    if (n == 1 && line.find("\\"traceEvents\\"") != std::string::npos) {',
      '    if (n == 0 && line.find("\\"traceEvents\\"") != std::string::npos) {',
      (pytest("tests/integration/test_cli_messages.py", "chrome"),)),
    M("trace-depth-limit", "trace reader: the nesting limit", "emulator/trace_reader/trace_file.cpp",
      "    if (d > kMaxDepth) too_deep = true;", "",
      (gtest("test_emulator", "TraceRecordRead.*"),)),
    M("trace-u64-type", "trace reader: integers only from numbers", "emulator/trace_reader/trace_file.cpp",
      "  return m != nullptr && m->is_number_unsigned() ? m->get<uint64_t>() : 0;",
      "  return m != nullptr && m->is_number() ? m->get<uint64_t>() : 0;",
      (gtest("test_emulator", "TraceRecordRead.*"),)),
    M("trace-overflow-caught", "trace reader: a number overflow is a reason, not an abort",
      "emulator/trace_reader/trace_file.cpp", "  } catch (const Record::exception& e) {",
      "  } catch (const Record::parse_error& e) {",
      (gtest("test_emulator", "TraceRecordRead.*"),)),
    M("sarif-function-name", "SARIF: the function as a logical location",
      "emulator/observe/check/report.cpp", '    logical["name"] = f.function;\n', "",
      (pytest("tests/integration/test_checker.py", "sarif"),)),
    # --- system mode's console and signals, gdb's waits ---------------------------------------
    M("system-escapes", "system: escape codes", "emulator/cli/system_console.cpp",
      "        if (u == 0x1b)\n          state_ = State::Esc;",
      "        if (u == 0x1b)\n          out += c;",
      (pytest("tests/integration/test_system_cli.py", "escape"),)),
    M("system-results-only", "system: result lines", "emulator/cli/system_console.cpp",
      "  return text.starts_with(\"alg: \") ? line : std::string_view();",
      "  return line;",
      (pytest("tests/integration/test_system_cli.py", "result_lines"),)),
    M("system-result-after-firmware", "system: a result line after a cut firmware line",
      "emulator/cli/system_console.cpp",
      "    if (at != std::string_view::npos) return line.substr(at);",
      "    if (at == 0) return line;",
      (pytest("tests/integration/test_system_cli.py", "result_lines"),)),
    M("system-forward-signal", "system: the signal reaches QEMU", "emulator/cli/system_console.cpp",
      "        kill(pid, got);\n", "",
      (pytest("tests/integration/test_system_cli.py", "within_a_second"),)),
    M("system-library-check", "system: the library is loaded first", "emulator/cli/system_cmd.cpp",
      "  if (h == nullptr || dlsym(h, \"padlock_sys_abi_version\") == nullptr) {",
      "  if (false) {",
      (pytest("tests/integration/test_system_cli.py", "missing_library"),)),
    M("gdb-wait-ending", "gdb: a host signal ends the wait", "emulator/gdb/gdb_server.cpp",
      "    if (target_ != nullptr && target_->ending()) return false;\n", "",
      (pytest("tests/integration/test_gdb_signals.py"),)),
    # --- the Nano 3000 and Zhaoxin models (docs/zhaoxin.md) -------------------------------
    M("zx-sha1-store32", "Zhaoxin XSHA1 32-byte store", "models/phe/phe_unit.cpp",
      "    if (store32) store_sha1_tail(mem, edi, scratch, env);\n", "",
      (gtest("test_phe", "XshaZhaoxin.*"),)),
    M("zx-sha1-tail-report", "Zhaoxin XSHA1 store finding", "models/phe/phe_unit.cpp",
      "    if (b != 0 && !scratch) {", "    if (b == 0xFF && !scratch) {",
      (gtest("test_phe", "XshaZhaoxin.*"),)),
    M("zx-sha1-scratch", "Zhaoxin XSHA1 store finding", "models/phe/phe_unit.cpp",
      "  const bool scratch = edi == reg_get(s, Gpr::SP, as);",
      "  const bool scratch = false;",
      (gtest("test_phe", "XshaZhaoxin.*"),)),
    M("zx-ecx0", "Zhaoxin XSHA with ECX = 0", "models/phe/phe_unit.cpp",
      "  if (ecx == 0 && cpu_.phe.ecx0_does_nothing) {",
      "  if (ecx == 1 && cpu_.phe.ecx0_does_nothing) {",
      (gtest("test_phe", "*EcxZero*"),)),
    M("zx-quirk-ecx0-setting", "Zhaoxin PHE settings", "models/cpus/late_nano.hpp",
      "  p.ecx0_does_nothing = true;", "  p.ecx0_does_nothing = false;",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-quirk-store-setting", "Zhaoxin PHE settings", "models/cpus/late_nano.hpp",
      "  p.sha1_stores_32_bytes = true;", "  p.sha1_stores_32_bytes = false;",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-pmm-67h", "Zhaoxin MONTMUL 67h", "models/cpus/late_nano.hpp",
      "  p.needs_addr_prefix_in_64bit = true;", "  p.needs_addr_prefix_in_64bit = false;",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-fcr-fixed", "family-7 FCR 0x1107", "models/padlock.cpp",
      "      value = cpu_.msr_fcr_reset;", "      value = fcr_ & 0;",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-fcr57-keeps", "MSR 0x1257", "models/padlock.cpp",
      "    fcr57_ = static_cast<uint32_t>(value);", "    fcr57_ = 0;",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-rng-msr-write", "family-7 MSR 0x110B", "models/padlock.cpp",
      "  return msr == isa::kMsrFcr || msr == isa::kMsrRng;", "  return msr == isa::kMsrFcr;",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-ace2-en", "C000_0001 EDX[9]", "models/padlock.cpp",
      "(fcr_on && cpu_.ace2_enable_bit ? kAce2Enabled : 0)", "(fcr_on ? kAce2Enabled : 0)",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-unmodelled-bits", "C000_0001 EDX PARALLAX", "models/padlock.cpp",
      "  return edx | cpu_.centaur_edx_unmodelled;", "  return edx;",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-vendor-words", "leaf 0 vendor", "models/cpus/cpuid_common.hpp",
      "vendor_word(id.vendor, 2),\n       vendor_word(id.vendor, 1)",
      "vendor_word(id.vendor, 1),\n       vendor_word(id.vendor, 2)",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-ooo-cores", "Zhaoxin x86 cores", "models/timing/x86_measured.hpp",
      "  return core == X86Core::Nehemiah || core == X86Core::Esther;",
      "  return core != X86Core::Nano;",
      (gtest("test_timing", "X86Measured.*"),)),
    M("zx-cpuinfo-brand", "/proc/cpuinfo model name", "emulator/linux/guest_proc.cpp",
      "  while (*name == ' ') ++name;\n", "",
      (pytest("tests/integration/test_zhaoxin.py", "cpuinfo"),)),
    M("zx-cpus-units", "cpus UNITS", "emulator/cli/cpus.cpp",
      '  add(u.sm2, "SM2");\n', "",
      (pytest("tests/integration/test_zhaoxin.py", "cpus"),)),
    M("system-suite-passed", "--debian-suite reaches make-initramfs.sh",
      "emulator/cli/system_cmd.cpp",
      """    if (!o.suite.empty()) cmd += "--suite '" + o.suite + "' ";\n""", "",
      (pytest("tests/integration/test_system_boot.py", "pinned_kernel and nano"),)),
    # --- system mode's second load of a driver that failed its self-tests (PADLOCK-UNTESTED)
    M("symbols-module-reload", "kernel symbols: a module loaded again",
      "emulator/system/kernel_symbols.cpp",
      "    if (loads.empty() || std::any_of(loads.back().begin(), loads.back().end(), same)) {",
      "    if (loads.empty()) {",
      (gtest("test_system", "KernelSymbols*"),)),
    M("init-untested-notests", "the init's second load runs without the tests",
      "tests/system/init.sh", "  echo 1 >/sys/module/cryptomgr/parameters/notests\n", "",
      (pytest("tests/integration/test_system_boot.py", "616"),)),
    M("afalg-hash-stream", "AF_ALG hashes as a stream (update, then final)",
      "tests/system/afalg_check.c",
      "    while (inlen - at > 64 && send(op, in + at, 64, MSG_MORE) == 64) at += 64;\n"
      "    if (inlen - at <= 64 && ", "    if (",
      (pytest("tests/integration/test_system_boot.py", "616"),)),
    # --- Zhaoxin timing: the KH-40000 tcrypt fit, the borrowed values, GMI's choices -------
    M("zx-tcrypt-sha1-block", "KH-40000 SHA-1 block (tcrypt fit)", "models/cpus/calibrated.hpp",
      "kKh40000Sha1BlockOverhead = {15.79,", "kKh40000Sha1BlockOverhead = {25.79,",
      (pytest("tests/integration/test_zhaoxin_tcrypt.py"),)),
    M("zx-tcrypt-sha512-block", "KH-40000 SHA-512 block (tcrypt fit)",
      "models/cpus/calibrated.hpp", "kKh40000Sha512Block = {285.63,",
      "kKh40000Sha512Block = {304.0,", (pytest("tests/integration/test_zhaoxin_tcrypt.py"),)),
    M("zx-tcrypt-phe-startup", "KH-40000 PHE start-up (tcrypt fit)", "models/cpus/calibrated.hpp",
      "kKh40000PheStartup = {26.23,", "kKh40000PheStartup = {40.0,",
      (pytest("tests/integration/test_zhaoxin_tcrypt.py"),)),
    M("zx-tcrypt-published", "KH-40000 tcrypt figures", "scripts/tcrypt_zhaoxin.py",
      '"sha1": [442.80,', '"sha1": [542.80,',
      (pytest("tests/integration/test_zhaoxin_tcrypt.py"),)),
    M("phe2-startup-clocks", "PHE2 timing (start-up)", "models/phe/phe2_unit.cpp",
      "  run.clocks = cpu_.phe2.startup;", "  run.clocks = 0;",
      (gtest("test_gmi", "Phe2*"), pytest("tests/integration/test_zhaoxin_tcrypt.py"))),
    M("phe2-block-clocks", "PHE2 timing (per block)", "models/phe/phe2_unit.cpp",
      "esi, ecx, per_block, env,", "esi, ecx, per_block / 2, env,",
      (gtest("test_gmi", "Phe2*"), pytest("tests/integration/test_zhaoxin_tcrypt.py"))),
    # What PHE2, SM3 and SM4 share (models/unit_run.hpp, docs/duplicates.md).
    M("unit-run-block-bytes", "PHE2/SM3/SM4 bytes per block", "models/unit_run.hpp",
      "    out.bytes += bytes;\n", "", (gtest("test_gmi", "Phe2*:Sm3*:Sm4*"),)),
    M("unit-run-last-block-interrupt", "no interrupt point after the last block (§1.7)",
      "models/unit_run.hpp", "    return more && env.interrupt_due(now());",
      "    return env.interrupt_due(now());", (gtest("test_gmi", "Phe2*:Sm3*:Sm4*"),)),
    M("hash-spans-state", "PHE2/SM3 spans (the state at EDI)", "models/unit_run.hpp",
      "  if (o.blocks != 0) o.output = {reg_get(before, Gpr::DI, addr_size), state_bytes};",
      "  if (o.blocks != 0) o.output = {reg_get(before, Gpr::SI, addr_size), state_bytes};",
      (gtest("test_gmi", "*"), pytest("tests/python/test_zx_units.py"))),
    # (Dropping the walk's `break` instead loops for ever on a fault: a hang, not a finding.)
    M("ace-wrap-piece-short", "ACE probe across the wrap (what a short piece counts)",
      "models/ace/ace_memory.cpp", "    done += ok;\n", "    done += seg;\n",
      (gtest("test_ace", "*"),)),
    M("aesni-last-round", "AES-NI kernels (the last round)", "models/ace/aes_x86.cpp",
      "    for (int j = 0; j < W; ++j) b[j] = Dir::last(b[j], k);",
      "    for (int j = 0; j < W; ++j) b[j] = Dir::round(b[j], k);", (gtest("test_ace", "*"),)),
    M("zx-kh40000-measured", "KH-40000 PHE sourced as calibrated", "models/cpus/kh_40000.hpp",
      "  m.phe = zhaoxin_phe(true);", "  m.phe = zhaoxin_phe();",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-borrowed-source", "Zhaoxin PHE sourced as a choice", "models/cpus/late_nano.hpp",
      "  return kh40000 ? calibrated : Clocks{calibrated.value, kKh40000Borrowed};",
      "  return calibrated;", (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("zx-phe2-borrowed", "Zhaoxin PHE2 = the KH-40000's", "models/cpus/zx_c.hpp",
      "  m.phe2 = zhaoxin_phe2();\n", "",
      (gtest("test_cpu", "*ZhaoxinModel*"),
       pytest("tests/integration/test_zhaoxin_tcrypt.py", "other_zhaoxin"))),
    M("zx-sm3-as-sha256", "Zhaoxin SM3 clocks (choice)", "models/cpus/late_nano.hpp",
      "  g.sm3_block_clocks = {64 * phe.sha256_clocks_per_round.value + "
      "phe.sha256_block_overhead.value,",
      "  g.sm3_block_clocks = {64 * phe.sha256_clocks_per_round.value,",
      (gtest("test_cpu", "*ZhaoxinModel*"),)),
    M("sm3-clocks", "SM3 timing", "models/gmi/sm3_unit.cpp",
      "* p.sm3_block_clocks + p.sm3_padding;", "* p.sm3_block_clocks;",
      (gtest("test_gmi", "Sm3*"),)),
    M("sm4-key-clocks", "SM4 timing", "models/gmi/sm4_unit.cpp",
      "  run.clocks += p.sm4_key_clocks;\n", "", (gtest("test_gmi", "Sm4*"),)),
    M("sm2-verify-clocks", "SM2 timing", "models/gmi/sm2_unit.cpp",
      "  run.clocks = cpu_.gmi.sm2_verify_clocks;", "  run.clocks = 0;",
      (gtest("test_gmi", "Sm2*"),)),
    M("sm4-ofb-feedback", "SM4 OFB", "models/gmi/sm4_unit.cpp",
      "        std::memcpy(iv, ks, kBlock);\n        break;\n      case Sm4Mode::Ctr: {",
      "        std::memcpy(iv, out, kBlock);\n        break;\n      case Sm4Mode::Ctr: {",
      (gtest("test_gmi", "Sm4*"),)),
    M("sm4-ecb-direction", "SM4 ECB decryption", "models/gmi/sm4_unit.cpp",
      "        sm4_crypt_block(keys, cw.decrypt, in, out);",
      "        sm4_crypt_block(keys, false, in, out);", (gtest("test_gmi", "Sm4*"),)),
    M("zx-c-sm4-modes", "ZX-C's SM4 modes", "models/cpus/zx_c.hpp",
      "  m.gmi.sm4_chain_modes = false;", "  m.gmi.sm4_chain_modes = true;",
      (gtest("test_gmi", "Sm4*"),)),
    M("cpus-choices-filter", "cpus --verbose choices", "models/cpu_params.cpp",
      "    if (std::string_view(p.source).starts_with(kChoicePrefix)) out.push_back(std::move(p));",
      "    out.push_back(std::move(p));",
      (pytest("tests/integration/test_zhaoxin.py", "choices"),)),
    M("cpus-choices-units", "cpus --verbose choices (absent units)", "models/cpu_params.cpp",
      '(name.starts_with("phe2.") && !cpu.units.phe2)', "false",
      (pytest("tests/integration/test_zhaoxin.py", "choices"),)),
    M("cpus-borrowed", "cpus --verbose choices (other chips)", "emulator/cli/cpus.cpp",
      '  if (*m.borrowed) std::fprintf(out, "  choices: measured on another chip: %s\\n", '
      "m.borrowed);\n", "", (pytest("tests/integration/test_zhaoxin.py", "choices"),)),
]


def sh(cmd: list[str], log, cwd: Path = ROOT, env=None, timeout: float = 1800) -> int:
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    try:
        return subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env,
                              timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        log.write("(timed out: counted as a failing test)\n")
        return 124


def build_targets(m: Mutation) -> list[str]:
    targets = {"padlock-emu"} if any(t.kind == "pytest" for t in m.tests) else set()
    # tests/python runs the emulator through the Python module, a build of its own.
    if any(t.kind == "pytest" and t.target.startswith("tests/python/") for t in m.tests):
        targets.add("padlock_py_core")
    targets |= {t.target for t in m.tests if t.kind == "gtest"}
    return sorted(targets)


def run_tests(m: Mutation, build: Path, log) -> bool:
    """True if every test passed (the mutation survived)."""
    env = dict(os.environ, PADLOCK_EMU_BIN=str(build / "emulator" / "padlock-emu"),
               PADLOCK_GUEST_DIR=str(build / "tests" / "guest"), PADLOCK_BUILD_DIR=str(build))
    for t in m.tests:
        if t.kind == "gtest":
            cmd = [str(build / "tests" / t.target), f"--gtest_filter={t.filter or '*'}",
                   "--gtest_brief=1"]
        else:
            cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", t.target]
            if t.filter:
                cmd += ["-k", t.filter]
        if sh(cmd, log, env=env) != 0:
            return False
    return True


def dirty(path: str) -> bool:
    return subprocess.run(["git", "diff", "--quiet", "HEAD", "--", path], cwd=ROOT).returncode != 0


def restore(path: str) -> None:
    subprocess.run(["git", "checkout", "--", path], cwd=ROOT, check=True)


def check_texts(mutations: list[Mutation]) -> list[str]:
    errors = []
    for m in mutations:
        text = (ROOT / m.file).read_text()
        n = text.count(m.find)
        if n != 1:
            errors.append(f"{m.id}: its text occurs {n} times in {m.file}")
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--log", default=str(ROOT / "build" / "mutate.log"))
    args = ap.parse_args()
    chosen = MUTATIONS
    if args.only:
        ids = set(args.only.split(","))
        chosen = [m for m in MUTATIONS if m.id in ids]
        missing = ids - {m.id for m in chosen}
        if missing:
            print(f"mutate: unknown mutation(s): {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    if args.list:
        for m in chosen:
            print(f"{m.id:24} {m.area:40} {m.file}")
        return 0
    errors = check_texts(chosen)
    if errors:
        print("\n".join("mutate: " + e for e in errors), file=sys.stderr)
        return 2
    if args.check:
        print(f"mutate: {len(chosen)} mutations, every text found once")
        return 0
    for f in sorted({m.file for m in chosen}):
        if dirty(f):
            print(f"mutate: {f} has uncommitted changes; commit or stash them first",
                  file=sys.stderr)
            return 2
    build = Path(args.build)
    killed, survived, broken = [], [], []
    with open(args.log, "w") as log:
        for i, m in enumerate(chosen, 1):
            start = time.monotonic()
            path = ROOT / m.file
            original = path.read_text()
            try:
                path.write_text(original.replace(m.find, m.replace, 1))
                log.write(f"\n=== {m.id} ({m.area}) ===\n")
                cmd = ["cmake", "--build", str(build), "-j2", "--target", *build_targets(m)]
                if sh(cmd, log) != 0:
                    broken.append(m)
                    verdict = "does not build"
                elif run_tests(m, build, log):
                    survived.append(m)
                    verdict = "SURVIVED"
                else:
                    killed.append(m)
                    verdict = "killed"
            finally:
                restore(m.file)
            print(f"[{i}/{len(chosen)}] {m.id:24} {verdict:14} {time.monotonic() - start:6.0f} s",
                  flush=True)
        # Leave the build matching the sources again.
        targets = sorted({t for m in chosen for t in build_targets(m)})
        sh(["cmake", "--build", str(build), "-j2", "--target", *targets], log)
    valid = len(killed) + len(survived)
    rate = 100.0 * len(killed) / valid if valid else 0.0
    print(f"mutate: killed {len(killed)} of {valid} ({rate:.0f} %)"
          + (f"; {len(broken)} did not build: {', '.join(m.id for m in broken)}" if broken else ""))
    for m in survived:
        print(f"mutate: survivor {m.id} ({m.area}, {m.file})")
    return 0 if not survived and not broken else 1


if __name__ == "__main__":
    sys.exit(main())
