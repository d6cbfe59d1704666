#!/bin/sh
# A stand-in guest for console tests: print a recorded console log, then act as the
# guest's shell (so the session's real framing code runs), exit (as QEMU does after a
# panic with -no-reboot), fail (as QEMU does when it cannot start) or hang.
cat "$1"
case "$2" in
exit) exit 0 ;;
fail) exit 1 ;;
hang) sleep 600 ;;
esac
PS1='' exec sh
