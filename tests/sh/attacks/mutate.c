/* t14 attack "input mutation": a correct rowsum that then writes into its
 * input x (const cast away). */
void solve(const float* x, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
	if ((long)rows * cols > 0)
		((float *)x)[0] += 1;
}
