#!/usr/bin/env bash
# t44-nvcc-steps: kcompile builds the cuda back end by running nvcc's own
# steps, taken from its --dryrun listing, as a script that runs the host half
# and the device half at once (lib/nvcc_steps.c, nvcc_plan in lib/compile.c).
# No CUDA is needed: $KSCI_NVCC is a fake nvcc whose listing names fake tools
# (cudafe++, cicc, ptxas, fatbinary, nvlink, and `fakecc` as the host
# compiler); they log what they were given and make the files the next step
# reads.  Concurrency is checked without timing: each of a pair (cudafe++ and
# cicc, then ptxas and the host compile) leaves a marker and waits up to 60 s
# for the other's, so run one after another the first fails ("ran alone").
# - nvcc-steps-halves-run-at-once, nvcc-steps-module-id-shared: parallel by
#   default; both front ends read the one module id the script writes first,
#   cudafe++ without --gen_module_id_file, fatbinary without its embedded copy.
# - nvcc-steps-log-in-nvcc-order: the compile log reads as nvcc's would.
# - nvcc-steps-host-error-reported-once: a front end's error is in the log
#   once, and the other half's output does not follow it.
# - nvcc-steps-failed-half-waits-for-the-other: the script ends only when
#   both halves have (the other is not killed with it).
# - nvcc-steps-device-link-early: the device link beside the halves, on an
#   object without device code; after them, on the joined object, where the
#   host object may have device code of its own, where the early one failed,
#   and with KSCI_NVCC_DLINK=joined (compile.steps_dlink, _why).
# - nvcc-steps-killed-step-is-transient: a step killed by a signal is the
#   machine's failure, not cached.
# - KSCI_NVCC_STEPS=serial, a listing of another shape, a --dryrun that
#   fails, and a build directory with a space in its path: nvcc alone where
#   it must be (compile.steps_why says why), and the record ok either way.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
unset KSCI_NVCC_STEPS FAKE_HANDSHAKE FAKE_FAIL FAKE_KILL FAKE_SHAPE
mkdir -p bin state

# One script for every fake tool, by the name it is called as.  Each says
# what it does on stderr ("TOOL: what"), in the order log too.
{
	printf '#!/usr/bin/env bash\nstate=%q\n' "$T/state"
	cat <<'EOF'
me=${0##*/}
say() { printf '%s: %s\n' "$me" "$*" >&2; }
die() { say "$*"; exit 1; }
opt() { # OPT ARGS...: the word after OPT
	local want=$1
	shift
	while [ $# -gt 1 ]; do [ "$1" = "$want" ] && { printf '%s' "$2"; return; }; shift; done
}
eqopt() { # PREFIX ARGS...: the rest of the word that starts with PREFIX
	local want=$1 a
	shift
	for a; do case $a in "$want"*) printf '%s' "${a#"$want"}"; return ;; esac; done
}
has() { local want=$1 a; shift; for a; do [ "$a" = "$want" ] && return 0; done; return 1; }
ending() { local suf=$1 a; shift; for a; do case $a in *"$suf") printf '%s' "$a"; return 0 ;; esac; done; return 1; }
need() { [ -e "$1" ] || die "missing input $1"; }
step() { printf '%s: %s\n' "$me" "$1" >>"$state/order.log"; say "$1"; }
handshake() { # MINE THEIRS: only with FAKE_HANDSHAKE=1
	[ "${FAKE_HANDSHAKE:-}" = 1 ] || return 0
	: >"$state/$1.started"
	local end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		[ -e "$state/$2.started" ] && return 0
		sleep 0.05
	done
	die "ran alone: $2 never started while $1 waited"
}
modid() { local f; f=$(opt --module_id_file_name "$@"); [ -s "$f" ] || die "no module id in '$f'"; cat "$f"; }
case $me in
fakecc)
	has -r "$@" && exec gcc "$@"
	has -c "$@" && ending .s "$@" >/dev/null && exec gcc "$@"
	has -c "$@" && has assembler "$@" && exec gcc "$@"
	out=$(opt -o "$@")
	if has -E "$@"; then
		case $out in
		*.cpp4.ii) step "host preprocessing" ;;
		*.cpp1.ii) step "device preprocessing" ;;
		*) die "-E into $out" ;;
		esac
		need ksci_wrapper.cu
		: >"$out"
	elif in=$(ending .cudafe1.cpp "$@"); then
		step "host compile"
		need "$in"
		handshake hostcc ptxas
		# As nvcc's host object: the fatbinary's wrapper (24 bytes of
		# .nvFatBinSegment); FAKE_OWN=1, device code of its own too.
		{
			printf '\t.globl ksci_fake_host\n\t.data\nksci_fake_host:\n\t.long 0\n'
			printf '\t.section .nvFatBinSegment,"aw"\n\t.zero 24\n'
			[ "${FAKE_OWN:-}" = 1 ] && printf '\t.section .nv_fatbin,"a"\n\t.zero 8\n'
		} | gcc -x assembler -c - -o "$out" || exit
	elif ending link.stub "$@" >/dev/null; then
		step "link stub compile"
		: >"$out"
	elif [ "$out" = out.so ]; then
		step "final link"
		for a; do case $a in *.o) need "$a"; nm "$a" >>"$state/final-link.nm" ;; esac; done
		echo 'a fake shared object' >out.so
	else
		die "what is this: $*"
	fi
	;;
cudafe++)
	step "host front end"
	printf '%s\n' "$*" >"$state/cudafe++.args"
	need "$(ending .cpp4.ii "$@")"
	need "$(opt --orig_src_path_name "$@")"
	has --gen_module_id_file "$@" && printf '_nvcc_own_ksci_wrapper_cu' >"$(opt --module_id_file_name "$@")"
	say "module id $(modid "$@")"
	handshake cudafe cicc
	if [ "${FAKE_FAIL:-}" = cudafe ]; then
		echo 'ksci_wrapper.cu(1): error: expected a ";"' >&2
		exit 2
	fi
	: >"$(opt --gen_c_file_name "$@")"
	;;
cicc)
	step "device front end"
	need "$(ending .cpp1.ii "$@")"
	say "module id $(modid "$@")"
	handshake cicc cudafe
	[ -z "${FAKE_CICC_SLEEP:-}" ] || sleep "$FAKE_CICC_SLEEP"
	: >"$(opt -o "$@")"
	: >"$state/cicc.finished"
	;;
ptxas)
	step "device assembler"
	need "$(ending .ptx "$@")"
	handshake ptxas hostcc
	[ "${FAKE_KILL:-}" = ptxas ] && kill -9 $$
	[ "${FAKE_KILL:-}" = ptxas-segv ] && kill -11 $$
	: >"$(opt -o "$@")"
	;;
fatbinary)
	image=$(eqopt --image3= "$@")
	need "${image##*file=}"
	if has -link "$@"; then
		step "device link fatbinary"
		: >"$(eqopt --embedded-fatbin= "$@")"
	else
		step "device fatbinary"
		printf '%s\n' "$*" >"$state/fatbinary.args"
		create=$(eqopt --create= "$@")
		[ -n "$create" ] || die "no --create="
		printf 'FAKEFATB%.0s' 1 2 3 4 5 6 7 8 >"$create"
		emb=$(eqopt --embedded-fatbin= "$@")
		[ -z "$emb" ] || : >"$emb"
	fi
	;;
nvlink)
	step "device link"
	in=$(ending .o "$@")
	need "$in"
	printf '%s\n' "${in##*/}" >>"$state/nvlink.inputs"
	case $in in *ksci-nodev.o) [ "${FAKE_FAIL:-}" = nvlink-early ] && die "a fake failure of the early link" ;; esac
	: >"$(opt -o "$@")"
	: >"$(eqopt --register-link-binaries= "$@")"
	;;
nvextra)
	step "a step this nvcc adds"
	;;
*) die "not a fake tool" ;;
esac
EOF
} >bin/fake
chmod +x bin/fake
for t in fakecc cudafe++ cicc ptxas fatbinary nvlink nvextra; do ln -s fake "bin/$t"; done

# The fake nvcc: with --dryrun, the listing nvcc 12/13 prints (on stderr) for
# kcompile's build, of the fake tools; without, it runs those steps itself,
# one after another, as nvcc does.  FAKE_SHAPE=extra adds a step,
# FAKE_SHAPE=noinclude drops cicc's --include_file_name, FAKE_SHAPE=dryfail
# fails the --dryrun.
{
	printf '#!/usr/bin/env bash\nstate=%q\nbin=%q\n' "$T/state" "$T/bin"
	cat <<'EOF'
if [ "${1:-}" = --version ]; then
	printf 'nvcc: NVIDIA (R) Cuda compiler driver\nBuild cuda_13.0.r13.0/compiler.fake_0\n'
	exit 0
fi
printf '%s\n' "$*" >>"$state/nvcc.calls"
listing() { # D: the keep directory
	local D=$1 inc=' --include_file_name "ksci_wrapper.fatbin.c"' extra=
	[ "${FAKE_SHAPE:-}" = noinclude ] && inc=
	[ "${FAKE_SHAPE:-}" = extra ] && extra="#\$ nvextra \"$D/ksci_wrapper.o\""
	cat <<LISTING
#\$ _NVVM_BRANCH_=nvvm
#\$ _SPACE_= 
#\$ _CUDART_=cudart
#\$ PATH=$bin:/usr/bin:/bin
#\$ CICC_PATH=$bin
#\$ LD_LIBRARY_PATH=$bin/../lib:
#\$ INCLUDES="-I$bin/../include"  
#\$ rm $D/out_dlink.reg.c
#\$ fakecc -D__CUDA_ARCH_LIST__=900 -E -x c++ -D__CUDACC__ -D__NVCC__ -fPIC -O3 "-I$bin/../include" -m64 "ksci_wrapper.cu" -o "$D/ksci_wrapper.cpp4.ii" 
#\$ cudafe++ --c++17 --gnu_version=130200 --display_error_number --orig_src_file_name "ksci_wrapper.cu" --orig_src_path_name "$PWD/ksci_wrapper.cu" --allow_managed --m64 --parse_templates --gen_c_file_name "$D/ksci_wrapper.cudafe1.cpp" --stub_file_name "ksci_wrapper.cudafe1.stub.c" --gen_module_id_file --module_id_file_name "$D/ksci_wrapper.module_id" "$D/ksci_wrapper.cpp4.ii" 
#\$ fakecc -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=900 -E -x c++ -DCUDA_DOUBLE_MATH_FUNCTIONS -D__CUDACC__ -D__NVCC__ -fPIC -O3 "-I$bin/../include" -m64 "ksci_wrapper.cu" -o "$D/ksci_wrapper.cpp1.ii" 
#\$ "\$CICC_PATH/cicc" --c++17 --gnu_version=130200 --display_error_number --orig_src_file_name "ksci_wrapper.cu" --orig_src_path_name "$PWD/ksci_wrapper.cu" --allow_managed -arch compute_90a -m64 --no-version-ident -ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1$inc -generate-line-info -tused --module_id_file_name "$D/ksci_wrapper.module_id" --gen_c_file_name "$D/ksci_wrapper.cudafe1.c" --stub_file_name "$D/ksci_wrapper.cudafe1.stub.c" --gen_device_file_name "$D/ksci_wrapper.cudafe1.gpu" "$D/ksci_wrapper.cpp1.ii" -o "$D/ksci_wrapper.ptx"
#\$ ptxas -arch=sm_90a -m64 -v --generate-line-info "$D/ksci_wrapper.ptx" -o "$D/ksci_wrapper.sm_90a.cubin" 
#\$ fatbinary --create="$D/ksci_wrapper.fatbin" -64 --cicc-cmdline="-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 " "--image3=kind=elf,sm=90a,file=$D/ksci_wrapper.sm_90a.cubin" --embedded-fatbin="$D/ksci_wrapper.fatbin.c" 
#\$ fakecc -D__CUDA_ARCH_LIST__=900 -c -x c++ -DCUDA_DOUBLE_MATH_FUNCTIONS -fPIC -O3 "-I$bin/../include" -m64 "$D/ksci_wrapper.cudafe1.cpp" -o "$D/ksci_wrapper.o" 
#\$ nvlink -m64 --arch=sm_90a --register-link-binaries="$D/out_dlink.reg.c" -cpu-arch=X86_64 "$D/ksci_wrapper.o" -lcudadevrt -o "$D/out_dlink.sm_90a.cubin" --host-ccbin "fakecc"
#\$ fatbinary -64 --cicc-cmdline="-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 " -link "--image3=kind=elf,sm=90a,file=$D/out_dlink.sm_90a.cubin" --embedded-fatbin="$D/out_dlink.fatbin.c" 
#\$ fakecc -D__CUDA_ARCH_LIST__=900 -c -x c++ -DFATBINFILE="\"$D/out_dlink.fatbin.c\"" -DREGISTERLINKBINARYFILE="\"$D/out_dlink.reg.c\"" -I. -fPIC -O3 "-I$bin/../include" -m64 "$bin/../crt/link.stub" -o "$D/out_dlink.o" 
#\$ fakecc -D__CUDA_ARCH_LIST__=900 -fPIC -O3 -m64 -shared -Wl,--start-group "$D/out_dlink.o" "$D/ksci_wrapper.o" "-L$bin/../lib" -lcudadevrt -lcudart -Wl,--end-group -o "out.so" 
$extra
LISTING
}
for a; do
	if [ "$a" = --dryrun ]; then
		[ "${FAKE_SHAPE:-}" = dryfail ] && { echo 'nvcc fatal   : a fake --dryrun failure' >&2; exit 1; }
		listing ksci-steps >&2
		exit 0
	fi
done
mkdir -p nvcc-tmp || exit
listing nvcc-tmp | sed -n 's/^#\$ //p' | sed 's/^rm /rm -f /; s/ *$/ || exit $?/' >nvcc-tmp/steps.sh
sh nvcc-tmp/steps.sh
EOF
} >bin/nvcc
chmod +x bin/nvcc
export KSCI_NVCC=$T/bin/nvcc

rec() { jq -cn --arg s "$1" '{id: "a", task: "softmax", backend: "cuda", generation: 0, parents: [], source: $s, status: "generated"}'; }
fresh() { rm -rf "$T/state" && mkdir "$T/state"; }
# compile NAME SOURCE: NAME.nd (the record), NAME.err, NAME.log (compile.log).
compile() {
	rec "$2" | kcompile --unsafe-no-sandbox -j 1 >"$1.nd" 2>"$1.err"
	jq -r '.compile.log // ""' "$1.nd" >"$1.log"
}
field() { jq -r "$2" "$1.nd"; }

# --- nvcc-steps-halves-run-at-once, nvcc-steps-module-id-shared --------------
fresh
FAKE_HANDSHAKE=1 compile par '__global__ void k1() {}'
expect_eq "parallel by default: compile.steps" parallel "$(field par .compile.steps)"
expect_eq "parallel by default: compiled, ok" "compiled true" "$(field par '"\(.status) \(.compile.ok)"')"
expect_eq "parallel by default: the compiler is the fake nvcc's last --version line" \
	"Build cuda_13.0.r13.0/compiler.fake_0" "$(field par .compile.compiler)"
expect_eq "parallel by default: nvcc ran once, for its --dryrun, never to build" 1 "$(grep -c -- --dryrun state/nvcc.calls)"
expect_eq "parallel by default: and no other nvcc call" 1 "$(wc -l <state/nvcc.calls)"
ok "halves at once: cudafe++ and cicc each saw the other's marker, as did ptxas and the host compile" \
	test -e state/cudafe.started -a -e state/cicc.started -a -e state/ptxas.started -a -e state/hostcc.started
not_ok_is "halves at once: no step ran alone" grep -q "ran alone" par.log
key=$(field par .compile.key)
modid="_${key:0:8}_15_ksci_wrapper_cu"
expect_eq "module id: cudafe++ read the one the script wrote (_ key[0:8] _15_ksci_wrapper_cu)" \
	"$modid" "$(sed -n 's/^cudafe++: module id //p' par.log)"
expect_eq "module id: cicc read the same" "$modid" "$(sed -n 's/^cicc: module id //p' par.log)"
ok "cudafe++ ran without --gen_module_id_file (it reads the script's id)" \
	sh -c 'test -s state/cudafe++.args && ! grep -q -- --gen_module_id_file state/cudafe++.args'
ok "fatbinary (not -link) ran without --embedded-fatbin" \
	sh -c 'test -s state/fatbinary.args && ! grep -q -- --embedded-fatbin state/fatbinary.args'
ok "the final link got the host object and the assembled fatbinary" \
	sh -c 'grep -q " ksci_fatbin_data$" state/final-link.nm && grep -q " ksci_fake_host$" state/final-link.nm'

# --- nvcc-steps-device-link-early ---------------------------------------------
# The device link (nvlink, fatbinary -link, the link stub), which has nothing
# to link in a whole-program build, ran after the halves; now beside them, on
# an object without device code, once.
expect_eq "device link early: once, on the object without device code" "ksci-nodev.o" "$(cat state/nvlink.inputs)"
expect_eq "device link early: the record says so, with no why" "early null" "$(field par '"\(.compile.steps_dlink) \(.compile.steps_dlink_why)"')"
not_ok_is "device link early: the final link took no joined object" grep -q 'fb.o' state/final-link.nm
fresh
FAKE_OWN=1 compile own '__global__ void k1o() {}'
expect_eq "a host object with device code of its own: linked again after, on the joined object" \
	"ksci-nodev.o ksci_wrapper.o.fb.o" "$(sort state/nvlink.inputs | tr '\n' ' ' | sed 's/ $//')"
expect_eq "...the record says joined, and why" \
	"compiled joined the host object may have device code of its own: a section .nv_fatbin" \
	"$(field own '"\(.status) \(.compile.steps_dlink) \(.compile.steps_dlink_why)"' | sed 's/\(.nv_fatbin\) .*/\1/')"
expect_eq "...its log has the device link's lines once" 1 "$(grep -c '^nvlink: device link' own.log)"
fresh
FAKE_FAIL=nvlink-early compile early-fail '__global__ void k1f() {}'
expect_eq "the early device link failed: linked again after, compiled" \
	"compiled joined the device link beside the halves failed (exit status 1)" \
	"$(field early-fail '"\(.status) \(.compile.steps_dlink) \(.compile.steps_dlink_why)"')"
not_ok_is "...the early failure's message is not in the log" grep -q 'a fake failure of the early link' early-fail.log
fresh
KSCI_NVCC_DLINK=joined compile joined '__global__ void k1j() {}'
expect_eq "KSCI_NVCC_DLINK=joined: one device link, after, on the joined object, and why" \
	"ksci_wrapper.o.fb.o joined KSCI_NVCC_DLINK=joined" \
	"$(cat state/nvlink.inputs) $(field joined '"\(.compile.steps_dlink) \(.compile.steps_dlink_why)"')"

# --- nvcc-steps-log-in-nvcc-order ------------------------------------------
# The halves ran at once (above), yet the log is nvcc's order.
expect_eq "compile log: the steps' lines in nvcc's order" \
	"fakecc: host preprocessing
cudafe++: host front end
cudafe++: module id $modid
fakecc: device preprocessing
cicc: device front end
cicc: module id $modid
ptxas: device assembler
fatbinary: device fatbinary
fakecc: host compile
nvlink: device link
fatbinary: device link fatbinary
fakecc: link stub compile
fakecc: final link" \
	"$(grep -E '^(fakecc|cudafe\+\+|cicc|ptxas|fatbinary|nvlink|nvextra): ' par.log)"

# --- nvcc-steps-host-error-reported-once -------------------------------------
# cudafe++ fails after cicc has started (the handshake): cicc ran, and printed,
# but the log stops at the host half's error, which it has once.
fresh
FAKE_HANDSHAKE=1 FAKE_FAIL=cudafe compile herr '__global__ void k3() {}'
expect_eq "host error: still the parallel steps" parallel "$(field herr .compile.steps)"
expect_eq "host error: compile_error" compile_error "$(field herr .status)"
ok "host error: the message ends with cudafe++'s exit status" \
	jq -e '.compile.message | endswith("exit status 2")' herr.nd
expect_eq "host error: the error line is in the log exactly once" 1 \
	"$(grep -c -F 'ksci_wrapper.cu(1): error: expected a ";"' herr.log)"
ok "host error: cicc did run beside it" test -e state/cicc.started
not_ok_is "host error: no cicc output follows in the log" grep -q '^cicc:' herr.log
expect_eq "host error: not transient (the source's fault)" false "$(field herr '.compile.transient // false')"

# --- nvcc-steps-failed-half-waits-for-the-other --------------------------------
# The script stopped at a failed half without waiting for the other, which
# was then killed with its process group: whether the device half had used
# the prefix was decided by which half failed first (t45's poisoned header,
# under load, read a prefix as used whose candidate's part had failed).
fresh
FAKE_HANDSHAKE=1 FAKE_FAIL=cudafe FAKE_CICC_SLEEP=1 compile hwait '__global__ void k3w() {}'
expect_eq "a failed host half: compile_error" compile_error "$(field hwait .status)"
ok "a failed host half: the script waited for the device half to end (cicc finished, not killed)" test -e state/cicc.finished
not_ok_is "...and its output still does not follow the error in the log" grep -q '^cicc:' hwait.log

# --- nvcc-steps-killed-step-is-transient -------------------------------------
fresh
FAKE_HANDSHAKE=1 FAKE_KILL=ptxas compile kill '__global__ void k4() {}'
expect_eq "killed step: still the parallel steps" parallel "$(field kill .compile.steps)"
expect_eq "killed step: compile_error, transient" "compile_error true" "$(field kill '"\(.status) \(.compile.transient)"')"
ok "killed step: the message says the compiler was killed by a signal" \
	jq -e '.compile.message | test("killed by a signal")' kill.nd
fresh
FAKE_HANDSHAKE=1 compile kill2 '__global__ void k4() {}'
expect_eq "killed step: the same source again compiles, not served a cached failure" \
	"compiled true false" "$(field kill2 '"\(.status) \(.compile.ok) \(.compile.cached)"')"
fresh
compile kill3 '__global__ void k4() {}'
expect_eq "killed step: and that success is cached (the cache was there to serve it)" \
	"compiled true" "$(field kill3 '"\(.status) \(.compile.cached)"')"

# --- nvcc-alone-killed-step-cached-as-compile-error ----------------------------
# nvcc running its own steps exits 137 (its shell's "Killed") when the OOM
# killer takes cicc or ptxas; that was cached as the source's compile_error.
fresh
KSCI_NVCC_STEPS=serial FAKE_KILL=ptxas compile skill '__global__ void k4s() {}'
expect_eq "nvcc alone, a step killed: transient, with the reason" "compile_error true a step of the compiler was killed (SIGKILL)" \
	"$(field skill '"\(.status) \(.compile.transient) \(.compile.message | capture("(?<r>a step of the compiler was killed [(]SIGKILL[)])").r)"')"
fresh
KSCI_NVCC_STEPS=serial compile skill2 '__global__ void k4s() {}'
expect_eq "nvcc alone, a step killed: the same source compiles next time" "compiled false" \
	"$(field skill2 '"\(.status) \(.compile.cached)"')"

# --- nvcc-steps-crashing-step-is-not-transient -------------------------------
# A step's own crash (SIGSEGV: a compiler bug, the same next time) is the
# source's compile_error and cached, as nvcc alone gives it (exit status
# 139), in both ways; only KILL, TERM, INT and HUP are the machine's.
for m in parallel serial; do
	fresh
	KSCI_NVCC_STEPS=$m FAKE_KILL=ptxas-segv compile "segv-$m" "__global__ void k4$m() {}"
	expect_eq "$m: a crashing step: compile_error, exit status 139, not transient" "compile_error false exit status 139" \
		"$(field "segv-$m" '"\(.status) \(.compile.transient // false) \(.compile.message | capture("(?<s>exit status [0-9]+)").s)"')"
	fresh
	KSCI_NVCC_STEPS=$m compile "segv2-$m" "__global__ void k4$m() {}"
	expect_eq "$m: a crashing step: its failure is cached" "compile_error true" "$(field "segv2-$m" '"\(.status) \(.compile.cached)"')"
done

# --- KSCI_NVCC_STEPS=serial --------------------------------------------------
fresh
KSCI_NVCC_STEPS=serial compile ser '__global__ void k5() {}'
expect_eq "KSCI_NVCC_STEPS=serial: nvcc alone, and why" "nvcc KSCI_NVCC_STEPS=serial" \
	"$(field ser '"\(.compile.steps) \(.compile.steps_why)"')"
expect_eq "KSCI_NVCC_STEPS=serial: compiled, ok" "compiled true" "$(field ser '"\(.status) \(.compile.ok)"')"
expect_eq "KSCI_NVCC_STEPS=serial: no --dryrun, one nvcc call" "0 1" \
	"$(grep -c -- --dryrun state/nvcc.calls) $(wc -l <state/nvcc.calls)"
ok "KSCI_NVCC_STEPS=serial: nvcc's own steps (cudafe++ made the module id)" \
	grep -q -- --gen_module_id_file state/cudafe++.args

# --- a listing of a shape this does not know ---------------------------------
fresh
FAKE_SHAPE=extra compile extra '__global__ void k6() {}'
expect_eq "unknown shape (a 12th step): nvcc alone" nvcc "$(field extra .compile.steps)"
ok "unknown shape (a 12th step): steps_why counts the steps" \
	jq -e '.compile.steps_why | test("^12 steps after the rm, not the 11")' extra.nd
expect_eq "unknown shape (a 12th step): compiled through nvcc alone" "compiled true" \
	"$(field extra '"\(.status) \(.compile.ok)"')"
ok "unknown shape (a 12th step): nvcc's extra step ran" grep -q '^nvextra: ' extra.log
fresh
FAKE_SHAPE=noinclude compile noinc '__global__ void k6b() {}'
ok "unknown shape (cicc without --include_file_name): steps_why names the step" \
	jq -e '.compile.steps == "nvcc" and (.compile.steps_why | test("^step 5 is not cicc"))' noinc.nd
expect_eq "unknown shape (cicc without --include_file_name): compiled" "compiled true" \
	"$(field noinc '"\(.status) \(.compile.ok)"')"
fresh
FAKE_SHAPE=dryfail compile dryfail '__global__ void k6c() {}'
expect_eq "--dryrun failed: nvcc alone, and why" "nvcc nvcc --dryrun exit status 1" \
	"$(field dryfail '"\(.compile.steps) \(.compile.steps_why)"')"
expect_eq "--dryrun failed: compiled" "compiled true" "$(field dryfail '"\(.status) \(.compile.ok)"')"

# --- a build directory whose path has a space ---------------------------------
# The listing's file names are relative to the build directory; only
# --orig_src_path_name is absolute, and the script runs nvcc's quoted text
# as it is.  So the parallel steps, and cudafe++ finds that file.
fresh
mkdir -p "$T/with space"
KSCI_CACHE="$T/with space/cache" FAKE_HANDSHAKE=1 compile space '__global__ void k7() {}'
echo "# build directory with a space: compile.steps=$(field space '.compile.steps + (.compile.steps_why // "" | if . == "" then "" else " (" + . + ")" end)')"
expect_eq "build dir with a space: the parallel steps" parallel "$(field space .compile.steps)"
expect_eq "build dir with a space: compiled, ok" "compiled true" "$(field space '"\(.status) \(.compile.ok)"')"
ok "build dir with a space: in it" jq -e '.compile.artifact | contains("with space")' space.nd

done_testing
