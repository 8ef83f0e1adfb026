"""The KH-40000 tcrypt source of the Zhaoxin PHE and PHE2 timing (docs/zhaoxin.md, "Timing"):
the figures Zhaoxin published with "[PATCH v3 2/2] crypto: Add Zhaoxin PadLock Hash Engine
support for SHA384/SHA512" (Tony W Wang-oc, linux-crypto, 2025-01-14), our tcrypt-shaped
guest (bench/guest/tcrypt_hash.c) under padlock-emu on kh-40000, and the fit of the parts
only this source sees.

The published figures are the yardstick: the emulator never reads them. scripts/calibrate.py
--tcrypt fits the parts and writes them to models/cpus/calibrated.hpp.

Reading of the table (each a choice, docs/zhaoxin.md):
- "Mb/s" is 10^6 bits per second: as bytes, generic SHA-256 would run at under 2 clocks a
  byte on this core.
- The clock is the 2.2 GHz of the KH-40000's CPUID dump (InstLatx64,
  CentaurHauls00507B3_KX40000_01_CPUID.txt: "KH-40000/16@2.2GHz"); the post names none.
- A block size is one init, one update of the whole block and one final: tcrypt's digest row
  (block size = bytes per update). Its rows of smaller updates cannot reach these rates: at
  8192 bytes in 16-byte updates every update would have to cost under 40 clocks, the
  driver's two state copies included.

One operation of the guest costs, in emulated clocks,
    x86 + instructions x start-up + blocks x per block
and the kernel's operation adds what our guest does not run: the crypto API's ahash-to-shash
wrappers, the scatterlist walk and tcrypt's loop. That is `tcrypt_op`, one number of clocks
for every cell, fitted with the parts; it is a property of the measurement, like the clock
the guide's §3.3 Nehemiah table was measured at, and never enters the model.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

MHZ = 2200.0
SIZES = [16, 64, 256, 1024, 2048, 4096, 8192]
# Mb/s, "PadLock" rows, as printed.
PUBLISHED = {
    "sha1": [442.80, 1309.21, 3257.53, 5221.56, 5813.45, 6136.39, 6264.50],
    "sha256": [451.70, 1313.65, 2958.71, 4658.55, 5109.16, 5359.08, 5459.13],
    "sha384": [350.90, 1406.42, 3166.16, 5736.39, 6627.77, 7182.01, 7429.18],
    "sha512": [334.49, 1394.71, 3159.93, 5728.86, 6625.33, 7169.23, 7407.80],
}
# SHA-384 is SHA-512's instruction with another IV: held out, it checks the fit.
FITTED = ("sha1", "sha256", "sha512")
HELD_OUT = ("sha384",)
UNIT = {"sha1": "phe", "sha256": "phe", "sha384": "phe2", "sha512": "phe2"}
ROUNDS = {"sha1": (80, "sha1_clocks_per_round"), "sha256": (64, "sha256_clocks_per_round")}
# The fitted parts: (name in calibrated.hpp, what it is).
PARTS = [
    ("kKh40000PheStartup", "PheParams::startup"),
    ("kKh40000Sha1BlockOverhead", "PheParams::sha1_block_overhead"),
    ("kKh40000Sha256BlockOverhead", "PheParams::sha256_block_overhead"),
    ("kKh40000Phe2Startup", "Phe2Params::startup"),
    ("kKh40000Sha512Block", "Phe2Params::sha512_block_clocks"),
]
GUEST = "guest_tcrypt_hash_x86_64"


def published_cycles(alg: str, size: int) -> float:
    """Clocks of one operation at MHZ: size bytes at the published Mb/s."""
    return size * 8 * MHZ / PUBLISHED[alg][SIZES.index(size)]


def run_guest(emu: Path, guest: Path, ops: int = 100) -> dict[tuple[str, int], dict]:
    """Per (alg, size): the guest's clocks, REP XSHA instructions and blocks per operation,
    and its digest."""
    out = subprocess.run([str(emu), "run", "--cpu", "kh-40000", "--mhz", f"{MHZ:.0f}",
                          str(guest), "-ops", str(ops)],
                         capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        if not line.startswith("alg="):
            continue
        f = dict(kv.split("=", 1) for kv in line.split())
        res[(f["alg"], int(f["blen"]))] = {
            "cycles": float(f["cycles"]), "xsha": float(f["xsha"]),
            "blocks": float(f["blocks"]), "digest": f["digest"]}
    want = {(a, s) for a in PUBLISHED for s in SIZES}
    if set(res) != want:
        raise RuntimeError(f"tcrypt guest printed {sorted(res)}, expected every alg and size")
    return res


def model_parts(emu: Path) -> dict[str, float]:
    """The kh-40000 model's PHE and PHE2 values, as `padlock-emu cpus --verbose` lists them."""
    out = subprocess.run([str(emu), "cpus", "--verbose"], capture_output=True, text=True,
                         check=True).stdout
    block = out.split("\nkh-40000:", 1)[1].split("\n\n", 1)[0]
    vals = {}
    for name in ("phe.startup", "phe.sha1_clocks_per_round", "phe.sha256_clocks_per_round",
                 "phe.sha1_block_overhead", "phe.sha256_block_overhead", "phe2.startup",
                 "phe2.sha512_block_clocks"):
        m = re.search(rf"^  {re.escape(name)}\s+([-0-9.e+]+)", block, re.M)
        if not m:
            raise RuntimeError(f"cpus --verbose lists no {name} for kh-40000")
        vals[name] = float(m.group(1))
    return vals


def per_block(parts: dict[str, float], alg: str) -> float:
    if UNIT[alg] == "phe2":
        return parts["phe2.sha512_block_clocks"]
    rounds, cpr = ROUNDS[alg]
    return rounds * parts[f"phe.{cpr}"] + parts[f"phe.{alg}_block_overhead"]


def startup(parts: dict[str, float], alg: str) -> float:
    return parts[f"{UNIT[alg]}.startup"]


def x86_clocks(run: dict, parts: dict[str, float]) -> dict[tuple[str, int], float]:
    """Each operation's clocks less its REP XSHA instructions' (what the parts do not move)."""
    return {(a, s): r["cycles"] - r["xsha"] * startup(parts, a) - r["blocks"] * per_block(parts, a)
            for (a, s), r in run.items()}


def fit(run: dict, parts: dict[str, float]) -> dict[str, float]:
    """Least squares on relative error over the fitted algorithms' cells: the five parts
    (PARTS, as the model holds them) and tcrypt_op."""
    base = x86_clocks(run, parts)
    rows, rhs = [], []
    for a in FITTED:
        for s in SIZES:
            r, pub = run[(a, s)], published_cycles(a, s)
            phe = UNIT[a] == "phe"
            x = [1.0, r["xsha"] if phe else 0.0, r["blocks"] if a == "sha1" else 0.0,
                 r["blocks"] if a == "sha256" else 0.0, 0.0 if phe else r["xsha"],
                 0.0 if phe else r["blocks"]]
            rows.append([v / pub for v in x])
            rhs.append((pub - base[(a, s)]) / pub)
    sol, *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    op, s1, b1, b256, s2, b512 = (float(v) for v in sol)
    return {"tcrypt_op": op, "kKh40000PheStartup": s1,
            "kKh40000Sha1BlockOverhead": b1 - 80 * parts["phe.sha1_clocks_per_round"],
            "kKh40000Sha256BlockOverhead": b256 - 64 * parts["phe.sha256_clocks_per_round"],
            "kKh40000Phe2Startup": s2, "kKh40000Sha512Block": b512}


def tcrypt_op(run: dict) -> float:
    """The kernel's clocks per operation beyond our guest's, with the model's parts fixed:
    the one number that minimises the squared relative errors of the fitted cells."""
    num = den = 0.0
    for a in FITTED:
        for s in SIZES:
            pub = published_cycles(a, s)
            num += (pub - run[(a, s)]["cycles"]) / pub**2
            den += 1 / pub**2
    return num / den


def errors(run: dict, op: float) -> dict[tuple[str, int], float]:
    """Relative error of each cell's cycles per byte, the guest's plus tcrypt_op."""
    return {(a, s): (run[(a, s)]["cycles"] + op) / published_cycles(a, s) - 1
            for a in PUBLISHED for s in SIZES}


def table_md(run: dict, op: float) -> list[str]:
    """The comparison, cycles per byte at MHZ: published / ours / error, per algorithm."""
    errs = errors(run, op)
    md = ["| tcrypt block size (bytes) | " + " | ".join(
        f"{a.upper()} KH-40000 | ours | error" for a in PUBLISHED) + " |",
        "|---|" + "---|---|---|" * len(PUBLISHED)]
    for s in SIZES:
        cells = []
        for a in PUBLISHED:
            pub = published_cycles(a, s) / s
            ours = (run[(a, s)]["cycles"] + op) / s
            cells.append(f"{pub:.2f} | {ours:.2f} | {100 * errs[(a, s)]:+.1f} %")
        md.append(f"| {s} | " + " | ".join(cells) + " |")
    return md
