/* stencil2d baseline: the plain double loop with the boundary test inside. */
void solve(const float* x, float* y, int n, int m)
{
	for (long i = 0; i < n; i++)
		for (long j = 0; j < m; j++) {
			if (i == 0 || j == 0 || i == n - 1 || j == m - 1)
				y[i * m + j] = x[i * m + j];
			else
				y[i * m + j] = 0.25f * (x[(i - 1) * m + j] + x[(i + 1) * m + j] + x[i * m + j - 1] + x[i * m + j + 1]);
		}
}
