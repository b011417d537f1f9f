/* axpy reference (host, double arithmetic). */
void solve(const float* x, const float* y, float* z, int n, float a)
{
	for (int i = 0; i < n; i++)
		z[i] = (float)((double)a * x[i] + y[i]);
}
