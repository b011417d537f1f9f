/*
 * select_pop: the population base of lib/select/ — what every strategy
 * stands on and nothing above it: the options, the summary kept for each
 * archive record (struct sel_cand), the population (interned names, the id
 * index, the eligible parents ranked best first), the pick a strategy makes
 * for one child, and the small helpers every strategy uses (tournament,
 * best inspirations, find by id, compare).
 *
 * Why a header of its own: the dispatcher (select.c) calls the strategies
 * (select_best.c, select_islands.c, select_map.c, select_bandit.c,
 * select_llm.c) and they all call this base, never back up; so the names
 * they share are defined here, next to the code that owns them.  The
 * layouts are public because the strategies read the population directly
 * (it is one struct of arrays, walked in tight loops); the public select.h
 * includes this header, so tools and tests see one API.
 *
 * Ownership: the population owns its summaries and interned names
 * (sel_pop_free); returned names and candidates are borrowed, valid while
 * the population lives.  A pick owns its info object; the dispatcher frees
 * it.  Nothing here prints: problems come back in errbuf.
 */
#ifndef KSCI_SELECT_POP_H
#define KSCI_SELECT_POP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rng.h"

#define SEL_MAXFEAT 4 /* MAP-Elites feature dimensions */
#define SEL_MAXINSP 8 /* inspirations per request */
#define SEL_IDLEN 48  /* longest id kept, NUL included */
#define SEL_MAXKEYS 16

enum sel_strategy { SEL_BEST, SEL_TOURNAMENT, SEL_ISLANDS, SEL_MAP, SEL_BANDIT, SEL_LLM };

/* One MAP-Elites dimension: "path:bins[:lo:hi]". */
struct sel_feature {
	char spec[160];  /* as given, for messages and the request */
	char path[128];  /* dotted record path, "source_length", or "knob.NAME" */
	int bins;
	int have_range;  /* lo/hi given; else the eligible population's min/max */
	double lo, hi;
};

struct sel_opts {
	const char *task;    /* NULL: the archive's only task */
	const char *backend; /* "c", "cuda", "hip" */
	int population;      /* children to request (>= 1) */
	enum sel_strategy strategy;
	uint64_t seed;
	int k;            /* best-k */
	int tournament;   /* tournament size */
	int inspirations; /* inspirations per request (0..SEL_MAXINSP) */
	int islands, migrate_every;
	struct sel_feature feat[SEL_MAXFEAT];
	int nfeat;
	double ucb_c;        /* bandit exploration weight */
	const char *arms;    /* bandit: comma-separated arms known before any pull, or NULL */
	long generation;     /* < 0: max generation in the archive + 1 */
	/* llm: the model call, supplied by the tool.  key is the call's replay
	 * key ("select:TASK:GENERATION:CHILD") and sample its cache sample
	 * (the child's seed), as kgen's calls carry (lib/llm.h).  Returns the
	 * answer text (malloc'd; the caller frees) and sets *acct to a new
	 * accounting object or NULL; NULL + errbuf when the call failed. */
	char *(*ask)(void *ctx, const char *prompt, const char *key, const char *sample, json_t **acct, char *errbuf);
	void *ask_ctx;
	int shortlist; /* llm: candidates shown to the model (default 20) */
};

/* The summary kept for every record of the archive. */
struct sel_cand {
	char id[SEL_IDLEN];
	char parent[SEL_IDLEN]; /* parents[0], "" for none */
	int tb;                 /* index of its (task, backend) pair */
	int status;             /* index into the population's status names */
	int timed;              /* status "timed" with a finite speedup > 0, not held back */
	int held;               /* timed, but held back: time.implausible (above the device's peak) */
	int dup;                /* a later record has the same id */
	int bad;                /* the whole line could not be re-read as JSON */
	double speedup;         /* time.speedup_vs_baseline */
	long generation;        /* -1 when missing */
	int island;             /* -1 when missing */
	int arm[2], narms;      /* bandit arms of this child (origin) */
	double feat[SEL_MAXFEAT]; /* NAN when missing */
	int file;
	long line;
	uint64_t off;
	size_t len;
};

/* Returns a new reference to the whole record of c, or NULL after reporting
 * why (the caller then leaves c out). */
typedef json_t *(*sel_fetch_fn)(void *ctx, const struct sel_cand *c);

struct sel_pop {
	const struct sel_opts *o;
	struct sel_cand *c;
	size_t n, cap;
	char **names; /* interned strings: tasks+backends ("task\0backend"), statuses, arms */
	size_t *namelen;
	int nnames, capnames;
	int *tb_names, *status_names, *arm_names; /* name indices per table */
	int ntb, nstatus, narm;
	const char *keys[SEL_MAXKEYS];
	char keybuf[SEL_MAXKEYS][64];
	int nkeys;

	/* after sel_pop_finish */
	int finished;
	int tb;                /* the chosen (task, backend), -1 when none */
	int *elig;             /* eligible parents, best first */
	int nelig;
	int *hash;             /* open addressing: id -> last candidate of the task */
	size_t hmask;
	long records, failed, held, other, maxgen;
	char task[128];
	struct rng rng;
	sel_fetch_fn fetch; /* during sel_run, for strategies that read records */
	void *fetch_ctx;
};

/* A population for options o (borrowed; must outlive the population).  NULL
 * + errbuf on a bad option (a feature spec, say). */
struct sel_pop *sel_pop_new(const struct sel_opts *o, char *errbuf);
void sel_pop_free(struct sel_pop *p);
/* Take one archive line.  0: kept (or blank); -1: not a JSON object or
 * unusable (errbuf without file/line, the caller adds them). */
int sel_pop_line(struct sel_pop *p, const char *line, size_t n, int file, long lineno, uint64_t off, char *errbuf);
/* After the last line: settle the task (when not given), drop duplicate ids
 * (the last record of an id wins) and rank the eligible parents.  -1 + errbuf
 * when the task is ambiguous. */
int sel_pop_finish(struct sel_pop *p, char *errbuf);
/* Rank again after candidates were marked bad (p->elig, best first). */
void sel_pop_rank(struct sel_pop *p);

/* Counts for messages and the request's strategy.population. */
struct sel_stats {
	long records;   /* lines that were records of this task and back end */
	long timed;     /* eligible parents (distinct ids) */
	long failed;    /* records of the task in a final status other than timed */
	long held;      /* timed records held back as implausible (above the device's peak) */
	long other;     /* records of other tasks or back ends */
	long next_generation;
	const char *task;
};
void sel_pop_stats(const struct sel_pop *p, struct sel_stats *s);
const struct sel_cand *sel_pop_cand(const struct sel_pop *p, int i);
/* The interned name of a candidate's status. */
const char *sel_status_name(const struct sel_pop *p, int status);
/* Parse "path:bins[:lo:hi]" into f; -1 + errbuf. */
int sel_feature_parse(const char *spec, struct sel_feature *f, char *errbuf);
/* The seed of child `child` of a run seeded with seed: distinct per child,
 * 53 bits (exact in JSON readers using doubles); the request's
 * strategy.seed. */
uint64_t sel_child_seed(uint64_t seed, int child);

/* --- what a strategy makes, and the helpers they share ------------------ */

struct sel_pick {
	int base;
	int insp[SEL_MAXINSP];
	int ninsp;
	int island; /* -1: none */
	char reason[400];
	json_t *info; /* extra strategy fields, owned */
};

/* An empty pick: no inspirations, no island, no info. */
void sel_pick_init(struct sel_pick *pick);
/* Whether candidate c is already the base or an inspiration of pick. */
int sel_pick_has(const struct sel_pick *pick, int c);
/* Add c as an inspiration unless the pick has it or is full; 1 when added. */
int sel_pick_add(struct sel_pick *pick, int c);
/* Winner of a tournament of size t drawn with replacement from list[0..n). */
int sel_tourney(struct sel_pop *p, const int *list, int n, int t);
/* Fill pick->insp with up to want others from list (best first), skipping
 * the base and ones already taken. */
void sel_add_best(struct sel_pick *pick, const int *list, int n, int want);
/* Index of id among the population's candidates of the task (last record of
 * that id), or -1. */
int sel_find(const struct sel_pop *p, const char *id);
/* The interned name of an arm. */
const char *sel_arm_name(const struct sel_pop *p, int arm);
/* Comparison helper: is candidate a better than b (speedup, then earlier). */
int sel_better(const struct sel_pop *p, int a, int b);
/* Intern an arm name given on the command line; its index or -1. */
int sel_intern_arm(struct sel_pop *p, const char *name);

#endif
