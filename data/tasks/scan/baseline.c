/* scan baseline: the serial loop. */
void solve(const int* x, int* y, int n)
{
	int s = 0;
	for (long i = 0; i < n; i++) {
		s += x[i];
		y[i] = s;
	}
}
