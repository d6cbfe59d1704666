#!/bin/sh
# The kernel's mm selftests in the guest:
#   mm-selftests CATEGORIES TIMEOUT DIR HUGETLB_MB [LEFT_OUT [PART [AT_ONCE [TOUCHED [NOT_REACHED]]]]]
#   CATEGORIES  run_vmtests.sh -t list ("mmap mremap cow ..."), or "all"
#   TIMEOUT     seconds each test may run before it is killed
#   DIR         a writable directory on the cell's filesystem type for the tests
#               that take one (khugepaged all:file, split_huge_page_test), or -
#               (then the tests that take one report SKIP)
#   HUGETLB_MB  memory reserved as hugetlb pages of the default size first
#   LEFT_OUT    programs of those categories reported as SKIP instead of run
#               (space-separated names: the slowest under TCG), or -
#   PART        which tests run here: all (the default); page, those that take
#               no filesystem folder (run once per page size, in a guest with no
#               cell filesystem attached), but those of AT_ONCE; race, those of
#               AT_ONCE that take no folder (once per page size, in a guest whose
#               vCPUs run truly at once: a host thread each under TCG); touched,
#               those of TOUCHED that take no folder and are not of AT_ONCE (a
#               series' touched tests, first, in a guest of their own; page
#               then leaves them out); cell,
#               those run_vmtests.sh gives the cell's folder (run in each cell).
#               The others are reported as SKIP "elsewhere: ...", which the host
#               leaves out when it puts the parts together.
#   AT_ONCE     programs whose threads must run at the same time (one spins
#               waiting for another), space-separated, or -
#   TOUCHED     programs a series touches (foliofarm/intake/touched.py), or -
#   NOT_REACHED tests the series cannot reach (foliofarm/coverage/select.py: on the
#               base's coverage map, none of the functions it changes ran in
#               them), by run_vmtests.sh's names, each between '|' ("|mremap_test|
#               ksm_tests -U|"): reported as SKIP "not reached", not run; or -
# The selftests disk (mounted at /mnt/ffmm) holds the programs built from the
# tree under test, run_vmtests.sh and bash. The programs stay there; the work
# folder in tmpfs links to them (run_vmtests.sh mounts hugetlbfs at ./huge).
# The output goes to the console (a crash leaves what was printed) and to
# /tmp/out/mm-selftests.ktap, which the host reads whole.
set -u
cats=$1 per_test=$2 dir=$3 hugetlb_mb=$4 left_out=${5:--} part=${6:-all} at_once=${7:--} touched=${8:--}
not_reached=${9:--}
case $part in all|page|race|cell|touched) ;;
*) echo "mm-selftests: PART is all, page, race, cell or touched, not $part"; exit 2 ;; esac
st=/mnt/ffmm
out=/tmp/out/mm-selftests.ktap
if [ ! -x "$st/bin/run_vmtests.sh" ] || [ ! -x "$st/bash" ]; then
	echo "mm-selftests: the selftests disk is not mounted at $st"
	exit 2
fi
ln -sf "$st/bash" /bin/bash
work=/tmp/mm
rm -rf "$work"
mkdir -p "$work"
for f in "$st"/bin/*; do ln -s "$f" "$work/"; done
# run_vmtests.sh with each test under a deadline: its one line that runs a
# test, ("$@" 2>&1), runs it through ff_timed instead, which reports a kill
# by the deadline and the test's time in its output.
rm "$work/run_vmtests.sh"
{
	head -n 1 "$st/bin/run_vmtests.sh"
	cat <<'EOF'
ff_timed() {
	local prog=${1##*/}
	[ "$prog" = bash ] || [ "$prog" = sh ] && prog=${2##*/}
	case " $FF_LEFT_OUT " in *" $prog "*)
		echo "foliofarm: SKIP: left out of this run (minutes under TCG): --mm-selftests with its category runs it"
		return 4 ;;
	esac
	# The cell's filesystem reaches a test only as the folder run_vmtests.sh
	# gives it (/tmp/mm-fs, bound to the cell's scratch filesystem): a test
	# without it runs in tmpfs and on anonymous memory, the same in every cell
	# of a page size.
	local takes_fs=no
	case " $* " in *" /tmp/mm-fs "*) takes_fs=yes ;; esac
	case $FF_PART/$takes_fs in page/yes|race/yes|touched/yes)
		echo "foliofarm: SKIP: elsewhere: takes the cell's filesystem, runs in each cell's boot"
		return 4 ;;
	esac
	if [ "$FF_PART" = cell ] && [ $takes_fs = no ]; then
		echo "foliofarm: SKIP: elsewhere: takes no filesystem, runs once per page size"
		return 4
	fi
	local at_once=no
	case " $FF_AT_ONCE " in *" $prog "*) at_once=yes ;; esac
	if [ "$FF_PART" = page ] && [ $at_once = yes ]; then
		echo "foliofarm: SKIP: elsewhere: needs its threads at once, runs in a guest with a host thread per vCPU"
		return 4
	fi
	if [ "$FF_PART" = race ] && [ $at_once = no ]; then
		echo "foliofarm: SKIP: elsewhere: runs in the page size's guest with its vCPUs in turns"
		return 4
	fi
	local touched=no
	case " $FF_TOUCHED " in *" $prog "*) touched=yes ;; esac
	if [ "$FF_PART" = page ] && [ $touched = yes ] && [ $at_once = no ]; then
		echo "foliofarm: SKIP: elsewhere: a test the series touches, run first in a guest of its own"
		return 4
	fi
	if [ "$FF_PART" = touched ] && { [ $touched = no ] || [ $at_once = yes ]; }; then
		echo "foliofarm: SKIP: elsewhere: runs in the page size's guests, after the tests the series touches"
		return 4
	fi
	# where it would run: a test the series cannot reach is not run
	local name=$(echo "$*" | sed -e 's/^\(bash \)\?\.\///')
	case "$FF_NOT_REACHED" in *"|$name|"*)
		echo "foliofarm: SKIP: not reached: on the base's coverage map it ran none of the functions the series changes"
		return 4 ;;
	esac
	case $takes_fs in yes)
		if [ -z "$FF_FS_DIR" ]; then
			echo "foliofarm: SKIP: no writable filesystem of the cell's type (EROFS is read-only)"
			return 4
		fi ;;
	esac
	local t0=$(date +%s)
	[ -z "$FF_GCOV" ] || /bin/ffgcov reset
	# The test in a process group of its own, killed whole at its deadline:
	# a script's background children (charge_reserved_hugetlb.sh's
	# `write_hugetlb_memory.sh | tee &`) would otherwise outlive it holding
	# run_vmtests.sh's pipe, and the part would wait for them to its end.
	# The watchdog in a group of its own too, its output nowhere, so that
	# neither it nor its sleep holds the pipe once the test ends.
	setsid "$@" &
	local pid=$!
	setsid sh -c "sleep $FF_TEST_TIMEOUT; kill -KILL -$pid" </dev/null >/dev/null 2>&1 &
	local dog=$!
	wait $pid 2>/dev/null
	local rc=$? took=$(( $(date +%s) - t0 ))
	kill -KILL -- -$dog 2>/dev/null
	wait $dog 2>/dev/null
	if [ -n "$FF_GCOV" ]; then
		# a coverage kernel: what this test executed, under run_vmtests.sh's name for it
		local n=$(cat /tmp/out/gcov/index 2>/dev/null | wc -l)
		/bin/ffgcov save "st-$((n + 1))" "$name" >/dev/null 2>&1
	fi
	if [ $rc -eq 137 ] && [ $took -ge "$FF_TEST_TIMEOUT" ]; then
		echo "foliofarm: TIMEOUT: killed after ${FF_TEST_TIMEOUT}s"
	fi
	echo "foliofarm: took ${took}s"
	return $rc
}
EOF
	tail -n +2 "$st/bin/run_vmtests.sh" | sed 's/("\$@" 2>&1)/(ff_timed "$@" 2>\&1)/'
} > "$work/run_vmtests.sh"
chmod 755 "$work/run_vmtests.sh"
if ! grep -q 'ff_timed "\$@"' "$work/run_vmtests.sh"; then
	echo "mm-selftests: run_vmtests.sh of this tree has no (\"\$@\" 2>&1) line to put a deadline on"
	exit 3
fi
# A coverage kernel (configs/kernels/coverage.config): each test's counters
# saved by rootfs/ffgcov as it ends (the host's coverage map, foliofarm/coverage/)
FF_GCOV=
[ -e /sys/kernel/debug/gcov/reset ] && [ -x /bin/ffgcov ] && FF_GCOV=1
export FF_GCOV FF_TEST_TIMEOUT=$per_test FF_LEFT_OUT=$left_out FF_PART=$part FF_AT_ONCE=$at_once FF_TOUCHED=$touched \
	FF_NOT_REACHED=$not_reached
# The folder for the tests that write files (khugepaged all:file,
# split_huge_page_test): on the cell's own filesystem where it has a scratch one;
# where it has none (EROFS is read-only) those tests report SKIP, as tmpfs would
# test shmem instead; at one path in every cell, so that the
# tests named after it compare across runs (left unset, run_vmtests.sh would
# make one of a random name).
mkdir -p /tmp/mm-fs
FF_FS_DIR=
if [ "$dir" != - ] && mkdir -p "$dir/ffmm" 2>/dev/null && mount -o bind "$dir/ffmm" /tmp/mm-fs; then
	FF_FS_DIR=$dir
fi
export FF_FS_DIR
export SPLIT_HUGE_PAGE_TEST_XFS_PATH=/tmp/mm-fs
: > "$out"
# Hugetlb pages of the default size: the host reserves them on the kernel
# command line (hugepages=N), as a 512M page (64K base pages) needs a free,
# aligned block of the buddy allocator's highest order that a guest minutes
# into its checks rarely has; where the boot got fewer (or the guest was
# started without it), the rest is reserved now, with the page cache dropped
# and memory compacted first. How many there are goes in the output (a test
# that finds too few says so in its SKIP).
if [ "$hugetlb_mb" -gt 0 ]; then
	hp_kb=$(sed -n 's/^Hugepagesize: *\([0-9]*\) kB/\1/p' /proc/meminfo)
	if [ -n "$hp_kb" ]; then
		n=$(( hugetlb_mb * 1024 / hp_kb ))
		[ "$n" -ge 1 ] || n=1
		boot=$(cat /proc/sys/vm/nr_hugepages)
		if [ "$boot" -lt "$n" ]; then
			sync
			echo 3 > /proc/sys/vm/drop_caches
			echo 1 > /proc/sys/vm/compact_memory 2>/dev/null
			echo "$n" > /proc/sys/vm/nr_hugepages
		fi
		got=$(cat /proc/sys/vm/nr_hugepages)
		echo "# foliofarm: hugetlb: $got of $n pages of ${hp_kb} kB reserved ($boot at boot)" | tee -a "$out"
	fi
fi
echo "# foliofarm: each test's deadline: ${per_test}s (the host's, paced by how slow this guest runs)" | tee -a "$out"
[ "$cats" = all ] && set -- || set -- -t "$cats"
cd "$work"
/bin/bash ./run_vmtests.sh "$@" 2>&1 | tee -a "$out"
cd /
umount /tmp/mm-fs 2>/dev/null
echo 0 > /proc/sys/vm/nr_hugepages
# run_vmtests.sh's own status (1 for a failure, 4 for a skip) is not the
# script's: the results are in the KTAP
exit 0
