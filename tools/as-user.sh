#!/usr/bin/env bash
# Run pytest with the farm as an unprivileged user: `make hostile-as-user` runs
# the suites that attack the sandbox this way, so that they hold whoever runs
# the farm, not only root (make test runs them as whoever runs it: root in CI).
#
# Run by root: the tests run as uid $FOLIOFARM_USER_UID (default 64000, a uid no
# account here should use) with a home and cache of its own in
# $FOLIOFARM_USER_HOME (default /var/tmp/foliofarm-user, kept between runs: a
# second run finds its kernels built), every capability dropped, no
# supplementary group, the environment emptied but for what the tests need.
# Run by a user: the tests run as that user, with its own cache.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$(id -u)" -ne 0 ]; then
	exec "$root/.venv/bin/python" -m pytest -p no:cacheprovider "$@"
fi
uid="${FOLIOFARM_USER_UID:-64000}"
home="${FOLIOFARM_USER_HOME:-/var/tmp/foliofarm-user}"
if [ "$uid" -eq 0 ]; then
	echo "as-user: FOLIOFARM_USER_UID is 0: give the uid of an unprivileged user" >&2
	exit 2
fi
as_user=(setpriv --reuid "$uid" --regid "$uid" --clear-groups)
# the system's PATH: root's may name folders the user cannot enter (pyenv's shims)
path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p "$home"
chown "$uid:$uid" "$home"
chmod 700 "$home"
if ! "${as_user[@]}" test -w "$home"; then
	echo "as-user: uid $uid cannot reach $home: give a FOLIOFARM_USER_HOME below folders every user may enter" >&2
	exit 2
fi
if ! "${as_user[@]}" test -r "$root/foliofarm/__init__.py" -a -x "$root/tools"; then
	echo "as-user: uid $uid cannot read the checkout $root: clone it where every user may read it" \
		"(not under a home of mode 700, such as /root)" >&2
	exit 2
fi
# The project's .venv serves when the user can run its interpreter; one made
# from a home the user cannot enter (pyenv's under /root) does not: then a
# venv of the user's own, from the system's python3, with the same pins.
python="$root/.venv/bin/python"
pythonpath=""
if ! "${as_user[@]}" env -i "$python" -c "import pytest, foliofarm" >/dev/null 2>&1; then
	sys_python="$("${as_user[@]}" env -i PATH="$path" sh -c 'command -v python3')"
	venv="$home/venv"
	stamp="$venv/requirements.sha256"
	want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)"
	if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
		echo "as-user: the project's .venv is not usable by uid $uid; making $venv from $sys_python"
		rm -rf "$venv"
		"${as_user[@]}" env -i PATH="$path" HOME="$home" "$sys_python" -m venv "$venv"
		"${as_user[@]}" env -i PATH="$path" HOME="$home" "$venv/bin/pip" install -q \
			--disable-pip-version-check --no-cache-dir -r "$root/requirements.txt"
		echo "$want" | "${as_user[@]}" tee "$stamp" >/dev/null
	fi
	python="$venv/bin/python"
	pythonpath="$root"
fi
cd "$root"
exec "${as_user[@]}" env -i PATH="$path" HOME="$home" LANG=C.UTF-8 TMPDIR=/tmp \
	PYTHONPATH="$pythonpath" FOLIOFARM_CACHE="$home/cache" \
	HYPOTHESIS_STORAGE_DIRECTORY="$home/hypothesis" \
	${FOLIOFARM_TEST_BUDGET_S:+FOLIOFARM_TEST_BUDGET_S="$FOLIOFARM_TEST_BUDGET_S"} \
	"$python" -m pytest -p no:cacheprovider --basetemp="$home/pytest" "$@"
