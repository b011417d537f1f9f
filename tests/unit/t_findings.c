/* t_findings: lib/gen/findings — the file's name per device, what a model's
 * answer may keep (only findings citing records the archive holds), the
 * prompt text, and saving and loading (findings-cite-made-up-records). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "gen/findings.h"
#include "t.h"

static int seen(const void *ctx, const char *id)
{
	(void)ctx;
	return strcmp(id, "aaaaaaaaaaaaaaaa") == 0 || strcmp(id, "bbbbbbbbbbbbbbbb") == 0;
}

int main(void)
{
	char p[4096];
	json_t *gpu = json_pack("{s:s}", "gpu", "NVIDIA H100 80GB HBM3"), *cpu = json_pack("{s:s}", "cpu", "AMD EPYC 7B13");
	T_OK(fnd_path("/d", "softmax", "cuda", gpu, p, sizeof p) == 0 &&
		     strcmp(p, "/d/softmax-cuda-NVIDIA_H100_80GB_HBM3.json") == 0,
	     "the GPU's name, bytes outside [A-Za-z0-9._-] made _: %s", p);
	T_OK(fnd_path("/d", "softmax", "c", cpu, p, sizeof p) == 0 && strcmp(p, "/d/softmax-c-AMD_EPYC_7B13.json") == 0,
	     "no GPU: the CPU's name: %s", p);
	T_OK(fnd_path("/d", "t", "c", NULL, p, sizeof p) == 0 && strcmp(p, "/d/t-c-unknown-device.json") == 0,
	     "no device detected: unknown-device");
	json_t *slash = json_pack("{s:s}", "gpu", "../../etc/x");
	T_OK(fnd_path("/d", "t", "c", slash, p, sizeof p) == 0 && strcmp(p, "/d/t-c-.._.._etc_x.json") == 0,
	     "a device name cannot leave the directory: %s", p);
	char small[8];
	T_OK(fnd_path("/d", "t", "c", gpu, small, sizeof small) == -1, "a path that does not fit: -1");

	json_t *ans = json_loads("{\"findings\": ["
				 "{\"text\": \"real and made up\", \"records\": [\"aaaaaaaaaaaaaaaa\", \"ffffffffffffffff\"]},"
				 "{\"text\": \"only made up\", \"records\": [\"0000000000000000\"]},"
				 "{\"text\": \"\", \"records\": [\"bbbbbbbbbbbbbbbb\"]},"
				 "{\"text\": \"no records\"},"
				 "{\"text\": \"two real\", \"records\": [\"bbbbbbbbbbbbbbbb\", \"aaaaaaaaaaaaaaaa\", 7]}]}",
				 0, NULL);
	int df, di;
	json_t *k = fnd_validate(ans, seen, NULL, &df, &di);
	T_OK(k && json_array_size(k) == 2, "findings-cite-made-up-records: two of five kept");
	T_OK(df == 3 && di == 3, "three findings and three ids dropped (%d, %d)", df, di);
	T_OK(json_array_size(json_object_get(json_array_get(k, 0), "records")) == 1 &&
		     strcmp(json_string_value(json_array_get(json_object_get(json_array_get(k, 0), "records"), 0)),
			    "aaaaaaaaaaaaaaaa") == 0,
	     "a kept finding keeps only its real ids");
	json_t *none = json_pack("{s:s}", "plans", "x");
	T_OK(fnd_validate(none, seen, NULL, &df, &di) == NULL, "no findings array: NULL");
	json_t *many = json_pack("{s:[]}", "findings");
	for (int i = 0; i < FND_MAX + 5; i++)
		json_array_append_new(json_object_get(many, "findings"),
				      json_pack("{s:s, s:[s]}", "text", "x", "records", "aaaaaaaaaaaaaaaa"));
	json_t *km = fnd_validate(many, seen, NULL, &df, &di);
	T_OK(json_array_size(km) == FND_MAX && df == 5, "at most %d kept", FND_MAX);

	char dir[] = "/tmp/t_findings.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	snprintf(p, sizeof p, "%s/sub/f.json", dir);
	json_t *doc = json_pack("{s:s, s:O}", "task", "t", "findings", k);
	char e[ERRBUF];
	T_OK(fnd_save(p, doc, e) == 0, "saved (its directory made)");
	json_t *back = fnd_load(p);
	T_OK(back && json_equal(back, doc), "loaded back the same");
	char *txt = fnd_text(back);
	T_OK(txt && strcmp(txt, "- real and made up (records: aaaaaaaaaaaaaaaa)\n- two real (records: bbbbbbbbbbbbbbbb, "
				"aaaaaaaaaaaaaaaa)\n") == 0,
	     "the prompt text: one line each, with the records");
	free(txt);
	txt = fnd_text(NULL);
	T_OK(txt && strcmp(txt, "(none yet)\n") == 0, "no file: (none yet)");
	free(txt);
	snprintf(p, sizeof p, "%s/none.json", dir);
	T_OK(fnd_load(p) == NULL, "a missing file: NULL");
	FILE *f = fopen(p, "w");
	fputs("[1, 2]", f);
	fclose(f);
	T_OK(fnd_load(p) == NULL, "not a findings object: NULL");
	unlink(p);
	snprintf(p, sizeof p, "%s/sub/f.json", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/sub", dir);
	rmdir(p);
	rmdir(dir);
	json_decref(back);
	json_decref(doc);
	json_decref(k);
	json_decref(km);
	json_decref(many);
	json_decref(none);
	json_decref(ans);
	json_decref(slash);
	json_decref(gpu);
	json_decref(cpu);
	return T_DONE();
}
