"""Our patches to Unicorn and QEMU are Debian-style series (cmake/unicorn/patches,
cmake/qemu/patches): each listed patch exists and each patch is listed, each carries a
DEP-3 header, the series applies in order and without fuzz to the pinned pristine source,
the docs name each patch once with its true size, and docs/upstreaming.md's claims of
which patches apply alone hold (docs/upstreaming.md)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNICORN = REPO / "cmake" / "unicorn" / "patches"
QEMU = REPO / "cmake" / "qemu" / "patches"
DEPS_CACHE = Path(os.environ.get("PADLOCK_DEPS_CACHE",
                                 Path.home() / ".cache" / "padlock-emu"))
DEP3_DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")


def series(folder: Path) -> list[str]:
    """The series as quilt and our build read it: a name a line, '#' comments skipped."""
    names = []
    for line in (folder / "series").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line.split()[0])
    return names


def header(patch: Path) -> dict[str, str]:
    """DEP-3 fields: everything before the first '---' or 'diff' line; continuation lines
    start with a space."""
    fields: dict[str, str] = {}
    key = None
    for line in patch.read_text(encoding="utf-8").splitlines():
        if line == "---" or line.startswith("diff ") or line.startswith("--- "):
            break
        if line.startswith(" ") and key:
            fields[key] += "\n" + line[1:]
        elif ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields


def size(patch: Path) -> tuple[int, int]:
    """Lines added and removed by the diff (the header and its diffstat excluded)."""
    text = patch.read_text(encoding="utf-8")
    body = text[text.index("\ndiff ") + 1:]
    added = removed = 0
    for line in body.splitlines():
        if line.startswith("+++ ") or line.startswith("--- "):
            continue
        added += line.startswith("+")
        removed += line.startswith("-")
    return added, removed


def require(variable: str, reason: str) -> None:
    """Skip with the reason, or fail where the environment promises the piece
    (scripts/test.sh sets the PADLOCK_REQUIRE_* variables)."""
    if os.environ.get(variable) == "1":
        pytest.fail(f"{reason} ({variable}=1)")
    pytest.skip(reason)


def apply(tree: Path, patch: Path, dry_run: bool = False) -> subprocess.CompletedProcess:
    args = ["patch", "-p1", "--forward", "--fuzz=0", "--batch", "-d", str(tree), "-i",
            str(patch)]
    if dry_run:
        args.append("--dry-run")
    return subprocess.run(args, capture_output=True, text=True)


def pinned(cmake_file: str, variable: str) -> str:
    m = re.search(rf"set\({variable} (\S+)\)",
                  (REPO / "cmake" / cmake_file).read_text(encoding="utf-8"))
    assert m, f"{variable} not found in cmake/{cmake_file}"
    return m.group(1)


@pytest.fixture(scope="module")
def unicorn_sdist() -> Path:
    version = pinned("PadlockUnicorn.cmake", "PADLOCK_UNICORN_VERSION")
    sdist = DEPS_CACHE / f"unicorn-{version}.tar.gz"
    if not sdist.is_file():
        require("PADLOCK_REQUIRE_TOOLS",
                f"{sdist} is missing (configuring the build downloads it)")
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    assert digest == pinned("PadlockUnicorn.cmake", "PADLOCK_UNICORN_SHA256"), \
        f"{sdist} is not the pinned source release"
    return sdist


def pristine_unicorn(sdist: Path, where: Path) -> Path:
    with tarfile.open(sdist) as tar:
        tar.extractall(where)
    (root,) = [p for p in where.iterdir() if p.is_dir()]
    return root


@pytest.fixture(scope="module")
def qemu_orig() -> Path:
    """Debian's QEMU source with Debian's own patches, where cmake/qemu/build-qemu.sh
    unpacks it (PADLOCK_QEMU_WORK, or the work folder in the dependency cache)."""
    env = dict(line.split("=", 1) for line in
               (REPO / "cmake" / "qemu" / "qemu-source.env").read_text().splitlines()
               if "=" in line and not line.startswith("#"))
    work = Path(os.environ.get("PADLOCK_QEMU_WORK",
                               DEPS_CACHE / f"qemu-{env['QEMU_DEBIAN_VERSION']}-work"))
    orig = work / "orig"
    if not (orig / "VERSION").is_file():
        require("PADLOCK_REQUIRE_SYSTEM",
                f"{orig} is missing (cmake/qemu/build-qemu.sh unpacks Debian's QEMU there)")
    return orig


def touched(patches: list[Path]) -> set[str]:
    files = set()
    for p in patches:
        for m in re.finditer(r"^--- a/(\S+)", p.read_text(encoding="utf-8"), re.M):
            files.add(m.group(1))
    return files


def copy_of(orig: Path, files: set[str], where: Path) -> Path:
    """The files our patches change, copied out of the (large) pristine tree."""
    for f in files:
        (where / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(orig / f, where / f)
    return where


@pytest.mark.parametrize("folder", [UNICORN, QEMU], ids=["unicorn", "qemu"])
def test_series_lists_every_patch_once_and_only_patches_that_exist(folder: Path) -> None:
    names = series(folder)
    assert names, f"{folder}/series lists nothing"
    assert len(names) == len(set(names)), f"{folder}/series lists a patch twice"
    on_disk = {p.name for p in folder.iterdir() if p.name != "series"}
    assert set(names) - on_disk == set(), f"listed but missing in {folder}"
    assert on_disk - set(names) == set(), f"in {folder} but not listed in its series"


@pytest.mark.parametrize("folder", [UNICORN, QEMU], ids=["unicorn", "qemu"])
def test_every_patch_has_a_dep3_header(folder: Path) -> None:
    for name in series(folder):
        fields = header(folder / name)
        description = fields.get("Description", "")
        assert "\n" in description, f"{name}: Description needs a summary and a body"
        assert "docs/" in description, f"{name}: Description names no docs/ item"
        forwarded = fields.get("Forwarded", "")
        assert forwarded.startswith(("no", "not-needed", "yes", "http")), \
            f"{name}: Forwarded is {forwarded!r}"
        assert DEP3_DATE.match(fields.get("Last-Update", "")), f"{name}: no Last-Update"


def test_unicorn_series_applies_in_order_to_the_pinned_sdist(unicorn_sdist: Path,
                                                             tmp_path: Path) -> None:
    root = pristine_unicorn(unicorn_sdist, tmp_path)
    for name in series(UNICORN):
        r = apply(root, UNICORN / name)
        assert r.returncode == 0, f"{name} does not apply after the ones before it:\n" \
                                  f"{r.stdout}{r.stderr}"
        assert "offset" not in r.stdout, f"{name} applies only at an offset:\n{r.stdout}"
    assert not list(root.rglob("*.rej")) and not list(root.rglob("*.orig"))
    # What the patches add is there: the controls of the first and the last ones.
    header_text = (root / "src/include/unicorn/unicorn.h").read_text()
    assert "uc_emu_stop_pending" in header_text and "UC_CTL_REP_STRING" in header_text


def test_qemu_series_applies_in_order_to_debians_source(qemu_orig: Path,
                                                       tmp_path: Path) -> None:
    patches = [QEMU / n for n in series(QEMU)]
    root = copy_of(qemu_orig, touched(patches), tmp_path)
    for p in patches:
        r = apply(root, p)
        assert r.returncode == 0, f"{p.name} does not apply after the ones before it:\n" \
                                  f"{r.stdout}{r.stderr}"
        assert "offset" not in r.stdout, f"{p.name} applies only at an offset:\n{r.stdout}"
    assert (root / "target/i386/tcg/sysemu/padlock_helper.c").is_file()


def section(doc: str, title: str) -> str:
    text = (REPO / "docs" / doc).read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


SIZE = re.compile(r"`([\w.-]+\.patch)`,\s+\+(\d+)/[−-](\d+)")


@pytest.mark.parametrize("folder,doc,title", [
    (UNICORN, "emulator.md", "Unicorn"),
    (QEMU, "system.md", "The patches"),
], ids=["unicorn", "qemu"])
def test_docs_name_each_patch_once_with_its_size(folder: Path, doc: str,
                                                 title: str) -> None:
    text = section(doc, title)
    sizes = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in SIZE.finditer(text)}
    for name in series(folder):
        assert text.count(f"`{name}`") == 1, \
            f"docs/{doc} \"{title}\" names {name} {text.count(f'`{name}`')} times"
        assert sizes.get(name) == size(folder / name), \
            f"docs/{doc} gives {name} as {sizes.get(name)}, the patch is {size(folder / name)}"


def upstreaming_rows() -> dict[str, list[str]]:
    rows = {}
    for line in (REPO / "docs" / "upstreaming.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*`([\w.-]+\.patch)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def test_upstreaming_names_every_patch_as_its_header_forwards_it() -> None:
    """A patch fit for upstream says "Forwarded: no" (not sent yet) or where it went; one
    that is ours by nature says "not-needed"."""
    rows = upstreaming_rows()
    assert set(rows) == set(series(UNICORN)) | set(series(QEMU))
    for folder in (UNICORN, QEMU):
        for name in series(folder):
            verdict = rows[name][0]
            forwarded = header(folder / name)["Forwarded"]
            assert verdict in ("fit", "ours"), f"{name}: upstream is {verdict!r}"
            assert (verdict == "ours") == (forwarded == "not-needed"), \
                f"{name}: docs/upstreaming.md says {verdict}, its header Forwarded: {forwarded}"


def test_patches_said_to_apply_alone_do_so_and_the_others_do_not(unicorn_sdist: Path,
                                                                  tmp_path: Path) -> None:
    """docs/upstreaming.md's "alone" column: "yes" is a patch that applies by itself to
    the pristine sdist (what upstream would take), "no" one that needs those before it."""
    root = pristine_unicorn(unicorn_sdist, tmp_path)
    rows = upstreaming_rows()
    alone = []
    for name in series(UNICORN):
        claim = rows[name][1]
        assert claim in ("yes", "no"), f"{name}: alone is {claim!r}"
        applies = apply(root, UNICORN / name, dry_run=True).returncode == 0
        verdict = "does" if applies else "does not"
        assert applies == (claim == "yes"), \
            f"docs/upstreaming.md says {name} applies alone: {claim}; it {verdict}"
        alone += [name] if applies else []
    assert "pending-stop.patch" in alone
