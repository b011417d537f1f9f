/* t_cache: where the cache lives, entry seals and file hashes (lib/cache.c),
 * the pieces compile.c checks every cache entry with. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "t.h"

static char dir[] = "/tmp/t_cache.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* An entry's metadata as compile.c writes it: reals, a nested object, a
 * multi-line log with non-ASCII text. */
static json_t *meta(void)
{
	return json_pack("{s:b, s:s, s:f, s:b, s:s, s:[s, s], s:s, s:{s:I, s:f}}", "ok", 1, "status", "ok",
			 "seconds", 0.123456789012345678, "cached", 0, "key", "k1", "flags", "-O3", "-fPIC", "log",
			 "warning: \xc3\xa9t\xc3\xa9\n\tline 2 \"quoted\"", "resources", "max_registers",
			 (json_int_t)40, "ratio", 1e-300);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char p[256], e[ERRBUF], hex[65], buf[512];

	/* cache_dir */
	setenv("KSCI_CACHE", dir, 1);
	snprintf(p, sizeof p, "%s/compile", dir);
	struct stat st;
	T_OK(cache_dir("compile", buf, sizeof buf, e) == 0 && strcmp(buf, p) == 0 && stat(p, &st) == 0 &&
		     S_ISDIR(st.st_mode),
	     "cache_dir: $KSCI_CACHE/<sub>, created");
	T_OK(cache_dir("compile", buf, 8, e) < 0 && strstr(e, "too long"), "cache_dir: a path too long is an error");

	/* cache_file_sha256 */
	snprintf(p, sizeof p, "%s/abc", dir);
	write_file(p, "abc");
	T_OK(cache_file_sha256(p, hex, e) == 0 &&
		     strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
	     "file hash: sha256 of \"abc\"");
	snprintf(p, sizeof p, "%s/empty", dir);
	write_file(p, "");
	T_OK(cache_file_sha256(p, hex, e) == 0 &&
		     strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0,
	     "file hash: empty file");
	{
		/* Longer than the read buffer: the chunks join up. */
		snprintf(p, sizeof p, "%s/big", dir);
		FILE *f = fopen(p, "w");
		for (int i = 0; f && i < 100000; i++)
			fputs("0123456789", f);
		if (f)
			fclose(f);
		char cmd[512], want[80] = "";
		snprintf(cmd, sizeof cmd, "sha256sum %s", p);
		FILE *pp = popen(cmd, "r");
		if (pp) {
			if (!fgets(want, sizeof want, pp))
				want[0] = '\0';
			pclose(pp);
		}
		want[64] = '\0';
		T_OK(cache_file_sha256(p, hex, e) == 0 && strcmp(hex, want) == 0, "file hash: 1 MB file agrees with sha256sum");
	}
	snprintf(p, sizeof p, "%s/none", dir);
	T_OK(cache_file_sha256(p, hex, e) < 0 && strstr(e, "none") && strstr(e, "No such file"),
	     "file hash: a missing file is an error naming it");

	/* seals */
	json_t *m = meta();
	T_OK(cache_seal_check(m, "K") == -1, "no seal: -1 (an entry from before seals)");
	T_OK(cache_seal(m, "K") == 0 && json_string_length(json_object_get(m, CACHE_SEAL)) == 64, "sealed: 64 hex digits");
	T_OK(cache_seal_check(m, "K") == 1, "sealed: matches");
	T_OK(cache_seal_check(m, "L") == 0, "sealed: another key does not match (an entry copied under another key)");

	/* What compile.c does: dump to result.json, load it back, check. */
	snprintf(p, sizeof p, "%s/result.json", dir);
	json_dump_file(m, p, JSON_COMPACT);
	json_t *back = json_load_file(p, 0, NULL);
	T_OK(cache_seal_check(back, "K") == 1, "seal survives a dump and a load (reals, nested objects, UTF-8)");
	json_decref(back);
	json_dump_file(m, p, JSON_INDENT(2));
	back = json_load_file(p, 0, NULL);
	T_OK(cache_seal_check(back, "K") == 1, "seal does not depend on the file's layout");
	json_decref(back);

	/* Same fields, other order: same seal. */
	json_t *r = json_object();
	const char *k;
	json_t *v;
	void *tmp;
	const char *order[] = {"resources", "log", "flags", "key", "cached", "seconds", "status", "ok", CACHE_SEAL, NULL};
	for (int i = 0; order[i]; i++)
		json_object_set(r, order[i], json_object_get(m, order[i]));
	T_OK(cache_seal_check(r, "K") == 1, "seal does not depend on key order");
	json_decref(r);

	/* Any edit breaks it. */
	int each = 1;
	json_object_foreach_safe(m, tmp, k, v)
	{
		if (strcmp(k, CACHE_SEAL) == 0)
			continue;
		json_t *c = json_deep_copy(m);
		json_object_set_new(c, k, json_string("edited"));
		each &= cache_seal_check(c, "K") == 0;
		json_object_del(c, k);
		each &= cache_seal_check(c, "K") == 0;
		json_decref(c);
	}
	T_OK(each, "changing or removing any field breaks the seal");
	json_t *c = json_deep_copy(m);
	json_object_set_new(c, "artifact_sha256", json_string("00"));
	T_OK(cache_seal_check(c, "K") == 0, "adding a field breaks the seal");
	json_object_set_new(json_object_get(c, "resources"), "max_registers", json_integer(41));
	json_object_del(c, "artifact_sha256");
	T_OK(cache_seal_check(c, "K") == 0, "a change inside a nested object breaks the seal");
	json_decref(c);
	c = json_deep_copy(m);
	json_object_set_new(c, CACHE_SEAL, json_integer(7));
	T_OK(cache_seal_check(c, "K") == 0, "a seal that is not a string does not match");
	json_object_set_new(c, CACHE_SEAL, json_string(""));
	T_OK(cache_seal_check(c, "K") == 0, "an emptied seal does not match");
	json_decref(c);
	T_OK(cache_seal(m, "K") == 0 && cache_seal_check(m, "K") == 1, "sealing again replaces the old seal");
	json_decref(m);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return T_DONE();
}
