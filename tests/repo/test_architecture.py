"""The folders of isa/, models/ and emulator/ and which of them may include which
(docs/architecture.md). A new include that crosses the lines below is a design change:
change the table and the document together."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# folder -> folders its files may include (besides itself). emulator/X means the whole
# sub-folder; every file of emulator/ sits in one (test_every_emulator_file_is_in_a_room).
ALLOWED: dict[str, set[str]] = {
    "isa": set(),
    "models": {"isa"},
    "emulator/memory": {"isa", "models"},
    "emulator/cpu": {"emulator/memory", "isa", "models"},
    "emulator/time": set(),
    # the run options (RunOptions) and the checks and messages every entry point shares (the
    # CLI, Python)
    "emulator/options": {"emulator/time", "models"},
    "emulator/loader": {"emulator/memory"},
    "emulator/observe": {"emulator/cpu", "emulator/loader", "emulator/options", "isa", "models"},
    "emulator/exec": {"emulator/cpu", "emulator/memory", "emulator/observe", "emulator/time",
                      "isa", "models"},
    "emulator/gdb": set(),
    "emulator/linux": {"emulator/cpu", "emulator/memory", "emulator/time", "emulator/loader",
                       "emulator/exec", "emulator/observe", "emulator/options", "emulator/gdb",
                       "isa", "models"},
    "emulator/harness": {"emulator/cpu", "emulator/memory", "emulator/time", "emulator/loader",
                         "emulator/exec", "emulator/observe", "emulator/linux/signal",
                         "isa", "models"},
    "emulator/trace_reader": {"emulator/observe", "isa", "models"},
    "emulator/cli": {"emulator/linux", "emulator/loader", "emulator/trace_reader",
                     "emulator/observe", "emulator/time", "emulator/options", "isa", "models"},
    # system mode's C ABI for QEMU: the execution core and what it writes to, no Unicorn;
    # of the loader only its dependency-free ELF reader (the kernel modules' symbols)
    "emulator/system": {"emulator/exec", "emulator/observe", "emulator/time", "isa",
                        "models", "emulator/loader/elf_view.hpp"},
}


def folder(path: str) -> str:
    parts = path.split("/")
    if parts[0] != "emulator":
        return parts[0]
    return "emulator/" + parts[1] if len(parts) > 2 else path


def allowed(src: str, inc: str) -> bool:
    if folder(inc) == folder(src):
        return True
    return any(inc == a or inc.startswith(a + "/") for a in ALLOWED[folder(src)])


def includes():
    files = subprocess.run(["git", "ls-files", "isa", "models", "emulator"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if not f.endswith((".cpp", ".hpp", ".h")):
            continue
        for n, line in enumerate((REPO / f).read_text().splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and "/" in m.group(1):
                yield f, n, m.group(1)


def test_every_emulator_file_is_in_a_room():
    """No source sits directly in emulator/: each belongs to the folder that names it."""
    files = subprocess.run(["git", "ls-files", "emulator"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    loose = [f for f in files if f.count("/") == 1 and f != "emulator/CMakeLists.txt"]
    assert not loose, loose


def test_every_folder_is_in_the_table():
    folders = {folder(f) for f, _, _ in includes()}
    assert folders <= set(ALLOWED), folders - set(ALLOWED)


def test_includes_follow_the_allowed_dependencies():
    bad = [f"{f}:{n}: {inc}" for f, n, inc in includes() if not allowed(f, inc)]
    assert not bad, "includes across the allowed dependencies:\n" + "\n".join(bad)


def test_isa_and_models_never_include_unicorn_or_the_emulator():
    bad = []
    for top in ("isa", "models"):
        for path in (REPO / top).rglob("*"):
            if path.suffix in (".cpp", ".hpp", ".h"):
                text = path.read_text()
                if re.search(r'#\s*include\s+[<"](unicorn/|emulator/|capstone/)', text):
                    bad.append(str(path.relative_to(REPO)))
    assert not bad


def test_the_execution_core_builds_without_unicorn():
    """emulator/exec/core.cpp and what it writes to form padlock_exec, a library with
    no Unicorn, shared by the CLI, the harness and the direct model API (CMakeLists.txt)."""
    core = [f for f, _, inc in includes() if f.startswith("emulator/exec/core")]
    assert core, "emulator/exec/core.* is the execution core"
    for f, _, inc in includes():
        if f.startswith("emulator/exec/core"):
            assert not inc.startswith(("emulator/cpu", "emulator/memory", "emulator/linux")), inc
        if f in ("emulator/exec/core.hpp", "emulator/exec/core.cpp"):
            assert "unicorn" not in (REPO / f).read_text()


def test_system_mode_abi_builds_without_unicorn():
    """emulator/system/ is the library QEMU loads (docs/system.md): it reaches the models only
    through padlock_exec, never through Unicorn's CPU, memory or the Linux process."""
    files = [f for f, _, _ in includes() if f.startswith("emulator/system/")]
    assert files, "emulator/system/ holds the C ABI"
    for f, _, inc in includes():
        if f.startswith("emulator/system/"):
            assert not inc.startswith(("emulator/cpu", "emulator/memory", "emulator/linux")), inc


# Process is being split into parts with narrow interfaces (docs/architecture.md): its public
# functions may only become fewer, and nothing reaches its private state through friendship.
# Lower the ceiling as functions move out.
PROCESS_PUBLIC_FUNCTIONS_MAX = 28


def class_interface(header: str, cls: str) -> tuple[list[str], list[str]]:
    """The named public member functions `cls` declares in `header` (constructors, the
    destructor and deleted functions left out) and its friend declarations."""
    text = re.sub(r"//[^\n]*", "", (REPO / header).read_text())
    m = re.search(rf"\bclass\s+{cls}\b[^;{{]*\{{", text)
    assert m, f"{header} declares no class {cls}"
    depth, access, stmt = 1, "private", ""
    functions: list[str] = []
    friends: list[str] = []

    def close(s: str) -> None:
        s = " ".join(s.split())
        if s.startswith("friend "):
            friends.append(s)
        elif (access == "public" and "(" in s and not re.match(r"(struct|class|enum|using)\b", s)
              and not re.search(r"\w\{", s) and not s.endswith("= delete")
              and not re.match(rf"(explicit\s+)?~?{cls}\s*\(", s)):
            functions.append(s)

    i = m.end()
    while depth > 0:
        c = text[i]
        i += 1
        if c == "{":
            depth += 1
            if depth == 2 and stmt.strip():
                close(stmt)  # a function defined in the class (or a nested type)
            stmt = ""
        elif c == "}":
            depth -= 1
            stmt = ""
        elif depth == 1:
            stmt += c
            a = re.fullmatch(r"\s*(public|private|protected)\s*:", stmt)
            if a:
                access, stmt = a.group(1), ""
            elif c == ";":
                if stmt.strip(" \n;"):
                    close(stmt[:-1])
                stmt = ""
    return functions, friends


def test_process_interface_shrinks_and_has_no_friends():
    functions, friends = class_interface("emulator/linux/process.hpp", "Process")
    assert len(functions) <= PROCESS_PUBLIC_FUNCTIONS_MAX, "\n".join(functions)
    assert friends == [], friends


# The harness Machine hands out its parts (memory(), control_registers(), clock()) instead of
# forwarding to them, and keeps Unicorn's hooks private behind its Hooks view, as Process does
# (docs/python.md, "Why Machine is as wide as it is"). Lower the ceiling as functions move out.
MACHINE_PUBLIC_FUNCTIONS_MAX = 34


def test_harness_machine_interface_stays_narrow():
    functions, friends = class_interface("emulator/harness/machine.hpp", "Machine")
    assert len(functions) <= MACHINE_PUBLIC_FUNCTIONS_MAX, "\n".join(functions)
    assert not [f for f in functions if re.search(r"\bon_\w+\(|hook_exception\(", f)], functions
    assert friends == [], friends


# The system calls (emulator/linux/syscall/) reach the guest threads and the address space
# only through their public headers, never their internals (docs/architecture.md).
SYSCALL_MAY_INCLUDE_ONLY: dict[str, set[str]] = {
    "emulator/linux/threads": {"emulator/linux/threads/guest_threads.hpp",
                               "emulator/linux/threads/futex_words.hpp",
                               "emulator/linux/threads/scheduler.hpp"},
    "emulator/memory": {"emulator/memory/address_space.hpp"},
    "emulator/linux/files": {"emulator/linux/files/guest_files.hpp"},
    "emulator/linux/host_stop": {"emulator/linux/host_stop/host_stop.hpp"},
    "emulator/linux/vm": {"emulator/linux/vm/address_space_policy.hpp",
                          "emulator/linux/vm/user_memory.hpp"},
}


def test_system_calls_stay_out_of_the_threads_and_address_space_internals():
    bad = [f"{f}:{n}: {inc}" for f, n, inc in includes()
           if f.startswith("emulator/linux/syscall/")
           for part, public in SYSCALL_MAY_INCLUDE_ONLY.items()
           if inc.startswith(part + "/") and inc not in public]
    assert not bad, "syscall/ includes internals:\n" + "\n".join(bad)


def test_no_tracker_numbers_in_code_or_docs():
    """Comments and docs cite guide sections and docs/ pages: a tracker number means nothing to a
    maintainer outside the tracker."""
    r = subprocess.run(["git", "grep", "-niIE", r"issue ?[#0-9]", "--", ".", ":!tests/golden"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.stdout == "", r.stdout
