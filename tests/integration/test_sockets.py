"""Sockets under padlock-emu (docs/emulator.md, "Sockets"): AF_UNIX, AF_INET and AF_INET6,
passed through to the host. guest_sockets prints the same lines under the emulator as
natively: socketpair, datagrams, a TCP server and a forked client on loopback, SCM_RIGHTS,
option values (SO_RCVTIMEO's struct timeval differs by ABI), select/pselect/ppoll/epoll/
eventfd, and i386 socketcall.

TLS between two emulated Debian openssl processes: `s_server -engine padlock` and
`s_client -engine padlock` (the host's x86-64 openssl under nano, the i386 sysroot's
under esther), a TLS 1.2 and a TLS 1.3 handshake and a 1 MiB transfer on loopback; each
side's --stats shows PadLock instructions, and the server receives exactly the input."""

from __future__ import annotations

import socket
import subprocess
import time

import pytest

from realclients import openssl_client, padlock_counts


@pytest.mark.parametrize("what", ["unix", "inet", "rights", "options", "wait", "socketcall",
                                  "mmsg"])
def test_like_native(runner, target, what):
    emu = runner.run("sockets", target, [what], timeout=120)
    native = subprocess.run([str(runner.guest("sockets", target.arch)), what],
                            capture_output=True, timeout=60)
    assert emu.stdout.decode() == native.stdout.decode()
    assert b"unsupported" not in emu.stderr
    if what == "mmsg":
        assert emu.stdout.decode() == ("sendmmsg=3 lens=3,3,5\n"
                                       "recvmmsg=3 one/3 two/3 three/5\n"
                                       "empty recvmmsg=-1 eagain=1\n")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    d / "key.pem", "-out", d / "cert.pem", "-days", "2", "-subj",
                    "/CN=localhost"], capture_output=True, check=True, timeout=120)
    return d


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, server: subprocess.Popen, timeout: float = 120):
    """Until the server has bound the port (a probe connection would use up -naccept 1)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert server.poll() is None, server.stderr.read().decode(errors="replace")
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return
        time.sleep(0.2)
    raise AssertionError("s_server did not listen")


# TLS 1.2 with an AES-CBC suite (the engine's REP XCRYPTCBC carries the records); TLS 1.3
# with its default suite (AES-GCM in software; the engine's AES serves the DRBG).
VERSIONS = {"tls1_2": ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256"], "tls1_3": ["-tls1_3"]}


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_tls_between_two_emulated_openssl(emulator_path, certificate, tmp_path, arch, version):
    client = openssl_client(arch)
    data = bytes((i * 31 + (i >> 9)) & 0xFF for i in range(1 << 20))
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    port = free_port()
    # s_server ends when its stdin does: keep it open until the client is done.
    server_cmd = client.command(emulator_path, "/usr/bin/openssl", [
        "s_server", "-engine", "padlock", "-accept", f"127.0.0.1:{port}", "-cert",
        certificate / "cert.pem", "-key", certificate / "key.pem", "-naccept", "1", "-quiet",
        *VERSIONS[version]])
    received = tmp_path / "received.bin"
    # s_client ends once the server closes, and s_server closes when its stdin ends: end its
    # stdin when all the data has arrived (as a user would type ^D).
    with open(received, "wb") as out, open(src, "rb") as stdin:
        server = subprocess.Popen(server_cmd, stdin=subprocess.PIPE, stdout=out,
                                  stderr=subprocess.PIPE)
        cli = None
        try:
            wait_listening(port, server)
            cli = subprocess.Popen(client.command(emulator_path, "/usr/bin/openssl", [
                "s_client", "-engine", "padlock", "-connect", f"127.0.0.1:{port}",
                "-no_ign_eof", "-quiet", *VERSIONS[version]]), stdin=stdin,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            end = time.monotonic() + 600
            while received.stat().st_size < len(data) and cli.poll() is None:
                assert time.monotonic() < end, "the transfer did not finish"
                time.sleep(0.2)
            server.stdin.close()
            server_err = server.stderr.read()
            cli_err = cli.stderr.read()
            assert server.wait(timeout=120) == 0, server_err.decode(errors="replace")[-3000:]
            assert cli.wait(timeout=120) == 0, cli_err.decode(errors="replace")[-3000:]
        finally:
            for proc in (server, cli):
                if proc is not None and proc.poll() is None:
                    proc.kill()
    assert received.read_bytes() == data
    for side in (cli_err, server_err):
        counts = padlock_counts(side)
        assert sum(n for n, _ in counts.values()) > 0, side.decode(errors="replace")[-2000:]
        if version == "tls1_2":
            assert counts["XCRYPTCBC"][1] >= len(data)  # the records went through REP XCRYPTCBC
