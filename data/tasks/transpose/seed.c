/* transpose seed: square TILE x TILE blocks so that both the rows read and
 * the rows written stay in cache; tile rows over THREADS workers. */
#define TILE 32    // ktune: 8 16 32 64 128
#define THREADS 1  // ktune: 1 2 4

void solve(const float* x, float* y, int rows, int cols)
{
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long r0 = 0; r0 < rows; r0 += TILE)
		for (long c0 = 0; c0 < cols; c0 += TILE) {
			long r1 = r0 + TILE < rows ? r0 + TILE : rows;
			long c1 = c0 + TILE < cols ? c0 + TILE : cols;
			for (long c = c0; c < c1; c++)
				for (long r = r0; r < r1; r++)
					y[c * rows + r] = x[r * cols + c];
		}
}
