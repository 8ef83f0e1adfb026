#!/usr/bin/env bash
# Builds what `padlock-emu system --debian-kernel ARCH` boots (docs/system.md): Debian's own
# kernel (linux-image-686 or linux-image-amd64) and a small initramfs holding busybox-static,
# the PadLock modules (padlock-aes, padlock-sha, via-rng), AF_ALG, the known-answer program
# tests/system/afalg_check.c, the RDTSC timing of REP XCRYPT tests/system/tsc_xcrypt.c and
# the test init tests/system/init.sh.
#
#   make-initramfs.sh ARCH OUTDIR [MODULE.ko...]
#
# Extra modules replace Debian's module of the same name (a kernel developer's patched
# padlock-aes.ko); others are loaded after Debian's. Packages come with `apt-get download` and are kept in
# PADLOCK_DEPS_CACHE/debian-ARCH. Writes OUTDIR/vmlinuz, OUTDIR/initrd.gz and a copy of the
# initramfs's modules in OUTDIR/ko (their symbols name the modules' code in --trace and
# --check, docs/system.md), again only when an input changed.
set -euo pipefail
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

# linux-image-686 depends on the current ABI's package, linux-image-6.1.0-N-686. apt-cache
# takes 1 to 3 s, inside every timed boot (`padlock-emu system` runs this script): its answer
# is kept and asked again only when apt's package lists changed since (apt-get update).
known=$cache/image-package
if [ -s "$known" ] && [ "$known" -nt /var/lib/apt/lists ] && [ "$known" -nt /var/cache/apt/pkgcache.bin ]; then
  image=$(cat "$known")
else
  image=$(apt-cache depends "linux-image-$flavour:$debarch" | awk '/Depends: linux-image-/ {print $2; exit}')
  image=${image%:*}
  echo "$image" >"$known.$$" && mv "$known.$$" "$known"
fi
for p in "$image:$debarch" "busybox-static:$debarch"; do
  ls "$cache/${p%:*}"_*.deb >/dev/null 2>&1 || (cd "$cache" && apt-get download -q "$p" 2>/dev/null)
done

# Nothing to do when the same inputs built OUTDIR last time. Debian's packages by name, size
# and time (their names carry the version; hashing 50 MB would cost every boot 0.2 s).
stamp=$( (cat "$0" "$src/tests/system/init.sh" "$src/tests/system/afalg_vectors.txt" \
  "$src/tests/system/afalg_check.c" "$src/tests/system/tsc_xcrypt.c" "$@"
  stat -c '%n %s %Y' "$cache/${image}"_*.deb "$cache"/busybox-static_*.deb) |
  sha256sum | cut -d' ' -f1)
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] && [ -f "$out/initrd.gz" ] && [ -d "$out/ko" ]; then
  echo "$out/vmlinuz $out/initrd.gz ($image, cached)"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$cache/${image}"_*.deb "$tmp/k"
dpkg-deb -x "$cache"/busybox-static_*.deb "$tmp/bb"
cp "$tmp"/k/boot/vmlinuz-* "$out/vmlinuz"

root=$tmp/root
mkdir -p "$root"/{bin,proc,sys,dev,tmp,lib/modules}
cp "$tmp/bb/bin/busybox" "$root/bin/busybox"
kmod=$(echo "$tmp"/k/lib/modules/*/kernel)
# Load order: the three drivers, then AF_ALG (algif_* need af_alg).
order="padlock-aes padlock-sha via-rng af_alg algif_skcipher algif_hash"
for m in $order; do
  cp "$(find "$kmod" -name "$m.ko" | head -1)" "$root/lib/modules/$m.ko"
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
