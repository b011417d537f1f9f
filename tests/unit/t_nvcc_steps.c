/* t_nvcc_steps: nvcc's --dryrun listing made into the script that runs its
 * host and device halves at once (lib/nvcc_steps.c), and every listing it
 * must refuse (so that kcompile runs nvcc itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvcc_steps.h"
#include "t.h"

/* CUDA 13.0's nvcc --dryrun --keep --keep-dir ksci-steps -gencode
 * arch=compute_90a,code=sm_90a -O3 -std=c++17 -lineinfo -Xptxas -v
 * -Xcompiler -fPIC -shared -cudart shared -o out.so ksci_wrapper.cu, run in
 * /build (PATH shortened). */
static const char listing13[] =
	"#$ _NVVM_BRANCH_=nvvm\n"
	"#$ _SPACE_= \n"
	"#$ _CUDART_=cudart\n"
	"#$ _HERE_=/usr/local/cuda/bin\n"
	"#$ _THERE_=/usr/local/cuda/bin\n"
	"#$ _TARGET_SIZE_=\n"
	"#$ _TARGET_DIR_=\n"
	"#$ _TARGET_DIR_=targets/x86_64-linux\n"
	"#$ TOP=/usr/local/cuda/bin/..\n"
	"#$ CICC_PATH=/usr/local/cuda/bin/../nvvm/bin\n"
	"#$ NVVMIR_LIBRARY_DIR=/usr/local/cuda/bin/../nvvm/libdevice\n"
	"#$ LD_LIBRARY_PATH=/usr/local/cuda/bin/../lib:\n"
	"#$ PATH=/usr/local/cuda/bin/../nvvm/bin:/usr/local/cuda/bin:/usr/bin:/bin\n"
	"#$ INCLUDES=\"-I/usr/local/cuda/bin/../targets/x86_64-linux/include\"  \n"
	"#$ SYSTEM_INCLUDES=\"-isystem\" \"/usr/local/cuda/bin/../targets/x86_64-linux/include/cccl\"  \n"
	"#$ LIBRARIES=  \"-L/usr/local/cuda/bin/../targets/x86_64-linux/lib/stubs\" \"-L/usr/local/cuda/bin/../targets/x86_64-linux/lib\"\n"
	"#$ CUDAFE_FLAGS=\n"
	"#$ PTXAS_FLAGS=\n"
	"#$ rm ksci-steps/out_dlink.reg.c\n"
	"#$ gcc -std=c++17 -D__CUDA_ARCH_LIST__=900 -E -x c++ -D__CUDACC__ -D__NVCC__  -fPIC -O3 \"-I/usr/local/cuda/bin/../targets/x86_64-linux/include\"   \"-isystem\" \"/usr/local/cuda/bin/../targets/x86_64-linux/include/cccl\"    -D__CUDACC_VER_MAJOR__=13 -D__CUDACC_VER_MINOR__=0 -D__CUDACC_VER_BUILD__=88 -D__CUDA_API_VER_MAJOR__=13 -D__CUDA_API_VER_MINOR__=0 -D__NVCC_DIAG_PRAGMA_SUPPORT__=1 -D__CUDACC_DEVICE_ATOMIC_BUILTINS__=1 -include \"cuda_runtime.h\" -m64 \"ksci_wrapper.cu\" -o \"ksci-steps/ksci_wrapper.cpp4.ii\" \n"
	"#$ cudafe++ --c++17 --static-host-stub --device-hidden-visibility --gnu_version=120200 --display_error_number --orig_src_file_name \"ksci_wrapper.cu\" --orig_src_path_name \"/build/ksci_wrapper.cu\" --allow_managed  --m64 --parse_templates --gen_c_file_name \"ksci-steps/ksci_wrapper.cudafe1.cpp\" --stub_file_name \"ksci_wrapper.cudafe1.stub.c\" --gen_module_id_file --module_id_file_name \"ksci-steps/ksci_wrapper.module_id\" \"ksci-steps/ksci_wrapper.cpp4.ii\" \n"
	"#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_FEAT_SM90_ALL -D__CUDA_ARCH_SPECIFIC__=900 -D__CUDA_ARCH_FAMILY_SPECIFIC__=900 -D__CUDA_ARCH_LIST__=900 -E -x c++  -DCUDA_DOUBLE_MATH_FUNCTIONS -D__CUDACC__ -D__NVCC__  -fPIC -O3 \"-I/usr/local/cuda/bin/../targets/x86_64-linux/include\"   \"-isystem\" \"/usr/local/cuda/bin/../targets/x86_64-linux/include/cccl\"    -D__CUDACC_VER_MAJOR__=13 -D__CUDACC_VER_MINOR__=0 -D__CUDACC_VER_BUILD__=88 -D__CUDA_API_VER_MAJOR__=13 -D__CUDA_API_VER_MINOR__=0 -D__NVCC_DIAG_PRAGMA_SUPPORT__=1 -D__CUDACC_DEVICE_ATOMIC_BUILTINS__=1 -include \"cuda_runtime.h\" -m64 \"ksci_wrapper.cu\" -o \"ksci-steps/ksci_wrapper.cpp1.ii\" \n"
	"#$ \"$CICC_PATH/cicc\" --c++17 --static-host-stub --device-hidden-visibility --gnu_version=120200 --display_error_number --orig_src_file_name \"ksci_wrapper.cu\" --orig_src_path_name \"/build/ksci_wrapper.cu\" --allow_managed   -arch compute_90a -m64 --no-version-ident -ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 --include_file_name \"ksci_wrapper.fatbin.c\" -generate-line-info -tused --module_id_file_name \"ksci-steps/ksci_wrapper.module_id\" --gen_c_file_name \"ksci-steps/ksci_wrapper.cudafe1.c\" --stub_file_name \"ksci-steps/ksci_wrapper.cudafe1.stub.c\" --gen_device_file_name \"ksci-steps/ksci_wrapper.cudafe1.gpu\"  \"ksci-steps/ksci_wrapper.cpp1.ii\" -o \"ksci-steps/ksci_wrapper.ptx\"\n"
	"#$ ptxas -arch=sm_90a -m64 -v  --generate-line-info \"ksci-steps/ksci_wrapper.ptx\"  -o \"ksci-steps/ksci_wrapper.cubin\" \n"
	"#$ fatbinary --create=\"ksci-steps/ksci_wrapper.fatbin\" -64 --ident=\"ksci_wrapper.cu\" --cmdline=\"-v  --generate-line-info \" --cicc-cmdline=\"-generate-line-info -ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 \" \"--image3=kind=elf,sm=90a,file=ksci-steps/ksci_wrapper.cubin\" --embedded-fatbin=\"ksci-steps/ksci_wrapper.fatbin.c\" \n"
	"#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_FEAT_SM90_ALL -D__CUDA_ARCH_SPECIFIC__=900 -D__CUDA_ARCH_FAMILY_SPECIFIC__=900 -D__CUDA_ARCH_LIST__=900 -c -x c++  -DCUDA_DOUBLE_MATH_FUNCTIONS -fPIC -O3 -Wno-psabi \"-I/usr/local/cuda/bin/../targets/x86_64-linux/include\"   \"-isystem\" \"/usr/local/cuda/bin/../targets/x86_64-linux/include/cccl\"   -m64 \"ksci-steps/ksci_wrapper.cudafe1.cpp\" -o \"ksci-steps/ksci_wrapper.o\" \n"
	"#$ nvlink -m64  --shared --arch=sm_90a --register-link-binaries=\"ksci-steps/out_dlink.reg.c\"    \"-L/usr/local/cuda/bin/../targets/x86_64-linux/lib/stubs\" \"-L/usr/local/cuda/bin/../targets/x86_64-linux/lib\" -cpu-arch=X86_64 \"ksci-steps/ksci_wrapper.o\"  -lcudadevrt  -o \"ksci-steps/out_dlink.cubin\" --host-ccbin \"gcc\"\n"
	"#$ fatbinary --create=\"ksci-steps/out_dlink.fatbin\" -64 --ident=\"ksci_wrapper.cu \" --cmdline=\"-v  --generate-line-info \" --cicc-cmdline=\"-generate-line-info -ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 \" -link \"--image3=kind=elf,sm=90a,file=ksci-steps/out_dlink.cubin\" --embedded-fatbin=\"ksci-steps/out_dlink.fatbin.c\" \n"
	"#$ gcc -std=c++17 -D__CUDA_ARCH_LIST__=900 -c -x c++ -fPIC -DFATBINFILE=\"\\\"ksci-steps/out_dlink.fatbin.c\\\"\" -DREGISTERLINKBINARYFILE=\"\\\"ksci-steps/out_dlink.reg.c\\\"\"  -I. -D__NV_EXTRA_INITIALIZATION= -D__NV_EXTRA_FINALIZATION= -D__CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__  -fPIC -O3 -Wno-psabi \"-I/usr/local/cuda/bin/../targets/x86_64-linux/include\"   \"-isystem\" \"/usr/local/cuda/bin/../targets/x86_64-linux/include/cccl\"    -D__CUDACC_VER_MAJOR__=13 -D__CUDACC_VER_MINOR__=0 -D__CUDACC_VER_BUILD__=88 -D__CUDA_API_VER_MAJOR__=13 -D__CUDA_API_VER_MINOR__=0 -D__NVCC_DIAG_PRAGMA_SUPPORT__=1 -D__CUDACC_DEVICE_ATOMIC_BUILTINS__=1 -m64 \"/usr/local/cuda/bin/crt/link.stub\" -o \"ksci-steps/out_dlink.o\" \n"
	"#$ g++ -D__CUDA_ARCH_LIST__=900 -fPIC -O3 -m64 -std=c++17 -Wl,--start-group \"ksci-steps/out_dlink.o\" \"ksci-steps/ksci_wrapper.o\" -shared   \"-L/usr/local/cuda/bin/../targets/x86_64-linux/lib/stubs\" \"-L/usr/local/cuda/bin/../targets/x86_64-linux/lib\"  -lcudadevrt  -lcudart  -Wl,--end-group -o \"out.so\" \n";

#define MODID "_0123abcd_15_ksci_wrapper_cu"

/* s with every old made rep (new string). */
static char *subst(const char *s, const char *old, const char *rep)
{
	size_t n = strlen(s) + 1, lo = strlen(old), lr = strlen(rep);
	for (const char *p = strstr(s, old); p; p = strstr(p + lo, old))
		n += lr;
	char *o = malloc(n), *w = o;
	for (const char *p; (p = strstr(s, old)); s = p + lo) {
		memcpy(w, s, (size_t)(p - s));
		w += p - s;
		memcpy(w, rep, lr);
		w += lr;
	}
	memcpy(w, s, strlen(s) + 1);
	return o;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* The build script for listing (NULL with e where refused), with the
 * header part pre or none, the device link beside the halves or (joined)
 * after them. */
static char *script_of(const char *listing, const char *modid, const struct nvcc_steps_pre *pre, int joined, char *e)
{
	struct nvcc_steps p;
	if (nvcc_steps_plan(listing, modid, pre, joined, &p, e) < 0)
		return NULL;
	char *s = p.script;
	p.script = NULL;
	nvcc_steps_free(&p);
	return s;
}

/* A listing changed by subst(old, rep) is refused, the reason naming why. */
static void refused(const char *name, const char *old, const char *rep, const char *why)
{
	char e[ERRBUF] = "";
	char *l = subst(listing13, old, rep);
	char *s = script_of(l, MODID, NULL, 0, e);
	T_OK(!s && strstr(e, why), "%s: refused (%s)", name, e);
	free(s);
	free(l);
}

/* The text is sh (sh -n). */
static int is_sh(const char *s)
{
	char path[] = "/tmp/t_nvcc_steps.XXXXXX";
	int fd = mkstemp(path);
	int ok = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	if (fd >= 0)
		close(fd);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "sh -n %s", path);
	ok = ok && system(cmd) == 0;
	unlink(path);
	return ok;
}

/* The device link beside the halves: on an object without device code,
 * started before them, printed after the host compile's output; the final
 * link takes H3's object and the fatbinary's; after H3, whether its object
 * has device code of its own; where it may, or the early link failed, the
 * link again nvcc's way, on the joined object. */
static void early_link(const char *s)
{
	const char *k = strstr(s, "gcc -c -x assembler /dev/null -o \"ksci-steps/ksci-nodev.o\" && nvlink "),
		   *h = strstr(s, "cudafe++"), *own = strstr(s, "&& ksci_own \"ksci-steps/ksci_wrapper.o\"; }"),
		   *h3 = strstr(s, ".cudafe1.cpp\" -o"), *wk = strstr(s, "wait $k; s=$?"),
		   *log = strstr(s, "\tcat 'ksci-steps/ksci-link.log'\nelse\n"), *why = strstr(s, ">'ksci-steps/ksci-dlink.why'"),
		   *join = strstr(s, "\tgcc -r -nostdlib -o 'ksci-steps/ksci_wrapper.o.fb.o' 'ksci-steps/ksci_wrapper.o'"),
		   *l1 = strstr(s, "\tnvlink "), *fi = strstr(s, "\nfi\n"),
		   *l4 = strstr(s, "\"ksci-steps/out_dlink.o\" \"ksci-steps/ksci_wrapper.o\" \"ksci-steps/ksci-fatbin.o\" -shared");
	T_OK(k && h && k < h && strstr(k, "\"ksci-steps/ksci-nodev.o\"  -lcudadevrt") && strstr(k, "link.stub") < h,
	     "the device link (nvlink, fatbinary -link, the stub) starts before the halves, on an object without device code");
	T_OK(h3 && own && h3 < own && own < wk && wk < log && log < why && why < join && join < l1 && l1 < fi && fi < l4,
	     "after H3 the object is looked at; the early link's output where it stands, else the link again, joined");
	T_OK(count(s, "\"ksci-steps/ksci_wrapper.o.fb.o\"") == 1 && l4 && !strstr(l4, "fb.o"),
	     "the final link takes H3's object and the fatbinary's, not joined");
	T_OK(strstr(s, "LC_ALL=C readelf -S -W \"$1\" 2>&1 | awk ") && strstr(s, ">'ksci-steps/ksci-own.why'\n\treturn 0\n}"),
	     "ksci_own: readelf's sections, why into ksci-own.why, never a failure");
}

static const struct nvcc_steps_pre pre3 = {"ksci_wrapper.cu", "candidate.cu", 3};

/* With a header part: the device half's preprocessing is ksci_pp, mkpre
 * is made, and the listings it cannot use are the plain steps. */
static void prefix(void)
{
	char e[ERRBUF] = "";
	struct nvcc_steps p;
	T_OK(nvcc_steps_plan(listing13, MODID, &pre3, 0, &p, e) == 0 && p.mkpre, "a header part: the plan has mkpre (%s)",
	     p.mkpre ? "" : p.pre_why);
	if (!p.mkpre)
		return;
	T_OK(is_sh(p.script) && is_sh(p.mkpre), "both scripts are sh");
	T_OK(strstr(p.script, "{ ksci_pp && \"$CICC_PATH/cicc\"") != NULL, "the device half starts with ksci_pp");
	T_OK(strstr(p.script, "-imacros \"../ksci-pre.h\" -imacros \"../ksci-pre.sys\" \"ksci_wrapper.cu\" -o \"../ksci-rest.ii\"") != NULL &&
	     strstr(p.script, "printf '#line 4 \"%s\"\\n' 'ksci_wrapper.cu' && tail -n +4 'ksci_wrapper.cu'") != NULL,
	     "the candidate's part: from line 4, under its own line numbers, with the prefix's macros");
	T_OK(strstr(p.script, "if [ -s 'ksci-steps/ksci-pre.files' ]; then ksci_rest && return 0; fi") != NULL,
	     "the prefix where it was put, else nvcc's own command");
	T_OK(strstr(p.dev_pp, "-include \"cuda_runtime.h\" -m64 \"ksci_wrapper.cu\" -o \"ksci-steps/ksci_wrapper.cpp1.ii\"") &&
	     p.dev_pp[strlen(p.dev_pp) - 1] != '\n', "dev_pp is nvcc's device preprocessing as listed");
	T_OK(strstr(p.mkpre, "head -n 3 'ksci_wrapper.cu'") && strstr(p.mkpre, "-dD \"ksci_wrapper.cu\" -o \"dd.ii\"") &&
	     strstr(p.mkpre, "-dM \"ksci-empty.cu\" -o \"predef.h\""),
	     "mkpre: the header lines, their macros and where, an empty file's");
	const char *pd = strstr(p.mkpre, "-o \"predef.h\"");
	const char *pl = pd;
	while (pl > p.mkpre && pl[-1] != '\n')
		pl--;
	T_OK(pd && !memmem(pl, (size_t)(pd - pl), "-include", 8), "mkpre: the empty file's macros without D1's -include");
	T_OK(strstr(p.mkpre, "mv files ../ksci-new.files") > strstr(p.mkpre, "mv pre.ii ../ksci-new.ii"),
	     "mkpre: the files list is moved last (its presence says the others are whole)");
	nvcc_steps_free(&p);

	T_OK(nvcc_steps_plan(listing13, MODID, NULL, 0, &p, e) == 0 && !p.mkpre && strstr(p.script, "ksci_pp") == NULL,
	     "no header part: no mkpre, nvcc's own preprocessing");
	nvcc_steps_free(&p);
	char *l = subst(listing13, "-include \"cuda_runtime.h\"", "-include cuda_runtime.h");
	T_OK(nvcc_steps_plan(l, MODID, &pre3, 0, &p, e) == 0 && !p.mkpre && strstr(p.pre_why, "-include") &&
	     strstr(p.script, "ksci_pp") == NULL, "a -include of another form: no prefix (%s)", p.pre_why);
	nvcc_steps_free(&p);
	free(l);
	static const struct nvcc_steps_pre other = {"other.cu", "candidate.cu", 3}, slash = {"ksci_wrapper.cu", "../c.cu", 3};
	T_OK(nvcc_steps_plan(listing13, MODID, &other, 0, &p, e) == 0 && !p.mkpre && strstr(p.pre_why, "once as"),
	     "a wrapper the listing does not preprocess: no prefix (%s)", p.pre_why);
	nvcc_steps_free(&p);
	T_OK(nvcc_steps_plan(listing13, MODID, &slash, 0, &p, e) == 0 && !p.mkpre && strstr(p.pre_why, "not plain"),
	     "a candidate's name with a slash: no prefix (%s)", p.pre_why);
	nvcc_steps_free(&p);
}

int main(void)
{
	char e[ERRBUF] = "";
	char *s = script_of(listing13, MODID, NULL, 0, e);
	T_OK(s != NULL, "CUDA 13's listing is known (%s)", s ? "" : e);
	if (!s)
		return T_DONE();
	T_OK(is_sh(s), "the script is sh");
	T_OK(strstr(s, "printf '%s' '" MODID "' >'ksci-steps/ksci_wrapper.module_id'") != NULL,
	     "the module id is written before the front ends start");
	T_OK(strstr(s, "--gen_module_id_file ") == NULL && count(s, "--module_id_file_name") == 2,
	     "cudafe++ reads the id instead of making one; cicc reads the same file");
	T_OK(strstr(s, "--embedded-fatbin=\"ksci-steps/ksci_wrapper.fatbin.c\"") == NULL &&
	     count(s, "--embedded-fatbin") == 2,
	     "fatbinary writes no fatbin.c (the host object has ours); the link's does (early, and again where it must)");
	T_OK(strstr(s, "FATBINC_MAGIC, FATBINC_VERSION, ksci_fatbin_data") != NULL &&
	     strstr(s, "cat >'ksci-steps/ksci_wrapper.fatbin.c' <<'KSCI_EOF'") != NULL,
	     "the host object's fatbin.c points at the fatbinary by name");
	T_OK(count(s, " 2>&1 &\n") == 5, "two halves at once, twice, and the device link beside them");
	const char *h1 = strstr(s, "cudafe++"), *d1 = strstr(s, "/cicc\""), *w1 = strstr(s, "wait $h"),
		   *p3 = strstr(s, "ptxas -arch"), *h3 = strstr(s, ".cudafe1.cpp\" -o");
	T_OK(h1 && d1 && w1 && p3 && h3 && h1 < d1 && d1 < w1 && w1 < p3 && p3 < h3,
	     "host front end beside cicc, then ptxas beside the host compile");
	T_OK(strstr(s, "cat 'ksci-steps/ksci-host1.log'") < strstr(s, "cat 'ksci-steps/ksci-dev1.log'") &&
	     strstr(s, "cat 'ksci-steps/ksci-dev1.log'") < strstr(s, "cat 'ksci-steps/ksci-dev2.log'") &&
	     strstr(s, "cat 'ksci-steps/ksci-dev2.log'") < strstr(s, "cat 'ksci-steps/ksci-host2.log'"),
	     "the halves' output comes out in nvcc's order");
	early_link(s);
	T_OK(strstr(s, "CICC_PATH='/usr/local/cuda/bin/../nvvm/bin'; export CICC_PATH") != NULL &&
	     strstr(s, "INCLUDES=") == NULL && strstr(s, "LIBRARIES=") == NULL,
	     "nvcc's assignments are exported, those with quotes left to the commands that spell them out");
	T_OK(strstr(s, "rm -f ksci-steps/out_dlink.reg.c") != NULL, "nvcc's rm does not fail on a missing file");
	T_OK(strstr(s, "case $1 in 129 | 130 | 137 | 143) kill -$(($1 - 128)) $$ ;; esac") != NULL,
	     "a step killed by KILL, TERM, INT or HUP kills the script with it; a crash (139) or ptxas's 255 is a status");
	free(s);

	refused("no cicc step", "\"$CICC_PATH/cicc\"", "\"$CICC_PATH/nvvm-other\"", "step 5 is not cicc");
	refused("cudafe++ making no module id", "--gen_module_id_file ", "", "cudafe++");
	refused("an extra step", "#$ nvlink", "#$ true\n#$ nvlink", "12 steps");
	refused("a step missing", "#$ ptxas", "#$ true ptxas", "ptxas");
	refused("a build path with a space", "ksci-steps/ksci_wrapper.module_id", "ksci steps/m.module_id", "cudafe++");
	refused("a path with a dollar", "--create=\"ksci-steps/ksci_wrapper.fatbin\"", "--create=\"$HOME/x.fatbin\"",
		"fatbinary");
	refused("cicc's stub including another fatbin.c", "--include_file_name \"ksci_wrapper.fatbin.c\"",
		"--include_file_name \"other.fatbin.c\"", "includes other.fatbin.c");
	refused("an unclosed quote", "#$ nvlink", "#$ \"unclosed\n#$ nvlink", "unclosed quote");
	refused("the host object named twice in the final link", "\"ksci-steps/ksci_wrapper.o\" -shared",
		"\"ksci-steps/ksci_wrapper.o\" \"ksci-steps/ksci_wrapper.o\" -shared", "not named once");
	s = script_of(listing13, MODID, NULL, 1, e);
	T_OK(s && count(s, " 2>&1 &\n") == 4 && !strstr(s, "ksci-nodev") && !strstr(s, "ksci_own") && !strstr(s, "\nif ") &&
	     count(s, "\"ksci-steps/ksci_wrapper.o.fb.o\"") == 1 &&
	     strstr(s, "-r -nostdlib -o 'ksci-steps/ksci_wrapper.o.fb.o' 'ksci-steps/ksci_wrapper.o'") <
		     strstr(s, "\nnvlink ") &&
	     strstr(s, "\nnvlink ") < strstr(s, "\ng++ "),
	     "joined: the device link after the halves, on the joined object, nvcc's order");
	free(s);
	s = script_of("", MODID, NULL, 0, e);
	T_OK(!s, "an empty listing is refused (%s)", e);
	free(s);
	s = script_of(listing13, "_x y", &pre3, 0, e);
	T_OK(!s && strstr(e, "not plain"), "a module id that is not one word is refused (%s)", e);
	free(s);
	s = script_of(listing13, "../x", NULL, 0, e);
	T_OK(!s && strstr(e, "not plain"), "a module id that is a path is refused (%s)", e);
	free(s);
	prefix();
	return T_DONE();
}
