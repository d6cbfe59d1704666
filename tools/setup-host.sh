#!/usr/bin/env bash
# Install the Debian packages foliofarm needs on the host (configs/host-packages.txt).
# Does nothing when all are installed; uses sudo when not run as root.
set -euo pipefail
list="$(dirname "$0")/../configs/host-packages.txt"
mapfile -t pkgs < <(sed -e 's/#.*//' "$list" | awk 'NF {print $1}')
missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup-host: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
