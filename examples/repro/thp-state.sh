#!/bin/sh
# A shell reproducer for `foliofarm run --repro`: the THP settings the cell's
# kernel booted with, and the page size, as the guest sees them.
cat /sys/kernel/mm/transparent_hugepage/enabled
for f in /sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled; do
	echo "$f: $(cat "$f")"
done
echo "page_kb: $(( $(sed -n 's/^KernelPageSize: *\([0-9]*\) kB/\1/p' /proc/self/smaps | head -n 1) ))"
