/* rec: helpers over jansson objects for the record format; see rec.h. */
#include "rec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

const char *rec_str(const json_t *rec, const char *key)
{
	return json_string_value(json_object_get(rec, key));
}

double rec_num(const json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

json_t *rec_path(const json_t *rec, const char *path)
{
	const json_t *cur = rec;
	char key[128];
	while (cur && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		cur = json_object_get(cur, key);
		path += n + (path[n] == '.');
	}
	return (json_t *)cur;
}

const char *rec_missing_str(const json_t *rec, const char *const *keys)
{
	for (; *keys; keys++)
		if (!json_is_string(json_object_get(rec, *keys)))
			return *keys;
	return NULL;
}

void rec_make_id(const char *task, const char *backend, const char *source, char out[REC_ID_LEN + 1])
{
	struct sha256 s;
	sha256_init(&s);
	sha256_update(&s, "ksci-v1", 8);
	sha256_update(&s, task, strlen(task) + 1);
	sha256_update(&s, backend, strlen(backend) + 1);
	sha256_update(&s, source, strlen(source));
	sha256_hex(&s, out, REC_ID_LEN);
}

int rec_set_id(json_t *rec)
{
	const char *t = rec_str(rec, "task"), *b = rec_str(rec, "backend"), *s = rec_str(rec, "source");
	if (!t || !b || !s)
		return -1;
	char id[REC_ID_LEN + 1];
	rec_make_id(t, b, s, id);
	json_object_set_new(rec, "id", json_string(id));
	return 0;
}

void rec_set_status(json_t *rec, const char *status)
{
	json_object_set_new(rec, "status", json_string(status));
}

json_t *rec_stage(json_t *rec, const char *stage)
{
	json_t *o = json_object_get(rec, stage);
	if (!json_is_object(o)) {
		o = json_object();
		json_object_set_new(rec, stage, o);
	}
	return o;
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t k = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
	if (k == 0 || k > n || (k == 2 && p[0] < 0xC2))
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return k;
}

/* Logs come from compilers and hostile kernels: keep valid UTF-8, turn
 * anything else (and NUL) into '?', so the record stays valid JSON. */
static void append_clean(char *dst, size_t *o, const char *src, size_t n)
{
	const unsigned char *p = (const unsigned char *)src;
	for (size_t i = 0; i < n;) {
		size_t k = p[i] ? utf8_len(p + i, n - i) : 0;
		if (k == 0) {
			dst[(*o)++] = '?';
			i++;
		} else {
			memcpy(dst + *o, p + i, k);
			*o += k;
			i += k;
		}
	}
}

void rec_set_log(json_t *obj, const char *key, const char *text, size_t len)
{
	char *buf = malloc(REC_LOG_HEAD + 128 + REC_LOG_TAIL);
	size_t o = 0;
	if (!buf)
		return;
	int cut = len > REC_LOG_HEAD + REC_LOG_TAIL;
	if (!cut) {
		append_clean(buf, &o, text, len);
	} else {
		append_clean(buf, &o, text, REC_LOG_HEAD);
		o += (size_t)snprintf(buf + o, 128, "\n[... %zu bytes cut by ksci ...]\n", len - REC_LOG_HEAD - REC_LOG_TAIL);
		append_clean(buf, &o, text + len - REC_LOG_TAIL, REC_LOG_TAIL);
	}
	json_object_set_new(obj, key, json_stringn_nocheck(buf, o));
	free(buf);
	char tk[64];
	snprintf(tk, sizeof tk, "%s_truncated", key);
	if (cut)
		json_object_set_new(obj, tk, json_true());
	else
		json_object_del(obj, tk);
}

void rec_fail(json_t *rec, const char *stage, const char *stage_status, const char *top_status, const char *msg)
{
	json_t *o = json_pack("{s:b, s:s, s:s}", "ok", 0, "status", stage_status, "message", msg ? msg : "");
	json_object_set_new(rec, stage, o);
	rec_set_status(rec, top_status);
}

void rec_invalid(json_t *rec, const char *tool, long line, const char *msg)
{
	json_object_set_new(rec, "error", json_pack("{s:s, s:I, s:s}", "tool", tool, "line", (json_int_t)line, "message", msg));
	rec_set_status(rec, ST_INVALID);
}

const char *const rec_backends[] = {"c", "cuda", "hip", NULL};

static int in_list(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

int rec_backend_known(const char *b) { return in_list(b, rec_backends); }

int rec_status_failed(const char *st)
{
	static const char *const failed[] = {ST_COMPILE_ERROR, ST_WRONG, ST_CRASHED, ST_TIMEOUT, NULL};
	return in_list(st, failed);
}

int rec_status_final(const char *st)
{
	static const char *const other[] = {ST_TIMED, ST_SLOW, ST_UNSUPPORTED, ST_GEN_ERROR, ST_INVALID, NULL};
	return rec_status_failed(st) || in_list(st, other);
}

int rec_judge_goes_on(const char *st)
{
	static const char *const on[] = {"ok", ST_WRONG, ST_SLOW, ST_UNSUPPORTED, NULL};
	return in_list(st, on);
}
