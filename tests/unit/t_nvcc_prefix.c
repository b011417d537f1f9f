/* t_nvcc_prefix: the device half's prefix in the cache (lib/nvcc_prefix.c):
 * stored with the state of the files it was made from, fetched into a
 * build only while they and its own files are unchanged; a header changed
 * while it was made is refused; a broken entry is removed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nvcc_prefix.h"
#include "nvcc_steps.h"
#include "t.h"

static char top[64], root[128], build[128], hdr[128];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* A made prefix in the build: ksci-new.*, its files list naming hdr. */
static void made(const char *text)
{
	char p[256];
	for (int k = 0; nvcc_prefix_ext[k]; k++) {
		snprintf(p, sizeof p, "%s/%s/%s.%s", build, NVCC_STEPS_DIR, NVCC_PREFIX_NEW, nvcc_prefix_ext[k]);
		if (strcmp(nvcc_prefix_ext[k], "files") == 0) {
			char l[160];
			snprintf(l, sizeof l, "%s\n", hdr);
			put(p, l);
		} else
			put(p, text);
	}
}

static void clean_build(void)
{
	char p[256];
	for (int k = 0; nvcc_prefix_ext[k]; k++) {
		snprintf(p, sizeof p, "%s/%s/%s.%s", build, NVCC_STEPS_DIR, NVCC_PREFIX_USE, nvcc_prefix_ext[k]);
		unlink(p);
	}
}

static struct timespec now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME_COARSE, &t);
	return t;
}

/* A time safely before the files were last changed is no use; one after is. */
static struct timespec later(void)
{
	struct timespec t = now();
	t.tv_sec += 10;
	return t;
}

int main(void)
{
	char why[ERRBUF], p[256], d[256];
	snprintf(top, sizeof top, "/tmp/t_nvcc_prefix.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	snprintf(root, sizeof root, "%s/cache", top);
	snprintf(build, sizeof build, "%s/build", top);
	snprintf(hdr, sizeof hdr, "%s/header.h", top);
	mkdir(root, 0700);
	mkdir(build, 0700);
	snprintf(p, sizeof p, "%s/%s", build, NVCC_STEPS_DIR);
	mkdir(p, 0700);
	put(hdr, "#define H 1\n");
	const char *key = "k1";
	snprintf(d, sizeof d, "%s/%s", root, key);

	T_OK(nvcc_prefix_fetch(root, key, build, why) == 0 && strstr(why, "none made"), "nothing stored: a miss (%s)", why);
	made("text one\n");
	struct timespec t0 = later();
	T_OK(nvcc_prefix_store(root, key, build, &t0, why) == 0, "stored (%s)", why);
	snprintf(p, sizeof p, "%s/%s/%s.ii", build, NVCC_STEPS_DIR, NVCC_PREFIX_USE);
	T_OK(strcmp(get(p), "text one\n") == 0, "and moved to ksci-pre.* for this build");
	clean_build();
	T_OK(nvcc_prefix_fetch(root, key, build, why) == 1 && strcmp(get(p), "text one\n") == 0,
	     "fetched into another build");
	clean_build();
	T_OK(nvcc_prefix_fetch(root, "k2", build, why) == 0 && access(p, F_OK) != 0, "under another key: a miss");

	/* nvcc-prefix-header-changed: a header of the prefix rewritten (a
	 * package upgrade) makes the entry a miss until made again. */
	put(hdr, "#define H 22\n"); /* its size too: a rewrite within a clock tick keeps the mtime */
	T_OK(nvcc_prefix_fetch(root, key, build, why) == 0 && strstr(why, "changed since") && access(p, F_OK) != 0,
	     "a header rewritten since: a miss (%s)", why);
	made("text two\n");
	t0 = later();
	T_OK(nvcc_prefix_store(root, key, build, &t0, why) == 0, "made again, it replaces the entry (%s)", why);
	clean_build();
	T_OK(nvcc_prefix_fetch(root, key, build, why) == 1 && strcmp(get(p), "text two\n") == 0, "and is the new one");
	clean_build();

	/* A header changed while the prefix was made: not stored, nothing moved. */
	made("text three\n");
	t0 = now();
	t0.tv_sec -= 10; /* the making started before the header's change */
	T_OK(nvcc_prefix_store(root, key, build, &t0, why) < 0 && strstr(why, "changed while"), "changed while made: refused (%s)",
	     why);
	T_OK(access(p, F_OK) != 0, "...and the build is given nothing");
	T_OK(nvcc_prefix_fetch(root, key, build, why) == 1 && strcmp(get(p), "text two\n") == 0, "...the stored one stays");
	clean_build();

	/* A file of the entry edited: its hash no longer matches; removed. */
	snprintf(p, sizeof p, "%s/pre.h", d);
	put(p, "#define EDITED 1\n");
	T_OK(nvcc_prefix_fetch(root, key, build, why) == 0 && strstr(why, "recorded hash") && access(d, F_OK) != 0,
	     "an entry's file edited: a miss, the entry removed (%s)", why);
	made("text four\n");
	t0 = later();
	nvcc_prefix_store(root, key, build, &t0, why);
	clean_build();
	snprintf(p, sizeof p, "%s/entry.json", d);
	char meta[4096];
	snprintf(meta, sizeof meta, "%s", get(p));
	char *x = strstr(meta, "\"sha256\":\"");
	if (x)
		x[10] = x[10] == '0' ? '1' : '0';
	put(p, meta);
	T_OK(nvcc_prefix_fetch(root, key, build, why) == 0 && strstr(why, "seal") && access(d, F_OK) != 0,
	     "entry.json edited: a miss, the entry removed (%s)", why);

	/* A made prefix whose files list is empty is not stored. */
	made("text five\n");
	snprintf(p, sizeof p, "%s/%s/%s.files", build, NVCC_STEPS_DIR, NVCC_PREFIX_NEW);
	put(p, "");
	t0 = later();
	T_OK(nvcc_prefix_store(root, key, build, &t0, why) < 0 && strstr(why, "names no file"), "no files named: refused (%s)", why);

	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", top);
	if (system(cmd) != 0)
		return 1;
	return T_DONE();
}
