"""The fit behind scripts/calibrate.py: the chaining-mode timing parts of ACE fitted to two
silicon sources at once, the guide's §3.3 throughput tables (BAES, Gb/s from clock()) and
Gladman's ACE tables (his modetest, cycles per byte from RDTSC), and cross-validated one
against the other (docs/timing.md, "Calibration").

Every cell is a measured unit of work: one BAES loop iteration (one REP XCRYPT of n
blocks, key loaded) or one modetest call (a key reload and one REP XCRYPT per chunk of up
to 8 blocks). Its clocks under the emulator are linear in the fitted parts:

    clocks = clocks at the current parts
           + instructions x d(start-up) + blocks x d(per block)
           + key reloads x d(chain reload)

(the §3.3 overlap releases integer code a fixed number of clocks before ACE finishes, so a
part moves a loop iteration by the same amount whether ACE or the x86 code bounds it).
The guide's cells are rates: a loop iteration of n blocks at `G` Gb/s on a clock of `f` MHz
took 0.128 n f / G clocks. The clock the tables were measured at is fitted too, one per
machine: the ratio of the §3.3 Nehemiah rates to Gladman's is 1.09-1.11 in every mode,
which a per-block or per-store cost cannot give and a slower clock does
(docs/timing.md). Gladman's cells are cycles and need no clock.

Timing v3 adds four silicon sources (docs/timing.md, "Calibration"), each a cell kind:
the guide's BAES run (rates at one unknown clock, fitted on its ECB line), CTR_ERRATA's two
timed phases (rates on the same host), the Dedibox C7 ratios (a cell over a denominator
cell, linear as num - ratio x den) and the parts they alone see: digest mode, the part of
Esther's per-store cost that rounds beyond 10 hide, SHA-256's block overhead and aligned
CTR. Every part has a prior, the value it takes when no cell sees it (leave-one-source-out: loso()).

The fit minimises the sum of |relative error| (iteratively reweighted least squares), so a
few cells the parts cannot follow do not pull the rest. ECB's clocks are the guide's table
and never fitted; ECB cells still fix the clocks and show in the errors.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np

CHAIN = ("CBC", "CFB", "OFB", "CTR")


@dataclass
class Cell:
    source: str        # "guide" or "gladman"
    table: str         # guide table data name, or "Gladman"
    machine: str       # "Nehemiah" or "Esther": whose parts and clock
    mode: str          # ECB, CBC, CFB, OFB, CTR
    aligned: bool      # ALIGN = 0 path (Gladman: his data are copied to aligned buffers)
    blocks: int        # blocks per unit
    insns: int         # REP XCRYPT instructions per unit
    reloads: int       # key reloads per unit (PUSHF/POPF before an instruction)
    published: float   # Gb/s (guide) or cycles per byte (gladman)
    clocks: float      # emulated clocks per unit at the current parts
    size_name: str = ""
    direction: str = ""
    align_name: str = ""
    in_fit: bool = True  # guide cells beyond the caches (memory-bound) are reported only
    fitted: bool = False  # ECB and software CTR: no chaining part moves them
    floored: bool = False  # a chaining instruction held at ECB's clocks (chain_floored)
    clock_key: str = ""   # whose clock the rates were measured at ("" = machine)
    stalled: int = 0      # 16-byte stores per unit beyond the store buffer (Esther)
    rounds: int = 10      # AES rounds of the unit's XCRYPT
    digest: bool = False  # DGEST = 1 (§3.1)
    sha256_blocks: int = 0  # SHA-256 blocks per unit
    den: "Cell | None" = None  # a ratio cell: published = clocks of self / clocks of den
    line: str = ""        # the source's own name of the cell

    @property
    def clock(self) -> str:
        return self.clock_key or self.machine

    def published_clocks(self, mhz: float) -> float:
        if is_rate(self):
            return 0.128 * self.blocks * mhz / self.published
        return self.published * 16 * self.blocks

    def error(self, clocks: float, mhz: float) -> float:
        """Relative error of the emulated figure in the source's own unit."""
        pub = self.published_clocks(mhz)
        if is_rate(self):
            return pub / clocks - 1  # rates: emulated Gb/s over published
        return clocks / pub - 1


@dataclass
class Parts:
    """What the fit moves: per (machine, mode, aligned) start-up and per-block clocks, per
    (machine, mode) the chain reload, and per machine the clock of its §3.3 table."""
    startup: dict = field(default_factory=dict)    # (machine, mode, aligned) -> clocks
    per_block: dict = field(default_factory=dict)  # (machine, mode, aligned) -> clocks
    reload: dict = field(default_factory=dict)     # machine -> clocks
    mhz: dict = field(default_factory=dict)        # machine -> MHz


ROUNDS = 10  # AES-128, what both sources time

RATE_SOURCES = ("guide", "baes", "ctr_errata")  # rates in Gb/s at a clock


# The extra clocks of a misaligned REP MOVSD element when no fit sees it (Gladman left out),
# from Nehemiah's InstLat MOVUPS rows (CentaurHauls0000698_C5P_Nehemiah_InstLatX86.txt), T in
# RDTSC cycles: 16 bytes at [m128 + 4] against [m128]. The dumps time aligned strings only;
# these rows time misaligned 16-byte accesses. A 16-byte access's extra clocks are spread over
# the 4 dwords that move the same bytes (a dword stream at an odd offset crosses a 16-byte
# boundary once in 4 dwords, as each MOVUPS [m128 + 4] crosses one). Gladman's memcpy copies
# a block as a load/store stream, misaligned on one side (in: the source; out: the
# destination), which is what the unaligned LS pair times: two misaligned 16-byte accesses,
# 8 dwords, at 19.33 against the aligned pair's 4.00. The load and store rows apart (13.25 -
# 2.00, 13.50 - 3.75) time streams of one kind, with nothing to overlap the penalty.
MISALIGNED_LS_PAIR = (19.33 - 4.00) / 8  # :605, :602
MISALIGNED_LOAD = (13.25 - 2.00) / 4  # :603, :600
MISALIGNED_STORE = (13.50 - 3.75) / 4  # :604, :601
MISALIGNED_PRIOR = MISALIGNED_LS_PAIR
MISALIGNED_READINGS = (
    ("none (InstLat's strings are aligned)", 0.0),
    ("MOVUPS unaligned LS pair over the aligned one, (19.33 - 4.00) / 8 (:605, :602), "
     "the prior", MISALIGNED_LS_PAIR),
    ("MOVUPS load and store rows apart, (13.25 - 2.00 + 13.50 - 3.75) / 8 (:603, :600, "
     ":604, :601)", (MISALIGNED_LOAD + MISALIGNED_STORE) / 2),
)


def gladman_own(misaligned_fitted: float) -> dict:
    """The constants fitted to Gladman alone outside the fit (loso's `own`): his misaligned
    string element, which without him takes InstLat's prior (MISALIGNED_PRIOR)."""
    return {"Gladman": {("misaligned",): MISALIGNED_PRIOR - misaligned_fitted}}


def misaligned_elements(c: Cell) -> int:
    """Misaligned REP MOVSD elements a unit copies: Gladman's unaligned ECB, CBC, CFB and OFB
    go through his bounce buffer, memcpy in and out from the misaligned side, 8 dwords a
    block (docs/timing.md, "REP string instructions"); his software CTR XORs in place."""
    unaligned = c.source == "gladman" and c.align_name == "unaligned"
    return 8 * c.blocks if unaligned and c.mode != "CTR" else 0


def is_rate(c: Cell) -> bool:
    return c.source in RATE_SOURCES and c.den is None


def ecb_clocks(n: int) -> float:
    """§3.3 REP XCRYPTECB SSE clocks with the key loaded (the model's ace::BlockClock::ecb):
    9 + 2R for one block, 11 + 2R for two, 11 + NR for more (+ R - 2 when N is odd)."""
    if n <= 2:
        return (9 if n <= 1 else 11) + 2 * ROUNDS
    return 11 + n * ROUNDS + (ROUNDS - 2 if n % 2 else 0)


def charged_blocks(c: Cell) -> int:
    """Blocks a unit's per-block clocks are paid for: aligned CTR encrypts its counters in
    pairs, so an odd count pays for one more (ace::ctr_charged_blocks; §6.6, §3.3)."""
    if c.mode == "CTR" and c.aligned and c.blocks % 2 and c.insns == 1:
        return c.blocks + 1
    return c.blocks


def chain_floored(startup: float, per_block: float, n: int) -> bool:
    """Whether a chaining instruction of n blocks (key loaded) takes ECB's clocks instead
    of start-up + n x per block: it never takes fewer (models/ace/ace_timing.cpp), so then
    its start-up and per-block clocks do not move it."""
    return startup + n * per_block < ecb_clocks(n)


def ecb_release_cell(c: Cell) -> bool:
    """A §3.3 ECB cell of more than 2 blocks: its BAES iteration is bound by the integer
    code after the early release (AceParams::ecb_release_many), one clock per clock."""
    return c.source == "guide" and c.mode == "ECB" and c.blocks > 2


def stores_iv_always(mode: str, aligned: bool) -> bool:
    """An instruction that stores its chaining value whatever its direction (§3.1): OFB, and
    CBC/CFB with ALIGN = 1 (the §3.3 non-aligned tables)."""
    return mode == "OFB" or (mode in ("CBC", "CFB") and not aligned)


def iv_writeback_cell(c: Cell) -> bool:
    """A cell that tells the IV write-back apart: a CBC/CFB decryption with ALIGN = 0. In
    every other instruction that stores its IV the part cannot be told from the start-up,
    so the fit leaves those cells' clocks alone (calibrate.apply_fit gives the change back
    to their start-up)."""
    return c.fitted and c.direction == "decrypt" and c.mode in ("CBC", "CFB") and c.aligned


def part_names(cells: list[Cell]) -> list[tuple]:
    """The parts the cells see and a fit moves. Esther's per-store cost is not one: it is
    measured (InstLat's load/store pairs, docs/timing.md "Esther's clocks"); its kind
    ("store", "Esther") still moves a cell's stalled stores where a reading is tried
    (identifiability)."""
    names = set()
    for c in cells:
        for d in (c, c.den) if c.den is not None else (c,):
            if d.digest:
                names.add(("dgest",))
            if d.rounds > ROUNDS:
                names.add(("store_hidden",))
            if d.sha256_blocks:
                names.add(("sha256",))
        if iv_writeback_cell(c):
            names.add(("iv_writeback",))
        if ecb_release_cell(c):
            names.add(("ecb_release", c.machine))
        if not c.fitted:
            continue
        names.add(("startup", c.machine, c.mode, c.aligned))
        names.add(("per_block", c.machine, c.mode, c.aligned))
        if c.reloads:
            names.add(("reload", c.machine))
    return sorted(names, key=str)


def derivative(c: Cell, name: tuple) -> float:
    if c.den is not None:  # ratio cells: d(num) - published x d(den)
        return (cell_derivative(Cell(**{**c.__dict__, "den": None}), name)
                - c.published * cell_derivative(c.den, name))
    return cell_derivative(c, name)


def cell_derivative(c: Cell, name: tuple) -> float:
    kind = name[0]
    if kind == "store":
        return float(c.stalled) if c.machine == name[1] else 0.0
    if kind == "dgest":
        return float(c.blocks) if c.digest else 0.0
    if kind == "store_hidden":
        # Each block of more than 10 rounds hides this much of its store (ace::round_clocks;
        # linear while the hidden part is below R - 10, as it is for AES-192/256).
        return -float(c.blocks) if c.rounds > ROUNDS and c.mode in ("ECB",) + CHAIN else 0.0
    if kind == "sha256":
        return float(c.sha256_blocks)
    if kind == "misaligned":
        return float(misaligned_elements(c))
    if kind == "ecb_release":
        return -float(c.insns) if ecb_release_cell(c) and name[1] == c.machine else 0.0
    if not c.fitted or (c.floored and kind in ("startup", "per_block")):
        return 0.0
    if kind in ("startup", "per_block"):
        if name[1:] != (c.machine, c.mode, c.aligned):
            return 0.0
        return float(c.insns if kind == "startup" else charged_blocks(c))
    if kind == "reload":
        # One restart after a key load for every chaining mode (§3.3: the microcode "resets
        # ACE ..., loads or generates the key, and restarts").
        return float(c.reloads) if name[1] == c.machine else 0.0
    if kind == "iv_writeback":
        return float(c.insns) if iv_writeback_cell(c) else 0.0
    return 0.0


@dataclass
class Fit:
    label: str
    delta: dict            # part name -> change in clocks
    mhz: dict              # machine -> clock of its §3.3 table
    used: list[Cell]

    def predict(self, c: Cell) -> float:
        """Clocks of the unit (a ratio cell: the ratio den / self, as published)."""
        if c.den is not None:
            num = Cell(**{**c.__dict__, "den": None})
            return self.predict(num) / self.predict(c.den)
        return c.clocks + sum(cell_derivative(c, n) * d for n, d in self.delta.items())

    def error(self, c: Cell) -> float:
        if c.den is not None:
            return self.predict(c) / c.published - 1
        return c.error(self.predict(c), self.mhz.get(c.clock, 0.0))

    def errors(self, cells: list[Cell]) -> list[float]:
        return [self.error(c) for c in cells]


def solve(label: str, cells: list[Cell], free: list[tuple], mhz0: dict, fit_mhz: set,
          iterations: int = 30, prior: dict | None = None) -> Fit:
    """Least |relative error| over `cells` in the parts `free` and the clocks of the
    machines in `fit_mhz` (others stay at mhz0). `prior`: part name -> the change that
    takes it to its prior value, which a weak row pulls it to where no cell sees it."""
    machines = sorted(fit_mhz)
    ncol = len(free) + len(machines)
    rows, rhs, scale = [], [], []
    for c in cells:
        row = [derivative(c, n) for n in free]
        if c.den is not None:
            row += [0.0] * len(machines)
            b = c.published * c.den.clocks - c.clocks
            s = c.published * c.den.clocks
        elif is_rate(c):
            a = 0.128 * c.blocks / c.published  # published clocks per MHz
            if c.clock in fit_mhz:
                row += [-a if m == c.clock else 0.0 for m in machines]
                b = -c.clocks
            else:
                row += [0.0] * len(machines)
                b = a * mhz0[c.clock] - c.clocks
            s = a * mhz0[c.clock]
        else:
            row += [0.0] * len(machines)
            b = c.published_clocks(0) - c.clocks
            s = c.published_clocks(0)
        rows.append(row)
        rhs.append(b)
        scale.append(s)
    ndata = len(rows)
    for i, n in enumerate(free):  # weak pulls to the priors (a clock's: its nominal value)
        if prior is not None and n in prior:
            rows.append([1.0 if j == i else 0.0 for j in range(ncol)])
            rhs.append(prior[n])
            scale.append(PRIOR_SCALE)
    for i, m in enumerate(machines):
        rows.append([1.0 if j == len(free) + i else 0.0 for j in range(ncol)])
        rhs.append(mhz0[m])
        scale.append(PRIOR_SCALE * 100)
    A, y, s = np.array(rows), np.array(rhs), np.array(scale)
    x = np.zeros(ncol)
    if ncol:
        w = np.ones(len(rows))
        for _ in range(iterations):
            W = (w / s)[:, None]
            x, *_ = np.linalg.lstsq(A * W, y * W[:, 0], rcond=None)
            r = np.abs((A @ x - y) / s)
            # IRLS towards least absolute deviation; the prior rows keep their weight.
            w = np.concatenate([1.0 / np.sqrt(np.maximum(r[:ndata], 1e-3)),
                                np.ones(len(rows) - ndata)])
    delta = {n: float(v) for n, v in zip(free, x[:len(free)])}
    mhz = dict(mhz0)
    for m, v in zip(machines, x[len(free):]):
        mhz[m] = float(v)
    return Fit(label, delta, mhz, cells)


PRIOR_SCALE = 1e4  # clocks: a prior row weighs like a cell of 10^4 clocks off by 1


def summary(errors: list[float]) -> tuple[float, float, int]:
    a = [abs(e) for e in errors]
    return (statistics.median(a) if a else 0.0, max(a) if a else 0.0, sum(e > 0.10 for e in a))


def cross_validate(cells: list[Cell], mhz0: dict, nominal: dict) -> dict[str, Fit]:
    """Three fits: both sources; the guide alone (predicting Gladman); Gladman alone
    (predicting the guide, with the guide's clock at its nominal value, and with only the
    clock fitted to the guide)."""
    fit_cells = [c for c in cells if c.in_fit]
    guide = [c for c in fit_cells if c.source == "guide"]
    glad = [c for c in fit_cells if c.source == "gladman"]
    all_parts = part_names(fit_cells)
    machines = {c.machine for c in guide}
    out = {
        "both": solve("both sources", fit_cells, all_parts, mhz0, machines),
        "guide": solve("the guide alone", guide, part_names(guide), mhz0, machines),
    }
    # Gladman's code reloads the key before every instruction, so alone it cannot tell the
    # start-up from the chain reload: it fits the reload and per-block clocks and keeps the
    # start-up it was given.
    gl_parts = [n for n in part_names(glad) if n[0] != "startup"]
    gl = solve("Gladman alone", glad, gl_parts, nominal, set())
    out["gladman"] = gl
    # The same parts, with only the guide table's clock then fitted to the guide.
    clock_only = solve("Gladman alone, clock fitted to the guide",
                       [Cell(**{**c.__dict__, "clocks": gl.predict(c)}) for c in guide],
                       [], mhz0, machines)
    out["gladman+clock"] = Fit(clock_only.label, gl.delta, clock_only.mhz, guide)
    return out


# The sources of the v3 calibration, in report order (docs/timing.md, "Calibration").
SOURCES = ("§3.3 Nehemiah", "§3.3 Esther", "Gladman", "BAES run", "CTR_ERRATA run",
           "Dedibox ratios")


def source_of(c: Cell) -> str:
    if c.source == "guide":
        return f"§3.3 {c.machine}"
    return {"gladman": "Gladman", "baes": "BAES run", "ctr_errata": "CTR_ERRATA run",
            "dedibox": "Dedibox ratios"}[c.source]


def judged(c: Cell) -> bool:
    """The cells a source is judged on: §3.3 rows in the caches, every Gladman cell, BAES's
    lines but the ECB one its clock is fitted on, CTR_ERRATA's phase ratio, the Dedibox
    ratios."""
    if c.source == "guide":
        return c.in_fit
    if c.source == "baes":
        return c.line != "ECB mode encrypt"
    if c.source == "ctr_errata":
        return c.den is not None
    return True


def reference(c: Cell) -> bool:
    """A cell that only fixes its run's unknown clock: kept in every fit, also when its
    source is left out (BAES's ECB line)."""
    return c.source == "baes" and c.line == "ECB mode encrypt"


def shifted(c: Cell, f: Fit) -> Cell:
    """The cell with its clocks (and its denominator's) moved by a fit's deltas."""
    if c.den is None:
        return Cell(**{**c.__dict__, "clocks": f.predict(c)})
    num = shifted(Cell(**{**c.__dict__, "den": None}), f)
    return Cell(**{**num.__dict__, "den": shifted(c.den, f)})


def owners(name: tuple) -> set[str]:
    """The sources that determine a part. Other sources' cells may move with it, but cannot
    tell it apart from their own unknowns: the BAES run's ECB line from its clock, the
    CTR_ERRATA phases from aligned CTR's clocks, the Dedibox ratios from the hidden store."""
    kind = name[0]
    if kind == "dgest":
        return {"BAES run"}
    if kind in ("store_hidden", "sha256"):
        return {"Dedibox ratios"}
    if kind in ("reload", "iv_writeback"):
        return {"Gladman"}
    if kind == "ecb_release":
        return {f"§3.3 {name[1]}"}
    if kind in ("startup", "per_block"):
        _, machine, mode, aligned = name
        if machine == "Esther":
            if mode == "CTR":
                return {"CTR_ERRATA run"} if aligned else {"§3.3 Esther"}
            # The BAES run's plain lines, 512 blocks a REP, see them too (loso_one).
            return {"§3.3 Esther", "BAES run"}
        return {"§3.3 Nehemiah", "Gladman"} if kind == "per_block" else {"§3.3 Nehemiah"}
    return set()


def loso(cells: list[Cell], mhz0: dict, fit_mhz: set, prior: dict,
         own: dict | None = None) -> dict[str, Fit]:
    """Leave one source out: for each source, a fit on every other source's cells (and the
    reference lines), its parts unseen by them at their priors. A left-out source whose
    rates were measured at a clock of its own that no other source sees (the §3.3 Nehemiah
    table's) then has that one clock fitted to it, the parts held, as BAES's is on its ECB
    line. `own`: source -> {constant: change to its prior} for constants fitted to that
    source alone outside this fit (Gladman's misaligned string element), moved when it is
    left out."""
    own = own or {}
    return {src: loso_one(cells, src, mhz0, fit_mhz, prior, moved=own.get(src))
            for src in SOURCES}


def loso_one(cells: list[Cell], src: str, mhz0: dict, fit_mhz: set, prior: dict,
             moved: dict | None = None) -> Fit:
    """One leave-one-source-out fit (loso). `moved`: changes of measured constants that no
    fit moves (part name -> clocks), applied to every cell."""
    # The BAES run's plain lines are predictions in the fit to all sources (its cross-check,
    # one clock on ECB); another source left out is predicted from them too.
    train_all = [c for c in cells if c.in_fit or (c.source == "baes" and judged(c))]
    names = part_names([c for c in cells if c.in_fit])
    train = [c for c in train_all if source_of(c) != src or reference(c)]
    if src == "BAES run":
        train = [c for c in train if c.in_fit]
    clocks = {c.clock for c in train if is_rate(c)} & set(fit_mhz)
    held = {n: prior.get(n, 0.0) for n in names if not owners(n) - {src}}
    held.update(moved or {})
    train_now = [shifted(c, Fit("", held, {}, [])) for c in train]
    f = solve(f"without {src}", train_now, [n for n in names if n not in held], mhz0, clocks,
              prior=prior)
    f = Fit(f.label, {**f.delta, **held}, f.mhz, train)
    own = [c for c in cells if source_of(c) == src and c.in_fit and is_rate(c)
           and c.clock in set(fit_mhz) - clocks]
    if own:
        clock = solve(f.label, [shifted(c, f) for c in own], [], f.mhz,
                      {c.clock for c in own})
        f = Fit(f.label, f.delta, clock.mhz, f.used)
    return f


def loso_median(cells: list[Cell], src: str, f: Fit) -> float:
    errs = [abs(e) for e in f.errors([c for c in cells if source_of(c) == src and judged(c)])]
    return statistics.median(errs)


# Readings of Esther's per-store cost (clocks), from InstLat's T in RDTSC cycles: Esther
# (CentaurHauls00006A9_C5J_Esther_InstLatX86.txt) over Nehemiah
# (CentaurHauls0000698_C5P_Nehemiah_InstLatX86.txt, no SSE2: MOVAPS for every Esther form).
ESTHER_STORE_READINGS = (
    ("none (Nehemiah's)", 0.0),
    ("MOVUPS aligned LS pair, 4.00 - 4.00 (:610, :602)", 4.00 - 4.00),
    ("MOVAPS store alone, 2.75 - 2.17 (:605, :597)", 2.75 - 2.17),
    ("MOVDQA LS pair, 5.33 - 3.92 (:787, :598)", 5.33 - 3.92),
    ("MOVAPD LS pair, 5.75 - 3.92 (:691, :598)", 5.75 - 3.92),
    ("MOVAPS LS pair, 5.92 - 3.92 (:606, :598), the model's", 5.92 - 3.92),
)


# Esther's per-store cost (kEstherStoreDrain, 2.00 clocks) split by InstLat's MOVAPS rows,
# Esther over Nehemiah: the store's own issue, T of MOVAPS [m128], xmm, 2.75
# (CentaurHauls00006A9_C5J_Esther_InstLatX86.txt:605) - 2.17
# (CentaurHauls0000698_C5P_Nehemiah_InstLatX86.txt:597) = 0.58; and what the LS pair adds
# beyond its load and store alone, Esther 5.92 - 2.00 - 2.75 = +1.17 (:606, :604, :605)
# against Nehemiah 3.92 - 2.00 - 2.17 = -0.25 (:598, :596, :597): 1.42 of serialisation of a
# block's store behind its own data. The store's issue is data-path occupancy that a block
# with rounds to spare overlaps; the serialisation sits in the block's own chain, which more
# rounds only lengthen. So with no source that times AES-192/256, rounds beyond 10 hide the
# 0.58 (docs/timing.md, "Rounds").
STORE_ALONE = 2.75 - 2.17
STORE_SERIALISATION = (5.92 - 2.00 - 2.75) - (3.92 - 2.00 - 2.17)
STORE_HIDDEN_PRIOR = STORE_ALONE
STORE_HIDDEN_READINGS = (
    ("none (the store added whole)", 0.0),
    ("the store's own issue, MOVAPS [m128], xmm 2.75 - 2.17 (:605, :597), the prior",
     STORE_ALONE),
    ("the LS pair's serialisation, +1.17 - (-0.25) (:606, :598)", STORE_SERIALISATION),
    ("all of it, MOVAPS LS pair 5.92 - 3.92", STORE_ALONE + STORE_SERIALISATION),
)


def identifiability(cells: list[Cell], mhz0: dict, fit_mhz: set, prior: dict,
                    now: dict, own: dict | None = None) -> list[tuple[str, str, str, float]]:
    """What the sources that only they can judge need from elsewhere (docs/timing.md, "What
    leave-one-source-out cannot see"): each left out again with the one unknown it alone
    sets moved over a range. `now`: part name -> its fitted value, prior: part name -> the
    change to its prior value. Rows (source, unknown, value, median |error| left out)."""
    rows = []
    # §3.3 Esther: the only Esther clocks at a stated clock. The others fix Esther's clocks
    # through the per-store cost, which sets the BAES run's clock on its ECB line: each
    # reading of InstLat's Esther-over-Nehemiah 16-byte data path (docs/timing.md).
    for what, clocks in ESTHER_STORE_READINGS:
        f = loso_one(cells, "§3.3 Esther", mhz0, fit_mhz, prior,
                     moved={("store", "Esther"): clocks - now[("store", "Esther")]})
        rows.append(("§3.3 Esther", f"Esther's per-store cost: {what}", f"{clocks:.2f}",
                     loso_median(cells, "§3.3 Esther", f)))
    # Gladman: his misaligned string element at each reading of InstLat's MOVUPS rows (the
    # chain reload and IV store at their priors, 0); then the reload and IV store at a
    # fraction of their fitted values, the element at its prior.
    for what, clocks in MISALIGNED_READINGS:
        f = loso_one(cells, "Gladman", mhz0, fit_mhz, prior,
                     moved={("misaligned",): clocks - now[("misaligned",)]})
        rows.append(("Gladman", f"misaligned string element: {what}", f"{clocks:.2f}",
                     loso_median(cells, "Gladman", f)))
    for k in (0.0, 0.25, 0.5, 1.0):
        p = {n: (-(1 - k) * now[n] if n[0] in ("reload", "iv_writeback") else v)
             for n, v in prior.items()}
        f = loso_one(cells, "Gladman", mhz0, fit_mhz, p, moved=(own or {}).get("Gladman"))
        rows.append(("Gladman", "chain reload and IV store, fraction of the fitted "
                     "(misaligned string element at its prior)",
                     f"{k:.2f}", loso_median(cells, "Gladman", f)))
    # Dedibox: the part of Esther's per-store cost that rounds beyond 10 hide, at each
    # reading of InstLat's MOVAPS rows (a round itself is the §3.3 formula's one clock).
    for what, h in STORE_HIDDEN_READINGS:
        p = {**prior, ("store_hidden",): h - now[("store_hidden",)]}
        f = loso_one(cells, "Dedibox ratios", mhz0, fit_mhz, p)
        rows.append(("Dedibox ratios", f"store clocks rounds beyond 10 hide: {what}",
                     f"{h:.2f}", loso_median(cells, "Dedibox ratios", f)))
    return rows
