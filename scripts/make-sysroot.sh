#!/usr/bin/env bash
# Builds an i386 sysroot from Debian's own packages, for running Debian's dynamically
# linked i386 programs under `padlock-emu run -L DIR` (or qemu-i386 -L DIR).
#
#   bash scripts/make-sysroot.sh [-o DIR] [PACKAGE...]
#
# DIR defaults to .sysroot-i386 (gitignored). PACKAGEs default to openssl, libssl3 and
# libc6 plus gnutls-bin (the second real PadLock client), libgcrypt20 and libmbedcrypto7
# (the libraries tests/guest/client_aes.c loads), dash and coreutils (/bin/sh and the tools
# of shell pipelines), gpg and gpg-agent (a threaded client with its own daemon); every
# name is taken as :i386.
# Their run-time dependencies (Depends and Pre-Depends, recursively, i386 ones only) come
# from `apt-cache depends`, every alternative and every provider of a virtual package
# taken, except the packages EXCLUDE names: pinentry (gpg-agent depends on one of them,
# and pinentry-gtk2/-qt pull in GTK and Qt; the tests run gpg with --pinentry-mode
# loopback, so no pinentry is ever started). Each package is fetched with `apt-get
# download` and unpacked with `dpkg-deb -x`, so nothing is installed on the host. Needs
# root the first time, to enable the i386 architecture (`dpkg --add-architecture i386;
# apt-get update`).
#
# Safe to run again: an up-to-date sysroot (same package list and versions, stamp file
# DIR/.padlock-sysroot) is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=.sysroot-i386
while [ $# -gt 0 ]; do
  case "$1" in
    -o) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "make-sysroot.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -gt 0 ]; then PACKAGES=("$@"); else PACKAGES=(openssl libssl3 libc6 gnutls-bin libgcrypt20 libmbedcrypto7 dash coreutils gpg gpg-agent); fi
ROOTS=()
for p in "${PACKAGES[@]}"; do ROOTS+=("${p%:i386}:i386"); done

say() { echo "make-sysroot.sh: $*" >&2; }

# 1. The i386 architecture and its package lists.
if ! dpkg --print-foreign-architectures | grep -qx i386; then
  [ "$(id -u)" = 0 ] || { say "enabling i386 packages needs root (dpkg --add-architecture i386)"; exit 1; }
  dpkg --add-architecture i386
  rm -f /var/lib/apt/lists/.padlock-i386-updated
fi
if ! apt-cache show libc6:i386 >/dev/null 2>&1 || [ ! -e /var/lib/apt/lists/.padlock-i386-updated ]; then
  [ "$(id -u)" = 0 ] || { say "apt-get update needs root"; exit 1; }
  # A mirror in mid-sync can fail one index (e.g. security's i386 list); apt-get then
  # keeps the others, which is enough as long as the packages below resolve.
  apt-get update -qq || say "apt-get update reported errors; continuing with the lists it has"
  touch /var/lib/apt/lists/.padlock-i386-updated
fi

# 2. The closure of run-time dependencies, i386 packages only (arch-all ones such as
#    debconf hold no code the loader needs), one level of `apt-cache depends` at a time so
#    that EXCLUDE can cut a branch off. A dependency line names a package or a virtual
#    <name>, whose providers follow on lines of their own; both are taken.
EXCLUDE='^(pinentry-.*|mew-.*)$'  # pinentry and the Emacs mailer that provides it
declare -A SEEN=()
LEVEL=("${ROOTS[@]}")
for p in "${LEVEL[@]}"; do SEEN[$p]=1; done
while [ "${#LEVEL[@]}" -gt 0 ]; do
  mapfile -t NEXT < <(
    apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
      --no-replaces --no-enhances "${LEVEL[@]}" 2>/dev/null |
      awk '/^ [ |](Pre)?Depends: / {print $2; next} /^    / {print $1}' |
      grep -E '^[a-z0-9][a-z0-9.+-]*:i386$' | sort -u || true)
  LEVEL=()
  for p in "${NEXT[@]}"; do
    [[ ${p%:i386} =~ $EXCLUDE ]] && continue
    [ -z "${SEEN[$p]:-}" ] || continue
    SEEN[$p]=1
    LEVEL+=("$p")
  done
done
apt-cache show "${ROOTS[@]}" >/dev/null 2>&1 ||
  { say "cannot resolve ${ROOTS[*]} (no i386 package lists?)"; exit 1; }
mapfile -t CLOSURE < <(printf '%s\n' "${!SEEN[@]}" | sort)

# Name=version of each package (one apt-cache policy for all): the stamp that tells
# whether OUT is up to date.
STAMP_TEXT=$(apt-cache policy "${CLOSURE[@]}" |
  awk '/^[^ ].*:$/ {name = substr($0, 1, length($0) - 1)} /^  Candidate:/ {print name "=" $2}' |
  sort)
if [ -f "$OUT/.padlock-sysroot" ] && [ "$(cat "$OUT/.padlock-sysroot")" = "$STAMP_TEXT" ]; then
  say "$OUT is up to date (${#CLOSURE[@]} packages)"
  exit 0
fi

# 3. Download and unpack (as the invoking user; apt-get download needs no root).
DEBS=$(mktemp -d)
trap 'rm -rf "$DEBS"' EXIT
# apt's download sandbox user must be able to write there.
[ "$(id -u)" != 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$DEBS"
say "downloading ${#CLOSURE[@]} packages: ${CLOSURE[*]}"
(cd "$DEBS" && apt-get download -qq "${CLOSURE[@]}" >/dev/null)
rm -rf "$OUT"
mkdir -p "$OUT"
for deb in "$DEBS"/*.deb; do dpkg-deb -x "$deb" "$OUT"; done

# Merged /usr, as on every Debian 12 system: /lib, /bin and /sbin are links into /usr.
# Without it the loader, which learns that a directory is missing once and skips it from
# then on, can miss libc in /lib/i386-linux-gnu while searching for libcrypto's needs.
for d in lib bin sbin; do
  if [ -d "$OUT/$d" ] && [ ! -L "$OUT/$d" ]; then
    mkdir -p "$OUT/usr/$d"
    cp -a "$OUT/$d/." "$OUT/usr/$d/"
    rm -rf "${OUT:?}/$d"
  fi
  [ -e "$OUT/$d" ] || [ ! -d "$OUT/usr/$d" ] || ln -s "usr/$d" "$OUT/$d"
done

# 4. The loader's cache of library paths, made for this root. Without one the i386
#    ld.so would still find everything in its built-in multiarch directories.
[ -f "$OUT/etc/ld.so.conf" ] || echo 'include /etc/ld.so.conf.d/*.conf' >"$OUT/etc/ld.so.conf"
if command -v ldconfig >/dev/null && [ "$(id -u)" = 0 ]; then
  ldconfig -r "$OUT" 2>/dev/null || say "ldconfig -r failed; the loader will use its default paths"
fi

echo "$STAMP_TEXT" >"$OUT/.padlock-sysroot"
say "done: $OUT ($(du -sh "$OUT" | cut -f1))"
if [ -x "$OUT/usr/bin/openssl" ] && command -v qemu-i386 >/dev/null; then
  say "check: $(qemu-i386 -L "$OUT" "$OUT/usr/bin/openssl" version 2>&1)"
fi
