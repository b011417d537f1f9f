/* t_extract: finding the kernel in model answers (lib/extract.c). */
#include <stdlib.h>
#include <string.h>

#include "gen/extract.h"
#include "t.h"

static const char *BASE = "#define TILE 32\nvoid solve(float *x) {\n    x[0] = 1;\n}\n";

static int got(const char *reply, const char *want_how, const char *needle, char **src)
{
	const char *how, *reason;
	char e[ERRBUF];
	*src = NULL;
	if (ext_code(reply, BASE, src, &how, &reason, e) != 0)
		return 0;
	return strcmp(how, want_how) == 0 && (!needle || strstr(*src, needle));
}

static const char *fails(const char *reply)
{
	const char *how, *reason;
	char e[ERRBUF], *src = NULL;
	int rc = ext_code(reply, BASE, &src, &how, &reason, e);
	free(src);
	return rc == 0 ? "ok" : reason;
}

int main(void)
{
	char *s;
	T_OK(got("Here:\n```c\nvoid solve(void) {}\n```\nDone.", "fenced", "void solve(void) {}\n", &s),
	     "one fenced block with prose around");
	free(s);
	T_OK(got("First the helper:\n```c\nstatic int f(void);\n```\nThen the file:\n```cuda\n#include <x>\n"
		 "static int f(void) { return 1; }\nvoid solve(void) { f(); }\n```\n",
		 "fenced", "#include <x>", &s),
	     "several blocks: the one with solve");
	free(s);
	T_OK(got("```c\nvoid solve(void) {}\n```\n```c\nvoid solve(void) { /* longer, final */ }\n```", "fenced", "final", &s),
	     "several blocks with solve: the longest");
	free(s);
	T_OK(got("```c\nvoid solve(void) {\n  int x;", "unclosed_fence", "int x;", &s), "missing closing fence");
	free(s);
	T_OK(got("Sure, the kernel:\n#include <math.h>\nvoid solve(float *x) { x[0] = 2; }\nHope it helps.", "unfenced",
		 "#include <math.h>", &s) && !strstr(s, "Hope"),
	     "no fence: code cut from the prose");
	free(s);
	T_OK(got("<<<<<<< SEARCH\n#define TILE 32\n=======\n#define TILE 64\n>>>>>>> REPLACE\n", "edits", "#define TILE 64\nvoid solve",
		 &s),
	     "SEARCH/REPLACE edit applied");
	free(s);
	T_OK(got("```\n<<<<<<< SEARCH\n  x[0] = 1;  \n=======\n    x[0] = 3;\n>>>>>>> REPLACE\n```\n", "edits", "x[0] = 3;", &s),
	     "edit matches ignoring surrounding whitespace, inside a fence");
	free(s);
	T_OK(got("<<<<<<< SEARCH\n#define TILE 32\n=======\n#define TILE 16\n>>>>>>> REPLACE\n"
		 "<<<<<<< SEARCH\n    x[0] = 1;\n=======\n    x[0] = 5;\n>>>>>>> REPLACE\n", "edits", NULL, &s) &&
		 strstr(s, "TILE 16") && strstr(s, "x[0] = 5"),
	     "two edits in sequence");
	free(s);
	T_OK(strcmp(fails("<<<<<<< SEARCH\nnot in base\n=======\nx\n>>>>>>> REPLACE\n"), "bad_edit") == 0,
	     "edit whose SEARCH is absent: bad_edit");
	T_OK(strcmp(fails("<<<<<<< SEARCH\n}\n=======\n}}\n>>>>>>> REPLACE\n"), "ok") == 0, "unique one-line SEARCH applies");
	T_OK(strcmp(fails("<<<<<<< SEARCH\nTILE\n=======\nx\n>>>>>>> REPLACE\n"), "ok") == 0 ||
		     strcmp(fails("<<<<<<< SEARCH\nTILE\n=======\nx\n>>>>>>> REPLACE\n"), "bad_edit") == 0,
	     "substring SEARCH handled");
	char e[ERRBUF], *o;
	T_OK(ext_apply_edits("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", "x\nx\n", &o, e) == -1 && strstr(e, "more than once"),
	     "ambiguous SEARCH refused: %s", e);
	T_OK(strcmp(fails("<<<<<<< SEARCH\n#define TILE 32\n=======\n"), "bad_edit") == 0, "unterminated edit: bad_edit");
	o = (char *)"untouched";
	T_OK(ext_apply_edits("say <<<<<<< SEARCH in prose, on no marker line\n", "x\n", &o, e) == 0 && o == NULL,
	     "edits-copy-leaked-when-SEARCH-not-a-marker-line: no edits, nothing handed back to leak");
	T_OK(strcmp(fails("I think you should use bigger tiles."), "no_code") == 0, "prose only: no_code");
	T_OK(strcmp(fails("```python\nprint(1)\n```"), "no_code") == 0, "a block without solve: no_code");
	T_OK(strcmp(fails(""), "no_code") == 0, "empty answer: no_code");
	return T_DONE();
}
