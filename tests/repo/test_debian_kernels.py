"""The Debian kernels system mode boots are pinned in one file,
emulator/system/debian-kernels.txt (docs/system.md, "Debian's suites"). The docs' table and
the shell completion must name what the file pins, no more, no less."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def pins() -> list[tuple[str, str, str, str]]:
    """(suite, arch, package, version) per line of the data file."""
    rows = []
    for line in (REPO / "emulator/system/debian-kernels.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            suite, arch, package, version = line.split()
            rows.append((suite, arch, package, version))
    return rows


def docs_table() -> list[tuple[str, str, str, str]]:
    """The rows of docs/system.md's table under "Debian's suites", one per package."""
    text = (REPO / "docs/system.md").read_text()
    section = text[text.index("## Debian's suites"):]
    section = section[:section.index("\n## ", 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("suite", "---"):
            suite = cells[0].split()[0]
            for package in re.findall(r"`([^`]+)`", cells[2]):
                rows.append((suite, cells[1], package, cells[3]))
    return rows


def test_the_docs_table_names_exactly_the_pinned_kernels():
    assert pins(), "no kernel pinned"
    assert sorted(docs_table()) == sorted(pins())


def test_every_suite_is_in_the_completion():
    # The help's list is checked on the built binary (tests/integration/test_system_cli.py).
    suites = {p[0] for p in pins()}
    completion = (REPO / "emulator/cli/padlock-emu.bash").read_text()
    offered = re.search(r'--debian-suite\) COMPREPLY=\(\$\(compgen -W "([^"]*)"', completion)
    assert offered and set(offered[1].split()) == suites


def test_each_suite_pins_one_kernel_per_architecture():
    """One kernel version per (suite, arch): --debian-suite names exactly one kernel."""
    versions: dict[tuple[str, str], set[str]] = {}
    for suite, arch, package, version in pins():
        versions.setdefault((suite, arch), set()).add(version)
        assert re.fullmatch(r"linux-(image|binary|modules)-[0-9][\w.+~-]*", package), package
    assert all(len(v) == 1 for v in versions.values()), versions
