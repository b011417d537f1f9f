/* rowsum reference: double accumulation. */
void solve(const float* x, float* y, int rows, int cols)
{
	#pragma omp parallel for schedule(static)
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
