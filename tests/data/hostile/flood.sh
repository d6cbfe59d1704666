#!/bin/sh
# a reproducer that floods: 200 MB on its stdout, 8 MB of lines on the console
head -c 209715200 /dev/zero | tr '\0' 'y' | fold -w 100
head -c 8388608 /dev/zero | tr '\0' 'z' | fold -w 100 > /dev/console
echo "flooded: 1"
