"""docs/architecture.md is the map of the tree: its folder table and its dependency diagram
name every folder of emulator/ and only folders that exist, and the walk of one REP
XCRYPTCBC stays at eight files or fewer, each of which exists. A move that forgets the map
fails here."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs/architecture.md").read_text()


def emulator_folders() -> set[str]:
    files = subprocess.run(["git", "ls-files", "emulator"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    return {"emulator/" + f.split("/")[1] for f in files if f.count("/") >= 2}


def section(title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", DOC, re.M | re.S)
    assert m, f"docs/architecture.md has no section '{title}'"
    return m.group(1)


def table_folders() -> set[str]:
    return {m.rstrip("/") for m in re.findall(r"^\| `(emulator/[^`]+)` \|", section("Folders"),
                                               re.M)}


def diagram_paths() -> set[str]:
    m = re.search(r"```mermaid\n(.*?)```", section("Allowed dependencies"), re.S)
    assert m, "the dependency diagram is missing"
    return set(re.findall(r"\[(emulator/[^\]]+)\]", m.group(1)))


def test_the_table_names_every_emulator_folder():
    assert emulator_folders() - table_folders() == set(), "folders missing from the table"


def test_the_table_names_only_existing_folders():
    gone = {f for f in table_folders() if not (REPO / f).is_dir()}
    assert not gone, f"the table names folders that do not exist: {sorted(gone)}"


def test_the_diagram_names_every_emulator_folder_and_only_existing_paths():
    paths = diagram_paths()
    assert {p for p in paths if not (REPO / p).exists()} == set()
    tops = {"emulator/" + p.split("/")[1] for p in paths}
    assert emulator_folders() - tops == set(), "folders missing from the diagram"


def test_the_walk_of_one_instruction_is_at_most_eight_existing_files():
    walk = re.findall(r"^\d+\. `([^`]+)`", section("One REP XCRYPTCBC, from the trap to the trace"),
                      re.M)
    assert 0 < len(walk) <= 8, walk
    assert [f for f in walk if not (REPO / f).is_file()] == []
