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
 * assembled into an object under that symbol; then L4 on H3's object and
 * that one.  The device link, L1-L3, runs from the start beside the
 * halves, on an object without device code: in a whole-program build
 * (nvcc's default, no -rdc) it has nothing to link, and its output is the
 * same bytes as on the real objects (nvlink's note holds its options, not
 * its inputs; tests/sh/t45-nvcc-prefix.sh compares every seed's device
 * code both ways) — that takes nvlink, fatbinary -link and the link
 * stub's compile, 50-75 ms here, off the end of every build.  Where H3's
 * object has device code of its own (a section named like a fatbinary's,
 * a candidate's doing: only then could the link have something to do),
 * or the early link failed, L1-L3 run again after, nvcc's way: on H3's
 * object joined to the fatbinary's (ld -r: nvlink wants a fatbinary in
 * every host object), and ksci-dlink.why says why; `joined` in
 * nvcc_steps_plan asks for that way always.  Every command is nvcc's own
 * text, run by sh as nvcc's listing writes it; what this file adds is only
 * file names it took from the listing and checked to be plain (letters,
 * digits, "._+-/").
 *
 * With a prefix (nvcc_steps.h), D1 runs as ksci_pp: the candidate's part
 * (the wrapper from its line K on, under a `#line K` in a directory of its
 * own, D/r, beside a link to the candidate: the same file names as nvcc's
 * run, __BASE_FILE__ too) by D1's command with -imacros of the prefix's
 * macros; an awk checks its text (below) and joins it to the prefix's.
 * mkpre runs D1's command four ways on the header part in D/p: its text
 * (with a line of __COUNTER__ after it, which must be 0), its macros with
 * where each was defined (-dD), the macros of an empty file without D1's
 * -include (the predefined ones: those the headers undefined are
 * undefined again, those left as they were are not defined again) and,
 * where the headers' files have a `#pragma GCC poison`, which of those
 * identifiers are poisoned at the end.  gcc -E keeps none of those
 * pragmas in its text, so they are found in the files and tried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvcc_steps.h"
#include "strbuf.h"

#define MAXCMD 32

const char *const nvcc_prefix_ext[] = {"ii", "h", "sys", "files", "log", NULL};

/* The candidate's part checked and cut (stdin: D/ksci-pre.files, then the
 * part's text): from the marker of the wrapper's line k on, no text from a
 * header of the prefix (the full run would have had the header's guard
 * defined, or its #pragma once seen, and no text), no file entered by a
 * relative name but the candidate (looked up beside D/r's files, not the
 * build directory's).  Why not, on stderr. */
static const char rest_awk[] =
	"FNR == NR { pre[$0] = 1; next }\n"
	"!go { if ($0 == \"# \" k \" \\\"\" src \"\\\"\") go = 1; else next }\n"
	"/^# [0-9]+ \"/ {\n"
	"\tif (index($0, \"\\\\\")) { why = \"a line marker with an escaped name\"; exit }\n"
	"\tsplit($0, a, \"\\\"\"); f = a[2]\n"
	"\tif (a[3] ~ /^ 1( |$)/ && substr(f, 1, 1) != \"/\" && f != cand) {\n"
	"\t\twhy = \"the candidate's part enters \" f \", a name relative to the build directory\"; exit }\n"
	"\tcur = f; print; next\n"
	"}\n"
	"/[^ \\t]/ && (cur in pre) { why = \"the candidate's part has text from \" cur \", a header of the prefix\"; exit }\n"
	"{ print }\n"
	"END { if (!why && !go) why = \"no line marker for the wrapper's line \" k\n"
	"\tif (why) { print why > \"/dev/stderr\"; exit 1 } }\n";

/* The macros the header part leaves (stdin: an empty file's -dM, then the
 * part's -dD), as -imacros files: those it undefined undefined again, and
 * each it defined that is not predefined as it is — a builtin defined
 * again warns — into pre.h, or pre.sys where the definition was in a
 * system header.  gcc marks the tokens of such a macro's expansion as a
 * system header's (a line marker with flag 3 around them), which cicc
 * reads: so the definitions keep their place's kind. */
static const char macros_awk[] =
	"FNR == NR { if ($1 == \"#define\") { n = $2; sub(/\\(.*/, \"\", n); pd[n] = $0 } next }\n"
	"/^# [0-9]+ \"/ { split($0, a, \"\\\"\"); sys = a[3] ~ / 3( |$)/; next }\n"
	"$1 == \"#define\" { n = $2; sub(/\\(.*/, \"\", n); def[n] = $0; ds[n] = sys; next }\n"
	"$1 == \"#undef\" { delete def[$2]; next }\n"
	"END { print \"#pragma GCC system_header\" > \"pre.sys\"\n"
	"\tfor (n in pd) if (!(n in def)) print \"#undef \" n > \"pre.h\"\n"
	"\tfor (n in def) if (pd[n] != def[n]) print def[n] > (ds[n] ? \"pre.sys\" : \"pre.h\") }\n";

/* The header part's text (all.ii) into pre.ii without its last line, which
 * must be the __COUNTER__ line's 0; the files entered into files. */
static const char mkpre_awk[] =
	"/^# [0-9]+ \"/ {\n"
	"\tif (index($0, \"\\\\\")) bad = \"a header whose name has an escape in a line marker\"\n"
	"\tsplit($0, a, \"\\\"\"); f = a[2]\n"
	"\tif (f != src && f != \"<built-in>\" && f != \"<command-line>\" && !(f in seen)) {\n"
	"\t\tseen[f] = 1\n"
	"\t\tif (substr(f, 1, 1) != \"/\") bad = \"a header by a name relative to the build directory: \" f\n"
	"\t\tprint f > \"files\"\n"
	"\t}\n"
	"}\n"
	"NR > 1 { print prev > \"pre.ii\" }\n"
	"{ prev = $0 }\n"
	"END { if (!bad && prev != \"ksci_counter 0\") bad = \"the headers use __COUNTER__\"\n"
	"\tif (bad) { print bad; exit 1 } }\n";

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

/* Why the host object (readelf -S -W of it) may have device code of its
 * own, on a line; nothing where it has none: no section named like a
 * fatbinary's or NVIDIA's (".nv..." where a name or a word starts) but the
 * one wrapper fatbin_c makes (24 bytes of .nvFatBinSegment) and its
 * relocations.  Only such an object could give nvlink something to link. */
static const char own_awk[] =
	"/^ *\\[ *[0-9]+\\]/ {\n"
	"\tn++; x = $0; sub(/^ *\\[ *[0-9]+\\] */, \"\", x); l = tolower(x); split(x, f, \" \")\n"
	"\tif (l !~ /fatbin/ && l !~ /(^|[^a-z0-9_])\\.nv/) next\n"
	"\tif (f[1] == \".nvFatBinSegment\" && f[2] == \"PROGBITS\" && f[5] == \"000018\" && !seg) seg = 1\n"
	"\telse if (!(f[1] == \".rela.nvFatBinSegment\" && f[2] == \"RELA\") && !why) why = \"a section \" x\n"
	"}\n"
	"END { if (!n) why = \"readelf listed no sections\"; else if (!why && !seg) why = \"no fatbinary wrapper of 24 bytes\"\n"
	"\tif (why) print \"the host object may have device code of its own: \" why }\n";

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

/* c with every ` -include "X"` taken out, or NULL where a -include of
 * another form is left. */
static char *strip_include(const char *c)
{
	struct strbuf b = STRBUF_INIT;
	const char *p;
	while ((p = strstr(c, " -include \"")) != NULL) {
		const char *q = strchr(p + 11, '"');
		if (!q)
			break;
		sb_addn(&b, c, (size_t)(p - c));
		c = q + 1;
	}
	sb_add(&b, c);
	char *o = sb_detach(&b, NULL);
	if (o && strstr(o, "-include")) {
		free(o);
		o = NULL;
	}
	return o;
}

/* The prefix's two pieces for D1 (d1, its output out, in dir D), or -1
 * and why: the function ksci_pp for the build script into b, the making
 * script into *mk. */
static int prefix_parts(const char *d1, const char *out, const char *D, const struct nvcc_steps_pre *pre,
			const char *env, struct strbuf *b, char **mk, char *why)
{
	char base[1200], rep[1400];
	char *rest = NULL, *P = NULL, *M = NULL, *E0 = NULL, *E = NULL, *T = NULL;
	int rc = -1;
	if (!plain_path(pre->src) || !plain_path(pre->cand) || strchr(pre->src, '/') || strchr(pre->cand, '/') ||
	    pre->lines < 1 || pre->lines > 1000)
		return errf(why, "the wrapper's names or header part are not plain");
	snprintf(base, sizeof base, "\"%s\" -o \"%s\"", pre->src, out);
	snprintf(rep, sizeof rep, "-imacros \"../%s.h\" -imacros \"../%s.sys\" \"%s\" -o \"../ksci-rest.ii\"",
		 NVCC_PREFIX_USE, NVCC_PREFIX_USE, pre->src);
	rest = replace_once(d1, base, rep);
	snprintf(rep, sizeof rep, "\"%s\" -o \"all.ii\"", pre->src);
	P = replace_once(d1, base, rep);
	snprintf(rep, sizeof rep, "-dD \"%s\" -o \"dd.ii\"", pre->src);
	M = replace_once(d1, base, rep);
	E0 = replace_once(d1, base, "-dM \"ksci-empty.cu\" -o \"predef.h\"");
	E = E0 ? strip_include(E0) : NULL;
	T = replace_once(d1, base, "\"ksci-poison.cu\" -o \"poison.ii\"");
	if (!rest || !P || !M || !E0 || !T) {
		errf(why, "the device preprocessing does not name its input and output once as \"%s\" -o \"%s\"",
		     pre->src, out);
		goto out;
	}
	if (!E) {
		errf(why, "the device preprocessing has a -include of a form this does not know");
		goto out;
	}
	/* The host compiler, as D1 names it: a plain word or path. */
	char cc[256];
	size_t ccn = strcspn(d1, " ");
	if (ccn == 0 || ccn >= sizeof cc) {
		errf(why, "the device preprocessing's compiler is not one plain word");
		goto out;
	}
	memcpy(cc, d1, ccn);
	cc[ccn] = '\0';
	if (!plain_path(cc)) {
		errf(why, "the device preprocessing's compiler is not one plain word: %s", cc);
		goto out;
	}
	int K = pre->lines + 1;

	/* The build's D1: the prefix where it was put there and the
	 * candidate's part allows, else nvcc's own. */
	sb_printf(b, "ksci_rest() {\n\tmkdir '%s/r' && ln -s '../../%s' '%s/r/%s' &&\n", D, pre->cand, D, pre->cand);
	sb_printf(b, "\t\t{ printf '#line %d \"%%s\"\\n' '%s' && tail -n +%d '%s'; } >'%s/r/%s' ||\n", K, pre->src, K,
		  pre->src, D, pre->src);
	sb_printf(b, "\t\t{ echo 'could not set up the candidate'\\''s part in %s/r' >'%s/%s'; return 1; }\n", D, D,
		  NVCC_PREFIX_WHY);
	sb_printf(b, "\t(cd '%s/r' && exec %s) 2>'%s/ksci-rest.err' ||\n", D, rest, D);
	sb_printf(b, "\t\t{ echo \"the candidate's part did not preprocess alone (exit status $?)\" >'%s/%s'; return 1; }\n", D,
		  NVCC_PREFIX_WHY);
	sb_printf(b, "\tawk -v k=%d -v src='%s' -v cand='%s' ", K, pre->src, pre->cand);
	sq(b, rest_awk);
	sb_printf(b, " '%s/%s.files' '%s/ksci-rest.ii' >'%s/ksci-rest.part' 2>'%s/%s' || return 1\n", D, NVCC_PREFIX_USE, D,
		  D, D, NVCC_PREFIX_WHY);
	sb_printf(b, "\tcat '%s/%s.ii' '%s/ksci-rest.part' >'%s' ||\n", D, NVCC_PREFIX_USE, D, out);
	sb_printf(b, "\t\t{ echo 'could not write %s' >'%s/%s'; return 1; }\n", out, D, NVCC_PREFIX_WHY);
	sb_printf(b, "\trm -f '%s/%s'\n\tcat '%s/%s.log' '%s/ksci-rest.err'\n}\n", D, NVCC_PREFIX_WHY, D, NVCC_PREFIX_USE, D);
	sb_printf(b, "ksci_pp() {\n\tif [ -s '%s/%s.files' ]; then ksci_rest && return 0; fi\n\t%s\n}\n", D,
		  NVCC_PREFIX_USE, d1);

	/* The making. */
	struct strbuf m = STRBUF_INIT;
	sb_add(&m, "# kcompile (lib/nvcc_steps.c): the wrapper's header part preprocessed once, by nvcc's device command\n");
	sb_add(&m, env);
	sb_add(&m, "ksci_no() { echo \"$*\"; exit 1; }\n");
	sb_printf(&m, "mkdir '%s/p' && head -n %d '%s' >'%s/p/%s' && printf 'ksci_counter __COUNTER__\\n' >>'%s/p/%s' &&\n"
		      "\t: >'%s/p/ksci-empty.cu' && cd '%s/p' || ksci_no 'could not set up %s/p'\n",
		  D, pre->lines, pre->src, D, pre->src, D, pre->src, D, D, D);
	sb_printf(&m, "%s >p.log 2>&1 &\na=$!\n%s >/dev/null 2>&1 &\nb=$!\n%s >/dev/null 2>&1 &\nc=$!\n", P, M, E);
	sb_add(&m, "wait $a; sa=$?; wait $b; sb=$?; wait $c; sc=$?\n"
		   "[ \"$sa$sb$sc\" = 000 ] || { cat p.log; ksci_no \"the header part did not preprocess (exit status $sa, $sb, $sc)\"; }\n");
	sb_printf(&m, "awk -v src='%s' ", pre->src);
	sq(&m, mkpre_awk);
	sb_add(&m, " all.ii || exit 1\n");
	sb_printf(&m, "cc=$(command -v %s) && c1=$(\"$cc\" -print-prog-name=cc1plus) || ksci_no 'no %s'\n", cc, cc);
	sb_add(&m, "case $cc in /*) ;; *) ksci_no \"the compiler's path is not absolute: $cc\" ;; esac\n"
		   "case $c1 in /*) ;; *) ksci_no \"cc1plus's path is not absolute: $c1\" ;; esac\n"
		   "tr '\\n' '\\0' <files | xargs -0 grep -h -E 'push_macro|poison|pragma[[:space:]]+once|Pragma[[:space:]]*\\([[:space:]]*\"[[:space:]]*once' -- >pp.txt\n"
		   "! grep -q -E 'push_macro|_Pragma|pragma[[:space:]]+once' pp.txt ||\n"
		   "\tksci_no 'a header pushes a macro, is #pragma once, or poisons by _Pragma: what the prefix cannot stand for'\n"
		   "ids=$(sed -n 's/^[[:space:]]*#[[:space:]]*pragma[[:space:]][[:space:]]*GCC[[:space:]][[:space:]]*poison[[:space:]]//p' pp.txt |\n"
		   "\ttr -s ' \\t' '\\n\\n' | sort -u)\n"
		   "poisoned=\n"
		   "if [ -n \"$ids\" ]; then\n");
	sb_printf(&m, "\t{ head -n %d '../../%s' && for i in $ids; do printf '#ifdef %%s\\n#endif\\n' \"$i\"; done; } >ksci-poison.cu || exit 1\n",
		  pre->lines, pre->src);
	sb_printf(&m, "\tLC_ALL=C %s >/dev/null 2>poison.err\n\tst=$?\n", T);
	sb_add(&m, "\tpoisoned=$(sed -n 's/.*attempt to use poisoned \"\\([A-Za-z0-9_]*\\)\".*/\\1/p' poison.err | sort -u)\n"
		   "\t[ \"$st\" = 0 ] || [ -n \"$poisoned\" ] || { cat poison.err; ksci_no 'the poison test did not preprocess'; }\n"
		   "fi\n"
		   ": >pre.h && awk ");
	sq(&m, macros_awk);
	sb_add(&m, " predef.h dd.ii && for i in $poisoned; do printf '#pragma GCC poison %s\\n' \"$i\"; done >>pre.h &&\n"
		   "\tprintf '%s\\n%s\\n' \"$cc\" \"$c1\" >>files || ksci_no 'could not write the prefix'\n");
	/* files last: its presence says the others are whole. */
	sb_printf(&m, "mv pre.ii ../%s.ii && mv pre.h ../%s.h && mv pre.sys ../%s.sys && mv p.log ../%s.log &&\n"
		      "\tmv files ../%s.files || ksci_no 'could not move the prefix'\n",
		  NVCC_PREFIX_NEW, NVCC_PREFIX_NEW, NVCC_PREFIX_NEW, NVCC_PREFIX_NEW, NVCC_PREFIX_NEW);
	*mk = sb_detach(&m, NULL);
	rc = *mk ? 0 : errf(why, "out of memory");
out:
	free(rest);
	free(P);
	free(M);
	free(E0);
	free(E);
	free(T);
	return rc;
}

void nvcc_steps_free(struct nvcc_steps *s)
{
	free(s->script);
	free(s->mkpre);
	free(s->dev_pp);
	s->script = s->mkpre = s->dev_pp = NULL;
}

int nvcc_steps_plan(const char *listing, const char *module_id, const struct nvcc_steps_pre *pre, int joined,
		    struct nvcc_steps *res, char *e)
{
	memset(res, 0, sizeof *res);
	struct cmd cmd[MAXCMD];
	int nc = 0;
	struct strbuf env = STRBUF_INIT, b = STRBUF_INIT;
	char *out = NULL, *h2 = NULL, *d4 = NULL, *l1 = NULL, *l1e = NULL, *l4 = NULL, *mk = NULL;
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
	char qobj[600], qobj2[600], qnodev[600], qobjs[1200], emb[600], dir[512];
	snprintf(dir, sizeof dir, "%s", modf);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	snprintf(obj2, sizeof obj2, "%s.fb.o", obj);
	snprintf(qobj, sizeof qobj, "\"%s\"", obj);
	snprintf(qobj2, sizeof qobj2, "\"%s\"", obj2);
	snprintf(qnodev, sizeof qnodev, "\"%s/ksci-nodev.o\"", dir);
	snprintf(qobjs, sizeof qobjs, "\"%s\" \"%s/ksci-fatbin.o\"", obj, dir);
	snprintf(emb, sizeof emb, " --embedded-fatbin=\"%s\"", fbc);
	h2 = replace_once(H2->text, "--gen_module_id_file ", "");
	d4 = replace_once(D4->text, emb, "");
	l1 = replace_once(L1->text, qobj, qobj2);
	l1e = replace_once(L1->text, qobj, qnodev);
	l4 = replace_once(L4->text, qobj, qobjs);
	if (!h2 || !d4 || !l1 || !l1e || !l4) {
		errf(e, "%s", !h2 ? "cudafe++'s --gen_module_id_file is not there once"
			      : !d4 ? "fatbinary's --embedded-fatbin is not there once"
				    : "the host object is not named once in nvlink's or the final link's step");
		goto out;
	}
	char log[5][600];
	static const char *const logname[] = {"ksci-host1.log", "ksci-dev1.log", "ksci-dev2.log", "ksci-host2.log",
					      "ksci-link.log"};
	for (int k = 0; k < 5; k++)
		snprintf(log[k], sizeof log[k], "%s/%s", dir, logname[k]);
	/* The host compiler as the listing names it (its first word). */
	const char *cc = H3->text;
	int ccn = (int)(*cc == '"' ? (size_t)(strchr(cc + 1, '"') - cc) + 1 : strcspn(cc, " "));

	sb_add(&b, "# kcompile (lib/nvcc_steps.c): nvcc's steps from its --dryrun, host and device halves at once\n");
	sb_add(&b, env.buf ? env.buf : "");
	/* A half's status 128+N is a step killed by signal N (sh's rule).
	 * Killed by the machine or a person (KILL: the OOM killer; TERM,
	 * INT, HUP), the script dies of the same signal, as nvcc would be
	 * seen to: the compile is transient, never cached.  A step's own
	 * crash (SEGV: a compiler bug, the same next time) is an exit
	 * status, as nvcc gives it (139); ptxas exits 255 on its own.  A
	 * failed step's script waits for the other half first: it would be
	 * killed with the script's process group, and whether the device half
	 * used the prefix (its ksci-pre.why) would then depend on which half
	 * failed first — t45 nvcc-prefix-header-poisons, under load, read a
	 * prefix as used whose candidate's part had failed. */
	sb_add(&b, "ksci_end() {\n\tcase $1 in 129 | 130 | 137 | 143) kill -$(($1 - 128)) $$ ;; esac\n\twait\n\texit \"$1\"\n}\n");
	if (!joined) {
		/* Why H3's object may have device code of its own (nothing: it
		 * has none) into ksci-own.why. */
		sb_add(&b, "ksci_own() {\n\tLC_ALL=C readelf -S -W \"$1\" 2>&1 | awk ");
		sq(&b, own_awk);
		sb_printf(&b, " >'%s/ksci-own.why'\n\treturn 0\n}\n", dir);
	}
	for (int k = 0; k < first; k++) {
		struct cmd *c = &cmd[k];
		const char *rest = c->text + strcspn(c->text, " ");
		sb_printf(&b, "rm -f%s\n", rest);
	}
	/* The prefix's two scripts (mk NULL: none, pre_why says why). */
	char d1out[512];
	if (!pre)
		snprintf(res->pre_why, sizeof res->pre_why, "no header part given");
	else if (quoted_after(D1->text, " -o ", d1out, sizeof d1out) != 0)
		snprintf(res->pre_why, sizeof res->pre_why, "the device preprocessing's output is not a plain name");
	else
		prefix_parts(D1->text, d1out, dir, pre, env.buf ? env.buf : "", &b, &mk, res->pre_why);
	sb_add(&b, "printf '%s' ");
	sq(&b, module_id);
	sb_add(&b, " >");
	sq(&b, modf);
	sb_add(&b, " || exit 1\n");
	if (!joined) {
		struct strbuf k = STRBUF_INIT;
		sb_printf(&k, "%.*s -c -x assembler /dev/null -o %s && %s && %s && %s", ccn, cc, qnodev, l1e, L2->text,
			  L3->text);
		if (!k.buf) {
			errf(e, "out of memory");
			goto out;
		}
		half(&b, k.buf, NULL, log[4], "k");
		sb_release(&k);
	}
	half(&b, H1->text, h2, log[0], "h");
	half(&b, mk ? "ksci_pp" : D1->text, D2->text, log[1], "d");
	collect(&b, "h", log[0]);
	collect(&b, "d", log[1]);
	sb_add(&b, "cat >");
	sq(&b, fbc);
	sb_printf(&b, " <<'KSCI_EOF' || exit 1\n%sKSCI_EOF\n", fatbin_c);
	char own[600];
	snprintf(own, sizeof own, "ksci_own %s", qobj);
	half(&b, D3->text, d4, log[2], "d");
	half(&b, H3->text, joined ? NULL : own, log[3], "h");
	collect(&b, "d", log[2]);
	collect(&b, "h", log[3]);
	sb_printf(&b, "printf '\\t.section .nv_fatbin, \"a\"\\n\\t.balign 8\\n\\t.globl ksci_fatbin_data\\n"
		      "\\t.hidden ksci_fatbin_data\\nksci_fatbin_data:\\n\\t.incbin \"%%s\"\\n"
		      "\\t.section .note.GNU-stack,\"\",@progbits\\n' ");
	sq(&b, fatbin);
	sb_printf(&b, " >'%s/ksci-fatbin.s' &&\n\t%.*s -c '%s/ksci-fatbin.s' -o '%s/ksci-fatbin.o' || ksci_end $?\n", dir,
		  ccn, cc, dir, dir);
	/* The device link after, nvcc's way: on H3's object joined to the
	 * fatbinary's. */
	const char *ind = joined ? "" : "\t";
	if (!joined)
		sb_printf(&b, "wait $k; s=$?\n"
			      "if [ $s = 0 ] && [ -e '%s/ksci-own.why' ] && ! [ -s '%s/ksci-own.why' ]; then\n"
			      "\tcat '%s'\nelse\n"
			      "\tif [ $s = 0 ]; then cat '%s/ksci-own.why'; else echo \"the device link beside the halves failed (exit status $s)\"; fi >'%s/%s'\n",
			  dir, dir, log[4], dir, dir, NVCC_DLINK_WHY);
	sb_printf(&b, "%s%.*s -r -nostdlib -o '%s' '%s' '%s/ksci-fatbin.o' || ksci_end $?\n", ind, ccn, cc, obj2, obj, dir);
	const char *link[] = {l1, L2->text, L3->text};
	for (int k = 0; k < 3; k++)
		sb_printf(&b, "%s%s || ksci_end $?\n", ind, link[k]);
	if (!joined)
		sb_add(&b, "fi\n");
	sb_printf(&b, "%s || ksci_end $?\n", l4);
	out = sb_detach(&b, NULL);
	res->dev_pp = strdup(D1->text);
	if (!out || !res->dev_pp) {
		free(out);
		out = NULL;
		free(res->dev_pp);
		res->dev_pp = NULL;
		errf(e, "out of memory");
	} else {
		res->script = out;
		res->mkpre = mk;
		mk = NULL;
	}
out:
	free(mk);
	sb_release(&b);
	sb_release(&env);
	free(h2);
	free(d4);
	free(l1);
	free(l1e);
	free(l4);
	free(copy);
	return res->script ? 0 : -1;
}
