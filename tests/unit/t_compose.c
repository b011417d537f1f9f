/* t_compose: lib/gen/gen_compose — the composed text: #include lines
 * hoisted once, each variant in its namespace with its solve renamed and its
 * macros #undef'd after it, #pragma once dropped, the dispatch by a factor of
 * 2 around each benchmark size (0 exactly), the default last, and no
 * composition for a back end without namespaces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "gen/gen_compose.h"
#include "t.h"

static char root[] = "/tmp/t_compose.XXXXXX";

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

int main(void)
{
	char p[4096], e[ERRBUF];
	T_OK(mkdtemp(root) != NULL, "temp tasks root");
	snprintf(p, sizeof p, "%s/two", root);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/two/task.json", root);
	FILE *f = fopen(p, "w");
	fputs("{\"args\": [{\"name\": \"x\", \"kind\": \"in\", \"dtype\": \"f32\", \"shape\": [\"rows\", \"cols\"]},"
	      " {\"name\": \"y\", \"kind\": \"out\", \"dtype\": \"f32\", \"shape\": [\"rows\"]},"
	      " {\"name\": \"rows\", \"kind\": \"scalar\", \"dtype\": \"i32\"},"
	      " {\"name\": \"cols\", \"kind\": \"scalar\", \"dtype\": \"i32\"}],"
	      " \"tests\": [{\"rows\": 1, \"cols\": 1}],"
	      " \"bench\": [{\"rows\": 4096, \"cols\": 4096}, {\"rows\": 0, \"cols\": 9}, {\"rows\": 32768, \"cols\": 1000}],"
	      " \"tolerance\": {\"f32\": {\"atol\": 1e-5, \"rtol\": 1e-4}}, \"reference\": \"reference.c\"}",
	      f);
	fclose(f);
	snprintf(p, sizeof p, "%s/two/reference.c", root);
	f = fopen(p, "w");
	fputs("/* ref */\n", f);
	fclose(f);
	const struct task *t = task_get(root, "two", e);
	T_OK(t != NULL, "the task loads (%s)", t ? "" : e);
	if (!t)
		return T_DONE();

	const char *a = "#pragma once\n#include <cstdio>\n#define TILE 32 // ktune: 32 64\n"
			"__global__ void k(const float* x, float* y, int c) { }\n"
			"extern \"C\" void solve(const float* x, float* y, int rows, int cols) { k<<<rows, TILE>>>(x, y, cols); }\n";
	const char *b = "  #  include <cstdio>\n#include <cstdint>\n#define TILE 64\n#define WIDE 1\n"
			"__global__ void k(const float* x, float* y, int c) { }\n"
			"extern \"C\" void solve(const float* x, float* y, int rows, int cols) { k<<<rows, TILE>>>(x, y, cols); }\n";
	struct compose_variant v[2] = {{"aaaaaaaaaaaaaaaa", a}, {"bbbbbbbbbbbbbbbb", b}};
	int pick[3] = {1, 1, 0};
	char *s = compose_source(t, "cuda", v, 2, pick, e);
	T_OK(s != NULL, "composed (%s)", s ? "" : e);
	if (!s)
		return T_DONE();
	T_OK(strncmp(s, COMPOSE_MARK " 2 variants of task two; default aaaaaaaaaaaaaaaa\n", strlen(COMPOSE_MARK) + 45) == 0,
	     "the first line marks a composition and names the default");
	T_OK(count(s, "#include <cstdio>") == 1 && count(s, "#include <cstdint>") == 1 &&
		     count(s, "#  include <cstdio>") == 0,
	     "#include lines hoisted, each header once (the same line once)");
	char *ns0 = strstr(s, "namespace ksci_v0 {"), *inc = strstr(s, "#include <cstdint>");
	T_OK(ns0 && inc && inc < ns0, "the includes come before the first namespace");
	T_OK(count(s, "#pragma once") == 0, "#pragma once dropped");
	T_OK(count(s, "#define solve ksci_v0_solve\nnamespace ksci_v0 {") == 1 &&
		     count(s, "#define solve ksci_v1_solve\nnamespace ksci_v1 {") == 1,
	     "each variant in its namespace, its solve renamed");
	char *end0 = strstr(s, "} // namespace ksci_v0\n#undef solve\n#undef TILE\n");
	T_OK(end0 != NULL, "variant 0's TILE undefined after it");
	T_OK(strstr(s, "} // namespace ksci_v1\n#undef solve\n#undef TILE\n#undef WIDE\n") != NULL,
	     "variant 1's TILE and WIDE undefined after it");
	T_OK(count(s, "#undef solve\n#undef solve") == 0, "a variant's own solve macro is not undefined twice");
	T_OK(strstr(s, "\tif (rows >= 2048 && rows <= 8192 && cols >= 2048 && cols <= 8192) { /* near rows=4096 cols=4096 */\n"
		       "\t\tksci_v1::ksci_v1_solve(x, y, rows, cols);\n\t\treturn;\n\t}\n") != NULL,
	     "size 1: within a factor of 2 in every integer scalar, to its winner");
	T_OK(strstr(s, "\tif (rows == 0 && cols >= 5 && cols <= 18) {") != NULL, "a 0 dimension is matched exactly");
	T_OK(strstr(s, "32768") == NULL, "a size the default wins has no branch");
	char *dflt = strstr(s, "\tksci_v0::ksci_v0_solve(x, y, rows, cols);\n}\n");
	T_OK(dflt && strstr(s, "extern \"C\" void solve(const float* x, float* y, int rows, int cols)\n{\n") < dflt &&
		     dflt[strlen("\tksci_v0::ksci_v0_solve(x, y, rows, cols);\n}\n")] == 0,
	     "the default last, in a solve of the task's signature");
	free(s);

	s = compose_source(t, "c", v, 2, pick, e);
	T_OK(s == NULL && strstr(e, "namespaces"), "c: refused (%s)", e);
	free(s);
	s = compose_source(t, "hip", v, 2, pick, e);
	T_OK(s != NULL, "hip: composed");
	free(s);
	snprintf(p, sizeof p, "rm -rf %s", root);
	T_OK(system(p) == 0, "temp tasks root removed");
	return T_DONE();
}
