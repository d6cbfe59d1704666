#!/bin/sh
# Lint the CI definitions with their own tools:
#   tools/lint-ci.sh github    actionlint on ci/github/foliofarm.yml
#   tools/lint-ci.sh jenkins   ci/Jenkinsfile through Groovy's own parser (Jenkins'
#                              declarative linter needs a running Jenkins)
# FILE, if given as a second argument, is linted instead of the project's own.
# The tools are fetched once into $FOLIOFARM_CACHE/tools: actionlint with `go
# install` through the Go module proxy (Go 1.21 or newer), Groovy with Maven from
# Maven Central (Debian's maven and a JRE: configs/host-packages.txt).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tools=${FOLIOFARM_CACHE:-$HOME/.cache/foliofarm}/tools
ACTIONLINT=v1.7.12
GROOVY=4.0.24
mkdir -p "$tools"
case ${1:-} in
github)
	file=${2:-$root/ci/github/foliofarm.yml}
	bin=$tools/actionlint-$ACTIONLINT
	if [ ! -x "$bin" ]; then
		go=$(command -v go || true)
		[ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
		if [ -z "$go" ]; then
			echo "lint-ci: no Go toolchain to build actionlint with: install Go 1.21 or newer" >&2
			exit 3
		fi
		tmp=$(mktemp -d)
		GOBIN=$tmp GOPATH=$tools/gopath GOCACHE=$tools/gocache "$go" install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT"
		mv "$tmp/actionlint" "$bin"
		rmdir "$tmp"
	fi
	exec "$bin" -no-color "$file"
	;;
jenkins)
	file=${2:-$root/ci/Jenkinsfile}
	jar=$tools/groovy-$GROOVY.jar
	if [ ! -f "$jar" ]; then
		mvn -q -B dependency:copy -Dartifact="org.apache.groovy:groovy:$GROOVY" \
			-DoutputDirectory="$tools" -Dmdep.overWriteReleases=true
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cp "$file" "$tmp/Jenkinsfile.groovy"
	# Compiling checks the syntax; Jenkins' steps are method calls Groovy resolves later.
	java -cp "$jar" org.codehaus.groovy.tools.FileSystemCompiler -d "$tmp/out" "$tmp/Jenkinsfile.groovy"
	;;
*)
	echo "usage: tools/lint-ci.sh github|jenkins [FILE]" >&2
	exit 2
	;;
esac
