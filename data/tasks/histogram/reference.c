/* histogram reference. */
#include <stdint.h>

void solve(const uint8_t* x, int* hist, int n)
{
	long long h[256] = {0};
	for (long i = 0; i < n; i++)
		h[x[i]]++;
	for (int b = 0; b < 256; b++)
		hist[b] = (int)h[b];
}
