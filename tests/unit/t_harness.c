/* t_harness: harness_run's answer where the judge's own device fails to
 * start (lib/harness.c machine_fault), with a device whose init fails.
 *
 * judge-device-failure-was-the-candidate's-crash: a GPU that could not make
 * the judge's context (or hold its arena) answered `crashed` for the
 * candidate, whom a model provider's fix pass would then "fix"; it is the
 * machine's failure, crashed with transient: true (docs/record.md), where
 * no child has loaded the candidate yet (on a GPU the judge's device comes
 * first); a device that is not there is still `unsupported`.
 *
 * verify-started-children-before-the-judge's-device: verifying, the judge
 * started the candidate's child beside its own device, so the same failure
 * there was the candidate's crash (its code may have taken the device); the
 * judge's device now comes first verifying too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "t.h"

static int init_fails(char *e) { return errf(e, "creating the CUDA context: out of memory (test)"); }
static int init_none(char *e) { return errf(e, "no CUDA device 3 here (test)"), -2; }
static int probe(double *s, char *e)
{
	(void)e;
	*s = 0;
	return 0;
}

/* harness_run's answer for job on d, and in said (n bytes) that answer as
 * JSON, or the error where there is none. */
static json_t *run(const struct dev_ops *d, const json_t *job, char *said, size_t n, char *e)
{
	json_t *r = harness_run(d, job, "/nonexistent/kharness", e);
	char *s = r ? json_dumps(r, JSON_COMPACT) : NULL;
	snprintf(said, n, "%s", s ? s : e);
	free(s);
	return r;
}

static const char *field(const json_t *r, const char *k) { return json_string_value(json_object_get(r, k)); }

int main(void)
{
	char dir[] = "/tmp/ksci-t-harness.XXXXXX", so[256], cmd[600], e[ERRBUF] = "";
	if (!mkdtemp(dir))
		return 1;
	/* A reference the judge can load: it reaches the device only after. */
	snprintf(so, sizeof so, "%s/ref.so", dir);
	snprintf(cmd, sizeof cmd, "printf 'void ksci_call(void **a) { (void)a; }\\n' > %s/ref.c && cc -shared -fPIC -o %s %s/ref.c",
		 dir, so, dir);
	T_OK(system(cmd) == 0, "a reference library built");
	json_t *job = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "mode", "time", "task", "softmax", "tasks_root",
				KSCI_DATADIR "/tasks", "backend", "c", "reference", so, "candidate", so);
	/* Timing with a device that has a probe: the judge's device first. */
	char said[4096];
	struct dev_ops failing = {.name = "failing", .init = init_fails, .probe = probe};
	json_t *r = run(&failing, job, said, sizeof said, e);
	const char *st = field(r, "status"), *msg = field(r, "message");
	T_OK(r && st && strcmp(st, "crashed") == 0 && json_is_true(json_object_get(r, "transient")),
	     "the judge's device fails: crashed, transient (%s)", said);
	T_OK(msg && strstr(msg, "the judge's device did not start: creating the CUDA context: out of memory (test)") &&
		     strstr(msg, "the machine's, not the candidate's"),
	     "...the message says whose failure it is (%s)", msg ? msg : "none");
	json_decref(r);
	struct dev_ops absent = {.name = "absent", .init = init_none, .probe = probe};
	r = run(&absent, job, said, sizeof said, e);
	st = field(r, "status");
	T_OK(r && st && strcmp(st, "unsupported") == 0 && !json_object_get(r, "transient"),
	     "no such device: unsupported, not transient (%s)", said);
	json_decref(r);
	/* Verifying on a device that has a probe (a GPU): the judge's device
	 * first too, so its failure is the machine's. */
	json_object_set_new(job, "mode", json_string("verify"));
	r = run(&failing, job, said, sizeof said, e);
	st = field(r, "status"), msg = field(r, "message");
	T_OK(r && st && strcmp(st, "crashed") == 0 && json_is_true(json_object_get(r, "transient")) && msg &&
		     strstr(msg, "the machine's, not the candidate's"),
	     "verifying, the judge's device fails: crashed, transient, the machine's (%s)", said);
	json_decref(r);
	json_decref(job);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	(void)system(cmd);
	return T_DONE();
}
