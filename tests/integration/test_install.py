"""`cmake --install` puts the CLI, its man page (made from --help by scripts/gen_manpage.py)
and its bash completion in place; the page documents every option of `run --help`, and
the completion offers the binary's options and CPU models."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    build = os.environ.get("PADLOCK_BUILD_DIR")
    if not build or not (Path(build) / "CMakeCache.txt").is_file():
        pytest.skip("needs a configured build tree: set PADLOCK_BUILD_DIR")
    d = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--build", build, "--target", "padlock_manpage"], check=True,
                   capture_output=True)
    subprocess.run(["cmake", "--install", build, "--prefix", str(d)], check=True,
                   capture_output=True)
    return d


def run_options(exe: Path) -> set[str]:
    text = subprocess.run([str(exe), "run", "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"(?:^|[ ,])(--?[a-z0-9][a-z0-9-]*)", text, re.M))


def test_installed_files(prefix):
    assert (prefix / "bin" / "padlock-emu").is_file()
    assert (prefix / "share" / "man" / "man1" / "padlock-emu.1").is_file()
    assert (prefix / "share" / "bash-completion" / "completions" / "padlock-emu").is_file()
    r = subprocess.run([str(prefix / "bin" / "padlock-emu"), "--version"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout.startswith("padlock-emu ")


def test_man_page_documents_every_run_option(prefix):
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    page = prefix / "share" / "man" / "man1" / "padlock-emu.1"
    r = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                       env=dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="0"))
    assert r.returncode == 0, r.stderr
    text = re.sub(r".\x08", "", r.stdout)
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS OF RUN"):
        assert f"\n{section}\n" in text, section
    missing = sorted(o for o in run_options(prefix / "bin" / "padlock-emu") if o not in text)
    assert not missing, missing


def complete(prefix: Path, *words: str) -> list[str]:
    script = prefix / "share" / "bash-completion" / "completions" / "padlock-emu"
    exe = prefix / "bin" / "padlock-emu"
    line = " ".join([str(exe), *words])
    cmd = (f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; "
           f"_padlock_emu; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_completion_offers_options_and_models(prefix):
    assert "run" in complete(prefix, "r")
    assert {"--trace", "--trace-max", "--trace-insn", "--trace-window"} <= set(
        complete(prefix, "run", "--tr"))
    assert set(complete(prefix, "run", "--cpu", "esther")) == {"esther", "esther-c5j",
                                                                "esther-c5j-s9", "esther-late"}
    assert set(complete(prefix, "run", "--timing", "")) == {"on", "off"}
    assert set(complete(prefix, "trace", "")) == {"summary", "diff"}
    assert {"--check", "--check-jsonl", "--check-sarif"} == set(
        complete(prefix, "system", "--check"))
    assert set(complete(prefix, "system", "--debian-kernel", "")) == {"i386", "amd64"}
    pinned = Path(__file__).resolve().parents[2] / "emulator/system/debian-kernels.txt"
    suites = {line.split()[0] for line in pinned.read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    assert set(complete(prefix, "system", "--debian-suite", "")) == suites
    assert "nehemiah-c5p" in complete(prefix, "system", "--cpu", "neh")


def test_completion_after_d_offers_log_items_not_files(prefix, tmp_path):
    """-d takes log items (docs/debugging.md), -D a file; after `-d ITEMS` PROGRAM is still
    to come, so an option is completed there."""
    assert set(complete(prefix, "run", "-d", "")) == {"in_asm", "exec", "cpu", "padlock",
                                                      "syscall"}
    assert complete(prefix, "run", "-d", "in_asm,pa") == ["in_asm,padlock"]
    assert "--stats" in complete(prefix, "run", "-d", "in_asm", "--st")
    assert set(complete(prefix, "run", "--chip-check", "")) == {"ud", "warn", "off"}
    assert "--console" in complete(prefix, "system", "--con")
