/*
 * nvcc_steps: nvcc's --dryrun plan run as two halves at once (nvcc_steps.h
 * says why).  The listing is matched against the one shape nvcc 12 and 13
 * print for `-shared -o out.so X.cu` with --keep (steps in this order):
 *
 *   rm ...                                   (any number)
 *   H1  host compiler -E ... -o "D/X.cpp4.ii"
 *   H2  cudafe++ ... --gen_module_id_file --module_id_file_name "D/X.module_id" ...
 *   D1  host compiler -E ... -o "D/X.cpp1.ii"
 *   D2  cicc ... --include_file_name "X.fatbin.c" --module_id_file_name "D/X.module_id" ...
 *   D3  ptxas ...
 *   D4  fatbinary --create="D/X.fatbin" ... --embedded-fatbin="D/X.fatbin.c"
 *   H3  host compiler -c ... "D/X.cudafe1.cpp" -o "D/X.o"
 *   L1  nvlink ... "D/X.o" ...
 *   L2  fatbinary ... -link ...
 *   L3  host compiler -c ... link.stub ...
 *   L4  host compiler ... "D/X.o" ... -o "out.so"
 *
 * and run as: module id written; {H1, H2 reading it} beside {D1, D2};
 * then {D3, D4 without its embedded copy} beside {H3 including our
 * fatbin.c, which points at an external symbol}; then the fatbinary
 * assembled into an object under that symbol and joined to H3's (ld -r:
 * nvlink wants a fatbinary in every host object); then L1-L4 on the
 * joined object.  Every command is nvcc's own text, run by sh as nvcc's
 * listing writes it; what this file adds is only file names it took from
 * the listing and checked to be plain (letters, digits, "._+-/").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvcc_steps.h"
#include "strbuf.h"

#define MAXCMD 32

/* The fatbin.c the host object includes instead of the fatbinary itself:
 * the wrapper nvcc's own fatbin.c defines (fatbinary_section.h, public in
 * CUDA's include directory), pointing at the data by name. */
static const char fatbin_c[] =
	"/* kcompile (lib/nvcc_steps.c): the fatbinary's wrapper, its data in another object */\n"
	"#include \"fatbinary_section.h\"\n"
	"#define __CUDAFATBINSECTION \".nvFatBinSegment\"\n"
	"#define __CUDAFATBINDATASECTION \".nv_fatbin\"\n"
	"#ifdef __cplusplus\n"
	"extern \"C\" {\n"
	"#endif\n"
	"extern const unsigned long long ksci_fatbin_data[] __attribute__((visibility(\"hidden\")));\n"
	"static const __fatBinC_Wrapper_t __fatDeviceText __attribute__((aligned(8)))\n"
	"\t__attribute__((section(__CUDAFATBINSECTION))) = {FATBINC_MAGIC, FATBINC_VERSION, ksci_fatbin_data, 0};\n"
	"#ifdef __cplusplus\n"
	"}\n"
	"#endif\n";

struct cmd {
	char *text;   /* the command as listed (owned) */
	char prog[64]; /* the program's base name */
};

static int plain_path(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._+-/", *s)))
			return 0;
	return 1;
}

/* The value of `opt"VALUE"` (opt ends with '=' or ' ') in c, copied to v
 * (n bytes) when it is a plain path; 0 found, -1 not (or not plain). */
static int quoted_after(const char *c, const char *opt, char *v, size_t n)
{
	const char *p = strstr(c, opt);
	if (!p)
		return -1;
	p += strlen(opt);
	if (*p != '"')
		return -1;
	const char *q = strchr(++p, '"');
	if (!q || (size_t)(q - p) >= n)
		return -1;
	memcpy(v, p, (size_t)(q - p));
	v[q - p] = '\0';
	return plain_path(v) ? 0 : -1;
}

/* c with the first `old` replaced by `rep` (new string), or NULL where old
 * is not in c exactly once. */
static char *replace_once(const char *c, const char *old, const char *rep)
{
	const char *p = strstr(c, old);
	if (!p || strstr(p + 1, old))
		return NULL;
	struct strbuf b = STRBUF_INIT;
	sb_addn(&b, c, (size_t)(p - c));
	sb_add(&b, rep);
	sb_add(&b, p + strlen(old));
	return sb_detach(&b, NULL);
}

static int has(const struct cmd *c, const char *s)
{
	return strstr(c->text, s) != NULL;
}

/* A shell word quoted for sh: 'text' with ' as '\''. */
static void sq(struct strbuf *b, const char *s)
{
	sb_addc(b, '\'');
	for (; *s; s++)
		if (*s == '\'')
			sb_add(b, "'\\''");
		else
			sb_addc(b, *s);
	sb_addc(b, '\'');
}

/* One half in the background: { A && B; } > LOG 2>&1 & */
static void half(struct strbuf *b, const char *a, const char *c2, const char *log, const char *var)
{
	sb_add(b, "{ ");
	sb_add(b, a);
	if (c2) {
		sb_add(b, " && ");
		sb_add(b, c2);
	}
	sb_add(b, "; } >");
	sq(b, log);
	sb_printf(b, " 2>&1 &\n%s=$!\n", var);
}

/* Wait for a half, print its output, stop the script where it failed. */
static void collect(struct strbuf *b, const char *var, const char *log)
{
	sb_printf(b, "wait $%s; s=$?\ncat ", var);
	sq(b, log);
	sb_add(b, "\n[ $s = 0 ] || ksci_end $s\n");
}

char *nvcc_steps_script(const char *listing, const char *module_id, char *e)
{
	struct cmd cmd[MAXCMD];
	int nc = 0;
	struct strbuf env = STRBUF_INIT, b = STRBUF_INIT;
	char *out = NULL, *h2 = NULL, *d4 = NULL, *l1 = NULL, *l4 = NULL;
	char *copy = strdup(listing ? listing : "");
	if (!copy || !plain_path(module_id) || strchr(module_id, '/') || strchr(module_id, '.')) {
		errf(e, copy ? "module id %s is not plain" : "out of memory", module_id);
		goto out;
	}
	for (char *line = copy, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		size_t L = strlen(line);
		while (L && (line[L - 1] == ' ' || line[L - 1] == '\r'))
			line[--L] = '\0';
		if (strncmp(line, "#$ ", 3) != 0)
			continue; /* nvcc's own messages, if any */
		char *body = line + 3;
		size_t nm = strspn(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (nm && body[nm] == '=' && !(body[0] >= '0' && body[0] <= '9')) {
			/* An assignment nvcc made for its steps (PATH, CICC_PATH,
			 * LD_LIBRARY_PATH, ...).  Those with quotes (INCLUDES,
			 * LIBRARIES) are already spelled out in the commands. */
			if (!strchr(body + nm + 1, '"')) {
				sb_addn(&env, body, nm);
				sb_addc(&env, '=');
				sq(&env, body + nm + 1);
				sb_add(&env, "; export ");
				sb_addn(&env, body, nm);
				sb_addc(&env, '\n');
			}
			continue;
		}
		if (nc == MAXCMD) {
			errf(e, "more than %d steps", MAXCMD);
			goto out;
		}
		struct cmd *c = &cmd[nc];
		const char *w = body, *we;
		if (*w == '"') {
			we = strchr(++w, '"');
			if (!we) {
				errf(e, "step %d: an unclosed quote", nc + 1);
				goto out;
			}
		} else
			we = w + strcspn(w, " ");
		const char *base = w;
		for (const char *p = w; p < we; p++)
			if (*p == '/')
				base = p + 1;
		snprintf(c->prog, sizeof c->prog, "%.*s", (int)(we - base), base);
		c->text = body;
		nc++;
	}
	int i = 0;
	while (i < nc && strcmp(cmd[i].prog, "rm") == 0)
		i++;
	int first = i;
	if (nc - first != 11) {
		errf(e, "%d steps after the rm, not the 11 this knows", nc - first);
		goto out;
	}
	struct cmd *H1 = &cmd[i], *H2 = &cmd[i + 1], *D1 = &cmd[i + 2], *D2 = &cmd[i + 3], *D3 = &cmd[i + 4],
		   *D4 = &cmd[i + 5], *H3 = &cmd[i + 6], *L1 = &cmd[i + 7], *L2 = &cmd[i + 8], *L3 = &cmd[i + 9],
		   *L4 = &cmd[i + 10];
	char modf[512], modf2[512], fbc[512], inc[512], fatbin[512], obj[512], obj2[512];
	static const char *const what[] = {"host preprocessing",  "cudafe++",	     "device preprocessing",
					   "cicc",		  "ptxas",	     "fatbinary",
					   "host compile",	  "nvlink",	     "fatbinary -link",
					   "link stub compile",	  "the final link"};
	int bad = !(has(H1, " -E ") && has(H1, ".cpp4.ii\"")) ? 0
		  : !(strcmp(H2->prog, "cudafe++") == 0 && has(H2, "--gen_module_id_file ") &&
		      quoted_after(H2->text, "--module_id_file_name ", modf, sizeof modf) == 0) ? 1
		  : !(has(D1, " -E ") && has(D1, ".cpp1.ii\"")) ? 2
		  : !(strcmp(D2->prog, "cicc") == 0 && quoted_after(D2->text, "--module_id_file_name ", modf2, sizeof modf2) == 0 &&
		      strcmp(modf, modf2) == 0 && quoted_after(D2->text, "--include_file_name ", inc, sizeof inc) == 0) ? 3
		  : strcmp(D3->prog, "ptxas") != 0 ? 4
		  : !(strcmp(D4->prog, "fatbinary") == 0 && !has(D4, " -link") &&
		      quoted_after(D4->text, "--create=", fatbin, sizeof fatbin) == 0 &&
		      quoted_after(D4->text, "--embedded-fatbin=", fbc, sizeof fbc) == 0) ? 5
		  : !(has(H3, " -c ") && has(H3, ".cudafe1.cpp\"") && quoted_after(H3->text, " -o ", obj, sizeof obj) == 0) ? 6
		  : strcmp(L1->prog, "nvlink") != 0 ? 7
		  : !(strcmp(L2->prog, "fatbinary") == 0 && has(L2, " -link")) ? 8
		  : !has(L3, "link.stub") ? 9
		  : !has(L4, "-o \"out.so\"") ? 10
		  : -1;
	if (bad >= 0) {
		errf(e, "step %d is not %s as this knows it: %.80s", first + bad + 1, what[bad], cmd[first + bad].text);
		goto out;
	}
	/* The stub cicc writes includes the fatbin.c by its base name, next to it. */
	const char *fbase = strrchr(fbc, '/') ? strrchr(fbc, '/') + 1 : fbc;
	if (strcmp(fbase, inc) != 0) {
		errf(e, "cicc's stub includes %s, fatbinary writes %s", inc, fbc);
		goto out;
	}
	char qobj[600], qobj2[600], emb[600], dir[512];
	snprintf(obj2, sizeof obj2, "%s.fb.o", obj);
	snprintf(qobj, sizeof qobj, "\"%s\"", obj);
	snprintf(qobj2, sizeof qobj2, "\"%s\"", obj2);
	snprintf(emb, sizeof emb, " --embedded-fatbin=\"%s\"", fbc);
	snprintf(dir, sizeof dir, "%s", modf);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	h2 = replace_once(H2->text, "--gen_module_id_file ", "");
	d4 = replace_once(D4->text, emb, "");
	l1 = replace_once(L1->text, qobj, qobj2);
	l4 = replace_once(L4->text, qobj, qobj2);
	if (!h2 || !d4 || !l1 || !l4) {
		errf(e, "%s", !h2 ? "cudafe++'s --gen_module_id_file is not there once"
			      : !d4 ? "fatbinary's --embedded-fatbin is not there once"
				    : "the host object is not named once in nvlink's or the final link's step");
		goto out;
	}
	char log[4][600];
	static const char *const logname[] = {"ksci-host1.log", "ksci-dev1.log", "ksci-dev2.log", "ksci-host2.log"};
	for (int k = 0; k < 4; k++)
		snprintf(log[k], sizeof log[k], "%s/%s", dir, logname[k]);

	sb_add(&b, "# kcompile (lib/nvcc_steps.c): nvcc's steps from its --dryrun, host and device halves at once\n");
	sb_add(&b, env.buf ? env.buf : "");
	/* A half's status 128+N is a step killed by signal N (sh's rule).
	 * Killed by the machine or a person (KILL: the OOM killer; TERM,
	 * INT, HUP), the script dies of the same signal, as nvcc would be
	 * seen to: the compile is transient, never cached.  A step's own
	 * crash (SEGV: a compiler bug, the same next time) is an exit
	 * status, as nvcc gives it (139); ptxas exits 255 on its own. */
	sb_add(&b, "ksci_end() {\n\tcase $1 in 129 | 130 | 137 | 143) kill -$(($1 - 128)) $$ ;; esac\n\texit \"$1\"\n}\n");
	for (int k = 0; k < first; k++) {
		struct cmd *c = &cmd[k];
		const char *rest = c->text + strcspn(c->text, " ");
		sb_printf(&b, "rm -f%s\n", rest);
	}
	sb_add(&b, "printf '%s' ");
	sq(&b, module_id);
	sb_add(&b, " >");
	sq(&b, modf);
	sb_add(&b, " || exit 1\n");
	half(&b, H1->text, h2, log[0], "h");
	half(&b, D1->text, D2->text, log[1], "d");
	collect(&b, "h", log[0]);
	collect(&b, "d", log[1]);
	sb_add(&b, "cat >");
	sq(&b, fbc);
	sb_printf(&b, " <<'KSCI_EOF' || exit 1\n%sKSCI_EOF\n", fatbin_c);
	half(&b, D3->text, d4, log[2], "d");
	half(&b, H3->text, NULL, log[3], "h");
	collect(&b, "d", log[2]);
	collect(&b, "h", log[3]);
	/* The host compiler as the listing names it (its first word). */
	const char *cc = H3->text;
	size_t ccn = *cc == '"' ? (size_t)(strchr(cc + 1, '"') - cc) + 1 : strcspn(cc, " ");
	sb_printf(&b, "printf '\\t.section .nv_fatbin, \"a\"\\n\\t.balign 8\\n\\t.globl ksci_fatbin_data\\n"
		      "\\t.hidden ksci_fatbin_data\\nksci_fatbin_data:\\n\\t.incbin \"%%s\"\\n"
		      "\\t.section .note.GNU-stack,\"\",@progbits\\n' ");
	sq(&b, fatbin);
	sb_printf(&b, " >'%s/ksci-fatbin.s' &&\n\t%.*s -c '%s/ksci-fatbin.s' -o '%s/ksci-fatbin.o' &&\n"
		      "\t%.*s -r -nostdlib -o '%s' '%s' '%s/ksci-fatbin.o' || ksci_end $?\n",
		  dir, (int)ccn, cc, dir, dir, (int)ccn, cc, obj2, obj, dir);
	const char *link[] = {l1, L2->text, L3->text, l4};
	for (int k = 0; k < 4; k++)
		sb_printf(&b, "%s || ksci_end $?\n", link[k]);
	out = sb_detach(&b, NULL);
	if (!out)
		errf(e, "out of memory");
out:
	sb_release(&b);
	sb_release(&env);
	free(h2);
	free(d4);
	free(l1);
	free(l4);
	free(copy);
	return out;
}
