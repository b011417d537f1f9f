/* transpose reference. */
void solve(const float* x, float* y, int rows, int cols)
{
	#pragma omp parallel for schedule(static)
	for (long c = 0; c < cols; c++)
		for (long r = 0; r < rows; r++)
			y[c * rows + r] = x[r * cols + c];
}
