"""GnuTLS, the second real client (docs/emulator.md): Debian's gnutls-cli (host x86-64 build)
finds PadLock under the nano model and `gnutls-cli --benchmark-ciphers` runs to the end
with its AES-CBC and AES-GCM work done by REP XCRYPTCBC / REP XCRYPTECB and its SHA-1 by
REP XSHA1 (GnuTLS lib/accelerated/x86: the padlock paths are chosen by CPUID vendor
"CentaurHauls" and leaf 0xC0000001, as OpenSSL's).

The benchmark runs each algorithm until a 5-second alarm; the alarm runs on the guest's
virtual clock, so a low --mhz keeps the wall time short (the rates printed scale with it).
This checks that the paths run and complete; the correctness of the same models against
OpenSSL's software is what test_openssl_enc.py checks."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from realclients import Client, padlock_counts, unavailable

GNUTLS_CLI = Path("/usr/bin/gnutls-cli")


def test_gnutls_detects_padlock(emulator_path):
    if not GNUTLS_CLI.is_file():
        unavailable("gnutls-cli is not installed (Debian package gnutls-bin)")
    p = Client("x86_64", "nano", None).run(
        emulator_path, str(GNUTLS_CLI), ["--list"], stats=False,
        extra=("-E", "GNUTLS_DEBUG_LEVEL=2"))
    err = p.stderr.decode(errors="replace")
    assert "Padlock AES accelerator was detected" in err, err[-3000:]
    assert "Padlock SHA1 and SHA256" in err, err[-3000:]


def test_gnutls_benchmark_ciphers_uses_padlock(emulator_path):
    if not GNUTLS_CLI.is_file() or shutil.which("gnutls-cli") is None:
        unavailable("gnutls-cli is not installed (Debian package gnutls-bin)")
    p = Client("x86_64", "nano", None).run(
        emulator_path, str(GNUTLS_CLI), ["--benchmark-ciphers"], extra=("--mhz", "10"),
        timeout=900)
    out = p.stdout.decode()
    rates = dict(re.findall(r"^\s*(\S+) ([0-9.]+) [KM]B/sec$", out, re.M))
    for alg in ("AES-128-GCM", "AES-128-CBC-SHA1", "AES-128-CBC", "SHA1", "SHA256"):
        assert alg in rates and float(rates[alg]) > 0, out
    counts = padlock_counts(p.stderr)
    assert counts.get("XCRYPTCBC", (0, 0))[1] > 1_000_000, counts
    assert counts.get("XCRYPTECB", (0, 0))[1] > 1_000_000, counts
    assert counts.get("XSHA1", (0, 0))[0] > 0, counts
