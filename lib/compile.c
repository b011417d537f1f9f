/*
 * compile: one cache entry is a directory <cache>/compile/<key>/ holding the
 * source, the wrapper, result.json and (when it compiled) out.so.  The entry
 * is built in a temporary directory and renamed into place; when two slots
 * race, the loser discards its copy and uses the winner's.
 *
 * result.json is the compile stage as stored, plus "artifact_sha256" (the
 * SHA-256 of out.so, when it compiled) and the entry's seal (lib/cache.h:
 * the key and every field, so a failure is vouched for too).  Every use
 * checks both: an entry whose seal or out.so does not match was corrupted
 * or edited (a .so swapped in by hand would otherwise be loaded and
 * judged as this source) — the tool is told, the entry removed and the
 * source compiled again.  An entry with no seal, from before there were
 * seals, is a plain miss and is replaced.  The check is made when the
 * entry is looked up: it cannot see a file changed between then and the
 * harness loading it.  Its cost is one hash of out.so per use: about 9 ms
 * per MB here (lib/sha256.c at -O2, a 2-core AMD EPYC), so 0.15 ms for a
 * 15 KB C kernel, tens of ms for a CUDA object of a few MB, against the
 * seconds the harness then runs.
 *
 * The temporary directory is tmp.PID@HOST.XXXXXX: a compile whose process
 * was killed (a kcompile -j worker, a preempted job) leaves it behind, and
 * the next compile on the same host in the same cache removes it once PID
 * is gone and it is older than any compile may last (tmp_sweep) — the
 * cache may be shared by several hosts, whose PIDs mean nothing here.
 */
#include "compile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "file.h"
#include "dev.h"
#include "envknob.h"
#include "nvcc_prefix.h"
#include "nvcc_steps.h"
#include "proc.h"
#include "rec.h"
#include "sha256.h"

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static const char *compiler_for(const char *backend)
{
	if (strcmp(backend, "cuda") == 0) {
		const char *c = getenv("KSCI_NVCC");
		if (c && *c)
			return c;
		const char *home = getenv("CUDA_HOME");
		static char buf[PATH_MAX];
		snprintf(buf, sizeof buf, "%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
		return buf;
	}
	if (strcmp(backend, "hip") == 0)
		return env_or("KSCI_HIPCC", "hipcc");
	return env_or("KSCI_CC", "cc");
}

/* s cut at its first newline. */
static char *first_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/* First line of `compiler --version`, remembered per back end. */
static const char *compiler_identity(const char *backend, char *e)
{
	static char ids[8][256]; /* one per rec_backends entry */
	int i = 0;
	while (rec_backends[i] && strcmp(rec_backends[i], backend) != 0)
		i++;
	if (i >= 8)
		i = 0;
	if (ids[i][0])
		return ids[i];
	char *argv[] = {(char *)compiler_for(backend), "--version", NULL};
	struct proc_limits lim = {.wall_s = 30, .merge_stderr = 1};
	struct proc_result r;
	if (proc_run(argv, NULL, NULL, 0, &lim, &r, e) < 0)
		return NULL;
	if (!r.exited || r.code != 0) {
		errf(e, "%s backend: compiler %s not usable (%s)", backend, argv[0],
		     r.out_len ? first_line(r.out) : "no output");
		proc_result_free(&r);
		return NULL;
	}
	/* nvcc's useful line is the last ("Build cuda_13.0..."), others the first. */
	char *line = r.out, *last = NULL;
	for (char *p = r.out + strspn(r.out, "\n"); *p; p += strspn(p, "\n")) {
		last = p;
		p += strcspn(p, "\n");
		if (*p)
			*p++ = '\0';
	}
	if (strcmp(backend, "cuda") == 0 && last)
		line = last;
	snprintf(ids[i], sizeof ids[i], "%s", first_line(line));
	proc_result_free(&r);
	return ids[i];
}

/* Whether the host links with gold: ld.gold on the PATH the compiler runs
 * with (the jail's, else the caller's).  The link of a candidate's .so is
 * the last step after its device code, and GNU ld took 0.17 s of it where
 * gold takes 0.04 (the development machine; matmul's seed, -lcudadevrt and
 * -lcudart); the device code, and so the fatbinary in the .so, is the same
 * either way (docs/gpu.md, "Throughput").  $KSCI_HOST_LD=default: the
 * host compiler's own linker. */
static int gold_on_path(const struct sbx *s)
{
	static int known = -1;
	if (known >= 0)
		return known;
	if (envknob_is("KSCI_HOST_LD", "default"))
		return known = 0;
	const char *path = s && s->kind == SBX_BWRAP ? SBX_PATH : getenv("PATH");
	known = 0;
	for (const char *d = path ? path : ""; *d && !known; d += strcspn(d, ":"), d += *d == ':') {
		char p[PATH_MAX];
		int n = (int)strcspn(d, ":");
		if (n > 0 && snprintf(p, sizeof p, "%.*s/ld.gold", n, d) < (int)sizeof p)
			known = access(p, X_OK) == 0;
	}
	return known;
}

/* argv for the back end; flags (borrowed strings) also go into *flags. */
static int build_argv(const char *backend, const char *wrapper, const json_t *libs,
		      const struct compile_opts *o, char **argv, int max, json_t *flags)
{
	static char arch[64];
	int n = 0;
	argv[n++] = (char *)compiler_for(backend);
	const char *const *fl;
	static const char *const cflags[] = {"-std=gnu11", "-O3", "-march=native", "-fopenmp", "-fPIC",
					     "-shared", "-Wl,-Bsymbolic", NULL};
	/* -cudart shared: the candidate and the harness share one CUDA runtime,
	 * so launch errors the candidate leaves are seen by the harness. */
	/* ptxas --split-compile 0: one thread per kernel, the same machine
	 * code (every .text section byte for byte; only ptxas's note of its
	 * own options differs), 0.53 -> 0.38 s for matmul's seed on 16 cores
	 * (bench/ptxas-split.sh, docs/gpu.md).  nvcc's own --split-compile
	 * splits cicc too, whose PTX then differs: not used. */
	static const char *const cuflags[] = {"-O3", "-std=c++17", "-lineinfo", "-Xptxas", "-v", "-Xptxas", "--split-compile=0",
					      "-Xcompiler", "-fPIC", "-shared", "-cudart", "shared", NULL};
	static const char *const hipflags[] = {"-O3", "-std=c++17", "-fPIC", "-shared",
					       "-Rpass-analysis=kernel-resource-usage", NULL};
	if (strcmp(backend, "cuda") == 0) {
		const char *a = o->cuda_arch ? o->cuda_arch : env_or("KSCI_CUDA_ARCH", "sm_90a");
		/* Machine code for the one architecture and no PTX beside it: PTX
		 * for sm_90a cannot run anywhere else, and building it cost nvcc
		 * 23 % of its CPU time on the seeds (bench/nvcc-flags.sh,
		 * docs/gpu.md). */
		static char gencode[96];
		if (strncmp(a, "sm_", 3) == 0 && strlen(a) < 40) {
			snprintf(gencode, sizeof gencode, "arch=compute_%s,code=%s", a + 3, a);
			argv[n++] = "-gencode";
			json_array_append_new(flags, json_string("-gencode"));
			argv[n++] = gencode;
			json_array_append_new(flags, json_string(gencode));
			arch[0] = '\0';
		} else
			snprintf(arch, sizeof arch, "-arch=%s", a);
		fl = cuflags;
	} else if (strcmp(backend, "hip") == 0) {
		const char *a = o->hip_arch ? o->hip_arch : env_or("KSCI_HIP_ARCH", "gfx90a");
		snprintf(arch, sizeof arch, "--offload-arch=%s", a);
		fl = hipflags;
	} else {
		arch[0] = '\0';
		fl = cflags;
	}
	if (arch[0]) {
		argv[n++] = arch;
		json_array_append_new(flags, json_string(arch));
	}
	for (; *fl && n < max - 8; fl++) {
		argv[n++] = (char *)*fl;
		json_array_append_new(flags, json_string(*fl));
	}
	if (strcmp(backend, "cuda") == 0 && gold_on_path(o->sbx)) {
		argv[n++] = "-Xcompiler";
		argv[n++] = "-fuse-ld=gold";
		json_array_append_new(flags, json_string("-Xcompiler"));
		json_array_append_new(flags, json_string("-fuse-ld=gold"));
	}
	argv[n++] = "-o";
	argv[n++] = "out.so";
	argv[n++] = (char *)wrapper;
	size_t i;
	json_t *l;
	json_array_foreach(libs, i, l)
	{
		if (json_is_string(l) && n < max - 2) {
			argv[n++] = (char *)json_string_value(l);
			json_array_append(flags, l);
		}
	}
	if (strcmp(backend, "c") == 0 && n < max - 2) {
		argv[n++] = "-lm";
		json_array_append_new(flags, json_string("-lm"));
	}
	argv[n] = NULL;
	return n;
}

static const char *src_name(const char *backend)
{
	return strcmp(backend, "cuda") == 0 ? "candidate.cu" : strcmp(backend, "hip") == 0 ? "candidate.hip" : "candidate.c";
}

static const char *wrapper_name(const char *backend)
{
	return strcmp(backend, "cuda") == 0 ? "ksci_wrapper.cu" : strcmp(backend, "hip") == 0 ? "ksci_wrapper.hip" : "ksci_wrapper.c";
}

/* Load a finished entry: 1 hit; 0 miss (none, one from before entries were
 * sealed, or one another slot is removing); -1 an entry that does not match
 * its seal or its artifact's hash. */
static int load_entry(const char dir[PATH_MAX - 128], const char *key, struct compile_out *out)
{
	char p[PATH_MAX], e[ERRBUF], hex[65];
	snprintf(p, sizeof p, "%s/result.json", dir);
	if (access(p, F_OK) != 0)
		return 0;
	json_t *j = json_load_file(p, 0, NULL);
	int rc = -1;
	if (!json_is_object(j))
		goto bad;
	int seal = cache_seal_check(j, key);
	if (seal != 1) {
		rc = seal < 0 ? 0 : -1;
		goto bad;
	}
	out->ok = json_is_true(json_object_get(j, "ok"));
	if (out->ok) {
		snprintf(out->so, sizeof out->so, "%s/out.so", dir);
		if (access(out->so, F_OK) != 0) {
			rc = 0;
			goto bad;
		}
		const char *want = json_string_value(json_object_get(j, "artifact_sha256"));
		if (!want || cache_file_sha256(out->so, hex, e) < 0 || strcmp(hex, want) != 0)
			goto bad;
	}
	json_object_del(j, CACHE_SEAL); /* the entry's, not the record's */
	out->stage = j;
	return 1;
bad:
	json_decref(j);
	out->ok = 0;
	out->so[0] = '\0';
	return rc;
}

/* The stage of an entry loaded from the cache (out, by load_entry), as the
 * record shows it: cached, the compile's own seconds kept apart, this
 * lookup's seconds since t0, and where the object is. */
static void served_from_cache(struct compile_out *out, double t0)
{
	json_object_set_new(out->stage, "cached", json_true());
	json_object_set(out->stage, "compile_seconds", json_object_get(out->stage, "seconds"));
	json_object_set_new(out->stage, "seconds", json_real(proc_now() - t0));
	json_object_set_new(out->stage, "artifact", json_string(out->ok ? out->so : ""));
}

/* Copy the next line of *p (cut to n-1 bytes) into line and advance; 0 at the end. */
static int next_line(const char **p, char *line, size_t n)
{
	if (!*p || !**p)
		return 0;
	const char *nl = strchr(*p, '\n');
	size_t len = nl ? (size_t)(nl - *p) : strlen(*p);
	snprintf(line, n, "%.*s", (int)(len < n ? len : n - 1), *p);
	*p = nl ? nl + 1 : NULL;
	return 1;
}

/* What both parsers return: the kernels found (ks, consumed) and the maxima,
 * or NULL when the log named no kernel. */
static json_t *resources(json_t *ks, long maxreg, long maxsmem, long spills)
{
	if (json_array_size(ks) == 0) {
		json_decref(ks);
		return NULL;
	}
	return json_pack("{s:o, s:I, s:I, s:I}", "kernels", ks, "max_registers", (json_int_t)maxreg,
			 "max_smem_bytes", (json_int_t)maxsmem, "spills", (json_int_t)spills);
}

json_t *compile_parse_ptxas(const char *log)
{
	json_t *ks = json_array(), *cur = NULL;
	long maxreg = 0, maxsmem = 0, spills = 0;
	const char *p = log;
	char line[1024];
	while (next_line(&p, line, sizeof line)) {
		char name[512];
		long a, b, c;
		if (sscanf(line, "ptxas info : Compiling entry function '%511[^']'", name) == 1 ||
		    sscanf(line, "ptxas info    : Compiling entry function '%511[^']'", name) == 1) {
			cur = json_pack("{s:s}", "name", name);
			json_array_append_new(ks, cur);
		} else if (cur && strstr(line, "bytes stack frame") &&
			   sscanf(line, " %ld bytes stack frame, %ld bytes spill stores, %ld bytes spill loads", &a, &b, &c) == 3) {
			json_object_set_new(cur, "stack_bytes", json_integer(a));
			json_object_set_new(cur, "spill_stores", json_integer(b));
			json_object_set_new(cur, "spill_loads", json_integer(c));
			spills += b + c;
		} else if (cur && strstr(line, "Used ") && sscanf(strstr(line, "Used "), "Used %ld registers", &a) == 1) {
			json_object_set_new(cur, "registers", json_integer(a));
			if (a > maxreg)
				maxreg = a;
			const char *s = strstr(line, " bytes smem");
			long sm = 0;
			if (s) {
				const char *q = s;
				while (q > line && q[-1] != ' ')
					q--;
				sm = strtol(q, NULL, 10);
			}
			json_object_set_new(cur, "smem_bytes", json_integer(sm));
			if (sm > maxsmem)
				maxsmem = sm;
		}
	}
	return resources(ks, maxreg, maxsmem, spills);
}

json_t *compile_parse_amdgpu(const char *log)
{
	/* remark: <file>:L:C: Function Name: _Z6kernelPf [-Rpass-analysis=kernel-resource-usage]
	 * remark: ...: VGPRs: 12 / SGPRs: 18 / ScratchSize [bytes/lane]: 0 / LDS Size [bytes/block]: 0 */
	json_t *ks = json_array(), *cur = NULL;
	long maxreg = 0, maxlds = 0, spills = 0;
	const char *p = log;
	char line[1024];
	while (next_line(&p, line, sizeof line)) {
		const char *f;
		char name[512];
		long v;
		if ((f = strstr(line, "Function Name: ")) && sscanf(f, "Function Name: %511s", name) == 1) {
			cur = json_pack("{s:s}", "name", name);
			json_array_append_new(ks, cur);
		} else if (cur && (f = strstr(line, "VGPRs: ")) && sscanf(f, "VGPRs: %ld", &v) == 1) {
			json_object_set_new(cur, "registers", json_integer(v));
			if (v > maxreg)
				maxreg = v;
		} else if (cur && (f = strstr(line, "SGPRs: ")) && sscanf(f, "SGPRs: %ld", &v) == 1) {
			json_object_set_new(cur, "sgprs", json_integer(v));
		} else if (cur && (f = strstr(line, "ScratchSize [bytes/lane]: ")) &&
			   sscanf(f, "ScratchSize [bytes/lane]: %ld", &v) == 1) {
			json_object_set_new(cur, "stack_bytes", json_integer(v));
		} else if (cur && (f = strstr(line, "LDS Size [bytes/block]: ")) &&
			   sscanf(f, "LDS Size [bytes/block]: %ld", &v) == 1) {
			json_object_set_new(cur, "smem_bytes", json_integer(v));
			if (v > maxlds)
				maxlds = v;
		} else if (cur && (f = strstr(line, "VGPRs Spill: ")) && sscanf(f, "VGPRs Spill: %ld", &v) == 1) {
			json_object_set_new(cur, "spill_stores", json_integer(v));
			spills += v;
		}
	}
	return resources(ks, maxreg, maxlds, spills);
}

/* Bounds on one compilation; generous for any real kernel (nvcc on the
 * task suite stays under 1 GiB and writes objects of a few MB). */
#define COMPILE_MEM_MB 4096
#define COMPILE_OUT_MB 128

static int rm_rf(const char *dir)
{
	char *argv[] = {"rm", "-rf", (char *)dir, NULL};
	struct proc_limits lim = {.wall_s = 60};
	struct proc_result r;
	char e[ERRBUF];
	if (proc_run(argv, NULL, NULL, 0, &lim, &r, e) < 0)
		return -1;
	proc_result_free(&r);
	return 0;
}

/* This host's name for tmp directories: at most 64 bytes, '/' and '.' made '_'. */
static void host_tag(char *h, size_t n)
{
	if (gethostname(h, n) != 0)
		snprintf(h, n, "unknown");
	h[n - 1] = '\0';
	for (char *c = h; *c; c++)
		if (*c == '/' || *c == '.' || *c == '@')
			*c = '_';
}

/* Once per process: root's tmp.PID@HOST.* of this host (host: host_tag)
 * whose PID is gone and which are older than min_age seconds (a compile's
 * deadline and more), ours (uid), removed. */
static void tmp_sweep(const char *root, const char *host, double min_age)
{
	static int done;
	if (done)
		return;
	done = 1;
	DIR *d = opendir(root);
	struct dirent *de;
	char p[PATH_MAX];
	size_t hl = strlen(host);
	while (d && (de = readdir(d))) {
		long pid;
		int n = 0;
		if (sscanf(de->d_name, "tmp.%ld@%n", &pid, &n) != 1 || n == 0 || pid <= 0 || pid == (long)getpid() ||
		    strncmp(de->d_name + n, host, hl) != 0 || de->d_name[n + hl] != '.' || strlen(de->d_name + n + hl + 1) != 6)
			continue;
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", root, de->d_name);
		if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    difftime(time(NULL), st.st_mtime) < min_age)
			continue;
		if (!proc_gone(pid))
			continue;
		rm_rf(p);
	}
	if (d)
		closedir(d);
}

/* prog run in the jail the build runs in (o->sbx), seeing the build
 * directory tmp (writable) and nothing of the caller's: proc_run's. */
static int run_jailed(const struct compile_opts *o, const char *tmp, char *const *prog, const struct proc_limits *lim,
		      struct proc_result *r, char *e)
{
	struct sbx_bind bind = {tmp, 1};
	char **jail = sbx_argv(o->sbx, prog, &bind, 1, 0, NULL, tmp);
	if (!jail)
		return errf(e, "out of memory");
	int rc = proc_run(jail, tmp, NULL, 0, lim, r, e);
	sbx_argv_free(jail);
	return rc;
}

/* The wrapper's header part (its opening comment and its #include <...>
 * lines: task_write_wrapper): how many lines, and their bytes in *bytes. */
static int header_part(const char *w, size_t *bytes)
{
	int n = 0;
	const char *l = w;
	for (; *l; n++) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		int comment = n == 0 && len >= 4 && strncmp(l, "/*", 2) == 0 && strncmp(l + len - 2, "*/", 2) == 0 &&
			      !memchr(l + 2, '*', len - 4);
		if (!comment && strncmp(l, "#include <", 10) != 0)
			break;
		l += len + (nl != NULL);
	}
	*bytes = (size_t)(l - w);
	return n;
}

/* nvcc's steps for this build as a script that runs the host and the
 * device halves at once (lib/nvcc_steps.h): nvcc --dryrun in the build
 * directory, in the jail the build runs in; its plan into
 * tmp/ksci-steps.sh, the rest of it (the prefix's making script, the
 * device preprocessing command) into *plan.  0 done; -1 (why says it)
 * where nvcc is to run them itself.  $KSCI_NVCC_STEPS=serial: always nvcc
 * itself; $KSCI_NVCC_PREFIX=off: no prefix; $KSCI_NVCC_DLINK=joined: the
 * device link after the halves (into *joined: 1). */
static int nvcc_plan(char **argv, const struct compile_opts *o, const char *tmp, const char *key, int hlines,
		     struct nvcc_steps *plan, int *joined, char *why)
{
	*joined = envknob_is("KSCI_NVCC_DLINK", "joined");
	if (envknob_is("KSCI_NVCC_STEPS", "serial"))
		return errf(why, "KSCI_NVCC_STEPS=serial");
	char p[PATH_MAX], modid[64], *dry[72];
	int n = 0;
	dry[n++] = argv[0];
	dry[n++] = "--dryrun";
	dry[n++] = "--keep";
	dry[n++] = "--keep-dir";
	dry[n++] = NVCC_STEPS_DIR;
	for (int i = 1; argv[i] && n < 71; i++)
		dry[n++] = argv[i];
	dry[n] = NULL;
	snprintf(p, sizeof p, "%s/%s", tmp, NVCC_STEPS_DIR);
	if (mkdir(p, 0700) != 0)
		return errf(why, "mkdir %s: %s", p, strerror(errno));
	struct proc_limits lim = {.wall_s = 60, .mem_mb = COMPILE_MEM_MB, .merge_stderr = 1, .capture = 1 << 20};
	struct proc_result r;
	char e[ERRBUF];
	int rc = run_jailed(o, tmp, dry, &lim, &r, e);
	if (rc < 0)
		return errf(why, "nvcc --dryrun: %s", e);
	rc = -1;
	if (!r.exited || r.code != 0) {
		char d[128];
		proc_describe(&r, d, sizeof d);
		errf(why, "nvcc --dryrun %s", d);
	} else {
		/* The id both front ends name internal-linkage symbols with
		 * (nvcc's own is a hash too): the key's first 8 digits. */
		snprintf(modid, sizeof modid, "_%.8s_15_ksci_wrapper_cu", key);
		struct nvcc_steps_pre pre = {wrapper_name("cuda"), src_name("cuda"), hlines};
		int no_pre = envknob_is("KSCI_NVCC_PREFIX", "off");
		rc = nvcc_steps_plan(r.out, modid, no_pre ? NULL : &pre, *joined, plan, why);
		if (rc == 0 && no_pre)
			snprintf(plan->pre_why, sizeof plan->pre_why, "KSCI_NVCC_PREFIX=off");
	}
	proc_result_free(&r);
	if (rc < 0)
		return -1;
	snprintf(p, sizeof p, "%s/ksci-steps.sh", tmp);
	rc = file_write_atomic(p, plan->script, strlen(plan->script), e);
	if (rc < 0) {
		nvcc_steps_free(plan);
		return errf(why, "%s", e);
	}
	return 0;
}

/* What the build script said in its file NAME (NVCC_PREFIX_WHY,
 * NVCC_DLINK_WHY) in tmp's NVCC_STEPS_DIR: 1, its first line in why
 * (ERRBUF); 0 where it wrote none (why as it was) or it could not be read
 * (why says so). */
static int steps_said(const char *tmp, const char *name, char *why)
{
	char p[PATH_MAX], *w = NULL;
	snprintf(p, sizeof p, "%s/%s/%s", tmp, NVCC_STEPS_DIR, name);
	int said = access(p, F_OK) == 0 && file_read(p, &w, NULL, why) == 0;
	if (said)
		snprintf(why, ERRBUF, "%s", first_line(w));
	free(w);
	return said;
}

/* Why the candidate's text may do what the prefix cannot stand for, or
 * NULL: #import a header of the prefix (gcc reads a file #imported only
 * once, and nvcc's own run had seen the prefix's headers where the
 * candidate's part alone has not) — in any spelling: the word after line
 * splices are undone, or a universal character name, which could spell
 * it.  A kernel rarely has either ("important" in a comment is not the
 * word); nvcc's way is kept for those that do. */
static const char *prefix_refused_by(const char *src)
{
	size_t n = strlen(src);
	char *t = malloc(n + 1), *w = t;
	if (!t)
		return "out of memory";
	for (const char *p = src; *p; p++) {
		if (p[0] == '\\' && (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n'))) {
			p += p[1] == '\r' ? 2 : 1;
			continue;
		}
		*w++ = *p;
	}
	*w = '\0';
	int named = 0; /* "import" as a word of its own: not "important" */
	for (const char *q = t; !named && (q = strstr(q, "import")) != NULL; q += 6)
		named = (q == t || !(isalnum((unsigned char)q[-1]) || q[-1] == '_')) &&
			!(isalnum((unsigned char)q[6]) || q[6] == '_');
	const char *why = named ? "the candidate names import (#import reads a file once only)"
			  : strstr(t, "\\u") || strstr(t, "\\U") ? "the candidate has a universal character name"
								 : NULL;
	free(t);
	return why;
}

/* The device half's prefix for this build (lib/nvcc_steps.h) put into its
 * keep directory: from the cache (lib/nvcc_prefix.h), else made now, in
 * the jail, and stored.  "cached", "made" (why: why not from the cache),
 * or NULL with why (the build preprocesses as nvcc does).  Its key: this
 * host, the compiler, nvcc's device preprocessing command and the
 * wrapper's header part (its first hbytes). */
static const char *prefix_for(const struct compile_opts *o, const char *tmp, const char *ident, const char *wtext,
			      size_t hbytes, const char *source, const struct nvcc_steps *plan, char *why)
{
	if (!plan->mkpre)
		return errf(why, "%s", plan->pre_why), NULL;
	const char *no = prefix_refused_by(source);
	if (no)
		return errf(why, "%s", no), NULL;
	char root[PATH_MAX - 128], host[65], key[65], p[PATH_MAX], e[ERRBUF];
	if (cache_dir("nvcc-prefix", root, sizeof root, e) < 0)
		return errf(why, "%s", e), NULL;
	host_tag(host, sizeof host);
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, "ksci-nvcc-prefix-v1", 20);
	sha256_update(&h, host, strlen(host) + 1);
	sha256_update(&h, ident, strlen(ident) + 1);
	sha256_update(&h, plan->dev_pp, strlen(plan->dev_pp) + 1);
	sha256_update(&h, wtext, hbytes);
	sha256_hex(&h, key, 64);
	char miss[ERRBUF];
	if (nvcc_prefix_fetch(root, key, tmp, miss) == 1)
		return "cached";
	snprintf(p, sizeof p, "%s/ksci-mkpre.sh", tmp);
	if (file_write_atomic(p, plan->mkpre, strlen(plan->mkpre), e) < 0)
		return errf(why, "%s", e), NULL;
	char *sh[] = {"/bin/sh", "ksci-mkpre.sh", NULL};
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME_COARSE, &t0);
	struct proc_limits lim = {.nice = 10, .wall_s = 60, .fsize_mb = COMPILE_OUT_MB, .mem_mb = COMPILE_MEM_MB,
				  .merge_stderr = 1, .capture = 1 << 16};
	struct proc_result r;
	int rc = run_jailed(o, tmp, sh, &lim, &r, e);
	unlink(p);
	if (rc < 0)
		return errf(why, "the prefix: %s", e), NULL;
	int ok = r.exited && r.code == 0;
	if (!ok) {
		char d[128];
		proc_describe(&r, d, sizeof d);
		errf(why, "the prefix was not made (%s): %s", d, r.out_len ? first_line(r.out) : "no output");
	}
	proc_result_free(&r);
	if (!ok)
		return NULL;
	if (nvcc_prefix_store(root, key, tmp, &t0, e) < 0)
		return errf(why, "the prefix was made, not stored: %s", e), NULL;
	snprintf(why, ERRBUF, "%s", miss);
	return "made";
}

int compile_source(const struct task *t, const char *backend, const char *role, const char *source,
		   const struct compile_opts *o, struct compile_out *out, char *e)
{
	memset(out, 0, sizeof *out);
	char *owned = NULL;
	if (!source) {
		char path[PATH_MAX];
		if (task_file(t, role, backend, path, sizeof path, e) < 0)
			return -1;
		if (file_read(path, &owned, NULL, e) < 0)
			return -1;
		source = owned;
	}
	/* The reference is host C whatever the candidate's back end. */
	if (strcmp(role, "reference") == 0)
		backend = "c";
	int rc = -1;
	const char *transient = NULL; /* set when a failure is the machine's (below) */
	char root[PATH_MAX - 256], dir[PATH_MAX - 128], tmp[PATH_MAX - 128], p[PATH_MAX];
	char *wtext = NULL;
	size_t wlen = 0;
	tmp[0] = '\0';
	json_t *flags = json_array();
	const char *ident = compiler_identity(backend, e);
	if (!ident)
		goto done;
	if (cache_dir("compile", root, sizeof root, e) < 0)
		goto done;
	FILE *wm = open_memstream(&wtext, &wlen);
	if (!wm || task_write_wrapper(t, backend, src_name(backend), source, wm) < 0 || fclose(wm) != 0) {
		errf(e, "cannot generate the wrapper");
		goto done;
	}
	char *argv[64];
	const json_t *libs = strcmp(role, "candidate") == 0 ? NULL : task_libs(t, role, backend);
	build_argv(backend, wrapper_name(backend), libs, o, argv, 64, flags);

	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, "ksci-compile-v1", 16);
	sha256_update(&h, backend, strlen(backend) + 1);
	sha256_update(&h, ident, strlen(ident) + 1);
	char *fl = json_dumps(flags, JSON_COMPACT);
	sha256_update(&h, fl, strlen(fl) + 1);
	free(fl);
	if (strcmp(backend, "c") == 0) {
		char cpu[256];
		dev_host_cpu_model(cpu, sizeof cpu);
		sha256_update(&h, cpu, strlen(cpu) + 1);
	}
	sha256_update(&h, wtext, wlen);
	sha256_update(&h, source, strlen(source));
	char key[65];
	sha256_hex(&h, key, 64);
	snprintf(dir, sizeof dir, "%s/%s", root, key);

	double t0 = proc_now();
	int hit = o->no_cache ? 0 : load_entry(dir, key, out);
	if (hit > 0) {
		served_from_cache(out, t0);
		rc = 0;
		goto done;
	}
	if (hit < 0) {
		if (o->warn) {
			char m[ERRBUF];
			snprintf(m, sizeof m, "compile cache: entry %s does not match its recorded hash; recompiling", key);
			o->warn(o->warn_ctx, m);
		}
		rm_rf(dir); /* nobody may use it while this slot compiles */
	}
	char host[65];
	host_tag(host, sizeof host);
	tmp_sweep(root, host, 2.0 * (o->timeout_s > 0 ? o->timeout_s : 120) + 60);
	snprintf(tmp, sizeof tmp, "%s/tmp.%ld@%s.XXXXXX", root, (long)getpid(), host);
	if (!mkdtemp(tmp)) {
		errf(e, "mkdtemp %s: %s", tmp, strerror(errno));
		goto done;
	}
	snprintf(p, sizeof p, "%s/%s", tmp, src_name(backend));
	if (file_write_atomic(p, source, strlen(source), e) < 0)
		goto done;
	snprintf(p, sizeof p, "%s/%s", tmp, wrapper_name(backend));
	if (file_write_atomic(p, wtext, wlen, e) < 0)
		goto done;

	/* The compiler sees the toolchain and its build directory, nothing else
	 * (an #include of /etc/shadow or of the caller's files finds nothing);
	 * what it may take is bounded: COMPILE_MEM_MB of address space (an
	 * #include of /dev/zero), COMPILE_OUT_MB per file written (a 300 MB
	 * initialised array never reaches the cache). */
	char steps_why[ERRBUF] = "", prefix_why[ERRBUF] = "", dlink_why[ERRBUF] = "";
	struct nvcc_steps plan = {0};
	size_t hbytes;
	int hlines = header_part(wtext, &hbytes), joined = 0;
	int steps = strcmp(backend, "cuda") == 0 && nvcc_plan(argv, o, tmp, key, hlines, &plan, &joined, steps_why) == 0;
	const char *prefix = steps ? prefix_for(o, tmp, ident, wtext, hbytes, source, &plan, prefix_why) : NULL;
	nvcc_steps_free(&plan);
	char *sh[] = {"/bin/sh", "ksci-steps.sh", NULL};
	/* Niced: compiles are batch work, and kcompile -j 16 beside a judge that
	 * times kept it from the CPU it needs: on an H100 the timing cross-check
	 * called 2 of 64 honest children `wrong` while 16 nvcc ran (docs/gpu.md). */
	struct proc_limits lim = {.nice = 10, .wall_s = o->timeout_s > 0 ? o->timeout_s : 120, .fsize_mb = COMPILE_OUT_MB,
				  .mem_mb = COMPILE_MEM_MB, .merge_stderr = 1, .capture = 1 << 20};
	struct proc_result r;
	int prc = run_jailed(o, tmp, steps ? sh : argv, &lim, &r, e);
	/* Whether the build used the prefix: it says why where it did not. */
	if (prefix && steps_said(tmp, NVCC_PREFIX_WHY, prefix_why))
		prefix = NULL;
	/* Where the device link ran: after the halves, on the joined object,
	 * it says why (KSCI_NVCC_DLINK=joined: asked for). */
	if (steps && joined)
		snprintf(dlink_why, sizeof dlink_why, "KSCI_NVCC_DLINK=joined");
	else if (steps)
		steps_said(tmp, NVCC_DLINK_WHY, dlink_why);
	/* nvcc's intermediates (--keep: 4 MB of preprocessed source for a
	 * 100 KB out.so) never go into the cache; ksci-steps.sh, the recipe,
	 * does.  (None where nvcc_plan made no directory.) */
	snprintf(p, sizeof p, "%s/%s", tmp, NVCC_STEPS_DIR);
	if (strcmp(backend, "cuda") == 0 && access(p, F_OK) == 0)
		rm_rf(p);
	if (prc < 0)
		goto done;
	sbx_result(o->sbx, &r);
	int ok = !r.timed_out && r.exited && r.code == 0;
	const char *status = r.timed_out ? ST_TIMEOUT : ok ? "ok" : "error";
	/* A target this compiler does not know is not the candidate's fault:
	 * say so plainly instead of passing on clang's cryptic complaint. */
	char why[512] = "";
	if (!ok && !r.timed_out && strcmp(backend, "hip") == 0 && r.out &&
	    (strstr(r.out, "invalid target ID") || strstr(r.out, "nvalid offload arch") ||
	     strstr(r.out, "unknown target CPU") || strstr(r.out, "Unsupported CUDA gpu architecture"))) {
		status = ST_UNSUPPORTED;
		snprintf(why, sizeof why, "unsupported: %s does not support the AMD target %s (%s); "
			 "Debian's ROCm 5.2 hipcc builds gfx90a and gfx940, not gfx942; use --hip-arch gfx940 or a newer ROCm",
			 argv[0], argv[1] + strlen("--offload-arch="), ident);
	}
	/* Likewise nvcc and an architecture it does not know (--cuda-arch
	 * sm90a): before, each candidate was a compile_error of its own, cached,
	 * and with a model provider sent to be fixed. */
	const char *arch_line = !ok && !r.timed_out && strcmp(backend, "cuda") == 0 && r.out
					? strstr(r.out, "Unsupported gpu architecture")
					: NULL;
	if (arch_line) {
		status = ST_UNSUPPORTED;
		snprintf(why, sizeof why, "unsupported: %s does not know the architecture asked for (%.*s; %s); "
			 "kcompile --cuda-arch or KSCI_CUDA_ARCH: sm_NN of `nvcc --list-gpu-code`, sm_90a for Hopper",
			 argv[0], (int)strcspn(arch_line, "\n"), arch_line, ident);
	}
	/* A failure that is this machine's, not the source's — the compiler
	 * killed (by the deadline, the OOM killer, a person), a full disk, an
	 * interrupted call — is passed on but never cached: the same source
	 * compiles on the next try.  The rlimits above are deterministic, so
	 * what they stop (out of memory under COMPILE_MEM_MB) is cached. */
	if (!ok && !why[0]) {
		static const char *const env_errors[] = {"No space left on device", "Disk quota exceeded",
							 "Interrupted system call", "Resource temporarily unavailable",
							 "Input/output error", NULL};
		if (r.timed_out)
			transient = "the compiler ran past its deadline";
		else if (r.signaled)
			transient = "the compiler was killed by a signal";
		/* One of its steps killed (the OOM killer takes the largest, cicc
		 * or cc1, not the driver): nvcc exits 128 + SIGKILL after its
		 * shell's "Killed", gcc and clang say so. */
		else if ((strcmp(backend, "cuda") == 0 && r.exited && r.code == 128 + 9) ||
			 (r.out && (strstr(r.out, "Killed signal terminated program") ||
				    strstr(r.out, "unable to execute command: Killed"))))
			transient = "a step of the compiler was killed (SIGKILL)";
		for (int k = 0; !transient && r.out && env_errors[k]; k++)
			if (strstr(r.out, env_errors[k]))
				transient = env_errors[k];
	}
	/* The stage's seconds are all of it (the build directory, nvcc's
	 * --dryrun plan, the compiler); compiler_seconds the compiler's run
	 * alone (before, seconds were that, and a record's stage seconds left
	 * out the plan and the build directory: 0.07 s of a cuda compile on an
	 * H100 machine, docs/gpu.md). */
	json_t *st = json_pack("{s:b, s:s, s:f, s:f, s:b, s:s, s:s, s:O}", "ok", ok, "status", status, "seconds",
			       proc_now() - t0, "compiler_seconds", r.seconds, "cached", 0, "key", key, "compiler", ident,
			       "flags", flags);
	json_object_set_new(st, "sandbox", json_string(sbx_name(o->sbx)));
	if (strcmp(backend, "cuda") == 0) {
		json_object_set_new(st, "steps", json_string(steps ? "parallel" : "nvcc"));
		if (!steps)
			json_object_set_new(st, "steps_why", json_string(steps_why));
		else {
			json_object_set_new(st, "steps_prefix", json_string(prefix ? prefix : "nvcc"));
			if (prefix_why[0])
				json_object_set_new(st, "steps_prefix_why", json_string(prefix_why));
			/* Only a build that got to its link says where the link ran. */
			if (ok)
				json_object_set_new(st, "steps_dlink", json_string(dlink_why[0] ? "joined" : "early"));
			if (ok && dlink_why[0])
				json_object_set_new(st, "steps_dlink_why", json_string(dlink_why));
		}
	}
	if (why[0])
		json_object_set_new(st, "message", json_string(why));
	else if (!ok) {
		char d[128];
		proc_describe(&r, d, sizeof d);
		if (transient)
			json_object_set_new(st, "message", json_sprintf("%s %s: %s, a failure of this machine, not of the source "
									"(not cached: it compiles again next time)", argv[0], d, transient));
		else
			json_object_set_new(st, "message", json_sprintf("%s %s", argv[0], d));
	}
	if (transient)
		json_object_set_new(st, "transient", json_true());
	rec_set_log(st, "log", r.out, r.out_len);
	json_t *res = strcmp(backend, "cuda") == 0 ? compile_parse_ptxas(r.out)
		      : strcmp(backend, "hip") == 0 ? compile_parse_amdgpu(r.out) : NULL;
	if (res)
		json_object_set_new(st, "resources", res);
	proc_result_free(&r);
	if (ok) {
		char hex[65];
		snprintf(p, sizeof p, "%s/out.so", tmp);
		if (cache_file_sha256(p, hex, e) < 0) {
			json_decref(st);
			goto done;
		}
		json_object_set_new(st, "artifact_sha256", json_string(hex));
	}
	if (transient) { /* handed on, never stored: the build directory goes */
		out->ok = 0;
		out->stage = st;
		json_object_set_new(st, "artifact", json_string(""));
		if (o->warn) {
			char m[600];
			snprintf(m, sizeof m, "compile: %s (key %s): not cached", transient, key);
			o->warn(o->warn_ctx, m);
		}
		rc = 0;
		goto done;
	}
	snprintf(p, sizeof p, "%s/result.json", tmp);
	if (cache_seal(st, key) < 0 || json_dump_file(st, p, JSON_COMPACT) != 0) {
		json_decref(st);
		errf(e, "cannot write %s", p);
		goto done;
	}
	json_object_del(st, CACHE_SEAL);
	if (rename(tmp, dir) != 0) {
		/* Another slot finished the same key first: its entry is used in
		 * place where it loads — another tool may be loading it this
		 * moment (kverify got it from kcompile -j's first copy of a
		 * source while the second copy's compile replaced it: "out.so: No
		 * such file or directory", t18
		 * same-key-compiled-at-once-entry-replaced-under-reader).  One that
		 * does not load, or a forced rebuild, is replaced. */
		struct compile_out there = {0};
		if (!o->no_cache && load_entry(dir, key, &there) > 0) {
			rm_rf(tmp);
			tmp[0] = '\0';
			json_decref(st);
			*out = there;
			served_from_cache(out, t0);
			rc = 0;
			goto done;
		}
		rm_rf(dir);
		if (rename(tmp, dir) != 0) {
			errf(e, "rename %s: %s", dir, strerror(errno));
			json_decref(st);
			goto done;
		}
	}
	tmp[0] = '\0';
	out->ok = ok;
	out->stage = st;
	if (ok)
		snprintf(out->so, sizeof out->so, "%s/out.so", dir);
	json_object_set_new(st, "artifact", json_string(ok ? out->so : ""));
	rc = 0;
done:
	if ((rc < 0 || transient) && tmp[0] && strncmp(tmp, root, strlen(root)) == 0)
		rm_rf(tmp);
	json_decref(flags);
	free(wtext);
	free(owned);
	return rc;
}
