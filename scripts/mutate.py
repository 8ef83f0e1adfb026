#!/usr/bin/env python3
"""The mutation check (docs/reliability.md, "Mutation check"): small semantic changes to the
units, timing, virtual time, signal frames, the loader and the CLI, each applied alone,
built incrementally, run against the tests that should notice, and reverted. A mutation
the tests do not notice ("survivor") is a hole in the tests.

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
      "  double sse = c.base_ + static_cast<double>(n) * c.per_block_;",
      "  double sse = c.base_ + static_cast<double>(n + 1) * c.per_block_;",
      (gtest("test_ace", "*"), gtest("test_timing", "*"))),
    M("xsha-table", "timing table (PHE)", "models/phe/phe_unit.cpp",
      "  run.clocks += timing.padding;", "  run.clocks += 2 * timing.padding;",
      (gtest("test_phe", "*"), gtest("test_timing", "*"))),
    M("irq-cost", "interrupt cost", "emulator/time/virtual_time.cpp",
      "    now_ += cfg_.irq_cycles;", "    now_ += cfg_.irq_cycles / 2;",
      (pytest("tests/integration/test_timing.py", "interrupts_cost"),)),
    # --- every virtual-time source at a non-default --mhz -----------------------------------
    M("clock-ns-fixed-mhz", "clock_gettime", "emulator/time/virtual_time.cpp",
      "  const int64_t e = static_cast<int64_t>(ns_of(now_));",
      "  const int64_t e = static_cast<int64_t>(now_ * 1000 / 1600);",
      (pytest("tests/integration/test_timing.py", "mhz"),)),
    M("times-ticks", "times()", "emulator/linux/syscall/time.cpp",
      "    t.tms_utime = static_cast<clock_t>(c.p.vtime().cpu_ns() / (kNsPerSec / hz));",
      "    t.tms_utime = static_cast<clock_t>(c.p.vtime().cpu_ns() / (kNsPerSec / hz) / 2);",
      (pytest("tests/integration/test_timing.py", "mhz"),)),
    M("rdtsc-mhz", "RDTSC", "emulator/linux/process_hooks.cpp",
      "  const uint64_t t = now();\n  cpu_->set_reg(guest64_ ? UC_X86_REG_RAX",
      "  const uint64_t t = now() / 2;\n  cpu_->set_reg(guest64_ ? UC_X86_REG_RAX",
      (pytest("tests/integration/test_timing.py", "mhz"),)),
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
      "    return UINT64_MAX;",
      (pytest("tests/integration/test_stop.py", "max_time and huge and not mac and off"),)),
    M("stop-phe-cut", "host stop (PHE interrupt point)", "models/phe/phe_unit.cpp",
      "    if (want == until_irq || env.host_stop_requested()) return run.finish(Status::Interrupted);",
      "    if (want == until_irq) return run.finish(Status::Interrupted);",
      (pytest("tests/integration/test_stop.py", "max_time and huge and not mac and off"),)),
    M("stop-ace-cut", "host stop (ACE interrupt point)", "models/ace/ace_unit.cpp",
      "    if (k < st.k && env.host_stop_requested() && x.interruptible_after(k)) {",
      "    if (false) {",
      (pytest("tests/integration/test_stop.py", "max_time and huge-mac and off"),)),
    M("stop-deadline-flag", "host stop (--max-time's watchdog)", "emulator/linux/process.cpp",
      "  out_of_time_.store(true);\n  host_stop_.store(true);\n",
      "  out_of_time_.store(true);\n",
      (pytest("tests/integration/test_stop.py", "max_time and huge and not mac and off"),)),
    M("stop-signal-flag", "host stop (host signals)", "emulator/linux/signal/host_signals.cpp",
      "  if (std::atomic<bool>* stop = g_host_stop.load()) stop->store(true);\n", "",
      (pytest("tests/integration/test_stop.py", "sigterm and huge and not mac and off"),)),
    M("stop-core-flag", "host stop (the core hands it to the units)", "emulator/padlock/core.cpp",
      "  env.host_stop = host_stop_;\n", "",
      (pytest("tests/integration/test_stop.py", "sigterm and huge and not mac and off"),)),
    # --- CLI options and environment variables ------------------------------------------------
    M("env-memory", "PADLOCK_EMU_MEMORY", "emulator/cli/cli.cpp",
      '    o.direct_memory = parse_memory(v, " (from PADLOCK_EMU_MEMORY)");',
      '    (void)parse_memory(v, " (from PADLOCK_EMU_MEMORY)");',
      (pytest("tests/integration/test_guest_self_modifying.py", "memory_mode"),)),
    M("opt-memory", "--memory", "emulator/cli/cli.cpp",
      '      o.direct_memory = parse_memory(v, "");', '      (void)parse_memory(v, "");',
      (pytest("tests/integration/test_guest_self_modifying.py", "memory_mode"),)),
    M("env-seed", "PADLOCK_EMU_SEED", "emulator/cli/cli.cpp",
      '    o.seed = parse_seed(v, " (from PADLOCK_EMU_SEED)");',
      '    (void)parse_seed(v, " (from PADLOCK_EMU_SEED)");',
      (pytest("tests/integration/test_guest_xstore.py", "seed"),)),
    M("env-mhz", "PADLOCK_EMU_MHZ", "emulator/cli/cli.cpp",
      '    o.mhz = parse_mhz(v, " (from PADLOCK_EMU_MHZ)");',
      '    (void)parse_mhz(v, " (from PADLOCK_EMU_MHZ)");',
      (pytest("tests/integration/test_timing.py", "environment"),)),
    M("opt-errata", "--errata", "emulator/cli/cli.cpp",
      "      else if (v == \"off\")\n        o.errata = false;",
      "      else if (v == \"off\")\n        o.errata = true;",
      (pytest("tests/integration/test_timing.py", "errata"),
       pytest("tests/integration/test_guest_ctr_errata.py"))),
    M("opt-irq-hz", "--irq-hz", "emulator/cli/cli.cpp", "      o.irq_hz = hz;", "",
      (pytest("tests/integration/test_cli.py"), pytest("tests/integration/test_timing.py"))),
    M("opt-unset-env", "-U", "emulator/cli/cli.cpp",
      "  std::erase_if(env, [&](const std::string& e) { return e.compare(0, name.size(), name) "
      "== 0; });",
      "  (void)env;",
      (pytest("tests/integration/test_cli.py"),)),
    M("opt-min-mhz", "--mhz minimum", "emulator/cli/cli.cpp",
      "  if (mhz < kMinMhz) {", "  if (mhz < 0) {",
      (pytest("tests/integration/test_reliability.py", "clock"),)),
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
