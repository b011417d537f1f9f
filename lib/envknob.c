/*
 * envknob: the table of the environment's switches and their check
 * (envknob.h).  The first word of each names the default, what the tool
 * does where the variable is not set (the words the records and the
 * benches already used: compile.steps "parallel", steps_dlink "early").
 */
#include "envknob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"

#define DEVICE_MAX 1023

static const struct {
	const char *name;
	const char *const *words; /* NULL: a device index 0..DEVICE_MAX */
} knobs[] = {
	{"KSCI_NVCC_STEPS", (const char *const[]){"parallel", "serial", NULL}},
	{"KSCI_NVCC_PREFIX", (const char *const[]){"on", "off", NULL}},
	{"KSCI_NVCC_DLINK", (const char *const[]){"early", "joined", NULL}},
	{"KSCI_HOST_LD", (const char *const[]){"gold", "default", NULL}},
	{"KSCI_JUDGE_SPARE", (const char *const[]){"auto", "asked", "after", NULL}},
	{"KSCI_CUDA_DEVICE", NULL},
};
#define NKNOBS (int)(sizeof knobs / sizeof knobs[0])

static const char *value(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

int envknob_check(char *e)
{
	for (int i = 0; i < NKNOBS; i++) {
		const char *v = value(knobs[i].name);
		int w;
		long d;
		if (!v)
			continue;
		if (knobs[i].words ? opt_choice(knobs[i].name, v, knobs[i].words, &w, e) < 0
				   : opt_long(knobs[i].name, v, 0, DEVICE_MAX, &d, e) < 0)
			return -1;
	}
	return 0;
}

int envknob_is(const char *name, const char *word)
{
	const char *v = value(name);
	return v && strcmp(v, word) == 0;
}

int envknob_device(void)
{
	char e[ERRBUF];
	long d = 0;
	const char *v = value("KSCI_CUDA_DEVICE");
	return v && opt_long("KSCI_CUDA_DEVICE", v, 0, DEVICE_MAX, &d, e) == 0 ? (int)d : 0;
}

const char *envknob_name(int i, char *words, size_t n)
{
	if (i < 0 || i >= NKNOBS)
		return NULL;
	if (!knobs[i].words) {
		snprintf(words, n, "a device index 0..%d", DEVICE_MAX);
		return knobs[i].name;
	}
	size_t len = 0;
	words[0] = '\0';
	for (int k = 0; knobs[i].words[k] && len < n; k++) {
		int w = snprintf(words + len, n - len, "%s%s", k ? ", " : "", knobs[i].words[k]);
		len = w > 0 ? len + (size_t)w : len;
	}
	return knobs[i].name;
}
