#!/bin/sh
# A reproducer's driver (/mnt/ffrepro/run, beside it on its disk): runs it
# once, from a cold page cache, with the cell's filesystem mounted at MNT and
# its block device DEV, and writes what it did as a farm dump at DUMP: its
# exit status and seconds (figure lines), and each line it printed, stdout and
# stderr as it interleaved them, prefixed "X repro " (the first OUTPUT_CAP
# bytes; the host reads "key: number" lines among them as figures).
#
# usage: run DUMP FS MNT DEV PROGRAM [ARGS...]   (PROGRAM's folder holds
# "kind": sh or c, and may hold "seconds": its time limit; FFREPRO_WARM set:
# the page cache is left as it is)
OUTPUT_CAP=65536
dump=$1 fs=$2 mnt=$3 dev=$4 prog=$5
shift 5
# busybox has no getconf: the page size is the first KernelPageSize in smaps
psize=$(sed -n "s/^KernelPageSize: *\([0-9]*\) kB/\1/p" /proc/self/smaps | head -n 1)
[ -n "$FFREPRO_WARM" ] || { sync; echo 3 > /proc/sys/vm/drop_caches; }
start=$(cut -d' ' -f1 /proc/uptime)
# a shell reproducer is run by the guest's shell, a C one as the program it
# is; with a "seconds" file beside it, killed after that many seconds
limit=$(cat "$(dirname "$prog")/seconds" 2>/dev/null)
set -- "$prog" "$@"
[ "$(cat "$(dirname "$prog")/kind" 2>/dev/null)" = sh ] && set -- sh "$@"
[ -n "$limit" ] && set -- timeout -s KILL "$limit" "$@"
# the processes there before it: whatever else runs after it ended (what it
# left in the background, detached or double-forked) is stopped and killed
# before the dump is written, so nothing it started can replace the dump or
# the status it exited with (shell builtins only: no process of ours is new)
before=" $(cd /proc && echo [0-9]*) "
FF_MNT=$mnt FF_DEV=$dev FF_FS=$fs "$@" > /tmp/ffrepro.out 2>&1
rc=$?
end=$(cut -d' ' -f1 /proc/uptime)
for round in 1 2 3 4; do
	left=""
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		case "$before" in *" $p "*) continue ;; esac
		[ "$p" = "$$" ] || left="$left $p"
	done
	[ -n "$left" ] || break
	kill -STOP $left 2>/dev/null
	kill -KILL $left 2>/dev/null
	sleep 0.2
done
rm -f "$dump"
late=0
[ -n "$limit" ] && late=$(awk "BEGIN { print ($end - $start >= $limit) ? 1 : 0 }")
{
	echo "meta check=repro fs=$fs page_size=$((psize * 1024)) dev=$dev"
	echo "figure exit_status=$rc repro_seconds=$(awk "BEGIN { print $end - $start }")"
	[ "$late" = 1 ] && echo "figure timed_out=1 time_limit=$limit"
	# (before the output, whose last line, cut, may end without a newline)
	[ "$(wc -c < /tmp/ffrepro.out)" -gt "$OUTPUT_CAP" ] && echo "figure output_cut=1"
	head -c "$OUTPUT_CAP" /tmp/ffrepro.out | sed 's/^/X repro /'
} > "$dump"
rm -f /tmp/ffrepro.out
exit 0
