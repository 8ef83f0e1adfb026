"""Processes under padlock-emu (docs/emulator.md, "Processes"): fork, vfork, clone and
posix_spawn make a new emulator process, execve runs the new image under padlock-emu with
the same options (ELF programs, #! scripts, i386 -> x86-64 where the model has long
mode), wait4/waitpid/waitid report the child's exit status or signal, SIGCHLD reaches a
handler, pipes with dup2 join processes, and kill reaches another guest. The guest
guest_procs prints the same lines under the emulator as natively.

A shell pipeline of Debian's own programs runs as on the host: the i386 sysroot's
/bin/sh (dash) with its openssl and sha256sum, and the host's x86-64 ones, each process
with its own --stats."""

from __future__ import annotations

import re
import subprocess

import pytest

from guestrun import kv
from realclients import HOST_OPENSSL, padlock_counts, sysroot_i386, unavailable

KEY = "000102030405060708090a0b0c0d0e0f"
IV = "0f0e0d0c0b0a09080706050403020100"


def native(runner, target, args):
    return subprocess.run([str(runner.guest("procs", target.arch)), *map(str, args)],
                          capture_output=True, timeout=60)


@pytest.mark.parametrize("what", ["fork", "pipe", "exec", "kill", "vfork", "spawn"])
def test_like_native(runner, target, tmp_path, what):
    args = [what] + ([tmp_path] if what == "exec" else [])
    emu = runner.run("procs", target, args, timeout=120)
    expected = native(runner, target, args)
    assert emu.stdout.decode() == expected.stdout.decode()


def test_fork_results(runner, target):
    out = kv(runner.run("procs", target, ["fork"]).stdout)
    assert out["exit"] == "7 signaled=6"  # "exit=7 signaled=6" on one line
    assert out["sigchld"] == "1"
    assert out["waitid"] == "0 code=1 status=5 pid_ok=1"
    assert out["nochild"] == "1"


def test_exec_script_and_errors(runner, target, tmp_path):
    out = runner.run("procs", target, ["exec", tmp_path]).stdout.decode().splitlines()
    assert f"argv0=guest_procs_{target.arch}" in out
    assert "argv=one|two words" in out
    assert f"argv={tmp_path}/script.sh|arg" in out  # interpreter, its argument, the script
    assert "enoent=1" in out and "enoexec=1" in out


def test_i386_execs_x86_64_on_nano(runner, guest_dir):
    other = runner.guest("procs", "x86_64")
    if not other.is_file() or not runner.guest("procs", "i386").is_file():
        pytest.skip("needs both i386 and x86_64 guests")
    out = runner.run("procs", ("i386", "nano"), ["run", other, "echo", "crossed"]).stdout.decode()
    assert out.splitlines() == ["argv0=guest_procs_x86_64", "argv=crossed", "run_status=0"]
    # Esther has no long mode: execve fails with ENOEXEC, as on a 32-bit kernel.
    out = runner.run("procs", ("i386", "esther"), ["run", other, "echo", "x"]).stdout.decode()
    assert out.splitlines() == ["execv failed: 8", "run_status=127"]


def test_each_process_has_its_own_stats_and_files(runner, target, tmp_path):
    cmd = runner.command("procs", target.arch, ["pipe"], target.cpu, stats=True)
    cmd[2:2] = ["--trace", str(tmp_path / "t.jsonl")]
    proc = subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    assert proc.stderr.decode().count("stats: system calls") == 2
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files[0] == "t.jsonl" and len(files) == 2 and re.fullmatch(r"t\.jsonl\.\d+", files[1])


def pipeline(emulator_path, tmp_path, cpu, sysroot):
    data = bytes((i * 7 + (i >> 8)) & 0xFF for i in range(1 << 20))  # 1 MiB
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    enc = f"openssl enc -engine padlock -aes-128-cbc -K {KEY} -iv {IV}"
    script = f"{enc} -in {src} | {enc} -d | sha256sum"
    cmd = [str(emulator_path), "run", "--cpu", cpu, "--stats"]
    if sysroot is not None:
        cmd += ["-L", str(sysroot)]
    proc = subprocess.run(cmd + ["/bin/sh", "-c", script], capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    host = subprocess.run(["sha256sum"], input=data, capture_output=True, check=True).stdout
    assert proc.stdout.split()[0] == host.split()[0]
    # Both openssl processes used REP XCRYPTCBC (each prints its own --stats).
    cbc = [int(n) for n in re.findall(rb"stats:\s+REP XCRYPTCBC\s+(\d+)", proc.stderr)]
    assert len(cbc) == 2 and all(n > 0 for n in cbc), proc.stderr.decode(errors="replace")
    assert padlock_counts(proc.stderr)["XCRYPTCBC"][0] > 0


def test_shell_pipeline_i386_sysroot(emulator_path, tmp_path):
    root = sysroot_i386()
    for need in ("bin/sh", "usr/bin/sha256sum", "usr/bin/openssl"):
        if not (root / need).exists():
            unavailable(f"no {need} in {root}: rebuild it with 'bash scripts/make-sysroot.sh' "
                        "(dash and coreutils are in its default package list)")
    pipeline(emulator_path, tmp_path, "esther", root)


def test_shell_pipeline_x86_64_host(emulator_path, tmp_path):
    if not HOST_OPENSSL.is_file():
        unavailable("host /usr/bin/openssl is not installed")
    pipeline(emulator_path, tmp_path, "nano", None)
