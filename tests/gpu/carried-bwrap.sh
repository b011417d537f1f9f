#!/bin/sh
# tests/gpu/carried-bwrap.sh DEBDIR — for GPU machines where nothing can be
# installed: unpack Debian's bubblewrap and its libraries (apt-get download
# bubblewrap libcap2 libselinux1 libpcre2-8-0 into DEBDIR, on a machine with
# the archive) into /tmp/bw and print the path of a bwrap that uses them;
# run candidates with KSCI_BWRAP set to it. The libraries are bwrap's alone:
# the sandbox it makes starts from an empty environment.
set -eu
case ${1:-} in -h | --help | '') echo "usage: tests/gpu/carried-bwrap.sh DEBDIR" >&2; exit 2 ;; esac
mkdir -p /tmp/bw
for f in "$1"/*.deb; do dpkg -x "$f" /tmp/bw; done
cat >/tmp/bw/bwrap <<'SH'
#!/bin/sh
LD_LIBRARY_PATH=/tmp/bw/usr/lib/x86_64-linux-gnu:/tmp/bw/lib/x86_64-linux-gnu exec /tmp/bw/usr/bin/bwrap "$@"
SH
chmod 755 /tmp/bw/bwrap
echo /tmp/bw/bwrap
