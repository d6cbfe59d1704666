#!/bin/sh
# One farm check in a guest no host drives (a LAVA job, foliofarm/lava/; one
# under virtme-ng, foliofarm/boot/vng.py):
#   lava-check NAME
# runs checks/NAME.sh from this disk (the command the host would have sent,
# written by foliofarm/boot/framed.py) and prints on the console, framed so that
# the host can find it in the job's log among the kernel's messages:
#   FOLIOFARM-BEGIN NAME
#   ...what the program printed...
#   FOLIOFARM-END NAME status=RC taint=BEFORE,AFTER seconds=S
#   FOLIOFARM-FILE NAME size=BYTES md5=MD5     (the dump or KTAP file it left, if any:
#   ...base64 of gzip of it...                  checks/NAME.out names it)
#   FOLIOFARM-FILE-END NAME
#   FOLIOFARM-RESULT NAME pass|fail            (ran and exited 0, or not)
# The farm judges the measurement afterwards (foliofarm report); the RESULT
# line is LAVA's test case: did the program run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
name=$1
script=$here/checks/$name.sh
if [ ! -r "$script" ]; then
	echo "lava-check: no check $name on this disk"
	exit 2
fi
before=$(cat /proc/sys/kernel/tainted)
t0=$(date +%s)
echo "FOLIOFARM-BEGIN $name"
sh "$script" 2>&1
rc=$?
t1=$(date +%s)
echo "FOLIOFARM-END $name status=$rc taint=$before,$(cat /proc/sys/kernel/tainted) seconds=$((t1 - t0))"
if [ -r "$here/checks/$name.out" ]; then
	out=$(cat "$here/checks/$name.out")
	if [ -r "$out" ]; then
		echo "FOLIOFARM-FILE $name size=$(stat -c %s "$out") md5=$(md5sum "$out" | cut -d' ' -f1)"
		gzip -1 -c "$out" | base64
		echo "FOLIOFARM-FILE-END $name"
	fi
fi
if [ $rc -eq 0 ]; then
	echo "FOLIOFARM-RESULT $name pass"
else
	echo "FOLIOFARM-RESULT $name fail"
fi
