#!/usr/bin/env bash
# The build follows its configuration (git's GIT-CFLAGS): `make` then
# `make install DATADIR=...` recompiled nothing, so installed tools looked
# for tasks in the source tree. $(B)/KSCI-CFLAGS changes with DATADIR, the
# flags, CC or LDLIBS, and every object depends on it. One object (lib/task.o,
# which holds the tasks root) in a scratch build directory keeps this fast.
. "$(dirname "$0")/lib.sh"

if ! command -v make >/dev/null || ! command -v strings >/dev/null; then
	echo "# make or strings missing: skipped"
	done_testing
	exit 0
fi
b=$T/b
obj=$b/obj/lib/task.o
build() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" B="$b" "$@" "$obj" >"$T/make.out" 2>&1; }
stamp() { stat -c %Y.%y "$obj" 2>/dev/null; }

ok "build with DATADIR=/ksci-d1" build DATADIR=/ksci-d1
expect_eq "the object holds the first DATADIR" 1 "$(strings "$obj" | grep -c '^/ksci-d1/tasks$')"
s1=$(stamp)
sleep 1
ok "build again, same configuration" build DATADIR=/ksci-d1
expect_eq "same configuration: nothing recompiled" "$s1" "$(stamp)"
ok "build with DATADIR=/ksci-d2 (recompiled nothing)" build DATADIR=/ksci-d2
expect_eq "the object holds the new DATADIR" "0 1" \
	"$(strings "$obj" | grep -c '^/ksci-d1/tasks$') $(strings "$obj" | grep -c '^/ksci-d2/tasks$')"
expect_eq "KSCI-CFLAGS names the new DATADIR" 1 "$(grep -c 'KSCI_DATADIR=.*/ksci-d2' "$b/KSCI-CFLAGS")"
s2=$(stamp)
sleep 1
ok "build with other CFLAGS" build DATADIR=/ksci-d2 CFLAGS=-O1
[ "$s2" != "$(stamp)" ]
_report $? "other CFLAGS: recompiled"

# install-put-data-elsewhere: install copied data/ to $(PREFIX)/share/ksci
# whatever DATADIR said, while the tools looked in DATADIR.
inst() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j2 -C "$ROOT" B="$T/bi" DESTDIR="$T/root" "$@" install >"$T/inst.out" 2>&1; }
ok "make install PREFIX=/opt/k" inst PREFIX=/opt/k
expect_eq "install-put-data-elsewhere: the tools look in PREFIX/share/ksci, where the data went" "1 yes" \
	"$(strings "$T/root/opt/k/bin/kcompile" | grep -c '^/opt/k/share/ksci/tasks$') $([ -f "$T/root/opt/k/share/ksci/tasks/matmul/task.json" ] && echo yes)"
ok "make install PREFIX=/opt/k DATADIR=/srv/ksci" inst PREFIX=/opt/k DATADIR=/srv/ksci
expect_eq "install-put-data-elsewhere: the tools look in DATADIR, where the data went" "1 yes" \
	"$(strings "$T/root/opt/k/bin/kcompile" | grep -c '^/srv/ksci/tasks$') $([ -f "$T/root/srv/ksci/tasks/matmul/task.json" ] && echo yes)"
done_testing
