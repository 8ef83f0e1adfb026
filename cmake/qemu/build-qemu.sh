#!/usr/bin/env bash
# Builds system mode's QEMU (docs/system.md) into OUT/bin: Debian's QEMU source at the
# version pinned in qemu-source.env, checked by SHA-256, with Debian's own patches, then
# ours (patches/series, in order, after Debian's) and the C ABI header QEMU includes
# (padlock_system.h).
#
#   build-qemu.sh OUT HEADER TARGET...      e.g. i386-softmmu x86_64-softmmu
#
# Minimal TCG-only softmmu builds. WORK (PADLOCK_QEMU_WORK, default next to OUT) keeps the
# downloaded pieces, a pristine tree and one build tree for all the targets: 1,265 of a
# target's 1,427 ninja steps do not depend on the target, and one tree runs them once
# (docs/ci.md). A new patch copies in only the files it changes, so ninja rebuilds only
# what depends on them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
header=$2
shift 2
targets=("$@")
# shellcheck source=cmake/qemu/qemu-source.env
. "$here/qemu-source.env"

done_all=1
for t in "${targets[@]}"; do [ -x "$out/bin/qemu-system-${t%-softmmu}" ] || done_all=0; done
[ "$done_all" = 1 ] && exit 0

work=${PADLOCK_QEMU_WORK:-$(dirname "$out")/qemu-${QEMU_DEBIAN_VERSION}-work}
mirror=${PADLOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$work/dl"
dsc="qemu_${QEMU_DEBIAN_VERSION}.dsc"
fetch() {  # name sha256
  local f="$work/dl/$1"
  if [ ! -f "$f" ] || [ "$(sha256sum "$f" | cut -d' ' -f1)" != "$2" ]; then
    curl -sSfL -o "$f.part" "$mirror/pool/main/q/qemu/$1"
    mv "$f.part" "$f"
  fi
  echo "$2  $f" | sha256sum -c --quiet -
}
fetch "$dsc" "$QEMU_DSC_SHA256"
fetch "$QEMU_ORIG" "$QEMU_ORIG_SHA256"
fetch "$QEMU_DEBIAN" "$QEMU_DEBIAN_SHA256"

# The pristine tree: Debian's source with Debian's patches (the hashes are checked above).
if [ ! -f "$work/orig/VERSION" ]; then
  rm -rf "$work/orig"
  (cd "$work/dl" && dpkg-source --no-check -x "$dsc" "$work/orig" >/dev/null)
fi

# The patched tree, then only the files that differ go into the build's source tree.
new="$work/new"
rm -rf "$new"
cp -a "$work/orig" "$new"
# Our series as Debian's quilt reads it: one patch a line, blank lines and '#' comments
# skipped; each must apply without fuzz.
while read -r p _; do
  case "$p" in "" | "#"*) continue ;; esac
  patch -s -d "$new" -p1 --forward --fuzz=0 <"$here/patches/$p" ||
    { echo "build-qemu.sh: patches/$p does not apply" >&2; exit 1; }
done <"$here/patches/series"
cp "$header" "$new/target/i386/padlock_system.h"
if [ ! -d "$work/src" ]; then
  mv "$new" "$work/src"  # the first build: the whole tree, symbolic links included
else
  # Regular files that differ, touched so that ninja rebuilds what depends on them.
  (cd "$new" && find . -type f -print0) |
    while IFS= read -r -d '' f; do
      if ! cmp -s "$new/$f" "$work/src/$f"; then
        mkdir -p "$(dirname "$work/src/$f")"
        cp "$new/$f" "$work/src/$f"
      fi
    done
  rm -rf "$new"
fi

# The compiler (CC, as CMake passes it; configure's default otherwise) by what it is: a
# build tree configured with another compiler is configured again. A tree from before
# this stamp was configured with the default compiler and keeps it.
cc_identity=$(printf '__VERSION__ __clang__\n' | "${CC:-gcc}" -E -P -x c - 2>/dev/null | tr -s ' \n' ' ')
mkdir -p "$out/bin"
# One tree, named by its target list (a single target keeps the name build-TARGET).
b="$work/build-$(IFS=+; echo "${targets[*]}")"
if [ -f "$b/build.ninja" ] && [ -f "$b/.padlock-cc" ] && [ "$(cat "$b/.padlock-cc")" != "$cc_identity" ]; then
  rm -rf "$b"
fi
if [ -f "$b/build.ninja" ] && [ ! -f "$b/.padlock-cc" ]; then
  echo "$cc_identity" >"$b/.padlock-cc"
fi
if [ ! -f "$b/build.ninja" ]; then
  mkdir -p "$b"
  (cd "$b" && "$work/src/configure" --target-list="$(IFS=,; echo "${targets[*]}")" \
    --without-default-features --enable-tcg --disable-user --disable-docs --disable-werror \
    --enable-fdt=system >configure.log 2>&1) || { tail -20 "$b/configure.log" >&2; exit 1; }
  echo "$cc_identity" >"$b/.padlock-cc"
fi
exes=()
for t in "${targets[@]}"; do exes+=("qemu-system-${t%-softmmu}"); done
nice -n 10 ninja -C "$b" -j"${PADLOCK_QEMU_JOBS:-2}" "${exes[@]}" >"$b/build.log" 2>&1 ||
  { tail -30 "$b/build.log" >&2; exit 1; }
for e in "${exes[@]}"; do strip -o "$out/bin/$e" "$b/$e"; done
