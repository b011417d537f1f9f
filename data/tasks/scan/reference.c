/* scan reference: serial, in 64-bit. */
void solve(const int* x, int* y, int n)
{
	long long s = 0;
	for (long i = 0; i < n; i++) {
		s += x[i];
		y[i] = (int)s;
	}
}
