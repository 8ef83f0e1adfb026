#!/usr/bin/env bash
# A kernel developer's tools for the kernel `padlock-emu system --debian-kernel ARCH` boots
# (docs/system.md, "Testing a patched padlock-aes.c"): that kernel's own source files and
# out-of-tree modules built against its own headers. Everything comes from Debian with
# `apt-get download` and is unpacked with `dpkg-deb -x` into PADLOCK_DEPS_CACHE/debian-ARCH:
# nothing is installed and no root is needed.
#
#   debian-kbuild.sh source ARCH PATH...          prints the cached copy of each PATH of
#                                                 linux-source-6.1 at the kernel's version
#   debian-kbuild.sh build ARCH OUTDIR FILE.c...  builds each FILE.c as the module FILE.ko
#                                                 in OUTDIR against linux-headers-ABI-FLAVOUR
set -euo pipefail
cmd=${1:-}
arch=${2:-}
[ $# -ge 3 ] || { sed -n 's/^#   //p' "$0" >&2; exit 2; }
shift 2
case "$arch" in
  i386) flavour=686 debarch=i386 ;;
  amd64) flavour=amd64 debarch=amd64 ;;
  *) echo "debian-kbuild.sh: ARCH is i386 or amd64" >&2; exit 2 ;;
esac
cache=${PADLOCK_DEPS_CACHE:-$HOME/.cache/padlock-emu}/debian-$arch
mkdir -p "$cache"

# The kernel make-initramfs.sh boots: bookworm's, at the version pinned in
# emulator/system/debian-kernels.txt.
read -r image version < <(awk -v a="$arch" '!/^#/ && $1 == "bookworm" && $2 == a {print $3, $4; exit}' \
  "$(dirname "$0")/debian-kernels.txt")
abi=${image#linux-image-}
abi=${abi%-"$flavour"}
major=${abi%%.0-*}  # 6.1

download() {  # package=version, kept in the cache
  local name=${1%%=*}
  name=${name%:*}
  ls "$cache/${name}_${version}"_*.deb >/dev/null 2>&1 ||
    (cd "$cache" && apt-get download -q "$1" >/dev/null 2>&1) ||
    { echo "debian-kbuild.sh: apt-get download $1 failed" >&2; exit 1; }
}

case "$cmd" in
  source)
    src=$cache/linux-source-$version
    missing=()
    for p in "$@"; do [ -f "$src/$p" ] || missing+=("linux-source-$major/$p"); done
    if [ ${#missing[@]} -gt 0 ]; then
      download "linux-source-$major=$version"
      deb=$(ls "$cache/linux-source-${major}_${version}"_*.deb)
      tmp=$(mktemp -d)
      trap 'rm -rf "$tmp"' EXIT
      dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/src/linux-source-$major.tar.xz"
      mkdir -p "$src"
      tar -xJf "$tmp/usr/src/linux-source-$major.tar.xz" -C "$src" --strip-components=1 \
        "${missing[@]}"
      rm -f "$deb"  # 140 MB; the files needed are kept
    fi
    for p in "$@"; do echo "$src/$p"; done
    ;;
  build)
    out=$1
    shift
    [ $# -ge 1 ] || { echo "debian-kbuild.sh: build needs FILE.c" >&2; exit 2; }
    # The headers of the flavour, the common headers and the build tools (kbuild) for the
    # host: Debian's linux-headers package depends on exactly these.
    root=$cache/kbuild-$abi-$flavour
    headers=$root/usr/src/linux-headers-$abi-$flavour
    if [ ! -f "$headers/.padlock-unpacked" ]; then
      download "linux-headers-$abi-$flavour:$debarch=$version"
      download "linux-headers-$abi-common=$version"
      download "linux-kbuild-$major=$version"
      rm -rf "$root"
      for p in "linux-headers-$abi-$flavour" "linux-headers-$abi-common" "linux-kbuild-$major"; do
        dpkg-deb -x "$(ls "$cache/${p}_${version}"_*.deb)" "$root"
      done
      # The flavour's Makefile includes the common one by its installed, absolute path.
      echo "include $root/usr/src/linux-headers-$abi-common/Makefile" >"$headers/Makefile"
      touch "$headers/.padlock-unpacked"
    fi
    mkdir -p "$out"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for f in "$@"; do
      m=$(basename "$f" .c)
      mkdir -p "$tmp/$m"
      cp "$f" "$tmp/$m/$m.c"
      echo "obj-m += $m.o" >"$tmp/$m/Kbuild"
      make -s -C "$headers" M="$tmp/$m" modules >&2
      cp "$tmp/$m/$m.ko" "$out/$m.ko"
      echo "$out/$m.ko"
    done
    ;;
  *)
    echo "debian-kbuild.sh: the command is source or build" >&2
    exit 2
    ;;
esac
