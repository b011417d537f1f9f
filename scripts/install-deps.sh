#!/bin/sh
# scripts/install-deps.sh — install, as root on Debian 12, whatever ksci needs
# to build, run its demo and run all its tests. Installs only what is missing,
# so it is cheap to run again. The CUDA toolkit is not a Debian package: it is
# used from $CUDA (default /usr/local/cuda) when present and skipped otherwise.
set -eu
pkgs="build-essential pkg-config libjansson-dev libseccomp-dev zlib1g-dev libcurl4-openssl-dev
jq parallel shellcheck python3 gnuplot-nox graphviz chromium openssh-server bubblewrap
openssh-client hipcc iproute2 procps slurm-wlm munge"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: missing:$missing (run as root to install)" >&2
		exit 1
	fi
	echo "install-deps: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
