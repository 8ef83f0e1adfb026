"""What a new user meets first, each with one clear line (docs/emulator.md): a memory cap
that does not fit, an i386 dynamic program whose libraries the host lacks, a Chrome trace
given to `trace summary`, and the man page from a build tree (`padlock-emu --man`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest


def test_max_memory_that_does_not_fit_says_so(emulator_path):
    r = subprocess.run([str(emulator_path), "run", "--max-memory", "99999999999G", "x"],
                       capture_output=True, text=True)
    # 2^64 - 1 bytes is 17179869183 G and a bit.
    assert r.returncode == 2 and r.stderr == (
        "padlock-emu: --max-memory '99999999999G' does not fit in 64 bits "
        "(at most 17179869183G)\n")
    r = subprocess.run([str(emulator_path), "run", "--max-memory", "512K", "x"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "expects a size of at least 1M" in r.stderr


def test_i386_dynamic_program_without_its_library_gets_the_sysroot_hint(emulator_path,
                                                                        tmp_path):
    """An i386 program linked against a library the host has no i386 build of: its ld.so
    ends it with 127, and without -L the emulator points at the sysroot."""
    gcc = shutil.which("gcc")
    (tmp_path / "lib.c").write_text("int answer(void) { return 42; }\n")
    (tmp_path / "main.c").write_text("int answer(void);\nint main(void) { return answer(); }\n")
    lib = subprocess.run([gcc or "gcc", "-m32", "-shared", "-fPIC", "-o",
                          str(tmp_path / "libanswer.so"), str(tmp_path / "lib.c")],
                         capture_output=True, text=True) if gcc else None
    if lib is None or lib.returncode != 0:
        pytest.skip("gcc -m32 cannot build a shared library (gcc-multilib)")
    subprocess.run([gcc, "-m32", "-o", str(tmp_path / "main"), str(tmp_path / "main.c"),
                    f"-L{tmp_path}", "-lanswer"], check=True)
    (tmp_path / "libanswer.so").unlink()  # as if the host had no i386 build of it
    r = subprocess.run([str(emulator_path), "run", "--cpu", "esther", str(tmp_path / "main")],
                       capture_output=True, text=True)
    assert r.returncode == 127
    assert "libanswer.so: cannot open shared object file" in r.stderr  # the guest ld.so's
    assert r.stderr.splitlines()[-1] == (
        "padlock-emu: hint: an i386 dynamic program ended with status 127 without -L: if "
        "its ld.so found no library, give an i386 sysroot with -L DIR "
        "(scripts/make-sysroot.sh builds one)")
    # With a sysroot given, the user knows where libraries come from: no hint.
    r = subprocess.run([str(emulator_path), "run", "--cpu", "esther", "-L", str(tmp_path),
                        str(tmp_path / "main")], capture_output=True, text=True)
    assert r.returncode == 127 and "hint" not in r.stderr


def test_trace_summary_of_a_chrome_trace_names_it(runner, tmp_path):
    chrome = tmp_path / "c.json"
    r = subprocess.run([str(runner.emulator), "run", "--chrome-trace", str(chrome),
                        str(runner.guest("demo", "i386"))], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(runner.emulator), "trace", "summary", str(chrome)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr == (
        f"padlock-emu: {chrome}: a Chrome trace (--chrome-trace), not a --trace file (JSON "
        "Lines); open it in Perfetto or chrome://tracing\n")


def test_man_page_from_the_build_tree(emulator_path):
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    if not (Path(emulator_path).resolve().parent / "padlock-emu.1").is_file():
        pytest.skip("the man page is not built (target padlock_manpage)")
    r = subprocess.run([str(emulator_path), "--man"], capture_output=True, text=True,
                       env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="100"))
    assert r.returncode == 0, r.stderr
    text = re.sub(r".\x08", "", r.stdout)
    assert "\nOPTIONS OF RUN\n" in text and "--max-memory" in text, text[:500]
