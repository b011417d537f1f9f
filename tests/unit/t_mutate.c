/* t_mutate: knob parsing, the move list and applying moves (lib/mutate.c). */
#include <stdlib.h>
#include <string.h>

#include "gen/mutate.h"
#include "t.h"

static const char *SRC = "// a kernel\n"
			 "#define TILE 32 // ktune: 8 16 32 64\n"
			 "#  define UNROLL 4 /* ktune: 1, 2, 4, 8 */\n"
			 "static const int VEC = 1; // ktune: 1 2 4\n"
			 "#define NOTE 3 // not a knob\n"
			 "int x = TILE * UNROLL * VEC;\n";

/* Count differing lines between a and b. */
static int diff_lines(const char *a, const char *b, int *which)
{
	int n = 0, line = 1;
	while (*a || *b) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
		if (la != lb || memcmp(a, b, la) != 0) {
			if (which && n < 4)
				which[n] = line;
			n++;
		}
		a += la + (ea != NULL);
		b += lb + (eb != NULL);
		line++;
	}
	return n;
}

int main(void)
{
	char e[ERRBUF];
	struct mut_knobs k;
	T_OK(mut_parse(SRC, &k, e) == 0, "parse the three documented forms");
	T_OK(k.n == 3, "three knobs found (got %zu)", k.n);
	T_OK(strcmp(k.v[0].name, "TILE") == 0 && strcmp(k.v[0].value, "32") == 0 && k.v[0].line == 2,
	     "#define NAME VALUE, line 2");
	T_OK(k.v[0].nchoices == 4 && strcmp(k.v[0].choices[3], "64") == 0, "four choices for TILE");
	T_OK(strcmp(k.v[1].name, "UNROLL") == 0 && k.v[1].nchoices == 4 && strcmp(k.v[1].choices[3], "8") == 0,
	     "block comment, commas between values");
	T_OK(strcmp(k.v[2].name, "VEC") == 0 && strcmp(k.v[2].value, "1") == 0 && k.v[2].line == 4,
	     "NAME = VALUE; form");

	struct mut_move *m;
	size_t n = mut_moves(&k, 42, &m);
	/* alternatives: 3 + 3 + 2 = 8 singles; pairs 3*3 + 3*2 + 3*2 = 21 */
	T_OK(n == 29, "every one- and two-knob move listed (got %zu)", n);
	int singles = 0, same_value = 0, same_knob = 0;
	for (size_t i = 0; i < n; i++) {
		singles += m[i].n == 1;
		for (int j = 0; j < m[i].n; j++)
			same_value += strcmp(k.v[m[i].c[j].knob].choices[m[i].c[j].choice], k.v[m[i].c[j].knob].value) == 0;
		same_knob += m[i].n == 2 && m[i].c[0].knob == m[i].c[1].knob;
	}
	T_OK(singles == 8, "8 single moves");
	T_OK(same_value == 0, "no move keeps a knob at its value");
	T_OK(same_knob == 0, "no pair changes one knob twice");

	struct mut_move *m2;
	size_t n2 = mut_moves(&k, 42, &m2);
	T_OK(n2 == n && memcmp(m, m2, n * sizeof *m) == 0, "same seed, same order");
	free(m2);
	n2 = mut_moves(&k, 43, &m2);
	T_OK(n2 == n && memcmp(m, m2, n * sizeof *m) != 0, "another seed, another order");
	free(m2);

	/* Every move changes exactly its knobs' lines, to the recorded values. */
	int all_ok = 1;
	for (size_t i = 0; i < n; i++) {
		char *c = mut_apply(SRC, &k, &m[i]);
		int which[4] = {0};
		int d = diff_lines(SRC, c, which);
		struct mut_knobs kc;
		if (d != m[i].n || mut_parse(c, &kc, e) != 0 || kc.n != 3) {
			all_ok = 0;
		} else {
			for (int j = 0; j < m[i].n; j++) {
				const struct mut_change *ch = &m[i].c[j];
				if (strcmp(kc.v[ch->knob].value, k.v[ch->knob].choices[ch->choice]) != 0)
					all_ok = 0;
			}
			mut_free(&kc);
		}
		free(c);
	}
	T_OK(all_ok, "children differ from the parent in exactly the moved knobs");
	free(m);
	mut_free(&k);

	T_OK(mut_parse("#define A 1 // ktune:\n", &k, e) == -1 && strstr(e, "line 1") && strstr(e, "no values"),
	     "empty value list is an error naming the line: %s", e);
	T_OK(mut_parse("int x;\nfoo(); // ktune: 1 2\n", &k, e) == -1 && strstr(e, "line 2"),
	     "ktune on a line of another form is an error: %s", e);
	T_OK(mut_parse("#define F(x) x // ktune: 1 2\n", &k, e) == -1, "function-like macro refused");
	T_OK(mut_parse("if (a == 1) b(); // ktune: 1 2\n", &k, e) == -1, "comparison is not an assignment");
	T_OK(mut_parse("int main(void) { return 0; }\n", &k, e) == 0 && k.n == 0, "no knobs, no error");
	T_OK(mut_parse("#define A 1 // ktune: 1\n", &k, e) == 0 && k.n == 1, "a knob with one value parses");
	n = mut_moves(&k, 1, &m);
	T_OK(n == 0 && m == NULL, "...and has no move");
	mut_free(&k);
	T_OK(mut_parse("#define A 1 // ktune: 1 1 2 2\r\n", &k, e) == 0 && k.n == 1 && k.v[0].nchoices == 2,
	     "duplicate values collapse; CRLF tolerated");
	mut_free(&k);
	T_OK(mut_parse("#define A 1 // ktune: 1 2", &k, e) == 0 && k.n == 1 && k.v[0].off == 10,
	     "last line without newline");
	mut_free(&k);

	T_OK(mut_mix(1, 2) == mut_mix(1, 2) && mut_mix(1, 2) != mut_mix(2, 1), "mix is deterministic, order matters");
	T_OK(mut_hash_str(0, "ab") != mut_hash_str(0, "ba"), "string hash sees order");
	return T_DONE();
}
