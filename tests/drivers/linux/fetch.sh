#!/bin/sh
# Fetches Debian's linux-source-6.1 with apt-get and extracts the VIA PadLock drivers and
# the kernel's crypto test vectors into a cache outside the repository (the driver code is
# never edited and never committed):
#   drivers/crypto/padlock-aes.c, drivers/crypto/padlock-sha.c,
#   drivers/char/hw_random/via-rng.c, include/crypto/padlock.h, crypto/testmgr.h
# Cache: $PADLOCK_LINUX_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/padlock-emu/linux-6.1.
# Needs apt-get with Debian 12's bookworm(-security) sources; no root (apt-get download).
set -eu
cache=${PADLOCK_LINUX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/padlock-emu/linux-6.1}
files="drivers/crypto/padlock-aes.c drivers/crypto/padlock-sha.c
drivers/char/hw_random/via-rng.c include/crypto/padlock.h crypto/testmgr.h"
mkdir -p "$cache/src"
have=1
for f in $files; do [ -f "$cache/src/$f" ] || have=0; done
if [ "$have" = 1 ]; then
  echo "linux-6.1 PadLock sources already in $cache/src ($(cat "$cache/VERSION"))"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download linux-source-6.1 >/dev/null)
deb=$(ls "$work"/linux-source-6.1_*.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" ./usr/src/linux-source-6.1.tar.xz
members=""
for f in $files; do members="$members linux-source-6.1/$f"; done
# shellcheck disable=SC2086
tar -xJf "$work/usr/src/linux-source-6.1.tar.xz" -C "$cache/src" --strip-components=1 $members
basename "$deb" .deb | sed 's/^linux-source-6.1_//; s/_all$//' > "$cache/VERSION"
echo "linux-source-6.1 $(cat "$cache/VERSION"): PadLock sources in $cache/src"
