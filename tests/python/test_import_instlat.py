"""scripts/import_instlat.py on small dumps written here in the InstLat layout (made-up
figures, not the real dumps, which are never committed): keys, row selection, REP string
and MemLat rows, citations, and identical output on a second run."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "import_instlat.py"
sys.path.insert(0, str(ROOT / "scripts"))

import import_instlat  # noqa: E402

HEADER = "Copyright line\nInstruction Latency: Used CPUs:  1\n"
ROWS = [
    "  16 X86   :MOV r32, imm32              L:   0.67ns=  1.0c  T:   0.67ns=  1.00c",
    "  26 X86   :MOV r32, [m32]              L:   4.01ns=  6.0c  T:   0.67ns=  1.00c",
    "  30 X86   :MOV [m32], r32              L: [memory dep.]    T:   0.67ns=  1.00c",
    "  36 X86   :MOV r32,[m32]+MOV [m32],r32 L:  10.03ns= 15.0c  T:   1.17ns=  1.75c",
    " 110 X86   :SUB r32, r32                L:   0.67ns=  1.0c  T:   0.67ns=  1.00c",
    " 114 X86   :SUB r1_32, r2_32            L:   1.34ns=  2.0c  T:   0.67ns=  1.00c",
    " 177 X86   :BT r32, r32                 L: [no true dep.]   T:   8.02ns= 12.00c",
    " 206 X86   :LEA r32, [r32+r32]          L:   0.67ns=  1.0c  T:   0.67ns=  1.00c",
    " 219 X86   :SHL r32, 1                  L:   0.67ns=  1.0c  T:   0.67ns=  1.00c",
    " 430 X86   :DIV r32 64/32b (full)       L:  34.09ns= 51.0c  T:  34.09ns= 51.00c",
    " 441 X86   :DIV r32 1/1                 L:  34.09ns= 40.0c  T:  34.09ns= 40.00c",
    " 480 X86   :PUSHAD                      L: [no true dep.]   T:   6.02ns=  9.00c",
    " 535 X86   :REP MOVSD                   BW in L1D: 3.92 B/c   5860MiB/s",
    " 106 X86   :ADD eax, imm32              L:   0.67ns=  1.0c  T:   0.67ns=  1.00c",
    "  80 X86   :ADD [m32], r32              L:   5.96ns=  8.9c  T:   3.68ns=  5.50c",
    "  81 X86   :ADD [m32 + 8], r32          L:   5.96ns=  8.9c  T:   3.68ns=  5.50c",
    "  34 X86   :MOV r8,[m8]+MOV [m8],r8     L:   3.09ns=  5.0c  T: -77.37ns=-125.00",
    " 841 SSE   :DIVSS (0.0f/x)              L:  22.73ns= 34.0c  T:  24.06ns= 36.00c",
]
MEMLAT = (
    "BenchMemLat exit code: 0x0100\n"
    "Mem latency: 147.329ns( 220 clks) [Mode:1 Size: 16384K]\n"
    "L1D latency:   3.980ns(   6 clks) [Mode:1 Size:    64K]\n"
    "L2  latency:  11.337ns(  17 clks) [Mode:1 Size:   128K]\n"
)


def write_dumps(d: Path):
    for _name, _models, instlat, memlat in import_instlat.CORES:
        for base in instlat:
            (d / base).write_text(HEADER + "\n".join(ROWS) + "\n")
        for base in memlat:
            (d / base).write_text(MEMLAT)


def run(d: Path, out: Path) -> str:
    subprocess.run([sys.executable, str(SCRIPT), str(d), "--out", str(out)], check=True,
                   capture_output=True, text=True)
    return out.read_text()


def test_keys_from_instlat_names():
    n = import_instlat.normalise
    assert n("ADD [m32], r32") == ("ADD m32, r32", False)
    assert n("SUB r1_32, r2_32") == ("SUB r32, r32", True)
    assert n("LEA r32, [r+r*8+disp8]") == ("LEA r32, m", False)
    assert n("SHL r32, imm8") == ("SHL r32, i8", False)
    assert n("SHL r32, 1") == ("SHL r32, 1", False)
    assert n("FADD st(i), st") == ("FADD st, st", False)
    assert n("PUSHAD") == ("PUSHAL", False)
    assert n("CMOVNZ r32, r32") == ("CMOVcc r32, r32", False)
    assert n("IMUL r32 (eax)") == ("IMUL r32", False)
    assert n("LOCK ADD [m32], r32") == ("LOCK ADD m32, r32", False)
    for skipped in ("ADD eax, imm32", "ADD [m32 + 8], r32", "MOV r32,[m32]+MOV [m32],r32",
                    "DIVSS (0.0f/x)", "MOVAPS LS pair", "IMUL r32 (edx)", "0x66 NOP",
                    "ADD r32, 0x04000"):
        assert n(skipped)[0] is None, skipped


def test_generated_rows_cite_their_lines_and_rerun_is_identical(tmp_path):
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    write_dumps(dumps)
    first = run(dumps, tmp_path / "a.cpp")
    second = run(dumps, tmp_path / "b.cpp")
    assert first == second
    assert "DO NOT EDIT" in first and "import_instlat.py" in first
    esther = import_instlat.CORES[1][2][0]
    assert esther in first
    line = 2 + ROWS.index(" 177 X86   :BT r32, r32                 L: [no true dep.]   "
                          "T:   8.02ns= 12.00c") + 1
    assert f'{{"BT r32, r32", -1, 12.00, "{esther}:{line}"}},' in first
    # The distinct-register row wins; DIV takes the (full) row; PUSHAD is PUSHAL.
    assert '{"SUB r32, r32", 2.0, 1.00,' in first
    assert '{"DIV r32", 51.0, 51.00,' in first
    assert '{"PUSHAL", -1, 9.00,' in first
    assert '{"REP MOVSD", 4, 3.92,' in first
    assert "ADD eax" not in first and "-125" not in first and "DIVSS" not in first
    # Load-use from MOV r32, [m32]; MemLat summary lines where the core has a MemLat dump.
    assert ".load_use = {6.0," in first
    assert '.l2_latency = {17, "CentaurHauls00006A9_C5J_Esther_MemLatX86.txt:4"}' in first
    assert '.l1_latency = {0, ""}' in first  # Nehemiah: no MemLat dump


def test_changed_dump_changes_output(tmp_path):
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    write_dumps(dumps)
    first = run(dumps, tmp_path / "a.cpp")
    base = import_instlat.CORES[0][2][0]
    path = dumps / base
    path.write_text(path.read_text().replace("T:   8.02ns= 12.00c", "T:   8.02ns= 11.00c"))
    assert run(dumps, tmp_path / "b.cpp") != first
