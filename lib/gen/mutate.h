/*
 * mutate: the built-in offline generator's knob search.
 *
 * A kernel marks its tunable constants with a "ktune:" comment that lists
 * the values worth trying (docs/tools/kgen.md gives the syntax):
 *
 *     #define TILE 32 // ktune: 8 16 32 64
 *     static const int UNROLL = 4; // ktune: 1 2 4 8
 *
 * mut_parse finds the knobs; mut_moves lists every one- and two-knob change
 * in an order that depends only on a 64-bit seed; mut_apply writes the
 * child source.  The random helpers (mut_mix, mut_hash_str, mut_rng_next)
 * are a small deterministic hash/PRNG so a child is a function of the seed
 * and the request, never of the C library's rand().
 *
 * Ownership: struct mut_knobs owns its strings (mut_free releases them);
 * mut_moves and mut_apply return malloc'd memory the caller frees.
 */
#ifndef KSCI_MUTATE_H
#define KSCI_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct mut_knob {
	char *name;      /* the constant's identifier */
	char *value;     /* its value in the parsed source */
	char **choices;  /* the listed values, duplicates removed, in order */
	size_t nchoices;
	int line;        /* 1-based line of the definition */
	size_t off, len; /* byte span of value in the source */
};

struct mut_knobs {
	struct mut_knob *v;
	size_t n;
};

/* One change: knob index, and index into that knob's choices. */
struct mut_change {
	size_t knob;
	size_t choice;
};

/* A move changes one or two distinct knobs, each to a value other than the
 * current one. */
struct mut_move {
	struct mut_change c[2];
	int n;
};

/* Bounds that keep a hostile source from costing much. */
#define MUT_MAX_KNOBS 64
#define MUT_MAX_CHOICES 64
#define MUT_MAX_TOKEN 128
#define MUT_MAX_PAIRS 100000

/* 0 and the knobs found (possibly none); -1 with "line N: ..." in errbuf
 * when a ktune comment cannot be understood. */
int mut_parse(const char *src, struct mut_knobs *k, char *errbuf);
void mut_free(struct mut_knobs *k);

/* All moves, single and pair changes interleaved pseudo-randomly by seed.
 * Returns the count (0 when no knob has an alternative value) and *out
 * (malloc'd, NULL when 0); (size_t)-1 on allocation failure.  Past
 * MUT_MAX_PAIRS pairs, a seeded sample of pairs stands for them all. */
size_t mut_moves(const struct mut_knobs *k, uint64_t seed, struct mut_move **out);

/* The source with the move applied (malloc'd, NUL-terminated); NULL on
 * allocation failure. */
char *mut_apply(const char *src, const struct mut_knobs *k, const struct mut_move *m);

/* Deterministic mixing: splitmix64 finaliser over h ^ v. */
uint64_t mut_mix(uint64_t h, uint64_t v);
uint64_t mut_hash_str(uint64_t h, const char *s);
/* splitmix64 step over *state. */
uint64_t mut_rng_next(uint64_t *state);

#endif
