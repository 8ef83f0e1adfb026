"""The VIA Nano 3000 and Zhaoxin models as a guest and a user see them (docs/zhaoxin.md):
`padlock-emu cpus`, /proc/cpuinfo as Linux prints it for these parts, and Zhaoxin's quirks
with the checker findings that name the caller: XSHA1's 32-byte store, XSHA1/XSHA256 with
ECX = 0, and REP MONTMUL without 67h in 64-bit mode. VIA models keep VIA's behaviour."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

ZHAOXIN = ["zx-c", "kx-5000", "kx-6000", "kh-40000", "kx-7000"]
VIA = ["esther", "nano", "nano-3000"]
# name -> (family, model, stepping, vendor_id) as the dumps give them (docs/zhaoxin.md)
SIGNATURES = {
    "nano-3000": (6, 0x0F, 8, "CentaurHauls"),
    "zx-c": (6, 0x0F, 0xE, "CentaurHauls"),
    "kx-5000": (7, 0x1B, 5, "  Shanghai  "),
    "kx-6000": (7, 0x3B, 2, "CentaurHauls"),
    "kh-40000": (7, 0x5B, 3, "CentaurHauls"),
    "kx-7000": (7, 0x6B, 1, "CentaurHauls"),
}
# Linux's names for C000_0001 EDX (arch/x86/include/asm/cpufeatures.h, word 5). The late
# parts leave EDX[9] (ace2_en) clear; Linux names none of the SM2/CCS/PHE2/RSA bits.
LATE_PADLOCK_FLAGS = ["rng", "rng_en", "ace", "ace_en", "ace2", "phe", "phe_en", "pmm",
                      "pmm_en"]


def cpuinfo_lines(runner, cpu, arch="x86_64"):
    cmd = runner.command("proc_self", arch, ["cat", "/proc/cpuinfo"], cpu)
    out = subprocess.run(cmd, capture_output=True, timeout=120, check=True).stdout.decode()
    return out.splitlines()


def field(lines, name):
    return next(ln.split(":", 1)[1][1:] for ln in lines if ln.split(":")[0].strip() == name)


def test_cpus_lists_the_six_models(emulator_path):
    out = subprocess.run([str(emulator_path), "cpus"], capture_output=True, text=True,
                         check=True).stdout
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines()[1:] if ln.strip()}
    for name, (fam, model, step, _) in SIGNATURES.items():
        assert name in rows, out
        assert f"{fam}/{model}/{step}" in rows[name]
        assert "64-bit" in " ".join(rows[name])
    units = {name: set(rows[name][5].split(",")) for name in SIGNATURES}
    assert units["nano-3000"] == {"RNG", "ACE2", "PHE", "PMM", "PHE2", "RSA", "RNG2"}
    assert units["zx-c"] == units["kx-5000"] == units["nano-3000"] | {"CCS"}
    assert units["kx-6000"] == units["kh-40000"] == units["kx-7000"] == units["zx-c"] | {"SM2"}


def test_cpus_verbose_lists_sources_and_choices(emulator_path):
    out = subprocess.run([str(emulator_path), "cpus", "--verbose"], capture_output=True,
                         text=True, check=True).stdout
    block = out.split("\nkx-5000:")[1].split("\n\n")[0]
    assert 'vendor "  Shanghai  "' in block
    assert "units enabled by MSR 0x1257" in block
    assert "ZHAOXIN_KaiXian_KX_U5581_1_8GHz.h" in block
    assert "phe.sha1_stores_32_bytes" in block and "phe.ecx0_does_nothing" in block
    assert "EDX[9] (ACE2 enabled) clear" in block
    nano3000 = out.split("\nnano-3000:")[1].split("\n\n")[0]
    assert "CentaurHauls00006F8_CNB_Isaiah_CPUID.txt" in nano3000
    assert "FCR 0x1107 and MSR 0x110B" in nano3000


def model_blocks(out: str) -> dict[str, str]:
    """`cpus --verbose`'s block of each model, by name."""
    blocks = {}
    for chunk in out.split("\n\n"):
        head = chunk.split(":", 1)[0].strip()
        if head and " " not in head and "\n  " in chunk:
            blocks[head] = chunk
    return blocks


def test_cpus_verbose_lists_every_models_choices(emulator_path):
    # Each model closes with its choices: exactly the values whose source is a "choice: ..."
    # (PHE2's and GMI's only where the unit exists), and what it takes from another chip.
    out = subprocess.run([str(emulator_path), "cpus", "--verbose"], capture_output=True,
                         text=True, check=True).stdout
    blocks = model_blocks(out)
    table = {ln.split()[0]: ln.split() for ln in out.split("\n\n")[0].splitlines()[1:]}
    assert set(SIGNATURES) | {"esther-c5j", "nano"} <= set(blocks)
    for name, block in blocks.items():
        lines = block.splitlines()
        i = next(k for k, ln in enumerate(lines) if ln.startswith("  choices: "))
        n, total = (int(w) for w in lines[i].split()[1:4:2])
        listed = " ".join(ln for ln in lines[i + 1:] if ln.startswith("    ")).split(", ")
        listed = [x.strip().rstrip(",") for x in listed if x.strip()]
        units = table[name][5].split(",")
        want = [ln.split()[0] for ln in lines[:i] if ln.startswith("  ") and not
                ln.startswith("  #") and "(setting)" not in ln and len(ln.split()) > 3 and
                ln.split()[3].startswith("choice") and not
                (ln.split()[0].startswith("phe2.") and "PHE2" not in units) and not
                (ln.split()[0].startswith("gmi.") and "CCS" not in units and "SM2" not in units)]
        assert listed == want and n == len(want), (name, listed, want)
        assert total == sum(1 for ln in lines[:i] if ln.startswith("  ") and not
                            ln.startswith("  #") and "(setting)" not in ln and
                            not ln.startswith(("  vendor", "  brand", "  sources", "  cpuid",
                                               "  C000_0001")))
    kh, kx = blocks["kh-40000"], blocks["kx-6000"]
    for part in ("phe.startup", "phe2.sha512_block_clocks"):
        assert part not in kh.split("  choices: ")[1] and part in kx.split("  choices: ")[1]
    assert "gmi.sm3_block_clocks" in kh.split("  choices: ")[1]
    assert "phe2." not in blocks["esther-c5j"].split("  choices: ")[1]
    for name in ZHAOXIN:
        assert "choices: measured on another chip: ACE, PMM and RNG clocks" in blocks[name]


@pytest.mark.parametrize("cpu", sorted(SIGNATURES))
def test_cpuinfo_as_linux_prints_it(runner, guest_dir, cpu):
    if not (guest_dir / "guest_proc_self_x86_64").is_file():
        pytest.skip("no x86_64 guests")
    lines = cpuinfo_lines(runner, cpu)
    fam, model, step, vendor = SIGNATURES[cpu]
    assert f"vendor_id\t: {vendor}" in lines  # raw, with the spaces: "  Shanghai  "
    assert (field(lines, "cpu family"), field(lines, "model"), field(lines, "stepping")) == (
        str(fam), str(model), str(step))
    name = field(lines, "model name")
    assert not name.startswith(" ")  # Linux strips the right-justified brand's spaces
    assert ("VIA Nano" if cpu == "nano-3000" else "ZHAOXIN") in name
    flags = field(lines, "flags").split()
    assert [f for f in flags if f in LATE_PADLOCK_FLAGS + ["ace2_en"]] == LATE_PADLOCK_FLAGS
    assert "lm" in flags and "avx" not in flags and "rdrand" not in flags


def test_cpuinfo_kx5000_shanghai_family_7(runner, guest_dir):
    """The issue's acceptance line: "  Shanghai  " and family 7, i386 guests too."""
    lines = cpuinfo_lines(runner, "kx-5000", "i386")
    assert "vendor_id\t:   Shanghai  " in lines
    assert field(lines, "cpu family") == "7"
    assert field(lines, "model name") == "ZHAOXIN KaiXian KX-U5581@1.8GHz"


# --- the quirks, each a checker finding naming the caller ------------------------------

def check(emulator, guest, cpu, args, tmp_path):
    jsonl = tmp_path / "f.jsonl"
    cmd = [str(emulator), "run", "--check", "--check-jsonl", str(jsonl), "--cpu", cpu,
           str(guest), *args]
    proc = subprocess.run(cmd, capture_output=True, timeout=120)
    return proc, [json.loads(ln) for ln in jsonl.read_text().splitlines()]


def ctx_line(proc):
    """check_diags' "STATE count=N" line after "done": the state words printed as %08x
    are the digest bytes."""
    state, count = proc.stdout.decode().splitlines()[1].split()
    return bytes.fromhex(state), int(count.split("=")[1])


@pytest.mark.parametrize("cpu", ZHAOXIN + VIA)
def test_xsha1_32_byte_store(emulator_path, guest_dir, tmp_path, cpu):
    """Linux 6.16 padlock-sha's layout: the byte count right after the 20-byte state. On
    Zhaoxin XSHA1 zeroes it (and the finding names the function and line); on VIA it
    stays. The fixed variant (hash in an area of its own) keeps it everywhere."""
    guest = guest_dir / "guest_check_diags_i386"
    proc, findings = check(emulator_path, guest, cpu, ["xsha1-32-byte-store"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    state, count = ctx_line(proc)
    assert state == hashlib.sha1(bytes(64)).digest()  # the guest's input: 64 zero bytes
    if cpu in ZHAOXIN:
        assert count == 0
        assert [(f["kind"], f["severity"]) for f in findings] == [("xsha1-32-byte-store",
                                                                   "error")]
        f = findings[0]
        assert f["function"] == "sha1_ctx_update"
        assert f["file"].endswith("tests/guest/check_diags.c") and f["line"] > 0
        assert f["section"] == "§4.1; docs/zhaoxin.md"
        assert "main" in [b.get("function") for b in f["backtrace"][1:]]
        assert "check: error xsha1-32-byte-store" in proc.stderr.decode()
    else:
        assert count == 64 and findings == []
    fixed, clean = check(emulator_path, guest, cpu, ["xsha1-32-byte-store", "fixed"], tmp_path)
    assert fixed.returncode == 0 and clean == []
    assert ctx_line(fixed) == (state, 64)


@pytest.mark.parametrize("cpu", ZHAOXIN + VIA)
def test_xsha_ecx0_does_nothing_on_zhaoxin(emulator_path, guest_dir, tmp_path, cpu):
    """SHA-1 of the empty message with ECX = 0: VIA pads it (§4.1) and gives SHA-1("");
    Zhaoxin leaves the initial constants (a wrong digest) and the finding names the caller.
    The fixed variant (the padded block, EAX = -1) gives SHA-1("") on both."""
    guest = guest_dir / "guest_check_diags_i386"
    empty = hashlib.sha1(b"").hexdigest()
    init = "67452301efcdab8998badcfe10325476c3d2e1f0"
    proc, findings = check(emulator_path, guest, cpu, ["xsha-ecx0-no-op"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    state, _ = ctx_line(proc)
    if cpu in ZHAOXIN:
        assert state.hex() == init
        assert [(f["kind"], f["function"]) for f in findings] == [("xsha-ecx0-no-op",
                                                                   "sha1_ctx_empty")]
        assert findings[0]["line"] > 0
    else:
        assert state.hex() == empty and findings == []
    if cpu == "esther":
        return  # no blocks form (EAX = -1) before Nano (§4.1)
    fixed, clean = check(emulator_path, guest, cpu, ["xsha-ecx0-no-op", "fixed"], tmp_path)
    assert fixed.returncode == 0 and clean == []
    assert ctx_line(fixed)[0].hex() == empty


@pytest.mark.parametrize("cpu", ZHAOXIN + ["nano-3000"])
def test_montmul_needs_67h_in_64bit_mode(emulator_path, guest_dir, tmp_path, cpu):
    """zyantific/zydis, "VIA/Zhaoxin Padlock: 64-bit montmul ..." (a KX-6580): REP MONTMUL without 67h in 64-bit mode is #UD."""
    guest = guest_dir / "guest_check_diags_x86_64"
    if not guest.is_file():
        pytest.skip("no x86_64 guests")
    proc, findings = check(emulator_path, guest, cpu, ["montmul-addr64"], tmp_path)
    assert proc.returncode == -4, proc.stderr.decode()  # SIGILL
    assert [f["kind"] for f in findings] == ["montmul-addr64"]
    fixed, clean = check(emulator_path, guest, cpu, ["montmul-addr64", "fixed"], tmp_path)
    assert fixed.returncode == 0 and clean == []
