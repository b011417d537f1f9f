/* scan seed: THREADS workers each scan a contiguous chunk, then add the
 * exclusive prefix of the chunk totals (two passes over memory). */
#include <omp.h>

#define THREADS 1  // ktune: 1 2 4
#define MIN_CHUNK 65536  // ktune: 4096 65536 1048576

void solve(const int* x, int* y, int n)
{
	int nt = THREADS;
	if ((long)n < (long)MIN_CHUNK * nt)
		nt = 1;
	int tot[64 + 1];
	#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num(), T = omp_get_num_threads();
		long lo = (long)n * t / T, hi = (long)n * (t + 1) / T;
		int s = 0;
		for (long i = lo; i < hi; i++) {
			s += x[i];
			y[i] = s;
		}
		tot[t + 1] = s;
		#pragma omp barrier
		int off = 0;
		for (int k = 1; k <= t; k++)
			off += tot[k];
		if (off)
			for (long i = lo; i < hi; i++)
				y[i] += off;
	}
}
