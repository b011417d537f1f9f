/* nvcc_prefix: the device half's prefix in the cache (nvcc_prefix.h says why and how). */
#include "nvcc_prefix.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "file.h"
#include "nvcc_steps.h"
#include "sha256.h"

#define NEXT 5 /* the files of a prefix: nvcc_prefix_ext */
#define FILES 3 /* which of them lists the files it was made from */

/* A file the prefix was made from, as it is now: [path, inode, size, mtime ns]. */
static json_t *file_state(const char *path, const struct timespec *t0, char *why)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		errf(why, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (t0 && (st.st_ctim.tv_sec > t0->tv_sec || (st.st_ctim.tv_sec == t0->tv_sec && st.st_ctim.tv_nsec >= t0->tv_nsec))) {
		errf(why, "%s changed while the prefix was made", path);
		return NULL;
	}
	return json_pack("[s, I, I, I]", path, (json_int_t)st.st_ino, (json_int_t)st.st_size,
			 (json_int_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
}

/* The NEXT files DIR/STEM.EXT read into t[] (malloc'd), their hash into
 * hex.  0, or -1 with why. */
static int read_all(const char *dir, const char *stem, char *t[NEXT], size_t n[NEXT], char hex[65], char *why)
{
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, "ksci-nvcc-prefix-v1", 20);
	for (int k = 0; k < NEXT; k++) {
		char p[PATH_MAX], e[ERRBUF];
		snprintf(p, sizeof p, "%s/%s.%s", dir, stem, nvcc_prefix_ext[k]);
		if (file_read(p, &t[k], &n[k], e) < 0)
			return errf(why, "%s", e);
		char len[32];
		snprintf(len, sizeof len, "%zu", n[k]);
		sha256_update(&h, len, strlen(len) + 1);
		sha256_update(&h, t[k], n[k]);
	}
	sha256_hex(&h, hex, 64);
	return 0;
}

static void free_all(char *t[NEXT])
{
	for (int k = 0; k < NEXT; k++) {
		free(t[k]);
		t[k] = NULL;
	}
}

/* Remove an entry (or a temporary one): its files, then itself. */
static void remove_entry(const char *d)
{
	char p[PATH_MAX];
	for (int k = 0; k < NEXT; k++) {
		snprintf(p, sizeof p, "%s/pre.%s", d, nvcc_prefix_ext[k]);
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/entry.json", d);
	unlink(p);
	rmdir(d);
}

int nvcc_prefix_fetch(const char *root, const char *key, const char *dir, char *why)
{
	char d[PATH_MAX], p[PATH_MAX], hex[65];
	snprintf(d, sizeof d, "%s/%s", root, key);
	snprintf(p, sizeof p, "%s/entry.json", d);
	if (access(p, F_OK) != 0)
		return errf(why, "none made on this host for this header part yet"), 0;
	json_t *j = json_load_file(p, 0, NULL);
	char *t[NEXT] = {0};
	size_t n[NEXT];
	int rc = 0;
	if (!json_is_object(j) || cache_seal_check(j, key) != 1) {
		errf(why, "the cached one does not match its seal (removed)");
		remove_entry(d);
		goto out;
	}
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(j, "files"), i, f)
	{
		const char *path = json_string_value(json_array_get(f, 0));
		json_t *now = path ? file_state(path, NULL, why) : NULL;
		int same = now && json_equal(now, f);
		json_decref(now);
		if (!same) {
			if (now || !path)
				errf(why, "%s changed since the cached one was made", path ? path : "a file");
			goto out; /* replaced when made again */
		}
	}
	if (i == 0) {
		errf(why, "the cached one names no file it was made from (removed)");
		remove_entry(d);
		goto out;
	}
	if (read_all(d, "pre", t, n, hex, why) < 0)
		goto out;
	const char *want = json_string_value(json_object_get(j, "sha256"));
	if (!want || strcmp(want, hex) != 0) {
		errf(why, "the cached one's files do not match their recorded hash (removed)");
		remove_entry(d);
		goto out;
	}
	for (int k = 0; k < NEXT; k++) {
		char e[ERRBUF];
		snprintf(p, sizeof p, "%s/%s/%s.%s", dir, NVCC_STEPS_DIR, NVCC_PREFIX_USE, nvcc_prefix_ext[k]);
		if (file_write_atomic(p, t[k], n[k], e) < 0) {
			errf(why, "%s", e);
			goto out;
		}
	}
	rc = 1;
out:
	free_all(t);
	json_decref(j);
	return rc;
}

/* Temporary entries (tmp.PID.XXXXXX) an hour old: left by a process killed
 * while it stored one (a store takes milliseconds). */
static void sweep(const char *root)
{
	DIR *dd = opendir(root);
	struct dirent *de;
	char p[PATH_MAX];
	while (dd && (de = readdir(dd))) {
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", root, de->d_name);
		if (strncmp(de->d_name, "tmp.", 4) == 0 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
		    st.st_uid == geteuid() && difftime(time(NULL), st.st_mtime) > 3600)
			remove_entry(p);
	}
	if (dd)
		closedir(dd);
}

int nvcc_prefix_store(const char *root, const char *key, const char *dir, const struct timespec *t0, char *why)
{
	char sd[PATH_MAX], p[PATH_MAX], hex[65], tmp[PATH_MAX] = "";
	char *t[NEXT] = {0};
	size_t n[NEXT];
	json_t *files = json_array(), *j = NULL;
	int rc = -1;
	snprintf(sd, sizeof sd, "%s/%s", dir, NVCC_STEPS_DIR);
	if (read_all(sd, NVCC_PREFIX_NEW, t, n, hex, why) < 0)
		goto out;
	/* ksci-new.files: the files it was made from, one a line. */
	for (char *l = t[FILES], *nl; l && *l; l = nl) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		json_t *f = file_state(l, t0, why);
		if (nl)
			*nl++ = '\n';
		if (!f)
			goto out;
		json_array_append_new(files, f);
	}
	if (json_array_size(files) == 0) {
		errf(why, "the prefix names no file it was made from");
		goto out;
	}
	j = json_pack("{s:O, s:s}", "files", files, "sha256", hex);
	if (!j || cache_seal(j, key) < 0) {
		errf(why, "out of memory");
		goto out;
	}
	sweep(root);
	snprintf(tmp, sizeof tmp, "%s/tmp.%ld.XXXXXX", root, (long)getpid());
	if (!mkdtemp(tmp)) {
		errf(why, "mkdtemp %s: %s", tmp, strerror(errno));
		tmp[0] = '\0';
		goto out;
	}
	for (int k = 0; k < NEXT; k++) {
		snprintf(p, sizeof p, "%s/pre.%s", tmp, nvcc_prefix_ext[k]);
		if (file_write_atomic(p, t[k], n[k], why) < 0)
			goto out;
	}
	snprintf(p, sizeof p, "%s/entry.json", tmp);
	if (json_dump_file(j, p, JSON_COMPACT) != 0) {
		errf(why, "cannot write %s", p);
		goto out;
	}
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s/%s", root, key);
	if (rename(tmp, d) != 0) {
		/* One there already: another slot's, made at once, or one that
		 * no longer matches its files.  Replaced: ours is as new. */
		remove_entry(d);
		if (rename(tmp, d) != 0 && errno != ENOTEMPTY && errno != EEXIST) {
			errf(why, "rename %s: %s", d, strerror(errno));
			goto out;
		}
	}
	if (access(tmp, F_OK) != 0)
		tmp[0] = '\0';
	for (int k = 0; k < NEXT; k++) {
		char q[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s.%s", sd, NVCC_PREFIX_NEW, nvcc_prefix_ext[k]);
		snprintf(q, sizeof q, "%s/%s.%s", sd, NVCC_PREFIX_USE, nvcc_prefix_ext[k]);
		if (rename(p, q) != 0) {
			errf(why, "rename %s: %s", q, strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	if (tmp[0])
		remove_entry(tmp);
	free_all(t);
	json_decref(files);
	json_decref(j);
	return rc;
}
