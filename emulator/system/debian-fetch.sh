#!/usr/bin/env bash
# Fetches the Debian kernel `padlock-emu system --debian-kernel ARCH --debian-suite SUITE`
# boots, at the version pinned in emulator/system/debian-kernels.txt, with `apt-get download`
# into PADLOCK_DEPS_CACHE/debian-ARCH (docs/system.md, "Debian's suites"), and prints the
# .deb files, one a line. Nothing is installed.
#
#   debian-fetch.sh SUITE ARCH
#
# bookworm comes from the host's apt sources. Any other suite gets an apt configuration of
# its own in PADLOCK_DEPS_CACHE/apt/SUITE (its sources list, preferences, package lists and
# no dpkg status), read instead of the host's: the host's apt never sees the suite, so no
# host package can be upgraded from it. Its package lists are fetched only when a pinned
# package is missing from the cache.
set -euo pipefail
[ $# = 2 ] || { sed -n 's/^#   //p' "$0" >&2; exit 2; }
suite=$1
arch=$2
data=$(cd "$(dirname "$0")" && pwd)/debian-kernels.txt
root=${PADLOCK_DEPS_CACHE:-$HOME/.cache/padlock-emu}
cache=$root/debian-$arch
mkdir -p "$cache"

pins=$(awk -v s="$suite" -v a="$arch" '!/^#/ && $1 == s && $2 == a {print $3 "=" $4}' "$data")
if [ -z "$pins" ]; then
  known=$(awk -v a="$arch" '!/^#/ && NF && $2 == a {print $1}' "$data" | uniq | paste -sd' ')
  echo "debian-fetch.sh: no $arch kernel pinned for suite '$suite' (pinned: $known)" >&2
  exit 2
fi

if [ "$suite" != bookworm ]; then
  dir=$root/apt/$suite
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/empty"
  : >>"$dir/status"
  echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "${PADLOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian} $suite main" >"$dir/sources.list"
  # Never a candidate for installation, even through this configuration: only the pinned
  # versions are ever asked for, by version (apt_preferences(5): priority < 0).
  printf 'Package: *\nPin: release n=%s\nPin-Priority: -1\n' "$suite" >"$dir/preferences"
  # Valid-Until is not checked: a mirror frozen at a date (a snapshot) serves Release files
  # past it; the signature still is, and the pinned version names the package exactly.
  cat >"$dir/apt.conf" <<EOF
Dir::Etc::main "/dev/null";
Dir::Etc::Parts "$dir/empty";
Dir::Etc::SourceList "$dir/sources.list";
Dir::Etc::SourceParts "$dir/empty";
Dir::Etc::Preferences "$dir/preferences";
Dir::Etc::PreferencesParts "$dir/empty";
Dir::State::Lists "$dir/lists";
Dir::State::status "$dir/status";
Dir::Cache "$dir/cache";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
Acquire::Languages "none";
Acquire::Check-Valid-Until "false";
EOF
  export APT_CONFIG=$dir/apt.conf
fi

need=()
files=()
for pin in $pins; do
  name=${pin%%=*}
  version=${pin#*=}
  file=$cache/${name}_${version//:/%3a}_$arch.deb
  files+=("$file")
  [ -f "$file" ] || need+=("$name:$arch=$version")
done
if [ ${#need[@]} -gt 0 ]; then
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if [ -n "${APT_CONFIG:-}" ] && ! apt-cache show "${need[@]}" >/dev/null 2>&1; then
    apt-get update -q >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  fi
  if ! (cd "$cache" && apt-get download -q "${need[@]}") >"$log" 2>&1; then
    cat "$log" >&2
    echo "debian-fetch.sh: apt-get download ${need[*]} failed; a pinned version may have" \
      "left the mirror (see apt-cache policy NAME; pins: emulator/system/debian-kernels.txt)" >&2
    exit 1
  fi
fi
printf '%s\n' "${files[@]}"
