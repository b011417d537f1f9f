/*
 * kharness — the sandboxed harness behind kverify and ktime (internal; see
 * docs/harness.md).  Reads one job object on stdin, runs it, and prints one
 * line "KSCI-RESULT <nonce> <json>" on stdout: the nonce comes from the job,
 * so whatever a kernel prints itself cannot pass for a result.
 * Exit 0 when a result was printed (whatever it says), 3 when the job could
 * not run at all.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "judge/child.h"
#include "rec.h"
#include "tool.h"

#ifdef KSCI_WITH_CUDA
extern const struct dev_ops dev_cuda;
#endif

int main(int argc, char **argv)
{
	err_init(argv[0]);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: kharness < job.json\n(internal harness of kverify/ktime; see docs/harness.md)\n", stdout);
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
	json_error_t je;
	json_t *job = json_loadf(stdin, 0, &je);
	if (!json_is_object(job))
		die(KSCI_EXIT_FATAL, "job: not a JSON object: %s", je.text);
	const char *backend = json_string_value(json_object_get(job, "backend"));
	const char *nonce = json_string_value(json_object_get(job, "nonce"));
	d = NULL;
	char e[ERRBUF] = "";
	json_t *res;
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
	if (!res)
		die(KSCI_EXIT_FATAL, "%s", e);
	printf("KSCI-RESULT %s ", nonce ? nonce : "-");
	json_dumpf(res, stdout, JSON_COMPACT);
	printf("\n");
	json_decref(res);
	json_decref(job);
	return tool_exit(KSCI_EXIT_OK);
}
