/* rowsum seed: ACC independent float accumulators per row (vectorisable
 * without -ffast-math), folded into a double every BLOCK elements so long
 * rows keep their accuracy; rows split over THREADS. */
#define ACC 8        // ktune: 1 4 8 16 32
#define BLOCK 4096   // ktune: 1024 4096 16384
#define THREADS 1    // ktune: 1 2 4

void solve(const float* x, float* y, int rows, int cols)
{
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		double total = 0;
		for (long c0 = 0; c0 < cols; c0 += BLOCK) {
			long c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
			float acc[ACC] = {0};
			long c = c0;
			for (; c + ACC <= c1; c += ACC)
				for (int a = 0; a < ACC; a++)
					acc[a] += xr[c + a];
			for (; c < c1; c++)
				acc[0] += xr[c];
			for (int a = 0; a < ACC; a++)
				total += acc[a];
		}
		y[r] = (float)total;
	}
}
