/* rowsum baseline: the obvious loop with a double accumulator (a float one
 * drifts on long rows), single thread. */
void solve(const float* x, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
