#!/usr/bin/env bash
# Builds what `padlock-emu system --debian-kernel ARCH` boots (docs/system.md): Debian's own
# kernel, pinned per suite in emulator/system/debian-kernels.txt and fetched by
# emulator/system/debian-fetch.sh, and a small initramfs holding busybox-static, the PadLock
# modules (padlock-aes, padlock-sha, via-rng), AF_ALG, the known-answer program
# tests/system/afalg_check.c, the RDTSC timing of REP XCRYPT tests/system/tsc_xcrypt.c and
# the test init tests/system/init.sh.
#
#   make-initramfs.sh [--suite SUITE] ARCH OUTDIR [MODULE.ko...]
#
# SUITE is a Debian suite of debian-kernels.txt (default bookworm). Extra modules replace
# Debian's module of the same name (a kernel developer's patched padlock-aes.ko); others are
# loaded after Debian's. Packages are kept in PADLOCK_DEPS_CACHE/debian-ARCH. Writes
# OUTDIR/vmlinuz, OUTDIR/initrd.gz and a copy of the initramfs's modules in OUTDIR/ko (their
# symbols name the modules' code in --trace and --check, docs/system.md), again only when an
# input changed.
set -euo pipefail
suite=bookworm
if [ "${1:-}" = --suite ]; then
  suite=$2
  shift 2
fi
arch=$1
out=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
case "$arch" in
  i386) flavour=686 debarch=i386 cflags=-m32 ;;
  amd64) flavour=amd64 debarch=amd64 cflags=-m64 ;;
  *) echo "make-initramfs.sh: ARCH is i386 or amd64" >&2; exit 2 ;;
esac
cache=${PADLOCK_DEPS_CACHE:-$HOME/.cache/padlock-emu}/debian-$arch
mkdir -p "$cache" "$out"

# The pinned kernel's packages (one, or sid's image and modules), then busybox from the
# host's bookworm whatever the kernel's suite: it only has to run the init.
debs=$(bash "$src/emulator/system/debian-fetch.sh" "$suite" "$arch")
ls "$cache"/busybox-static_*.deb >/dev/null 2>&1 ||
  (cd "$cache" && apt-get download -q "busybox-static:$debarch" 2>/dev/null)
image=$(basename "$(echo "$debs" | head -1)" .deb)

# Nothing to do when the same inputs built OUTDIR last time. Debian's packages by name, size
# and time (their names carry the version; hashing 50 MB would cost every boot 0.2 s).
stamp=$( (cat "$0" "$src/tests/system/init.sh" "$src/tests/system/afalg_vectors.txt" \
  "$src/tests/system/afalg_check.c" "$src/tests/system/tsc_xcrypt.c" "$@"
  stat -c '%n %s %Y' $debs "$cache"/busybox-static_*.deb) |
  sha256sum | cut -d' ' -f1)
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] && [ -f "$out/initrd.gz" ] && [ -d "$out/ko" ]; then
  echo "$out/vmlinuz $out/initrd.gz ($image, cached)"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Load order: the three drivers, then AF_ALG (algif_* need af_alg).
order="padlock-aes padlock-sha via-rng af_alg algif_skcipher algif_hash"
# Only the image and these modules: a whole 6.16 package is 170 MB of modules.
mkdir -p "$tmp/k"
for deb in $debs; do
  dpkg-deb --fsys-tarfile "$deb" |
    tar -x -C "$tmp/k" --wildcards --no-anchored 'vmlinuz*' $(printf "%s.ko* " $order) 2>/dev/null || true
done
dpkg-deb -x "$cache"/busybox-static_*.deb "$tmp/bb"
# Up to 6.12 the modules are under lib/modules and the image is boot/vmlinuz-*; from 6.16
# (trixie's merged /usr) under usr/lib/modules, and sid's 7.x keeps the image there too.
kdir= vmlinuz=
for d in "$tmp"/k/lib/modules/* "$tmp"/k/usr/lib/modules/*; do [ -d "$d" ] && kdir=$d; done
for f in "$tmp"/k/boot/vmlinuz-* "$kdir/vmlinuz"; do [ -f "$f" ] && vmlinuz=$f; done
[ -n "$kdir" ] && [ -n "$vmlinuz" ] || { echo "make-initramfs.sh: no vmlinuz or modules in $debs" >&2; exit 1; }
cp "$vmlinuz" "$out/vmlinuz"

root=$tmp/root
mkdir -p "$root"/{bin,proc,sys,dev,tmp,lib/modules}
cp "$tmp/bb/bin/busybox" "$root/bin/busybox"
kmod=$kdir/kernel
for m in $order; do
  ko=$(find "$kmod" -name "$m.ko" -o -name "$m.ko.xz" | head -1)
  [ -n "$ko" ] || { echo "make-initramfs.sh: no module $m in $image" >&2; exit 1; }
  # Debian compresses modules with xz from 6.12 on: busybox's insmod loads them plain, and
  # the host reads their symbols (kernel_symbols.cpp). Debian signs before compressing, so
  # the uncompressed module keeps its signature.
  case "$ko" in
    *.xz) xz -dc "$ko" >"$root/lib/modules/$m.ko" ;;
    *) cp "$ko" "$root/lib/modules/$m.ko" ;;
  esac
done
# --module FILE.ko: replaces Debian's module of that name, or is loaded after the others.
for f in "$@"; do
  m=$(basename "$f" .ko)
  cp "$f" "$root/lib/modules/$m.ko"
  case " $order " in *" $m "*) ;; *) order="$order $m" ;; esac
done
echo "$order" | tr ' ' '\n' >"$root/modules.order"
rm -rf "$out/ko"
cp -r "$root/lib/modules" "$out/ko"
cp "$root/modules.order" "$out/ko/modules.order"
cp "$src/tests/system/init.sh" "$root/init"
chmod +x "$root/init"
cp "$src/tests/system/afalg_vectors.txt" "$root/afalg_vectors.txt"
gcc "$cflags" -static -O2 -o "$root/afalg_check" "$src/tests/system/afalg_check.c"
gcc "$cflags" -static -O2 -o "$root/tsc_xcrypt" "$src/tests/system/tsc_xcrypt.c"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$out/initrd.gz"
echo "$stamp" >"$out/stamp"
echo "$out/vmlinuz $out/initrd.gz ($image)"
