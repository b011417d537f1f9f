/*
 * evaluate: see evaluate.h.  The harness reports on stdout as
 * "KSCI-RESULT <nonce> <json>"; the nonce is fresh per run, so text a kernel
 * prints cannot forge a verdict.  A harness that dies without that line died
 * because of the kernel (signal, CUDA fault, exit) or the clock: the record
 * says which, with the harness's stderr as the log.
 */
#include "evaluate.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "envknob.h"
#include "file.h"
#include "opt.h"
#include "proc.h"
#include "rec.h"
#include "rng.h"
#include "task.h"
#include "sha256.h"
#include "timecache.h"
#include "tool.h"

int eval_harness_path(const char *backend, char *buf, size_t n)
{
	const char *name = strcmp(backend, "cuda") == 0 ? "kharness-cuda" : "kharness";
	const char *dir = getenv("KSCI_HARNESS_DIR");
	char self[PATH_MAX];
	if (!dir || !*dir) {
		ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
		if (k <= 0)
			return -1;
		self[k] = '\0';
		char *s = strrchr(self, '/');
		if (s)
			*s = '\0';
		dir = self;
	}
	snprintf(buf, n, "%s/%s", dir, name);
	return access(buf, X_OK) == 0 ? 0 : -1;
}

const char *const stop_stats[] = {"mean", "median", "paired", NULL};

static const char *expect_status(const char *mode) { return strcmp(mode, "verify") == 0 ? ST_COMPILED : ST_VERIFIED; }

/* Whether this stage should act on a record in status st. */
static int wants(const struct eval_opts *o, const char *st)
{
	if (!st)
		return 0;
	if (strcmp(st, expect_status(o->mode)) == 0)
		return 1;
	if (!o->force)
		return 0;
	static const char *const after_compile[] = {ST_VERIFIED, ST_WRONG, ST_CRASHED, ST_TIMEOUT, ST_UNSUPPORTED, ST_TIMED, NULL};
	static const char *const after_verify[] = {ST_TIMED, ST_SLOW, NULL};
	/* A forced re-time takes verified/timed records; a candidate that failed
	 * verification is not timed even with --force. */
	const char *const *l = strcmp(o->mode, "verify") == 0 ? after_compile : after_verify;
	for (; *l; l++)
		if (strcmp(st, *l) == 0)
			return 1;
	return 0;
}

static char cand_compiler[256]; /* the candidate's compiler, for time.env */

/* 0: compiled, so holds the object; -1: not; -2: not, for a reason of the
 * machine (lib/compile.c's "transient": past its deadline under load,
 * killed, disk full), of the candidate or of the task's own objects, which
 * the record then says (t16, trusted-role-compile-timeout-blamed-on-candidate). */
static int compile_role(const struct task *t, const char *backend, const char *role, const char *src,
			const struct eval_opts *o, char *so, char sha[65], char *e)
{
	struct compile_out co;
	if (compile_source(t, backend, role, src, &o->copt, &co, e) < 0)
		return -1;
	int rc = 0;
	if (co.ok) {
		/* what it was built from (the compile cache's key): a copy
		 * that differs by a comment is another candidate */
		const char *h = json_string_value(json_object_get(co.stage, "key"));
		snprintf(so, PATH_MAX, "%s", co.so);
		snprintf(sha, 65, "%s", h ? h : "");
	}
	if (strcmp(role, "candidate") == 0) {
		const char *c = json_string_value(json_object_get(co.stage, "compiler"));
		snprintf(cand_compiler, sizeof cand_compiler, "%s", c ? c : "");
	}
	if (!co.ok) {
		int transient = json_is_true(json_object_get(co.stage, "transient"));
		const char *msg = json_string_value(json_object_get(co.stage, "message"));
		errf(e, "%s of task %s does not compile (%s)%s%s", role, t->name,
		     json_string_value(json_object_get(co.stage, "status")), transient && msg ? ": " : "",
		     transient && msg ? msg : "");
		rc = transient ? -2 : -1;
	}
	json_decref(co.stage);
	return rc;
}

static const char *top_status(const char *mode, const char *st)
{
	if (strcmp(st, "ok") == 0)
		return strcmp(mode, "verify") == 0 ? ST_VERIFIED : ST_TIMED;
	/* The harness's failure words are the record's statuses (docs/harness.md). */
	static const char *const same[] = {ST_WRONG, ST_TIMEOUT, ST_UNSUPPORTED, ST_SLOW, NULL};
	for (int i = 0; same[i]; i++)
		if (strcmp(st, same[i]) == 0)
			return same[i];
	return ST_CRASHED;
}

/* A fresh nonce for one exchange with a harness: 32 hex digits (out: 33 bytes). */
static void nonce_new(char *out)
{
	snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, rng_os_seed(), rng_os_seed());
}

/* The lines that end a long-lived judge's answer to the exchange of nonce:
 * its result on stdout (om), its log's end on stderr (em); 80 bytes each. */
static void judge_marks(const char *nonce, char *om, char *em)
{
	snprintf(om, 80, "KSCI-RESULT %s ", nonce);
	snprintf(em, 80, "KSCI-LOG-END %s", nonce);
}

/* Find our result line; NULL if the harness printed none. */
static json_t *find_result(const char *out, const char *nonce)
{
	char tag[64];
	snprintf(tag, sizeof tag, "KSCI-RESULT %s ", nonce);
	const char *p = out, *hit = NULL;
	while ((p = strstr(p, tag))) {
		if (p == out || p[-1] == '\n')
			hit = p;
		p++;
	}
	if (!hit)
		return NULL;
	hit += strlen(tag);
	size_t len = strcspn(hit, "\n");
	json_t *r = json_loadb(hit, len, 0, NULL);
	if (!json_is_object(r)) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/* One GPU, one judge at work: kverify's checks of the next record ran on the
 * GPU while ktime timed this one (a pipe runs its stages at once), and the
 * timing cross-check called 2 of 64 honest softmax children on an H100
 * `wrong` for it (docs/gpu.md).  Every GPU job holds an exclusive flock on
 * a file named after the device, in $KSCI_GPU_LOCK_DIR (default /tmp, which
 * every process of the host shares), for the whole job (the spare's start
 * holds it shared: spare_ask).  The lock file, open; -1 where it cannot be
 * opened (said once). */
static int gpu_lock_open(void)
{
	const char *dir = getenv("KSCI_GPU_LOCK_DIR"), *vis = getenv("CUDA_VISIBLE_DEVICES");
	char name[256], p[PATH_MAX];
	/* The device: entry KSCI_CUDA_DEVICE (default 0) of CUDA_VISIBLE_DEVICES, else that index. */
	long idx = envknob_device();
	snprintf(name, sizeof name, "%ld", idx);
	if (vis && *vis) {
		const char *q = vis;
		for (long i = 0; i < idx && q; i++)
			if ((q = strchr(q, ',')))
				q++;
		if (q && *q)
			snprintf(name, sizeof name, "%.*s", (int)strcspn(q, ","), q);
	}
	for (char *c = name; *c; c++)
		if (!(isalnum((unsigned char)*c) || *c == '-'))
			*c = '_';
	snprintf(p, sizeof p, "%s/ksci-gpu-%s.lock", dir && *dir ? dir : "/tmp", name);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	static atomic_int said; /* once, from either thread (spare_thread opens it too) */
	if (fd < 0 && atomic_fetch_add(&said, 1) == 0)
		fprintf(stderr, "ksci: cannot open the GPU lock %s: %s; timing without it\n", p, strerror(errno));
	return fd;
}

/* The lock taken exclusively; *waited: seconds it waited.  The fd to
 * close, or -1 where no lock could be made. */
static int gpu_lock(double *waited)
{
	int fd = gpu_lock_open();
	if (fd < 0)
		return -1;
	double t0 = proc_now();
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	*waited = proc_now() - t0;
	return fd;
}

/* The judge's jail: the argv that runs prog (the harness) with what it may
 * see — itself, the kernels' objects (paths[0..n), NULL skipped) and the
 * task, read-only; on a GPU also the device-facts cache, read-write, so the
 * measured peaks survive the run (a kernel could rewrite them: they only
 * feed "% of peak", never a speedup or a verdict).  NULL: out of memory. */
static char **judge_argv(const struct eval_opts *o, char **prog, const char *const *paths, int n, int gpu)
{
	char devcache[PATH_MAX] = "", cacheroot[PATH_MAX + 16] = "", de[ERRBUF];
	if (gpu && cache_dir("device", devcache, sizeof devcache, de) == 0) {
		snprintf(cacheroot, sizeof cacheroot, "KSCI_CACHE=%.*s", (int)(strrchr(devcache, '/') - devcache),
			 devcache);
	}
	const char *cudadev = getenv("KSCI_CUDA_DEVICE"), *visible = getenv("CUDA_VISIBLE_DEVICES");
	char env_dev[256] = "", env_vis[256] = "";
	if (cudadev)
		snprintf(env_dev, sizeof env_dev, "KSCI_CUDA_DEVICE=%s", cudadev);
	if (visible)
		snprintf(env_vis, sizeof env_vis, "CUDA_VISIBLE_DEVICES=%s", visible);
	const char *env[] = {cacheroot, env_dev, env_vis, NULL}; /* "" (unset) is skipped */
	struct sbx_bind binds[8] = {{prog[0], 0}};
	int nb = 1;
	for (int i = 0; i < n && nb < 6; i++)
		binds[nb++] = (struct sbx_bind){paths[i], 0};
	binds[nb++] = (struct sbx_bind){task_root(), 0};
	binds[nb++] = (struct sbx_bind){devcache[0] ? devcache : NULL, 1};
	return sbx_argv(&o->sbx, prog, binds, nb, gpu, env, NULL);
}

/*
 * The long-lived judge (docs/harness.md): one `kharness --serve` per back
 * end for the tool's whole run, in one jail, fed one job per record.  The
 * jail is made once, so the objects a job names cannot be bound into it
 * one by one: they are linked (or copied) into a stage directory of this
 * run's, bound read-only, named by their compile-cache key (a hash of what
 * they were built from) — a task's objects once, a candidate's for its job.
 */
/*
 * The spare's start, asked for (docs/harness.md "The spare"): on a GPU a
 * job says "spare_asked", and after its answer a thread of the tool waits
 * SPARE_YIELD_S (so that the next stage, which got this record just now,
 * takes the GPU lock first), then takes the GPU lock *shared* and asks the
 * judge for its spare ({"op": "spare"}), which the judge starts and waits
 * for; the lock goes with the answer.  Jobs hold the lock exclusively, so
 * no device context is made while any job on that GPU runs: on an H100 the
 * spare kverify's judge started after each answer made its context while
 * ktime timed the same candidate, and matmul's first size came out noisy
 * and was timed twice as long for every new candidate (12-16 batches
 * instead of 6), and a cached candidate's seed 9 % slow in 1 confirmation
 * of 8 (docs/gpu.md).  Two spares (two stages) may start at once: neither
 * times.  The next job on the judge first waits for the thread
 * (spare_join), without the rest of the yield.
 */
#define SPARE_YIELD_S 0.1
struct spare_ask {
	pthread_t th;
	int running;       /* a thread to join */
	atomic_int hurry;  /* the next job waits: no more yielding */
	atomic_int cancel; /* the tool is ending: no spare is wanted any more */
	double wall_s;     /* the exchange's deadline */
	int ended;         /* the judge ended while asked (it is stopped) */
};
struct judge {
	struct proc_srv srv;
	int pid;   /* the running judge's, for the record */
	long jobs; /* jobs the running judge answered */
	long starts;
	struct spare_ask sp;
};
static struct judge judges[2]; /* [0] c, [1] cuda */
static char stage_dir[PATH_MAX];

/* Empty a stage directory (it holds only the staged objects) and remove it. */
static void stage_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[PATH_MAX + 256];
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The stage directories of tools that were killed (SIGKILL: no eval_finish):
 * ksci-judge.PID.* in tmp, ours (same uid), whose PID is gone, removed — a
 * killed kverify or ktime left its directory behind for ever (t22,
 * killed-tool-left-its-stage-directory).  A live PID (or one reused) keeps
 * its directory. */
static void stage_sweep(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *de;
	char p[PATH_MAX + 256];
	while (d && (de = readdir(d))) {
		long pid;
		int n = 0;
		if (sscanf(de->d_name, "ksci-judge.%ld.%n", &pid, &n) != 1 || n == 0 || pid <= 0 || pid == (long)getpid())
			continue;
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", tmp, de->d_name);
		if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (!proc_gone(pid))
			continue;
		stage_remove(p);
	}
	if (d)
		closedir(d);
}

/* The judges of tools that were killed: a sandbox (bwrap) whose command
 * line names a stage directory ksci-judge.PID.XXXXXX of a PID that is gone,
 * ours (uid), killed.  When the tool dies just after it started a judge,
 * the outer bwrap dies with it before the inner one has set its own
 * parent-death signal, and the inner one — pid 1 of the sandbox's PID
 * namespace, which ignores every signal but SIGKILL — waits for ever for
 * the uid map the outer one never wrote (bubblewrap issue 633; seen after
 * the suite under load, and reproduced by killing ktime within 0.5 s of its
 * start).  Killing it ends the namespace.  t22, killed-tool-left-its-judge. */
static void judge_sweep(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char p[64], buf[16384];
	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		struct stat st;
		if (*end || pid <= 1 || pid == (long)getpid())
			continue;
		snprintf(p, sizeof p, "/proc/%ld/cmdline", pid);
		if (stat(p, &st) != 0 || st.st_uid != geteuid())
			continue;
		FILE *f = fopen(p, "r");
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		const char *base = strrchr(buf, '/');
		if (strcmp(base ? base + 1 : buf, "bwrap") != 0) /* argv[0] */
			continue;
		int serve = 0;
		long tool = 0;
		for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
			const char *a = buf + i, *j = strstr(a, "/ksci-judge.");
			long q;
			int m = 0;
			if (strcmp(a, "--serve") == 0)
				serve = 1;
			if (j && sscanf(j, "/ksci-judge.%ld.%n", &q, &m) == 1 && m > 0 && strlen(j + m) == 6)
				tool = q;
		}
		if (!serve || tool == (long)getpid() || !proc_gone(tool))
			continue;
		kill((pid_t)pid, SIGKILL);
	}
	if (d)
		closedir(d);
}

/* so's copy in the stage directory, in out (PATH_MAX). */
static int stage(const char *so, char *out, char *e)
{
	if (!stage_dir[0]) {
		const char *tmp = getenv("TMPDIR");
		tmp = tmp && *tmp ? tmp : "/tmp";
		stage_sweep(tmp);
		judge_sweep();
		snprintf(stage_dir, sizeof stage_dir, "%s/ksci-judge.%ld.XXXXXX", tmp, (long)getpid());
		if (!mkdtemp(stage_dir)) {
			int er = errno;
			stage_dir[0] = '\0';
			return errf(e, "cannot make the judge's stage directory: %s", strerror(er));
		}
		chmod(stage_dir, 0755);
	}
	/* .../<key>/out.so: the key names it */
	const char *end = strrchr(so, '/'), *beg = end;
	while (beg && beg > so && beg[-1] != '/')
		beg--;
	if (!end || end == beg)
		return errf(e, "%s: not a compile-cache object", so);
	snprintf(out, PATH_MAX, "%s/%.*s.so", stage_dir, (int)(end - beg), beg);
	if (access(out, R_OK) == 0 || link(so, out) == 0)
		return 0;
	char *data;
	size_t len;
	if (file_read(so, &data, &len, e) < 0)
		return -1;
	int rc = file_write_atomic(out, data, len, e);
	free(data);
	if (rc == 0)
		chmod(out, 0644);
	return rc;
}

/* Whether jobs leave their spare to be asked for (spare_ask): on a GPU,
 * or where KSCI_JUDGE_SPARE is "asked" ("after": the judge starts it after
 * its answer, as on a CPU, where nothing is locked). */
static int spare_asked(int gpu)
{
	if (envknob_is("KSCI_JUDGE_SPARE", "asked"))
		return 1;
	if (envknob_is("KSCI_JUDGE_SPARE", "after"))
		return 0;
	return gpu;
}

/* Whether jobs hold the GPU lock: on a GPU, and (for the tests) on the c
 * back end where KSCI_JUDGE_SPARE is "asked", which does there all a GPU does. */
static int locked(int gpu)
{
	return gpu || spare_asked(0);
}

static void *spare_thread(void *arg)
{
	struct judge *jd = arg;
	struct spare_ask *a = &jd->sp;
	double until = proc_now() + SPARE_YIELD_S;
	while (!atomic_load(&a->hurry) && proc_now() < until)
		usleep(2000);
	int fd = atomic_load(&a->cancel) ? -1 : gpu_lock_open();
	/* Polled, not waited for: flock cannot be interrupted by a cancel. */
	while (fd >= 0 && !atomic_load(&a->cancel) && flock(fd, LOCK_SH | LOCK_NB) != 0 &&
	       (errno == EWOULDBLOCK || errno == EINTR))
		usleep(2000);
	if (atomic_load(&a->cancel)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char nonce[33], line[96], om[80], em[80], e[ERRBUF];
	nonce_new(nonce);
	judge_marks(nonce, om, em);
	snprintf(line, sizeof line, "{\"op\":\"spare\",\"nonce\":\"%s\"}\n", nonce);
	/* What became of the spare is the next job's concern (none: it starts
	 * a child of its own); only a judge that ended is news here. */
	struct proc_result r;
	int rc = proc_srv_ask(&jd->srv, line, strlen(line), om, em, a->wall_s, 1 << 16, &r, e);
	a->ended = rc != 0;
	if (rc >= 0)
		proc_result_free(&r);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* After a job's answer (its lock let go): ask for the spare in a thread. */
static void spare_ask(struct judge *jd, const struct eval_opts *o)
{
	struct spare_ask *a = &jd->sp;
	if (a->running || !jd->srv.pid)
		return;
	atomic_store(&a->hurry, 0);
	atomic_store(&a->cancel, 0);
	a->wall_s = o->timeout_s > 0 ? o->timeout_s : 60;
	a->ended = 0;
	a->running = pthread_create(&a->th, NULL, spare_thread, jd) == 0;
}

/* Before anything else talks to the judge: the spare's exchange done
 * (tool NULL: the tool is ending, the exchange is dropped if not begun). */
static void spare_join(struct judge *jd, const char *tool)
{
	struct spare_ask *a = &jd->sp;
	if (!a->running)
		return;
	atomic_store(&a->hurry, 1);
	if (!tool)
		atomic_store(&a->cancel, 1);
	pthread_join(a->th, NULL);
	a->running = 0;
	if (a->ended && tool)
		fprintf(stderr, "%s: the judge (pid %d) left while its spare started; starting another\n", tool, jd->pid);
}

/* The tool a record's stage is judged by, for messages. */
static const char *tool_of(const struct eval_opts *o)
{
	return strcmp(o->mode, "verify") == 0 ? "kverify" : "ktime";
}

/* One job on the back end's judge, started (or restarted) as needed.  A
 * judge that dies between jobs (killed from outside while idle), or in a job
 * without having been asked to stop, is replaced and the job asked again,
 * once: a killed judge loses no record.  Returns as proc_run. */
static int judge_ask(struct judge *jd, const struct eval_opts *o, const char *harness, int gpu, const char *jtext,
		     const char *nonce, struct proc_result *r, char *e)
{
	char om[80], em[80];
	judge_marks(nonce, om, em);
	size_t n = strlen(jtext);
	char *line = malloc(n + 2);
	if (!line)
		return errf(e, "out of memory");
	memcpy(line, jtext, n);
	line[n] = '\n', line[n + 1] = '\0';
	int rc = -1;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (!jd->srv.pid) {
			char *prog[] = {(char *)harness, "--serve", NULL};
			const char *objs[] = {stage_dir};
			char **argv = judge_argv(o, prog, objs, 1, gpu);
			struct proc_limits lim = {.mem_mb = gpu ? 0 : o->mem_mb, .no_network = 1};
			rc = argv ? proc_srv_start(&jd->srv, argv, "/tmp", &lim, e) : errf(e, "out of memory");
			sbx_argv_free(argv);
			if (rc < 0)
				break;
			jd->pid = jd->srv.pid, jd->jobs = 0, jd->starts++;
		}
		rc = proc_srv_ask(&jd->srv, line, n + 1, om, em, o->timeout_s, 1 << 20, r, e);
		if (rc == 0) {
			jd->jobs++;
			/* A job that did not end ok, wrong, slow or unsupported
			 * ends its judge too (kharness --serve leaves). */
			json_t *res = find_result(r->out, nonce);
			if (!rec_judge_goes_on(json_string_value(json_object_get(res, "status"))))
				proc_srv_stop(&jd->srv);
			json_decref(res);
			/* the end mark is not part of the log */
			size_t ml = strlen(em);
			if (r->err_len > ml) {
				char *p = r->err + r->err_len - 1;
				while (p > r->err && p[-1] != '\n')
					p--;
				if (strncmp(p, em, ml) == 0)
					*p = '\0', r->err_len = (size_t)(p - r->err);
			}
			break;
		}
		if (rc < 0)
			break;
		/* It ended.  Killed by a signal it did not ask for, or gone with
		 * nothing said: not the job's doing; once more on a fresh one. */
		sbx_result(&o->sbx, r);
		json_t *said = find_result(r->out, nonce);
		int unasked = !r->timed_out && !said && (r->signaled || r->out_len == 0);
		json_decref(said);
		jd->jobs++;
		if (attempt == 0 && unasked) {
			fprintf(stderr, "%s: the judge (pid %d) %s; starting another for this record\n",
				tool_of(o), jd->pid,
				r->signaled ? "was killed" : "left");
			proc_result_free(r);
			continue;
		}
		break;
	}
	free(line);
	return rc < 0 ? -1 : 0;
}

json_t *eval_size_bounds(const char *option, const char *s, double factor, char *errbuf)
{
	json_error_t je;
	json_t *in = json_loads(s, JSON_REJECT_DUPLICATES, &je), *out = json_object();
	const char *k;
	json_t *v;
	if (!in || !json_is_object(in)) {
		errf(errbuf, "%s: %s", option, in ? "not a JSON object" : je.text);
		goto bad;
	}
	json_object_foreach(in, k, v)
	{
		double d = json_number_value(v);
		if (!json_is_number(v) || !(d >= 1e-6 && d <= 1e9)) {
			errf(errbuf, "%s: size \"%s\": not a number in 1e-6..1e9", option, k);
			goto bad;
		}
		json_object_set_new(out, k, json_real(d * factor));
	}
	json_decref(in);
	return out;
bad:
	json_decref(in);
	json_decref(out);
	return NULL;
}

void eval_finish(void)
{
	for (int i = 0; i < 2; i++) {
		spare_join(&judges[i], NULL);
		proc_srv_stop(&judges[i].srv);
	}
	if (!stage_dir[0])
		return;
	stage_remove(stage_dir);
	stage_dir[0] = '\0';
}

/* One record's stage as the judge is to run it: the objects as the judge
 * sees them (staged, for a long-lived one); NULL: the task has none. */
struct run {
	const struct eval_opts *o;
	const struct task *t;
	const char *backend, *harness;
	int gpu;
	struct judge *jd;
	const char *cand, *ref, *base, *seed, *refdev;
};

/* The device each back end's judge said it ran on last ([0] c, [1] cuda):
 * an earlier timing made on another is not confirmed here. */
static char last_device[2][512];

/* Ask the judge for one job of R, the options' fields overlaid by extra
 * (may be NULL).  Its answer (new; a verdict of the harness's dying where
 * it said none), or NULL with errbuf where it could not be asked. */
static json_t *run_job(const struct run *R, const json_t *extra, char *e)
{
	const struct eval_opts *o = R->o;
	int timing = strcmp(o->mode, "time") == 0;
	char nonce[33];
	nonce_new(nonce);
	json_t *seeds = json_array();
	int nseeds = timing ? 2 * (int)json_array_size(task_bench(R->t, R->backend)) : (o->nseeds > 0 ? o->nseeds : 3);
	for (int i = 0; i < nseeds; i++) {
		uint64_t s = o->seed ? o->seed + (uint64_t)i : rng_os_seed();
		json_array_append_new(seeds, json_integer((json_int_t)(s & ((1ULL << 53) - 1))));
	}
	json_t *job = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:O}", "mode", o->mode, "task", R->t->name,
				"tasks_root", task_root(), "backend", R->backend, "candidate", R->cand, "reference",
				R->ref, "nonce", nonce, "seeds", seeds);
	if (R->base)
		json_object_set_new(job, "baseline", json_string(R->base));
	if (R->seed)
		json_object_set_new(job, "seed", json_string(R->seed));
	if (R->refdev)
		json_object_set_new(job, "reference_dev", json_string(R->refdev));
	if (cand_compiler[0])
		json_object_set_new(job, "compiler", json_string(cand_compiler));
	if (o->sizes)
		json_object_set_new(job, "sizes", json_string(o->sizes));
	if (o->budget_s > 0)
		json_object_set_new(job, "budget_s", json_real(o->budget_s));
	if (o->processes > 0)
		json_object_set_new(job, "processes", json_integer(o->processes));
	if (o->batch_s > 0)
		json_object_set_new(job, "batch_s", json_real(o->batch_s));
	if (o->arena_mb > 0)
		json_object_set_new(job, "arena_mb", json_real(o->arena_mb));
	if (o->noise > 0)
		json_object_set_new(job, "noise", json_real(o->noise));
	if (o->peak_gbps > 0)
		json_object_set_new(job, "peak_gbps", json_real(o->peak_gbps));
	if (o->peak_gflops > 0)
		json_object_set_new(job, "peak_gflops", json_real(o->peak_gflops));
	if (o->peak_dram_gbps > 0)
		json_object_set_new(job, "peak_dram_gbps", json_real(o->peak_dram_gbps));
	if (o->stop_below > 0)
		json_object_set_new(job, "stop_below", json_real(o->stop_below));
	if (o->stop_below_sizes)
		json_object_set(job, "stop_below_sizes", o->stop_below_sizes);
	if (R->jd && o->anchor_every >= 0 && timing)
		json_object_set_new(job, "anchor_every", json_integer(o->anchor_every));
	if (o->target_rel_sem > 0)
		json_object_set_new(job, "target_rel_sem", json_real(o->target_rel_sem));
	if (timing && o->stop_stat >= 0)
		json_object_set_new(job, "stop_stat", json_string(stop_stats[o->stop_stat]));
	if (timing)
		json_object_set_new(job, "wake_cpu", json_string(hot_modes[o->wake_cpu]));
	if (R->jd && spare_asked(R->gpu))
		json_object_set_new(job, "spare_asked", json_true());
	if (o->min_runs > 0)
		json_object_set_new(job, "min_runs", json_integer(o->min_runs));
	if (o->max_runs > 0)
		json_object_set_new(job, "max_runs", json_integer(o->max_runs));
	/* The judge stops a hung child a little before the tool's own deadline
	 * kills the whole jail, so the record says which role hung and where. */
	if (o->timeout_s > 0)
		json_object_set_new(job, "timeout_s", json_real(o->timeout_s > 2 ? o->timeout_s * 0.95 - 0.5 : o->timeout_s * 0.8));
	if (extra) {
		json_object_update(job, (json_t *)extra);
		if (json_is_true(json_object_get(extra, "confirm"))) { /* a confirmation is never stopped early */
			json_object_del(job, "stop_below");
			json_object_del(job, "stop_below_sizes");
		}
	}
	char *jtext = json_dumps(job, JSON_COMPACT);
	json_decref(job);
	/* For profiling a run outside the sandbox (bench/ncu-agree.sh): the job
	 * of the last record, to feed to the harness by hand. */
	const char *dump = getenv("KSCI_JOB_DUMP");
	if (dump && *dump) {
		char de[ERRBUF];
		if (file_write_atomic(dump, jtext, strlen(jtext), de) < 0)
			fprintf(stderr, "%s: KSCI_JOB_DUMP: %s\n", o->mode, de);
	}
	struct proc_result r;
	int rc;
	double waited = 0;
	/* The spare's exchange first: it takes the lock (shared) itself. */
	if (R->jd)
		spare_join(R->jd, tool_of(o));
	int lock = locked(R->gpu) ? gpu_lock(&waited) : -1;
	if (R->jd) {
		rc = judge_ask(R->jd, o, R->harness, R->gpu, jtext, nonce, &r, e);
	} else {
		const char *objs[] = {R->cand, R->ref, R->base, R->seed, R->refdev};
		char *prog[] = {(char *)R->harness, NULL};
		char **argv = judge_argv(o, prog, objs, 5, R->gpu);
		struct proc_limits lim = {.wall_s = o->timeout_s, .mem_mb = R->gpu ? 0 : o->mem_mb, .capture = 1 << 20,
					  .no_network = 1};
		/* No file-size limit on the judge: its arena is a memfd, which the limit
		 * counts; each child it starts gets its own (lib/judge/kid.h). */
		rc = argv ? proc_run(argv, "/tmp", jtext, strlen(jtext), &lim, &r, e) : errf(e, "out of memory");
		sbx_argv_free(argv);
	}
	free(jtext);
	if (lock >= 0)
		close(lock);
	if (R->jd && spare_asked(R->gpu))
		spare_ask(R->jd, o);
	if (rc < 0) {
		json_decref(seeds);
		return NULL;
	}
	sbx_result(&o->sbx, &r);
	json_t *res = r.timed_out ? NULL : find_result(r.out, nonce);
	if (!res) {
		char d[128];
		proc_describe(&r, d, sizeof d);
		const char *st = r.timed_out ? ST_TIMEOUT : ST_CRASHED;
		/* The harness's last words say where it was. */
		const char *tail = r.err_len ? r.err + r.err_len : "";
		while (tail > r.err && tail[-1] == '\n')
			tail--;
		const char *ls = tail;
		while (ls > r.err && ls[-1] != '\n')
			ls--;
		res = json_pack("{s:b, s:s}", "ok", 0, "status", st);
		json_object_set_new(res, "message", json_sprintf("candidate %s%s%.*s", d, ls < tail ? "; last: " : "",
								   (int)(tail - ls), ls));
	}
	json_object_set_new(res, "seeds", seeds);
	json_object_set_new(res, "sandbox", json_string(sbx_name(&o->sbx)));
	if (R->gpu)
		json_object_set_new(res, "gpu_wait_s", json_real(waited));
	if (R->jd)
		json_object_set_new(res, "judge", json_pack("{s:s, s:i, s:i, s:i}", "kind", "long-lived", "pid", R->jd->pid,
							     "job", (int)R->jd->jobs, "started", (int)R->jd->starts));
	else
		json_object_set_new(res, "judge", json_pack("{s:s}", "kind", "fresh"));
	if (r.err_len)
		rec_set_log(res, "log", r.err, r.err_len);
	char dev[512];
	tcache_device(json_object_get(res, "env"), dev, sizeof dev);
	if (dev[0])
		snprintf(last_device[R->gpu], sizeof last_device[R->gpu], "%s", dev);
	proc_result_free(&r);
	return res;
}

/* The key of R's time result in the time cache (lib/timecache.h): every
 * role's object by its compile-cache key, a hash of what it was built from
 * (hashes: candidate, reference, device reference, baseline, seed; "-" for
 * none), the task's definition, the
 * harness and the options that change what a timing measures.  The device
 * is not in it: an entry says its own, and is confirmed only on that one. */
static int time_key(const struct run *R, const char *const hashes[5], char key[65])
{
	static char harness_sha[2][65];
	char e[ERRBUF];
	if (!harness_sha[R->gpu][0] && cache_file_sha256(R->harness, harness_sha[R->gpu], e) < 0)
		return -1;
	for (int i = 0; i < 5; i++)
		if (!hashes[i][0])
			return -1;
	const struct eval_opts *o = R->o;
	char *def = json_dumps(R->t->json, JSON_COMPACT | JSON_SORT_KEYS);
	if (!def)
		return -1;
	char opts[512];
	/* The stopping rule: no words for the back end's own (the harness's hash
	 * stands for it), " of the WORD" for a rule asked by name. */
	int named = o->stop_stat >= 0;
	snprintf(opts, sizeof opts, "budget %.17g sem %.17g%s%s runs %d..%d processes %d batch %.17g arena %.17g noise %.17g "
		 "peaks %.17g %.17g %.17g anchor %d judge %s sandbox %s%s%s",
		 o->budget_s, o->target_rel_sem, named ? " of the " : "", named ? stop_stats[o->stop_stat] : "", o->min_runs, o->max_runs, o->processes, o->batch_s, o->arena_mb, o->noise,
		 o->peak_gbps, o->peak_gflops, o->peak_dram_gbps, o->anchor_every, R->jd ? "long-lived" : "fresh",
		 sbx_name(&o->sbx), o->wake_cpu == 1 ? "" : " wake-cpu ", /* the default's key as before the option */
		 o->wake_cpu == 1 ? "" : hot_modes[o->wake_cpu]);
	struct sha256 h;
	sha256_init(&h);
	const char *parts[] = {"ksci-time-v1", R->backend, R->t->name, def, harness_sha[R->gpu], opts,
			       hashes[0], hashes[1], hashes[2], hashes[3], hashes[4]};
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
		sha256_update(&h, parts[i], strlen(parts[i]) + 1);
	sha256_hex(&h, key, 64);
	free(def);
	return 0;
}

/* Batches per role of a confirmation (ktime --retime confirm), as long as a
 * full timing's: with half as long, 10 of 48 cached candidates on an H100
 * disagreed with their earlier timing (all 48 agreed at full length;
 * docs/gpu.md). */
#define CONFIRM_RUNS 4

/* A candidate timed before (entry E): time it again at one size with a few
 * batches; where the speed-up agrees with E's, E's figures with this run's
 * own fields (log, judge) are the answer; where the confirmation failed
 * (wrong, crashed, timeout), its verdict is.  NULL: time in full (*note,
 * new, then says why the confirmation did not serve). */
static json_t *confirm(const struct run *R, const json_t *E, json_t **note, char *e)
{
	char dev[512];
	tcache_device(json_object_get(E, "env"), dev, sizeof dev);
	int k = tcache_confirm_size(E, task_bench(R->t, R->backend));
	if (k < 0 || !tcache_within_bounds(E, R->o->stop_below, R->o->stop_below_sizes) ||
	    (last_device[R->gpu][0] && strcmp(last_device[R->gpu], dev) != 0))
		return NULL;
	/* The candidate beside the seed alone (the baseline only where there is
	 * no seed: what is compared), no anchors. */
	json_t *extra = json_pack("{s:i, s:i, s:i, s:b, s:i}", "only_size", k, "min_runs", CONFIRM_RUNS, "max_runs",
				  CONFIRM_RUNS, "confirm", 1, "anchor_every", 0);
	struct run C = *R;
	if (C.seed)
		C.base = NULL;
	json_t *c = run_job(&C, extra, e);
	json_decref(extra);
	if (!c) {
		e[0] = '\0'; /* the full timing asks again, and says what fails */
		return NULL;
	}
	const char *st = json_string_value(json_object_get(c, "status"));
	if (!st || strcmp(st, "ok") != 0) {
		if (st && strcmp(st, ST_UNSUPPORTED) == 0) {
			json_decref(c);
			return NULL;
		}
		*note = json_pack("{s:s, s:s, s:b, s:s}", "mode", "confirm", "stored_at",
				  tcache_stored_at(E),
				  "agreed", 0, "why", "the confirmation's own verdict");
		return c;
	}
	if (!tcache_agree(E, c, R->o->confirm_pct, note)) {
		json_decref(c);
		return NULL;
	}
	json_t *r = json_deep_copy(E);
	static const char *const own[] = {"log", "judge", "gpu_wait_s", "candidate_child", "sandbox", NULL};
	for (int i = 0; own[i]; i++)
		if (json_object_get(c, own[i]))
			json_object_set(r, own[i], json_object_get(c, own[i]));
	json_object_set(*note, "seeds", json_object_get(c, "seeds"));
	json_object_del(r, "stored_at");
	json_decref(c);
	return r;
}

int eval_record(json_t *rec, const struct eval_opts *o, const char **msg)
{
	static char m[ERRBUF + 64];
	char e[ERRBUF] = "";
	const char *stage_name = strcmp(o->mode, "verify") == 0 ? "verify" : "time";
	*msg = NULL;
	if (!wants(o, rec_str(rec, "status")))
		return 0;
	static const char *const need[] = {"task", "backend", "source", NULL};
	const char *miss = rec_missing_str(rec, need);
	if (miss) {
		snprintf(m, sizeof m, "missing field \"%s\"", miss);
		rec_invalid(rec, stage_name, 0, m);
		*msg = m;
		return 1;
	}
	const char *backend = rec_str(rec, "backend");
	if (!task_backend_ok(backend)) {
		snprintf(m, sizeof m, "unknown backend \"%s\" (c, cuda or hip)", backend);
		rec_invalid(rec, stage_name, 0, m);
		*msg = m;
		return 1;
	}
	const struct task *t = task_get(NULL, rec_str(rec, "task"), e);
	if (!t) {
		snprintf(m, sizeof m, "%s", e);
		rec_invalid(rec, stage_name, 0, m);
		*msg = m;
		return 1;
	}
	double t0 = proc_now();
	char harness[PATH_MAX];
	if (strcmp(backend, "hip") == 0) {
		rec_fail(rec, stage_name, ST_UNSUPPORTED, ST_UNSUPPORTED, "unsupported: no HIP device (ksci runs hip candidates only where an AMD GPU and ROCm runtime are present)");
		return 0;
	}
	if (eval_harness_path(backend, harness, sizeof harness) < 0) {
		snprintf(m, sizeof m, "unsupported: no harness for backend %s (%s not built)", backend, harness);
		rec_fail(rec, stage_name, ST_UNSUPPORTED, ST_UNSUPPORTED, m);
		return 0;
	}
	char cand[PATH_MAX], ref[PATH_MAX], base[PATH_MAX], seedso[PATH_MAX], refdev[PATH_MAX];
	/* The candidate, the reference, and a device reference for benchmark
	 * sizes where the task has one; without any of them nothing is judged,
	 * and a compile that failed for the machine's sake says so. */
	char rrole[64];
	snprintf(rrole, sizeof rrole, "reference_%s", backend);
	int have_refdev = strcmp(backend, "c") != 0 && json_object_get(t->json, rrole);
	char h_cand[65] = "", h_ref[65] = "", h_refdev[65] = "-", h_base[65] = "-", h_seed[65] = "-";
	int cr = compile_role(t, backend, "candidate", rec_str(rec, "source"), o, cand, h_cand, e);
	if (cr == 0)
		cr = compile_role(t, backend, "reference", NULL, o, ref, h_ref, e);
	if (cr == 0 && have_refdev)
		cr = compile_role(t, backend, rrole, NULL, o, refdev, h_refdev, e);
	if (cr < 0) {
		rec_fail(rec, stage_name, "error", ST_CRASHED, e);
		if (cr == -2)
			json_object_set_new(json_object_get(rec, stage_name), "transient", json_true());
		snprintf(m, sizeof m, "%s", e);
		*msg = m;
		return 1;
	}
	int timing = strcmp(o->mode, "time") == 0;
	int have_base = 0, have_seed = 0;
	if (timing) {
		if (compile_role(t, backend, "baseline", NULL, o, base, h_base, e) == 0)
			have_base = 1;
		else
			fprintf(stderr, "%s: task %s: %s; timing without a baseline\n", "ktime", t->name, e);
		if (compile_role(t, backend, "seed", NULL, o, seedso, h_seed, e) == 0)
			have_seed = 1;
	}
	int gpu = strcmp(backend, "c") != 0;
	struct judge *jd = o->fresh_judge ? NULL : &judges[gpu];
	/* The long-lived judge sees the objects in its stage directory. */
	char s_cand[PATH_MAX], s_ref[PATH_MAX], s_base[PATH_MAX], s_seed[PATH_MAX], s_refdev[PATH_MAX];
	if (jd && (stage(cand, s_cand, e) < 0 || stage(ref, s_ref, e) < 0 || (have_base && stage(base, s_base, e) < 0) ||
		   (have_seed && stage(seedso, s_seed, e) < 0) || (have_refdev && stage(refdev, s_refdev, e) < 0))) {
		rec_fail(rec, stage_name, "error", ST_CRASHED, e);
		snprintf(m, sizeof m, "%s", e);
		*msg = m;
		return 1;
	}
	struct run R = {o, t, backend, harness, gpu, jd, jd ? s_cand : cand, jd ? s_ref : ref,
			have_base ? (jd ? s_base : base) : NULL, have_seed ? (jd ? s_seed : seedso) : NULL,
			have_refdev ? (jd ? s_refdev : refdev) : NULL};
	json_t *res = NULL, *note = NULL;
	char key[65] = "";
	int served = 0; /* res is an earlier timing, confirmed, or the confirmation's verdict */
	const char *const hashes[] = {h_cand, h_ref, h_refdev, h_base, h_seed};
	if (timing && time_key(&R, hashes, key) < 0)
		key[0] = '\0'; /* not kept */
	/* A full timing is kept whatever --retime says; only confirm looks. */
	if (key[0] && (o->retime > 0 || (o->retime < 0 && !o->force))) {
		json_t *E = tcache_load(key, e);
		if (!E && e[0])
			fprintf(stderr, "ktime: %s\n", e);
		res = E ? confirm(&R, E, &note, e) : NULL;
		served = res != NULL;
		json_decref(E);
	}
	if (!res)
		res = run_job(&R, NULL, e);
	/* The candidate's object leaves the stage with its job (a task's stays
	 * for the next). */
	if (jd && strcmp(s_cand, s_ref) != 0 && (!have_base || strcmp(s_cand, s_base) != 0) &&
	    (!have_seed || strcmp(s_cand, s_seed) != 0))
		unlink(s_cand);
	if (!res) {
		json_decref(note);
		rec_fail(rec, stage_name, "error", ST_CRASHED, e);
		snprintf(m, sizeof m, "%s", e);
		*msg = m;
		return 1;
	}
	if (key[0] && !served && tcache_keepable(res) && tcache_store(key, res, e) < 0)
		fprintf(stderr, "ktime: %s (not kept)\n", e);
	if (note)
		json_object_set_new(res, "retime", note);
	json_object_set_new(res, "seconds", json_real(proc_now() - t0));
	const char *st = json_string_value(json_object_get(res, "status"));
	rec_set_status(rec, top_status(o->mode, st ? st : ST_CRASHED));
	json_object_set_new(rec, stage_name, res);
	/* The judge could not judge for the machine's sake (harness.c
	 * machine_fault): said, and the tool's exit status says so, as for a
	 * compile of the machine's. */
	if (json_is_true(json_object_get(res, "transient"))) {
		const char *said = json_string_value(json_object_get(res, "message"));
		snprintf(m, sizeof m, "%s", said ? said : "the judge failed");
		*msg = m;
		return 1;
	}
	return 0;
}

int eval_tool_fn(struct tool *t, json_t *rec, void *ctx)
{
	const char *msg;
	int bad = eval_record(rec, ctx, &msg);
	if (msg)
		tool_warn(t, "%s", msg);
	tool_emit(t, rec);
	return bad;
}

int eval_init(struct eval_opts *o, char *e)
{
	if (sbx_init(&o->sbx, o->unsafe_no_sandbox ? SBX_NONE : SBX_BWRAP, e) < 0)
		return -1;
	o->copt.sbx = &o->sbx; /* the kernels it compiles (through the cache) too */
	return 0;
}

int eval_option(struct eval_opts *o, int ch, const char *arg, char *e)
{
	switch (ch) {
	case 'f': o->force = 1; return 1;
	case 't': return opt_double("--timeout", arg, 0.1, 86400, &o->timeout_s, e) < 0 ? -1 : 1;
	case 'm': return opt_long("--mem", arg, 0, 1L << 30, &o->mem_mb, e) < 0 ? -1 : 1;
	case 's': return opt_u64("--seed", arg, &o->seed, e) < 0 ? -1 : 1;
	case 'T': setenv("KSCI_TASKS", arg, 1); return 1;
	case 'U': o->unsafe_no_sandbox = 1; return 1;
	case 'F': o->fresh_judge = 1; return 1;
	default: return 0;
	}
}
