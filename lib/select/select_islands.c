/*
 * select_islands: the island model (OpenEvolve / PIKE-O style).
 *
 * A candidate belongs to island `island % N`; one without an island field
 * belongs to none and stocks every island that has no member yet (that is
 * how the first generation after the seed spreads out).  Child c is made on
 * island c % N from a tournament among that island's members.  When the
 * generation being made is a positive multiple of --migrate-every, the
 * best of each island migrates to the next island of the ring: the first
 * child made on island i+1 this generation has the migrant as its base
 * (strategy.migration says from where), and the island's other children
 * get it as their first inspiration.  The child lives on island i+1 from
 * then on, carrying the migrant's lineage; the migrant's own record is
 * never rewritten.
 */
#include "select_int.h"

#include <stdio.h>
#include <stdlib.h>

int sel_islands(struct sel_pop *p, struct sel_pick *picks, char *errbuf)
{
	const struct sel_opts *o = p->o;
	int N = o->islands, M = o->migrate_every;
	struct sel_stats st;
	sel_pop_stats(p, &st);
	int **lists = calloc((size_t)N + 1, sizeof *lists), *nl = calloc((size_t)N + 1, sizeof *nl);
	if (!lists || !nl) {
		free(lists);
		free(nl);
		return errf(errbuf, "out of memory");
	}
	int rc = 0;
	for (int i = 0; i <= N && rc == 0; i++)
		if (!(lists[i] = malloc(((size_t)p->nelig + 1) * sizeof **lists)))
			rc = errf(errbuf, "out of memory");
	/* lists[N] holds the candidates of no island; all lists stay best first. */
	for (int k = 0; k < p->nelig && rc == 0; k++) {
		int c = p->elig[k], isl = p->c[c].island < 0 ? N : p->c[c].island % N;
		lists[isl][nl[isl]++] = c;
	}
	int migrate = M > 0 && N > 1 && st.next_generation > 0 && st.next_generation % M == 0;
	for (int ch = 0; ch < o->population && rc == 0; ch++) {
		struct sel_pick *pk = &picks[ch];
		int i = ch % N;
		const int *pool = nl[i] ? lists[i] : nl[N] ? lists[N] : p->elig;
		int npool = nl[i] ? nl[i] : nl[N] ? nl[N] : p->nelig;
		const char *from = nl[i] ? "its members" : nl[N] ? "candidates of no island" : "the whole population";
		pk->island = i;
		pk->base = sel_tourney(p, pool, npool, o->tournament);
		json_t *info = json_pack("{si,si,si}", "islands", N, "migrate_every", M, "tournament", o->tournament);
		int src = (i + N - 1) % N;
		if (migrate && nl[src]) {
			int m = lists[src][0];
			if (ch < N) {
				pk->base = m;
				json_object_set_new(info, "migration",
				                    json_pack("{si,si,ss}", "from", src, "to", i, "id", p->c[m].id));
				snprintf(pk->reason, sizeof pk->reason,
				         "islands: migration at generation %ld (every %d): the best of island %d (%.4gx) "
				         "moves to island %d as this child's base",
				         st.next_generation, M, src, p->c[m].speedup, i);
			} else if (o->inspirations > 0) {
				sel_pick_add(pk, m);
			}
		}
		sel_add_best(pk, pool, npool, o->inspirations);
		if (!pk->reason[0])
			snprintf(pk->reason, sizeof pk->reason,
			         "islands: child %d on island %d of %d: tournament of %d among %s (%d timed), won with %.4gx%s",
			         ch, i, N, o->tournament, from, npool, p->c[pk->base].speedup,
			         migrate && nl[src] ? "; the migrant from the previous island is the first inspiration" : "");
		pk->info = info;
	}
	for (int i = 0; i <= N; i++)
		free(lists[i]);
	free(lists);
	free(nl);
	return rc;
}
