#!/bin/sh
# The flaky-base control (docs/user-guide.md, "Flaky by measurement"): a base kernel whose
# rmap migrate.ksm tests fail in about one boot in four (a coin tossed once per
# boot), measured until its history holds both a pass and a failure; then a
# series that makes them fail in every boot, judged against it: a confirmed
# regression after as many series boots as the base's rate asks for. Every
# run is 64K, ext4, rmap alone (seconds per boot); the two kernels build
# with ccache warm from 7.3's builds (minutes each, once).
#   tests/controls/flaky-base/run.sh [RESULTS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
ff="$root/.venv/bin/foliofarm"
results=${1:-$root/results/flaky-base}
tree=${FOLIOFARM_CACHE:-$HOME/.cache/foliofarm}/controls/flaky-base
src=$("$root/.venv/bin/python" -c 'from foliofarm.intake import source; from foliofarm.paths import cache_dir; print(source.resolve("debian:7.3", cache_dir()).tree)')
if [ ! -d "$tree/.git" ]; then
    rm -rf "$tree"
    git clone -q "$src" "$tree"      # its own objects: the sandboxed git am sees the tree alone
    git -C "$tree" -c user.name=foliofarm -c user.email=controls@foliofarm.invalid am -q "$here/base-ksm-migration-refused-one-boot-in-four.patch"
fi
cell="--page-sizes 64k --fs ext4 --checks mm-selftests --mm-selftests rmap"
# the base, booted two at a time until its history has seen rmap pass and fail
for i in 1 2 3 4 5 6 7 8 9 10; do
    "$ff" run --kernel "$tree" $cell --noise --fresh --results "$results/base" || true
    # its results.json lists what the kernel's history marks flaky
    if "$root/.venv/bin/python" -c 'import json, sys; d = json.load(open(sys.argv[1]))
sys.exit(0 if any("migrate.ksm" in f["result"] for f in d.get("flaky", [])) else 1)' "$results/base/latest/results.json"; then break; fi
done
"$ff" flaky --page-size 64k
# the series that breaks it for real: exit 1, a confirmed regression
rc=0
"$ff" run --kernel "$tree" $cell --series "$here/series-ksm-migration-never.patch" --results "$results/series" || rc=$?
echo "series run: exit $rc (1 wanted: a confirmed regression)"
