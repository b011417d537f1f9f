/*
 * dev_host: the device layer for the `c` back end — plain host memory and
 * CLOCK_MONOTONIC around each call.  CPU timings are warm-cache (no flush):
 * the tasks' benchmark sizes are chosen so that this is what users see.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "harness.h"
#include "proc.h"

static void *h_alloc(size_t n, char *e)
{
	void *p = aligned_alloc(64, (n + 63) / 64 * 64);
	if (!p)
		errf(e, "out of host memory (%zu bytes)", n);
	return p;
}

static void h_release(void *p) { free(p); }

static int h_copy(void *dst, const void *src, size_t n, char *e)
{
	(void)e;
	memcpy(dst, src, n);
	return 0;
}

static int h_call(ksci_call_fn fn, void **args, double *seconds, char *e)
{
	(void)e;
	double t0 = proc_now();
	fn(args);
	if (seconds)
		*seconds = proc_now() - t0;
	return 0;
}

void dev_host_cpu_model(char *buf, size_t n)
{
	char line[512];
	snprintf(buf, n, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(buf, n, "%s", strchr(line, ':') + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

static json_t *h_env(void)
{
	char model[256];
	dev_host_cpu_model(model, sizeof model);
	struct utsname u;
	uname(&u);
	return json_pack("{s:s, s:s, s:I, s:s}", "device", "cpu", "cpu", model, "cpus",
			 (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "kernel", u.release);
}

const struct dev_ops dev_host = {
	.name = "host",
	.alloc = h_alloc,
	.release = h_release,
	.to_dev = h_copy,
	.to_host = h_copy,
	.call = h_call,
	.env = h_env,
};
