#!/bin/sh
# The steps both CI definitions run (ci/github/foliofarm.yml, ci/Jenkinsfile), so
# that each is one line there, takes its parameters from the environment, never
# from text pasted into a shell command, and can be run here as it runs there
# (tests/test_ci.py).
#
#   ci/steps.sh unit                unit tests
#   ci/steps.sh page                one page size's cells; PAGE=4k|16k|64k
#   ci/steps.sh report              one report over the shards in shards/*/
#
# Environment: KERNEL (default debian:7.3), SERIES (an mbox or patch directory in
# the checkout; empty: a plain run), EACH_COMMIT (non-empty: --each-commit),
# FOLIOFARM_DEBIAN_MIRROR (the Debian archive, where the machine's apt sources
# name none), FOLIOFARM_CI_CHECKS and FOLIOFARM_CI_SELFTESTS (--checks and
# --mm-selftests: default every check, the default categories), RESULTS (default results), SHARD (default shard: where page copies
# its results as real files for the CI server to keep), SHARDS and REPORT (default
# shards and report: where report finds the shards and writes the merged report).
set -eu
cd "$(dirname "$0")/.."
stage=${1:-}
case $stage in
unit)
	exec make unit
	;;
page)
	: "${PAGE:?set PAGE to 4k, 16k or 64k}"
	make setup
	set -- --kernel "${KERNEL:-debian:7.3}" --page-sizes "$PAGE" --results "${RESULTS:-results}"
	if [ -n "${SERIES:-}" ]; then set -- "$@" --series "$SERIES"; fi
	if [ -n "${EACH_COMMIT:-}" ]; then set -- "$@" --each-commit; fi
	if [ -n "${FOLIOFARM_CI_CHECKS:-}" ]; then set -- "$@" --checks "$FOLIOFARM_CI_CHECKS"; fi
	if [ -n "${FOLIOFARM_CI_SELFTESTS:-}" ]; then set -- "$@" --mm-selftests "$FOLIOFARM_CI_SELFTESTS"; fi
	rc=0
	.venv/bin/foliofarm run "$@" || rc=$?
	# The results as real files (RESULTS/latest is a symlink an upload would skip).
	shard=${SHARD:-shard}
	rm -rf "$shard"
	mkdir -p "$shard"
	if [ -e "${RESULTS:-results}/latest" ]; then cp -rL "${RESULTS:-results}/latest/." "$shard/"; fi
	exit $rc
	;;
report)
	make setup
	set --
	for d in "${SHARDS:-shards}"/*/; do
		if [ -f "$d/results.json" ]; then set -- "$@" "$d"; fi
	done
	if [ $# -eq 0 ]; then echo "ci/steps.sh report: no shard with a results.json under ${SHARDS:-shards}/" >&2; exit 3; fi
	exec .venv/bin/foliofarm report --out "${REPORT:-report}" "$@"
	;;
*)
	echo "usage: ci/steps.sh unit|page|report" >&2
	exit 2
	;;
esac
