#!/usr/bin/env python3
"""Converts the InstLat dumps of our VIA and Zhaoxin cores into models/timing/x86_measured_data.cpp.

The dumps are AIDA64/Everest InstLat runs, public in the GitHub repository
InstLatx64/InstLatx64, folder CentaurHauls/ (docs/timing.md, "x86 costs"). They are not
ours and are never committed: fetch them into a directory outside the repository and run

    python3 scripts/import_instlat.py DIR [--out models/timing/x86_measured_data.cpp]

What is kept, per core, is one row per normalised instruction form (the key our classifier
computes from a Capstone-decoded instruction, emulator/x86_classify.cpp):

    "ADD r32, r32"   registers r8/r16/r32/r64, mm, xmm, st (any x87 stack register)
    "ADD m32, r32"   memory operands by size m8 ... m128; "m" for LEA and PREFETCH
    "ADD r32, i8"    immediates by encoded size i8/i16/i32/i64; "1" for the D0/D1 shift form
    "SHL r32, cl"    a count in CL
    "REP MOVSD"      REP string rows (bandwidth in L1D, a separate table)

with the latency L and reciprocal throughput T in clocks as printed (L absent where the
dump says "[no true dep.]", "[memory dep.]" or "[diff. reg. set]"), and "file:line".
Rows that do not fit a key are left out: instruction pairs ("+"), "LS pair" rows, special
operand values ("(0.0f/x)", "(x/1.0)"), offset or unaligned memory ("[m32 + 8]",
"[m128 + 4]"), explicit accumulator forms ("ADD eax, imm32"), large constants
("ADD r32, 0x04000"), negative or "[not enough reg]" throughputs. Choices, stated once:

- Where both a same-register row ("SUB r32, r32") and a distinct-register row
  ("SUB r1_32, r2_32") exist, the distinct one is kept: compiled code's register forms
  mostly name two registers, and the same-register forms include zeroing idioms.
- Otherwise the first row with a key wins, in the order the files are given below (Nano:
  the 32-bit run first, the 64-bit run adds its r64 and other new forms).
- DIV/IDIV: the "(full)" row (full-width dividend); MUL/IMUL with one operand: the row
  that times the low half (al/ax/eax); CPUID: the EAX = 0 row (the serialising idiom of
  timing code, `xor eax, eax; cpuid`); x87 FDIV: the 80-bit
  precision row (Linux runs the x87 at extended precision); FSQRT likewise.
- Mnemonics follow Capstone's: PUSHAD -> PUSHAL, PUSHA -> PUSHAW, SETC -> SETcc,
  CMOVNZ -> CMOVcc, FCMOVE -> FCMOVcc (every condition costs the same, one row each).

Core-level figures: the load-use latency and load throughput are the "MOV r32, [m32]" row
(a pointer chase: a load's result feeds the next load's address); L1D, L2 and memory
latency come from the MemLat dumps' summary lines.

Rows contradicted by other measurements (SUBSTITUTE below): the Nehemiah dump times the
single dword string instructions at 17-29 clocks (MOVSD 29.42, STOSD 17.25, SCASD 17.67)
while its byte and word forms take 2 and its REP MOVSD/STOSD stream 3.97 bytes a clock (one
dword a clock). Gladman's published ACE tables show the same: his CBC and CFB encryption
copy the IV back with four MOVSD and cost the same per call as decryption, which does not
(docs/timing.md, "Second source"). Those rows are taken from the Esther dump, the nearest
core that times them without the artifact, and cite both files.

The output is a function of the input files only (their SHA-256 is in the header), so
running the script twice gives identical output.
"""
import argparse
import hashlib
import os
import re
import sys

# Per core: the dumps in priority order, then the MemLat dumps (optional).
CORES = [
    ("Nehemiah", "nehemiah-c5p (also used for nehemiah-c5xl)",
     ["CentaurHauls0000698_C5P_Nehemiah_InstLatX86.txt"], []),
    ("Esther", "esther-c5j, esther-c5j-s9",
     ["CentaurHauls00006A9_C5J_Esther_InstLatX86.txt"],
     ["CentaurHauls00006A9_C5J_Esther_MemLatX86.txt"]),
    ("Nano", "nano",
     ["CentaurHauls00006F2_CNA_Isaiah_InstLatX86.txt",
      "CentaurHauls00006F2_CNA_Isaiah_InstLatX64.txt"],
     ["CentaurHauls00006F2_CNA_Isaiah_MemLatX64.txt"]),
    # The Nano 3000 and Zhaoxin cores (docs/zhaoxin.md, "x86 costs"). Their NewMemLat files
    # have another layout (no summary lines): no cache latencies from them.
    ("Nano3000", "nano-3000",
     ["CentaurHauls00006F8_CNB_Isaiah_InstLatX86.txt",
      "CentaurHauls00006F8_CNB_Isaiah_InstLatX64.txt"],
     ["CentaurHauls00006F8_CNB_Isaiah_MemLatX64.txt"]),
    ("ZX-C", "zx-c", ["CentaurHauls00006FE_CNR_Isaiah_InstLatX64.txt"], []),
    ("LuJiaZui", "kx-5000, kx-6000, kh-40000, kx-7000",
     ["CentaurHauls00307B1_ZXE_InstLatX64.txt"], []),
]

ROW = re.compile(r"^\s*(\d+)\s+([A-Z0-9_]+)\s*:(.*)$")
TIMED = re.compile(r"^(.*?)\s+L:\s*(\[[^\]]*\]|-?[\d.]+ns=\s*-?[\d.]+c)\s+T:\s*(.*?)\s*$")
CLOCKS = re.compile(r"ns=\s*(-?[\d.]+)c?$")
BANDWIDTH = re.compile(r"^(.*?)\s+BW in L1D:\s*([\d.]+) B/c")
MEMLAT = re.compile(r"^(L1D|L2 |Mem) +latency:.*\(\s*(\d+) clks\)")

# Whole-name aliases (the choices listed above).
ALIASES = {
    "CPUID (EAX = 0)": "CPUID",
    "CMPXCHG8B": "CMPXCHG8B m64",
    "CMPXCHG16B": "CMPXCHG16B m128",
    "FDIV80 st(i), st": "FDIV st, st",
    "FSQRT80 st": "FSQRT",
}
MNEMONIC_ALIASES = {
    "PUSHAD": "PUSHAL", "POPAD": "POPAL", "PUSHA": "PUSHAW", "POPA": "POPAW",
    "SETC": "SETcc", "CMOVNZ": "CMOVcc", "FCMOVE": "FCMOVcc",
}
DIV_FULL = re.compile(r"^(I?DIV) (r\d+)\s.*\(full\)$")
MUL_LOW = re.compile(r"^(I?MUL) (r\d+)\s+\((?:al|ax|eax|rax)\)$")

OPERANDS = {
    "r8": "r8", "r16": "r16", "r32": "r32", "r64": "r64", "cl": "cl", "1": "1",
    "imm8": "i8", "im8": "i8", "imm16": "i16", "imm32": "i32", "imm64": "i64",
    "mm": "mm", "xmm": "xmm", "st": "st", "st(i)": "st",
    "[m8]": "m8", "[m16]": "m16", "[m32]": "m32", "[m64]": "m64", "[m128]": "m128",
    "[mem]": "m",
}
DISTINCT = re.compile(r"^(r|mm|xmm|xm)_?([12])(?:_(\d+))?$")
MNEMONIC = re.compile(r"^[A-Z][A-Z0-9]*$")


def operand_token(text, mnemonic):
    """(token, distinct) for one operand, or (None, False) if it does not fit a key."""
    if text in OPERANDS:
        return OPERANDS[text], False
    m = re.match(r"^r([12])_(8|16|32|64)$", text)
    if m:
        return "r" + m.group(2), True
    m = re.match(r"^(xmm|mm)_?[12]$", text)
    if m:
        return m.group(1), True
    if mnemonic == "LEA" and text.startswith("[") and not re.search(r"m\d", text):
        return "m", False
    return None, False


def normalise(name):
    """(key, distinct) for an InstLat instruction name, or (None, False)."""
    name = re.sub(r"\s+", " ", name.strip())
    if name in ALIASES:
        return ALIASES[name], False
    m = DIV_FULL.match(name) or MUL_LOW.match(name)
    if m:
        return f"{m.group(1)} {m.group(2)}", False
    prefix = ""
    if name.startswith("LOCK "):
        prefix, name = "LOCK ", name[5:]
    mnemonic, _, rest = name.partition(" ")
    unbracketed = re.sub(r"\[[^\]]*\]", "[]", rest)
    if not MNEMONIC.match(mnemonic) or "+" in unbracketed or "pair" in rest:
        return None, False
    mnemonic = MNEMONIC_ALIASES.get(mnemonic, mnemonic)
    tokens, distinct = [], False
    if rest:
        for text in rest.split(","):
            token, d = operand_token(text.strip(), mnemonic)
            if token is None:
                return None, False
            tokens.append(token)
            distinct = distinct or d
    key = prefix + mnemonic + (" " + ", ".join(tokens) if tokens else "")
    return key, distinct


def clocks(text):
    """Clocks from "4.01ns=  6.0c", or None for a bracketed note or a negative figure."""
    m = CLOCKS.search(text)
    if not m:
        return None
    value = m.group(1)
    return None if value.startswith("-") else value


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Core:
    def __init__(self, name):
        self.name = name
        self.rows = {}  # key -> (latency or None, throughput, source, distinct)
        self.rep = {}  # key -> (element bytes, bytes per clock, source)
        self.memlat = {}  # "L1D"/"L2"/"Mem" -> (clocks, source)

    def add_instlat(self, path):
        base = os.path.basename(path)
        with open(path, encoding="ascii") as f:
            for number, line in enumerate(f, 1):
                m = ROW.match(line.rstrip("\r\n"))
                if not m:
                    continue
                body = m.group(3)
                source = f"{base}:{number}"
                bw = BANDWIDTH.match(body)
                if bw:
                    self.add_rep(bw.group(1), bw.group(2), source)
                    continue
                t = TIMED.match(body)
                if not t:
                    continue
                key, distinct = normalise(t.group(1))
                throughput = clocks(t.group(3))
                if key is None or throughput is None:
                    continue
                latency = clocks(t.group(2))
                old = self.rows.get(key)
                if old is None or (distinct and not old[3]):
                    self.rows[key] = (latency, throughput, source, distinct)

    def add_rep(self, name, bytes_per_clock, source):
        name = re.sub(r"\s+", " ", name.strip())
        m = re.match(r"^(REP|REPE|REPNE) (MOVS|STOS|LODS|CMPS|SCAS)([BWDQ])$", name)
        if m and name not in self.rep:
            size = {"B": 1, "W": 2, "D": 4, "Q": 8}[m.group(3)]
            self.rep[name] = (size, bytes_per_clock, source)

    def add_memlat(self, path):
        base = os.path.basename(path)
        with open(path, encoding="ascii") as f:
            for number, line in enumerate(f, 1):
                m = MEMLAT.match(line)
                if m:
                    self.memlat[m.group(1).strip()] = (m.group(2), f"{base}:{number}")


# (core, key) -> (core whose row replaces it, why). See the docstring.
SUBSTITUTE = {
    ("Nehemiah", key): ("Esther", "an artifact, see scripts/import_instlat.py")
    for key in ("MOVSD", "STOSD", "SCASD", "LODSD", "CMPSD")
}


def substitute(cores):
    by_name = {c.name: c for c in cores}
    for (name, key), (donor, why) in SUBSTITUTE.items():
        core, other = by_name[name], by_name[donor]
        if key in core.rows and key in other.rows:
            latency, throughput, source, distinct = other.rows[key]
            core.rows[key] = (latency, throughput,
                              f"{source}, replacing {core.rows[key][2]} ({why})", distinct)


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def figure(value, source):
    return f"{{{value}, {cstr(source)}}}" if source else "{0, \"\"}"


def ident(name):
    """A core's name as part of a C++ identifier ("ZX-C" -> "ZXC")."""
    return re.sub(r"\W", "", name)


def emit(cores, inputs):
    out = []
    w = out.append
    w("// GENERATED by scripts/import_instlat.py from InstLat dumps: DO NOT EDIT.")
    w("// Regenerate with `python3 scripts/import_instlat.py DIR` (docs/timing.md, \"x86 costs\").")
    w("//")
    w("// Source: measured x86 latency (L) and reciprocal throughput (T) in clocks, AIDA64/Everest")
    w("// InstLat runs published in the GitHub repository InstLatx64/InstLatx64, folder")
    w("// CentaurHauls/. Every row cites \"file:line\" of one of these files (SHA-256 prefix):")
    for base, digest in inputs:
        w(f"//   {base}  {digest[:16]}")
    w("// Keys, row selection and the choices made are described in the script's docstring;")
    w("// the lookup and block timing model are in models/timing/x86_measured.hpp.")
    w("#include \"models/timing/x86_measured.hpp\"")
    w("")
    w("namespace padlock::timing {")
    w("")
    w("namespace {")
    w("")
    w("// clang-format off")
    for core in cores:
        w(f"// {core.name}: {len(core.rows)} instruction forms, sorted by key.")
        w(f"constexpr MeasuredRow k{ident(core.name)}Rows[] = {{")
        for key in sorted(core.rows):
            latency, throughput, source, _ = core.rows[key]
            w(f"    {{{cstr(key)}, {latency if latency is not None else '-1'}, {throughput}, "
              f"{cstr(source)}}},")
        w("};")
        w("")
        w(f"// {core.name}: REP string bandwidth in L1D, bytes per clock.")
        w(f"constexpr RepStringRow k{ident(core.name)}Rep[] = {{")
        for key in sorted(core.rep):
            size, bpc, source = core.rep[key]
            w(f"    {{{cstr(key)}, {size}, {bpc}, {cstr(source)}}},")
        w("};")
        w("")
    w("// clang-format on")
    w("")
    w("}  // namespace")
    w("")
    w("// Order = X86Core.")
    w("const MeasuredCore kMeasuredCores[kX86CoreCount] = {")
    for core in cores:
        load = core.rows.get("MOV r32, m32")
        if load is None or load[0] is None:
            sys.exit(f"{core.name}: no MOV r32, [m32] row with a latency")
        l1, l2, mem = (core.memlat.get(level, (0, "")) for level in ("L1D", "L2", "Mem"))
        w(f"    {{.core = {cstr(core.name)},")
        w(f"     .rows = k{ident(core.name)}Rows,")
        w(f"     .rep = k{ident(core.name)}Rep,")
        w(f"     .load_use = {figure(load[0], load[2])},")
        w(f"     .load_throughput = {figure(load[1], load[2])},")
        w(f"     .l1_latency = {figure(*l1)},")
        w(f"     .l2_latency = {figure(*l2)},")
        w(f"     .memory_latency = {figure(*mem)}}},")
    w("};")
    w("")
    w("}  // namespace padlock::timing")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", help="directory holding the CentaurHauls/ dumps")
    parser.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "models", "timing",
        "x86_measured_data.cpp"))
    args = parser.parse_args()
    cores, inputs = [], []
    for name, _models, instlat, memlat in CORES:
        core = Core(name)
        for base in instlat:
            path = os.path.join(args.dir, base)
            core.add_instlat(path)
            inputs.append((base, sha256(path)))
        for base in memlat:
            path = os.path.join(args.dir, base)
            if os.path.exists(path):
                core.add_memlat(path)
                inputs.append((base, sha256(path)))
        cores.append(core)
    substitute(cores)
    text = emit(cores, inputs)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    for core in cores:
        print(f"{core.name}: {len(core.rows)} forms, {len(core.rep)} REP string rows, "
              f"memory figures: {', '.join(sorted(core.memlat)) or 'none'}")


if __name__ == "__main__":
    main()
