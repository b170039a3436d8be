#!/bin/bash
# Times the README's run command as a new admin meets it: in a Debian 12
# root without build tools, chrooted, from `git archive HEAD`. The endless
# `trimd --foreground` at its end is replaced by `trimd --dry-run`, which
# trims nothing. Needs root and debootstrap; reuses the boot tier's cached
# root (/var/cache/trimd-boot, minbase + systemd) when there is one.
#   scripts/time-run-command.sh   -> "run command (install + build): N s"
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
root=$(mktemp -d /var/tmp/trimd-first-run.XXXXXX)
log=$root.log

cleanup() {
  for m in proc sys dev; do umount -l "$root/$m" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT

cached=$(ls /var/cache/trimd-boot/root-bookworm-*.tar 2>/dev/null | head -n 1 || true)
if [ -n "$cached" ]; then
  tar -C "$root" --numeric-owner -xf "$cached"
else
  debootstrap --variant=minbase bookworm "$root" >/dev/null
fi
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/root/trimd"
git -C "$top" archive HEAD | tar -x -C "$root/root/trimd"

echo "packages before: $(chroot "$root" dpkg -l | grep -c '^ii'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
chroot "$root" sh -c 'cd /root/trimd && sh scripts/install-deps.sh &&
  cmake -S . -B build -DTRIMD_BUILD_TESTS=OFF -DTRIMD_BUILD_BENCH=OFF &&
  cmake --build build -j"$(nproc)" --target trimd' >"$log" 2>&1
end=$(date +%s)
echo "run command (install + build): $((end - start)) s; output in $log"
echo "packages after: $(chroot "$root" dpkg -l | grep -c '^ii'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
chroot "$root" sh -c 'cd /root/trimd && build/daemon/trimd --dry-run' | head -n 3
