/* Unit tests for proc (sandboxed children), task (validation, signature,
 * wrapper) and compile's resource parsers. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile.h"
#include "proc.h"
#include "t.h"
#include "task.h"

/* proc's sleeps, counted: this definition is linked before libc's. */
static int usleeps;
int usleep(useconds_t us)
{
	usleeps++;
	struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
	return nanosleep(&ts, NULL);
}

static void test_proc(void)
{
	char e[ERRBUF];
	struct proc_result r;
	struct proc_limits lim = {.wall_s = 5};
	char *echo[] = {"sh", "-c", "cat; echo err >&2; exit 3", NULL};
	T_OK(proc_run(echo, NULL, "hello", 5, &lim, &r, e) == 0, "proc runs a child");
	T_OK(r.exited && r.code == 3 && strcmp(r.out, "hello") == 0 && strcmp(r.err, "err\n") == 0,
	     "stdin delivered, stdout/stderr captured, exit code kept");
	proc_result_free(&r);

	/* A hang whose grandchild holds the pipe open: the deadline kills the group. */
	char *hang[] = {"sh", "-c", "sleep 100 & sleep 100", NULL};
	lim.wall_s = 0.5;
	double t0 = proc_now();
	T_OK(proc_run(hang, NULL, NULL, 0, &lim, &r, e) == 0 && r.timed_out && r.signaled && r.sig == SIGKILL,
	     "deadline kills a hanging child");
	T_OK(proc_now() - t0 < 3, "and does not wait for its grandchildren (%.2f s)", proc_now() - t0);
	proc_result_free(&r);

	char *segv[] = {"sh", "-c", "kill -SEGV $$", NULL};
	lim.wall_s = 5;
	proc_run(segv, NULL, NULL, 0, &lim, &r, e);
	char d[128];
	proc_describe(&r, d, sizeof d);
	T_OK(r.signaled && r.sig == SIGSEGV && strstr(d, "signal 11"), "a signal is reported (%s)", d);
	proc_result_free(&r);

	char *flood[] = {"sh", "-c", "yes | head -c 5000000", NULL};
	lim.capture = 1000;
	proc_run(flood, NULL, NULL, 0, &lim, &r, e);
	T_OK(r.out_len == 1000 && r.out_total == 5000000 && r.exited && r.code == 0, "output beyond the capture bound is counted and dropped");
	proc_result_free(&r);

	char *cpu[] = {"sh", "-c", "while :; do :; done", NULL};
	struct proc_limits cl = {.wall_s = 10, .cpu_s = 1};
	proc_run(cpu, NULL, NULL, 0, &cl, &r, e);
	T_OK(r.signaled && (r.sig == SIGXCPU || r.sig == SIGKILL) && !r.timed_out, "CPU limit stops a spinning child");
	proc_result_free(&r);

	char *none[] = {"/nonexistent/prog", NULL};
	proc_run(none, NULL, NULL, 0, &lim, &r, e);
	T_OK(r.exited && r.code == 127 && strstr(r.err, "cannot run"), "a missing program exits 127 with a message");
	proc_result_free(&r);

	/* Bug: a child that exits without reading its stdin made the caller's
	 * write fail with SIGPIPE, which killed kverify (and kgen's cmd provider
	 * only survived by ignoring SIGPIPE for the whole process). */
	size_t big = 4 << 20;
	char *in = malloc(big);
	memset(in, 'x', big);
	char *deaf[] = {"true", NULL};
	T_OK(proc_run(deaf, NULL, in, big, &lim, &r, e) == 0 && r.exited && r.code == 0,
	     "sigpipe: a child that never reads its 4 MiB stdin does not kill the caller");
	proc_result_free(&r);
	free(in);
	struct sigaction sa;
	sigset_t pend;
	sigaction(SIGPIPE, NULL, &sa);
	sigpending(&pend);
	T_OK(sa.sa_handler == SIG_DFL && !sigismember(&pend, SIGPIPE),
	     "sigpipe: and leaves SIGPIPE's disposition alone, with none pending");

	const char *env[] = {"KSCI_T_A=one", "KSCI_T_B=two words", NULL};
	struct proc_limits el = {.wall_s = 5, .env = env};
	char *show[] = {"sh", "-c", "printf '%s|%s' \"$KSCI_T_A\" \"$KSCI_T_B\"", NULL};
	T_OK(proc_run(show, NULL, NULL, 0, &el, &r, e) == 0 && strcmp(r.out, "one|two words") == 0,
	     "env: extra variables reach the child (%s)", r.out);
	proc_result_free(&r);
	T_OK(getenv("KSCI_T_A") == NULL, "env: and not the caller");

	/* proc-run-sleeps-after-the-child: a child whose pipes closed before
	 * it could be reaped was looked at again only after a 50 ms sleep, so
	 * every run took up to 50 ms more than its child (three a compile:
	 * nvcc's plan, the build script, rm -rf).  Now its end wakes the loop
	 * (a pidfd): no sleep at all, however long the child runs after its
	 * pipes closed. */
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		printf("ok %d # SKIP no pidfd_open here (%s)\n", ++t_n, strerror(errno));
	else {
		close(pidfd);
		char *quiet[] = {"sh", "-c", "exec >&- 2>&-; sleep 0.2; exit 4", NULL};
		usleeps = 0;
		T_OK(proc_run(quiet, NULL, NULL, 0, &lim, &r, e) == 0 && r.exited && r.code == 4 && usleeps == 0,
		     "proc-run-sleeps-after-the-child: pipes closed first, the exit seen without a sleep (%d sleeps)",
		     usleeps);
		proc_result_free(&r);
	}
}

static char root[] = "/tmp/ksci-t-exec-XXXXXX";

static void write_task(const char *name, const char *json)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, name);
	mkdir(p, 0777);
	snprintf(p, sizeof p, "%s/%s/task.json", root, name);
	FILE *f = fopen(p, "w");
	fputs(json, f);
	fclose(f);
	snprintf(p, sizeof p, "%s/%s/reference.c", root, name);
	f = fopen(p, "w");
	fputs("/* ref */\n", f);
	fclose(f);
}

#define ARGS "\"args\": [{\"name\": \"x\", \"kind\": \"in\", \"dtype\": \"f32\", \"shape\": [\"n\"]}, " \
	     "{\"name\": \"y\", \"kind\": \"out\", \"dtype\": \"f32\", \"shape\": [\"n\", 2]}, " \
	     "{\"name\": \"n\", \"kind\": \"scalar\", \"dtype\": \"i32\"}]"

static void test_task(void)
{
	char e[ERRBUF];
	T_OK(mkdtemp(root) != NULL, "temp tasks root");
	write_task("good", "{" ARGS ", \"tests\": [{\"n\": 3}], \"bench\": [{\"n\": 1000}], "
			   "\"tolerance\": {\"f32\": {\"atol\": 1e-5, \"rtol\": 1e-4}}, \"reference\": \"reference.c\", "
			   "\"flops\": \"2*n\"}");
	const struct task *t = task_get(root, "good", e);
	T_OK(t != NULL, "a valid task loads (%s)", t ? "" : e);
	if (!t)
		return;
	char sig[256];
	task_signature(t, "c", sig, sizeof sig);
	T_OK(strcmp(sig, "void solve(const float* x, float* y, int n)") == 0, "signature from args: %s", sig);
	T_OK(task_get(root, "good", e) == t, "tasks are cached");
	json_t *size = json_pack("{s:i}", "n", 7);
	int64_t n;
	T_OK(task_numel(t, 1, size, &n, e) == 0 && n == 14, "numel from shape expressions");
	T_OK(task_formula(t, "flops", size) == 14, "flops formula");
	char *w = NULL;
	size_t wl = 0;
	FILE *f = open_memstream(&w, &wl);
	task_write_wrapper(t, "cuda", "cand.cu", "__global__ void k(float *y) {}", f);
	fclose(f);
	T_OK(strstr(w, "extern \"C\" void solve(const float* x, float* y, int n);") &&
		     strstr(w, "solve((const float *)a[0], (float *)a[1], *(const int *)a[2])"),
	     "cuda wrapper declares and calls solve");
	T_OK(strstr(w, "#include <cuda_runtime.h>") && !strstr(w, "cuda_fp16.h") && !strstr(w, "cuda_bf16.h"),
	     "a float task's wrapper leaves out the half headers when the source names no half type");
	free(w);
	/* The half headers where the source names their types, or is not given. */
	static const struct {
		const char *backend, *source, *want, *not; /* not: the header left out */
	} hw[] = {
		{"cuda", "__half h; half2 v;", "#include <cuda_fp16.h>", "cuda_bf16.h"},
		{"cuda", "__nv_bfloat16 b;", "#include <cuda_bf16.h>", "cuda_fp16.h"},
		{"hip", "__half h;", "#include <hip/hip_fp16.h>", "hip_bfloat16.h"},
		{"hip", "hip_bfloat16 b;", "#include <hip/hip_bfloat16.h>", "hip_fp16.h"},
		{"cuda", NULL, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>", NULL},
	};
	for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++) {
		f = open_memstream(&w, &wl);
		task_write_wrapper(t, hw[i].backend, "cand", hw[i].source, f);
		fclose(f);
		T_OK(strstr(w, hw[i].want) && (!hw[i].not || !strstr(w, hw[i].not)), "%s wrapper for \"%s\": %s",
		     hw[i].backend, hw[i].source ? hw[i].source : "(no source)",
		     hw[i].not ? "its half header, not the other" : "both half headers");
		free(w);
	}
	json_decref(size);

	write_task("notol", "{" ARGS ", \"tests\": [{\"n\": 3}], \"bench\": [{\"n\": 3}], \"reference\": \"reference.c\"}");
	T_OK(!task_get(root, "notol", e) && strstr(e, "no tolerance for f32"), "missing tolerance is named: %s", e);
	write_task("badsize", "{" ARGS ", \"tests\": [{\"m\": 3}], \"bench\": [{\"n\": 3}], "
			      "\"tolerance\": {\"f32\": {\"atol\": 1, \"rtol\": 1}}, \"reference\": \"reference.c\"}");
	T_OK(!task_get(root, "badsize", e) && strstr(e, "tests[0] has no number for scalar \"n\""), "size missing a scalar: %s", e);
	write_task("badsig", "{" ARGS ", \"signature\": \"void solve(float* x)\", \"tests\": [{\"n\": 3}], "
			     "\"bench\": [{\"n\": 3}], \"tolerance\": {\"f32\": {\"atol\": 1, \"rtol\": 1}}, \"reference\": \"reference.c\"}");
	T_OK(!task_get(root, "badsig", e) && strstr(e, "\"signature\" says"), "declared signature must match args");
	write_task("badjson", "{\"args\": [");
	T_OK(!task_get(root, "badjson", e) && strstr(e, "task.json: line"), "JSON error names the line: %s", e);
	T_OK(!task_get(root, "nosuch", e) && strstr(e, "unknown task \"nosuch\""), "unknown task named");
	T_OK(!task_get(root, "../etc", e) && strstr(e, "bad task name"), "task names cannot escape the root");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	T_OK(system(cmd) == 0, "cleanup");
}

static void test_parsers(void)
{
	const char *ptx =
		"ptxas info    : 0 bytes gmem\n"
		"ptxas info    : Compiling entry function '_Z4tilePKfPfi' for 'sm_90a'\n"
		"ptxas info    : Function properties for _Z4tilePKfPfi\n"
		"    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
		"ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 384 bytes cmem[0]\n"
		"ptxas info    : Compiling entry function '_Z3addPf' for 'sm_90a'\n"
		"ptxas info    : Function properties for _Z3addPf\n"
		"    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
		"ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n";
	json_t *r = compile_parse_ptxas(ptx);
	T_OK(r && json_array_size(json_object_get(r, "kernels")) == 2, "ptxas: two kernels");
	T_OK(r && json_integer_value(json_object_get(r, "max_registers")) == 40 &&
		     json_integer_value(json_object_get(r, "max_smem_bytes")) == 4096 &&
		     json_integer_value(json_object_get(r, "spills")) == 12,
	     "ptxas: registers, smem, spills (regression: smem was read from the word before the number)");
	json_decref(r);
	T_OK(compile_parse_ptxas("nothing here\n") == NULL, "ptxas: no lines, no resources");
	const char *amd =
		"candidate.hip:3:1: remark: Function Name: _Z3addPf [-Rpass-analysis=kernel-resource-usage]\n"
		"candidate.hip:3:1: remark:     SGPRs: 18 [-Rpass-analysis=kernel-resource-usage]\n"
		"candidate.hip:3:1: remark:     VGPRs: 12 [-Rpass-analysis=kernel-resource-usage]\n"
		"candidate.hip:3:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]\n"
		"candidate.hip:3:1: remark:     LDS Size [bytes/block]: 2048 [-Rpass-analysis=kernel-resource-usage]\n";
	r = compile_parse_amdgpu(amd);
	T_OK(r && json_integer_value(json_object_get(r, "max_registers")) == 12 &&
		     json_integer_value(json_object_get(r, "max_smem_bytes")) == 2048,
	     "amdgpu: VGPRs and LDS");
	json_decref(r);
}

/* proc_stat_field: one reader of /proc/PID/stat for the judge (the CPU a
 * child last ran on, field 39) and its tests (a child's state, field 3),
 * which each parsed it before.  The name (field 2) may hold spaces and
 * ")": the fields after it are counted from its last ")". */
static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return end != s && *end == '\0' ? v : -1;
}

static void test_stat_field(void)
{
	char f[64] = "";
	T_OK(proc_stat_field(getpid(), 1, f, sizeof f) == 0 && num(f) == (long)getpid(), "stat field 1 is the pid");
	int go[2];
	T_OK(pipe(go) == 0, "a pipe");
	pid_t c = fork();
	if (c == 0) {
		char x;
		prctl(PR_SET_NAME, "a) b (c", 0, 0, 0);
		close(go[1]);
		if (read(go[0], &x, 1) < 0) /* blocks until the parent is done */
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	/* The name is set by the child after the fork: look until it is. */
	for (int i = 0; i < 100000 && !(proc_stat_field(c, 2, f, sizeof f) == 0 && strcmp(f, "a) b (c") == 0); i++)
		usleep(100);
	T_OK(strcmp(f, "a) b (c") == 0, "stat field 2 is the name, spaces and ')' in it (%s)", f);
	T_OK(proc_stat_field(c, 3, f, sizeof f) == 0 && strlen(f) == 1 && strchr("RSD", f[0]),
	     "stat field 3 past that name is the state (%s)", f);
	T_OK(proc_stat_field(c, 4, f, sizeof f) == 0 && num(f) == (long)getpid(), "field 4 is the parent");
	T_OK(proc_stat_field(c, 39, f, sizeof f) == 0 && num(f) >= 0, "field 39, a CPU (%s)", f);
	T_OK(proc_stat_field(c, 200, f, sizeof f) == -1, "a field past the last: -1");
	T_OK(proc_stat_field(c, 0, f, sizeof f) == -1, "field 0: -1");
	T_OK(proc_stat_field(c, 2, f, 4) == -1, "a field that does not fit: -1");
	close(go[1]);
	int st;
	waitpid(c, &st, 0);
	T_OK(proc_stat_field(c, 3, f, sizeof f) == -1, "a process that is gone: -1");
}

int main(void)
{
	test_proc();
	test_stat_field();
	test_task();
	test_parsers();
	return T_DONE();
}
