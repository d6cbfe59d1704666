#!/bin/sh
# The thpmaps disk's driver (/mnt/ffpy/thpmaps-run), run by exec-text as its hook:
# the tree's own tools/mm/thpmaps on one process's mappings, with Debian's
# Python from this disk (a chroot: the disk is a whole arm64 root), the block
# size of the cell's contpte mappings as its --cont. Each line it prints is
# prefixed "X thpmaps " for the dump exec-text appends it to.
#
# usage: thpmaps-run CONT_KB PID
root=$(dirname "$0")
cont_kb=$1
pid=$2
for d in proc sys dev; do
	grep -q " $root/$d " /proc/mounts || mount --bind "/$d" "$root/$d" || exit 1
done
start=$(cut -d' ' -f1 /proc/uptime)
chroot "$root" /usr/bin/python3 -B /thpmaps --pid "$pid" --cont "${cont_kb}K" --inc-empty \
	> /tmp/thpmaps.out 2>&1
rc=$?
end=$(cut -d' ' -f1 /proc/uptime)
sed 's/^/X thpmaps /' /tmp/thpmaps.out
echo "W thpmaps status=$rc seconds=$(awk "BEGIN { print $end - $start }")"
exit $rc
