/*
 * select_map: MAP-Elites over feature dimensions named on the command line.
 *
 * Binning (docs/tools/kselect.md): a dimension "path:bins[:lo:hi]" cuts
 * [lo, hi] into `bins` equal bins, bin = floor((v - lo) / (hi - lo) * bins),
 * values below lo go to bin 0 and values from hi up to bin bins-1.  Without
 * lo:hi the range is the min and max over the eligible population.  A
 * candidate without the field goes to an extra bin, shown as null.  The map
 * is rebuilt from the archive on every run: a cell's elite is its candidate
 * with the highest speedup, and a later candidate replaces it only when
 * strictly faster.  Children's bases are elites drawn uniformly; their
 * inspirations are other elites.
 */
#include "select_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sel_map_bin(int bins, double lo, double hi, double v)
{
	if (isnan(v))
		return bins;
	if (!(hi > lo))
		return 0;
	double b = floor((v - lo) / (hi - lo) * bins);
	return b < 0 ? 0 : b >= bins ? bins - 1 : (int)b;
}

struct cell {
	uint64_t key;
	int c;
};

static int by_key(const void *x, const void *y)
{
	const struct cell *a = x, *b = y;
	return a->key < b->key ? -1 : a->key > b->key ? 1 : a->c - b->c;
}

int sel_map_elites(struct sel_pop *p, double *lo, double *hi, int *elites, uint64_t *keys, char *errbuf)
{
	const struct sel_opts *o = p->o;
	for (int d = 0; d < o->nfeat; d++) {
		const struct sel_feature *f = &o->feat[d];
		lo[d] = f->have_range ? f->lo : INFINITY;
		hi[d] = f->have_range ? f->hi : -INFINITY;
		for (int k = 0; k < p->nelig && !f->have_range; k++) {
			double v = p->c[p->elig[k]].feat[d];
			if (!isnan(v)) {
				lo[d] = v < lo[d] ? v : lo[d];
				hi[d] = v > hi[d] ? v : hi[d];
			}
		}
	}
	struct cell *cells = malloc(((size_t)p->nelig + 1) * sizeof *cells);
	if (!cells)
		return errf(errbuf, "out of memory");
	for (int k = 0; k < p->nelig; k++) {
		int c = p->elig[k];
		uint64_t key = 0;
		for (int d = 0; d < o->nfeat; d++)
			key = key * (uint64_t)(o->feat[d].bins + 1) +
			      (uint64_t)sel_map_bin(o->feat[d].bins, lo[d], hi[d], p->c[c].feat[d]);
		cells[k].key = key;
		cells[k].c = c;
	}
	qsort(cells, (size_t)p->nelig, sizeof *cells, by_key);
	int ne = 0;
	for (int k = 0; k < p->nelig; k++) {
		if (k == 0 || cells[k].key != cells[k - 1].key) {
			keys[ne] = cells[k].key;
			elites[ne++] = cells[k].c;
		} else if (sel_better(p, cells[k].c, elites[ne - 1])) {
			elites[ne - 1] = cells[k].c;
		}
	}
	free(cells);
	return ne;
}

int sel_map(struct sel_pop *p, struct sel_pick *picks, char *errbuf)
{
	const struct sel_opts *o = p->o;
	if (o->nfeat == 0)
		return errf(errbuf, "--strategy map-elites needs --features PATH:BINS[:LO:HI],...");
	double lo[SEL_MAXFEAT], hi[SEL_MAXFEAT];
	int *elites = malloc(((size_t)p->nelig + 1) * sizeof *elites);
	uint64_t *keys = malloc(((size_t)p->nelig + 1) * sizeof *keys);
	int ne = elites && keys ? sel_map_elites(p, lo, hi, elites, keys, errbuf) : errf(errbuf, "out of memory");
	if (ne < 0) {
		free(elites);
		free(keys);
		return -1;
	}
	char dims[300] = "";
	json_t *feats = json_array(), *ranges = json_array();
	for (int d = 0; d < o->nfeat; d++) {
		snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%s", d ? ", " : "", o->feat[d].spec);
		json_array_append_new(feats, json_string(o->feat[d].spec));
		json_array_append_new(ranges, isfinite(lo[d]) ? json_pack("[ff]", lo[d], hi[d]) : json_null());
	}
	for (int ch = 0; ch < o->population; ch++) {
		struct sel_pick *pk = &picks[ch];
		int e = (int)rng_below(&p->rng, (uint64_t)ne);
		pk->base = elites[e];
		for (int j = 0; j < o->inspirations && j < ne - 1 && pk->ninsp < SEL_MAXINSP; j++)
			for (int tries = 0; tries < 8; tries++)
				if (sel_pick_add(pk, elites[rng_below(&p->rng, (uint64_t)ne)]))
					break;
		json_t *cell = json_array();
		char where[120] = "";
		uint64_t key = keys[e];
		int bin[SEL_MAXFEAT];
		for (int d = o->nfeat - 1; d >= 0; d--) {
			bin[d] = (int)(key % (uint64_t)(o->feat[d].bins + 1));
			key /= (uint64_t)(o->feat[d].bins + 1);
		}
		for (int d = 0; d < o->nfeat; d++) {
			json_array_append_new(cell, bin[d] == o->feat[d].bins ? json_null() : json_integer(bin[d]));
			if (bin[d] == o->feat[d].bins)
				snprintf(where + strlen(where), sizeof where - strlen(where), "%snone", d ? "," : "");
			else
				snprintf(where + strlen(where), sizeof where - strlen(where), "%s%d", d ? "," : "", bin[d]);
		}
		snprintf(pk->reason, sizeof pk->reason,
		         "map-elites: elite of cell [%s] (%.4gx), drawn from %d occupied cells over %s (%d timed candidates)",
		         where, p->c[pk->base].speedup, ne, dims, p->nelig);
		pk->info = json_pack("{so,si,sO,sO}", "cell", cell, "cells", ne, "features", feats, "ranges", ranges);
	}
	json_decref(feats);
	json_decref(ranges);
	free(elites);
	free(keys);
	return 0;
}
