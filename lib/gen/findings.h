/*
 * findings: the distilled findings the model keeps per task, back end and
 * device (docs/loop.md "Findings") — what the notebook's experiments
 * taught, a few sentences, each citing the records that support it.
 *
 * One JSON file per task, back end and device in a directory the caller
 * names (the pipelines: ARCHIVE.findings/):
 *
 *   DIR/TASK-BACKEND-DEVICE.json = {"task", "backend", "device", "generation",
 *       "findings": [{"text": "...", "records": ["<id>", ...]}],
 *       "calls": [<each update's call accounting, lib/llm.h>]}
 *
 * DEVICE is the detected device's name (time.env gpu, else cpu) with every
 * byte outside [A-Za-z0-9._-] made '_'.  A finding is kept only when it
 * cites at least one record the archive holds; cited ids it does not hold
 * are dropped (the model cannot make up its evidence).  Everything passed in
 * is borrowed; returned strings and JSON are the caller's.
 */
#ifndef KSCI_FINDINGS_H
#define KSCI_FINDINGS_H

#include <jansson.h>
#include <stddef.h>

/* At most this many findings are kept. */
#define FND_MAX 20

/* The file's path into buf (env: the detected device's time.env, or NULL).
 * 0, or -1 when it does not fit. */
int fnd_path(const char *dir, const char *task, const char *backend, const json_t *env, char *buf, size_t n);
/* The file, or NULL when there is none or it is not a findings object. */
json_t *fnd_load(const char *path);
/* The findings as prompt text, one "- text (records: a, b)" line each;
 * "(none yet)" without any. */
char *fnd_text(const json_t *doc);
/* From a model's answer object {"findings": [{"text", "records"}]}: the
 * findings whose text is a non-empty string and that cite at least one id
 * seen(ctx, id) accepts, with only such ids, at most FND_MAX; *dropped_f
 * and *dropped_ids count what was left out.  NULL when the answer has no
 * "findings" array. */
json_t *fnd_validate(const json_t *answer, int (*seen)(const void *ctx, const char *id), const void *ctx,
		     int *dropped_f, int *dropped_ids);
/* Write doc to path atomically (the directory is made). 0, or -1 and errbuf. */
int fnd_save(const char *path, const json_t *doc, char *errbuf);

#endif
