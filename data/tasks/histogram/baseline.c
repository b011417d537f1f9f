/* histogram baseline: the obvious loop. */
#include <stdint.h>
#include <string.h>

void solve(const uint8_t* x, int* hist, int n)
{
	memset(hist, 0, 256 * sizeof(int));
	for (long i = 0; i < n; i++)
		hist[x[i]]++;
}
