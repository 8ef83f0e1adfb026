#!/bin/busybox sh
# The test init of system mode's initramfs (docs/system.md): loads the PadLock modules and
# AF_ALG, prints what the kernel says about them as PADLOCK-* lines, then powers off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "PADLOCK-KERNEL $(uname -r)"
echo "PADLOCK-CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
# What the kernel made of the model's CPUID (arch/x86/kernel/cpu/common.c): the vendor
# string (quoted: Zhaoxin's has spaces), family, model, stepping.
echo "PADLOCK-CPUID '$(grep -m1 '^vendor_id' /proc/cpuinfo | sed 's/^[^:]*: //')'$(
  for f in 'cpu family' model stepping; do grep -m1 "^$f[[:space:]]*:" /proc/cpuinfo | sed 's/.*: / /'; done | tr -d '\n')"
echo "PADLOCK-FLAGS$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(rng|rng_en|ace|ace_en|ace2|ace2_en|phe|phe_en|pmm|pmm_en)$' | tr '\n' ' ' |
  sed 's/^/ /')"
for m in $(cat /modules.order); do
  if err=$(insmod "/lib/modules/$m.ko" 2>&1); then
    echo "PADLOCK-MODULE $m loaded"
    mod=$(echo "$m" | tr - _)
    # E: an unsigned module, such as one built with emulator/system/debian-kbuild.sh
    taint=$(cat "/sys/module/$mod/taint" 2>/dev/null)
    echo "PADLOCK-TAINT $m ${taint:--}"
    # Where its code is: the host names the module's functions from its .ko (docs/system.md)
    for s in /sys/module/"$mod"/sections/.text*; do
      [ -f "$s" ] && echo "PADLOCK-SECTION $mod ${s##*/} $(cat "$s")"
    done
  else
    echo "PADLOCK-MODULE $m refused: ${err##*: }"
  fi
done
# The crypto manager may still be testing a driver when insmod returns (seen on a loaded
# host with the 6.12 kernel): each test runs in a kernel thread of its own (cryptomgr_test).
# Until the test ends, /proc/crypto says "selftest : unknown", as it does for a failed test;
# wait for the threads (at most a minute), so that a slow host does not turn a pass into
# "unknown".
n=0
while [ $n -lt 60 ] && grep -qs '^cryptomgr_test' /proc/[0-9]*/comm; do
  sleep 1
  n=$((n + 1))
done
# The kernel's other SHA-1/SHA-256 drivers too (PADLOCK-OTHER): from 7.x, lib/crypto's
# SHA-256 runs REP XSHA256 on Zhaoxin's family 7 (sha256_blocks_phe) behind "sha256-lib".
awk '/^name/ {n = $3} /^driver/ {d = $3} /^selftest/ {s = $3}
     /^$/ {if (d ~ /padlock/) print "PADLOCK-SELFTEST " d " " n " " s;
           else if (n == "sha1" || n == "sha256") print "PADLOCK-OTHER " d " " n " " s;
           d = ""}' /proc/crypto
[ -x /afalg_check ] && /afalg_check /afalg_vectors.txt
# A driver that failed its self-tests is refused to every user (ELIBBAD), which hides what
# else it does wrong. Its module is loaded once more with the crypto manager's tests off
# (crypto/testmgr.c's notests, writable at run time) and the known answers run through it:
# PADLOCK-UNTESTED lines, the AF_ALG ones as above (docs/system.md, "Output").
failed=$(awk '/^driver/ {d = $3} /^module/ {m = $3} /^selftest/ && d ~ /padlock/ &&
              $3 != "passed" {print m}' /proc/crypto | sort -u)
if [ -n "$failed" ] && [ -w /sys/module/cryptomgr/parameters/notests ]; then
  echo 1 >/sys/module/cryptomgr/parameters/notests
  for mod in $failed; do
    m=$(echo "$mod" | tr _ -)
    if rmmod "$mod" && insmod "/lib/modules/$m.ko"; then
      echo "PADLOCK-UNTESTED $m loaded"
      for s in /sys/module/"$mod"/sections/.text*; do
        [ -f "$s" ] && echo "PADLOCK-SECTION $mod ${s##*/} $(cat "$s")"
      done
    fi
  done
  [ -x /afalg_check ] && /afalg_check /afalg_vectors.txt | sed 's/^/PADLOCK-UNTESTED /'
  echo 0 >/sys/module/cryptomgr/parameters/notests
fi
if [ -c /dev/hwrng ] && [ "$(cat /sys/class/misc/hw_random/rng_current)" = via ]; then
  echo "PADLOCK-HWRNG $(dd if=/dev/hwrng bs=16 count=2 2>/dev/null | od -An -tx1 | tr -d ' \n')"
fi
# RDTSC around REP XCRYPTECB of N blocks: the model's cycles reach the TSC (docs/system.md)
[ -x /tsc_xcrypt ] && /tsc_xcrypt 1 2 3 4 16 64 255 1024
[ -x /extra-test ] && /extra-test
echo PADLOCK-DONE
poweroff -f
