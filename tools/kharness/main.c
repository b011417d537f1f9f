/*
 * kharness — the sandboxed harness behind kverify and ktime (internal; see
 * docs/harness.md).  Reads one job object on stdin, runs it, and prints one
 * line "KSCI-RESULT <nonce> <json>" on stdout: the nonce comes from the job,
 * so whatever a kernel prints itself cannot pass for a result.
 * Exit 0 when a result was printed (whatever it says), 3 when the job could
 * not run at all.
 *
 * kharness --serve: the long-lived judge (docs/harness.md): one job per
 * line on stdin, each answered by its result line on stdout and, after it,
 * "KSCI-LOG-END <nonce>" on stderr, which ends that job's log.  It keeps its
 * device context between jobs; every job still starts its own children.
 * After a job that did not end ok, wrong, slow or unsupported (a child that
 * crashed or hung, a device error) it exits 0, so the caller starts a fresh
 * judge for the next: nothing a failed job left behind is trusted.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "judge/child.h"
#include "proc.h"
#include "rec.h"
#include "tool.h"

#ifdef KSCI_WITH_CUDA
extern const struct dev_ops dev_cuda;
#endif

/* How long a spare may take to be ready when asked for (a device context
 * took 0.1-0.35 s on an H100). */
#define SPARE_START_S 30.0

/* One job: its result line on stdout.  KSCI_EXIT_OK, or KSCI_EXIT_FATAL
 * (after saying why on stderr, with no result) when it could not run; *st:
 * the result's status. */
static int run_job(json_t *job, const char **st)
{
	const char *backend = json_string_value(json_object_get(job, "backend"));
	const char *nonce = json_string_value(json_object_get(job, "nonce"));
	const struct dev_ops *d = NULL;
	char e[ERRBUF] = "";
	json_t *res;
	*st = "error";
	if (!backend || strcmp(backend, "c") == 0)
		d = &dev_host;
#ifdef KSCI_WITH_CUDA
	else if (strcmp(backend, "cuda") == 0)
		d = &dev_cuda;
#endif
	if (!d)
		res = json_pack("{s:b, s:s, s:s}", "ok", 0, "status", ST_UNSUPPORTED, "message",
				"this kharness has no device layer for the back end");
	else
		res = harness_run(d, job, "/proc/self/exe", e);
	if (!res) {
		warnx_("%s", e);
		return KSCI_EXIT_FATAL;
	}
	static char status[32];
	const char *sv = json_string_value(json_object_get(res, "status"));
	snprintf(status, sizeof status, "%s", sv ? sv : "");
	*st = status;
	printf("KSCI-RESULT %s ", nonce ? nonce : "-");
	json_dumpf(res, stdout, JSON_COMPACT);
	printf("\n");
	fflush(stdout);
	json_decref(res);
	return KSCI_EXIT_OK;
}

/* {"op": "spare", "nonce": N}: the spare the last job left to its caller
 * (harness_spare_now), answered as a job is, with what became of it. */
static void spare_now(const char *nonce)
{
	char e[ERRBUF];
	double t0 = proc_now();
	const char *what = harness_spare_now(t0 + SPARE_START_S, e);
	json_t *res = json_pack("{s:b, s:s, s:s, s:f}", "ok", 1, "status", "ok", "spare", what, "seconds", proc_now() - t0);
	if (e[0])
		json_object_set_new(res, "message", json_string(e));
	printf("KSCI-RESULT %s ", nonce);
	json_dumpf(res, stdout, JSON_COMPACT);
	printf("\n");
	fflush(stdout);
	json_decref(res);
	fprintf(stderr, "KSCI-LOG-END %s\n", nonce);
	fflush(stderr);
}

/* --serve: jobs one per line until end of input, or until one that leaves
 * the judge in doubt. */
static int serve(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = KSCI_EXIT_OK;
	harness_keep(1);
	while ((n = getline(&line, &cap, stdin)) > 0) {
		json_error_t je;
		json_t *job = json_loadb(line, (size_t)n, 0, &je);
		if (!json_is_object(job)) {
			warnx_("job: not a JSON object: %s", je.text);
			json_decref(job);
			rc = KSCI_EXIT_FATAL;
			break;
		}
		const char *st;
		char nonce[80];
		const char *nv = json_string_value(json_object_get(job, "nonce"));
		snprintf(nonce, sizeof nonce, "%s", nv ? nv : "-");
		const char *op = json_string_value(json_object_get(job, "op"));
		if (op && strcmp(op, "spare") == 0) {
			spare_now(nonce);
			json_decref(job);
			continue;
		}
		rc = run_job(job, &st);
		json_decref(job);
		if (rc != KSCI_EXIT_OK)
			break;
		fprintf(stderr, "KSCI-LOG-END %s\n", nonce);
		fflush(stderr);
		harness_after_job();
		if (!rec_judge_goes_on(st))
			break;
	}
	free(line);
	return rc;
}

int main(int argc, char **argv)
{
	err_init(argv[0]);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: kharness < job.json\n       kharness --serve < jobs.ndjson\n"
		      "(internal harness of kverify/ktime; see docs/harness.md)\n", stdout);
		return tool_exit(KSCI_EXIT_OK);
	}
	const struct dev_ops *d = NULL;
#ifdef KSCI_WITH_CUDA
	d = &dev_cuda;
#else
	d = &dev_host;
#endif
	/* A role's child (docs/harness.md): started by the judge, never by hand. */
	if (argc >= 3 && strcmp(argv[1], "--child") == 0)
		return harness_child(d, argv[2], argc > 3 ? argv[3] : NULL);
	if (argc > 1 && strcmp(argv[1], "--serve") == 0)
		return tool_exit(serve());
	json_error_t je;
	json_t *job = json_loadf(stdin, 0, &je);
	if (!json_is_object(job))
		die(KSCI_EXIT_FATAL, "job: not a JSON object: %s", je.text);
	const char *st;
	int rc = run_job(job, &st);
	json_decref(job);
	return tool_exit(rc);
}
