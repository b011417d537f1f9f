/* par: see par.h. */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

struct par {
	void (*fn)(void *ctx, int64_t k);
	void *ctx;
	int64_t n;
	atomic_llong next;
};

static void *par_worker(void *arg)
{
	struct par *p = arg;
	int64_t k;
	while ((k = atomic_fetch_add(&p->next, 1)) < p->n)
		p->fn(p->ctx, k);
	return NULL;
}

void par_chunks(int64_t nchunks, void (*fn)(void *ctx, int64_t k), void *ctx)
{
	struct par p = {fn, ctx, nchunks, 0};
	atomic_init(&p.next, 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nt = (int)(nchunks < ncpu ? nchunks : ncpu);
	if (nt > 32)
		nt = 32;
	pthread_t th[32];
	int started = 0;
	for (int i = 1; i < nt; i++, started++)
		if (pthread_create(&th[started], NULL, par_worker, &p) != 0)
			break;
	par_worker(&p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}
