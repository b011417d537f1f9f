/* findings: the model's distilled findings file; see findings.h. */
#include "findings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "file.h"
#include "rec.h"
#include "strbuf.h"

int fnd_path(const char *dir, const char *task, const char *backend, const json_t *env, char *buf, size_t n)
{
	const char *dev = json_string_value(json_object_get(env, "gpu"));
	if (!dev || !*dev)
		dev = json_string_value(json_object_get(env, "cpu"));
	if (!dev || !*dev)
		dev = "unknown-device";
	char d[128];
	size_t k = 0;
	for (const char *p = dev; *p && k + 1 < sizeof d; p++)
		d[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
				 *p == '-' || *p == '_'
			     ? *p
			     : '_';
	d[k] = '\0';
	int w = snprintf(buf, n, "%s/%s-%s-%s.json", dir, task, backend, d);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

json_t *fnd_load(const char *path)
{
	json_t *j = json_load_file(path, 0, NULL);
	if (j && !json_is_array(json_object_get(j, "findings"))) {
		json_decref(j);
		return NULL;
	}
	return j;
}

char *fnd_text(const json_t *doc)
{
	struct strbuf b = STRBUF_INIT;
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "findings"), i, f) {
		sb_printf(&b, "- %s (records:", json_string_value(json_object_get(f, "text")));
		size_t k;
		json_t *id;
		json_array_foreach(json_object_get(f, "records"), k, id) {
			sb_printf(&b, "%s %s", k ? "," : "", json_string_value(id));
		}
		sb_add(&b, ")\n");
	}
	if (b.len == 0)
		sb_add(&b, "(none yet)\n");
	return sb_detach(&b, NULL);
}

json_t *fnd_validate(const json_t *answer, int (*seen)(const void *ctx, const char *id), const void *ctx,
		     int *dropped_f, int *dropped_ids)
{
	json_t *in = json_object_get(answer, "findings");
	*dropped_f = *dropped_ids = 0;
	if (!json_is_array(in))
		return NULL;
	json_t *out = json_array();
	size_t i;
	json_t *f;
	json_array_foreach(in, i, f) {
		const char *text = json_string_value(json_object_get(f, "text"));
		json_t *ids = json_array();
		size_t k;
		json_t *id;
		json_array_foreach(json_object_get(f, "records"), k, id) {
			if (json_is_string(id) && seen(ctx, json_string_value(id)))
				json_array_append(ids, id);
			else
				(*dropped_ids)++;
		}
		if (text && *text && json_array_size(ids) > 0 && json_array_size(out) < FND_MAX)
			json_array_append_new(out, json_pack("{s:s, s:o}", "text", text, "records", ids));
		else {
			(*dropped_f)++;
			json_decref(ids);
		}
	}
	return out;
}

int fnd_save(const char *path, const json_t *doc, char *errbuf)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		if (file_mkdirp(dir, errbuf) != 0)
			return -1;
	}
	char *s = json_dumps(doc, JSON_INDENT(1));
	if (!s)
		return errf(errbuf, "out of memory");
	int rc = file_write_atomic(path, s, strlen(s), errbuf);
	free(s);
	return rc;
}
