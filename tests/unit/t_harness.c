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
	struct dev_ops failing = {.name = "failing", .init = init_fails, .probe = probe};
	json_t *r = harness_run(&failing, job, "/nonexistent/kharness", e);
	const char *st = json_string_value(json_object_get(r, "status"));
	const char *msg = json_string_value(json_object_get(r, "message"));
	char *said = r ? json_dumps(r, JSON_COMPACT) : NULL;
	T_OK(r && st && strcmp(st, "crashed") == 0 && json_is_true(json_object_get(r, "transient")),
	     "the judge's device fails: crashed, transient (%s)", said ? said : e);
	free(said);
	T_OK(msg && strstr(msg, "the judge's device did not start: creating the CUDA context: out of memory (test)") &&
		     strstr(msg, "the machine's, not the candidate's"),
	     "...the message says whose failure it is (%s)", msg ? msg : "none");
	json_decref(r);
	struct dev_ops absent = {.name = "absent", .init = init_none, .probe = probe};
	r = harness_run(&absent, job, "/nonexistent/kharness", e);
	st = json_string_value(json_object_get(r, "status"));
	said = r ? json_dumps(r, JSON_COMPACT) : NULL;
	T_OK(r && st && strcmp(st, "unsupported") == 0 && !json_object_get(r, "transient"),
	     "no such device: unsupported, not transient (%s)", said ? said : e);
	free(said);
	json_decref(r);
	/* Verifying on a device that has a probe (a GPU): the judge's device
	 * first too, so its failure is the machine's. */
	json_object_set_new(job, "mode", json_string("verify"));
	r = harness_run(&failing, job, "/nonexistent/kharness", e);
	st = json_string_value(json_object_get(r, "status"));
	msg = json_string_value(json_object_get(r, "message"));
	said = r ? json_dumps(r, JSON_COMPACT) : NULL;
	T_OK(r && st && strcmp(st, "crashed") == 0 && json_is_true(json_object_get(r, "transient")) && msg &&
		     strstr(msg, "the machine's, not the candidate's"),
	     "verifying, the judge's device fails: crashed, transient, the machine's (%s)", said ? said : e);
	free(said);
	json_decref(r);
	json_decref(job);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	(void)system(cmd);
	return T_DONE();
}
