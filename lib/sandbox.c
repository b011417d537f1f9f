/*
 * sandbox: see sandbox.h.  The jail's shape follows what was measured on the
 * GPU machines (a CUDA IPC child inside bubblewrap works with its own /proc;
 * a new pid namespace with the host's /proc does not): --proc is always
 * given.  The options are written out here once, as a list, so the record's
 * "bubblewrap" means one thing.
 */
#include "sandbox.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"

struct vec {
	char **v;
	int n, cap, oom;
};

static void add(struct vec *a, const char *s)
{
	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		int nc = a->cap ? a->cap * 2 : 64;
		char **nv = realloc(a->v, (size_t)nc * sizeof *nv);
		if (!nv) {
			a->oom = 1;
			return;
		}
		a->v = nv;
		a->cap = nc;
	}
	if (!(a->v[a->n] = strdup(s))) {
		a->oom = 1;
		return;
	}
	a->v[++a->n] = NULL;
}

static void add3(struct vec *a, const char *opt, const char *x, const char *y)
{
	add(a, opt);
	add(a, x);
	if (y)
		add(a, y);
}

/* Debian 12 has merged /usr: /bin, /lib, /lib64, /sbin are links into it.
 * Recreate the links (or bind the directory where a system has a real one). */
static void root_dirs(struct vec *a)
{
	static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL};
	add3(a, "--ro-bind", "/usr", "/usr");
	for (int i = 0; top[i]; i++) {
		char link[PATH_MAX];
		struct stat st;
		if (lstat(top[i], &st) != 0)
			continue;
		ssize_t n = S_ISLNK(st.st_mode) ? readlink(top[i], link, sizeof link - 1) : -1;
		if (n > 0) {
			link[n] = '\0';
			add3(a, "--symlink", link, top[i]);
		} else if (S_ISDIR(st.st_mode)) {
			add3(a, "--ro-bind", top[i], top[i]);
		}
	}
	add3(a, "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache");
	/* Debian's alternatives are links through /etc (/usr/local/cuda ->
	 * /etc/alternatives/cuda -> /usr/local/cuda-13.0 on the GPU machines). */
	add3(a, "--ro-bind-try", "/etc/alternatives", "/etc/alternatives");
}

static void gpu_nodes(struct vec *a)
{
	glob_t g;
	if (glob("/dev/nvidia*", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			add3(a, "--dev-bind", g.gl_pathv[i], g.gl_pathv[i]);
		globfree(&g);
	}
	add3(a, "--dev-bind-try", "/dev/dri", "/dev/dri");
	add3(a, "--dev-bind-try", "/dev/kfd", "/dev/kfd");
	add3(a, "--ro-bind-try", "/sys", "/sys");
}

char **sbx_argv(const struct sbx *s, char *const *prog, const struct sbx_bind *binds, int nbinds, int gpu,
		const char *const *env, const char *cwd)
{
	struct vec a = {0};
	if (s && s->kind == SBX_BWRAP) {
		add(&a, s->bwrap);
		static const char *const fixed[] = {"--unshare-all", "--unshare-user", "--uid", "65534", "--gid",
						    "65534", "--die-with-parent", "--new-session", "--clearenv",
						    "--setenv", "PATH", SBX_PATH, "--setenv",
						    "HOME", "/tmp", NULL};
		for (int i = 0; fixed[i]; i++)
			add(&a, fixed[i]);
		for (int i = 0; env && env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			if (!eq)
				continue;
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
			add3(&a, "--setenv", name, eq + 1);
		}
		root_dirs(&a);
		add3(&a, "--proc", "/proc", NULL);
		add3(&a, "--dev", "/dev", NULL);
		/* before the binds: some live under /tmp.  1 GiB at most: a kernel
		 * cannot fill the machine's memory with files there. */
		add3(&a, "--size", "1073741824", NULL);
		add3(&a, "--tmpfs", "/tmp", NULL);
		if (gpu)
			gpu_nodes(&a);
		for (int i = 0; i < nbinds; i++)
			if (binds[i].path && access(binds[i].path, F_OK) == 0)
				add3(&a, binds[i].rw ? "--bind" : "--ro-bind", binds[i].path, binds[i].path);
		add3(&a, "--chdir", cwd ? cwd : "/tmp", NULL);
		add(&a, "--");
	}
	for (int i = 0; prog[i]; i++)
		add(&a, prog[i]);
	if (a.oom || !a.v) {
		sbx_argv_free(a.v);
		return NULL;
	}
	return a.v;
}

void sbx_argv_free(char **argv)
{
	for (int i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

void sbx_result(const struct sbx *s, struct proc_result *r)
{
	if (s && s->kind == SBX_BWRAP && r->exited && r->code > 128 && r->code <= 128 + 64) {
		r->exited = 0;
		r->signaled = 1;
		r->sig = r->code - 128;
	}
}

const char *sbx_name(const struct sbx *s) { return s && s->kind == SBX_BWRAP ? "bubblewrap" : "none"; }

int sbx_init(struct sbx *s, enum sbx_kind kind, char *e)
{
	s->kind = kind;
	if (kind == SBX_NONE)
		return 0;
	const char *b = getenv("KSCI_BWRAP");
	snprintf(s->bwrap, sizeof s->bwrap, "%s", b && *b ? b : "bwrap");
	char *prog[] = {"/bin/true", NULL};
	char **argv = sbx_argv(s, prog, NULL, 0, 0, NULL, NULL);
	if (!argv)
		return errf(e, "out of memory");
	struct proc_limits lim = {.wall_s = 30, .capture = 4096};
	struct proc_result r;
	char pe[ERRBUF];
	int rc = proc_run(argv, "/", NULL, 0, &lim, &r, pe);
	sbx_argv_free(argv);
	static const char refuse[] = "; refusing to run candidates without a sandbox (--unsafe-no-sandbox runs them "
				     "anyway, as the caller, with the caller's files and environment)";
	if (rc < 0)
		return errf(e, "bubblewrap (%s) cannot be started: %s%s", s->bwrap, pe, refuse);
	int ok = r.exited && r.code == 0;
	if (!ok) {
		char d[128];
		proc_describe(&r, d, sizeof d);
		size_t n = r.err_len;
		while (n && r.err[n - 1] == '\n')
			n--;
		errf(e, "bubblewrap (%s) cannot make its sandbox here (%s%s%.*s)%s", s->bwrap, d, n ? ": " : "",
		     (int)(n > 160 ? 160 : n), r.err, refuse);
	}
	proc_result_free(&r);
	return ok ? 0 : -1;
}
