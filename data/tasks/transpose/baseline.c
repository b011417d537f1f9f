/* transpose baseline: the double loop, single thread. */
void solve(const float* x, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++)
		for (long c = 0; c < cols; c++)
			y[c * rows + r] = x[r * cols + c];
}
