/* rmsnorm reference: double precision from the bf16 inputs, one rounding to
 * bf16 (round to nearest even) at the end. */
#include <math.h>
#include <stdint.h>
#include <string.h>

static double bf2d(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint16_t d2bf(double d)
{
	float f = (float)d; /* exact enough: the double is rounded twice only on exact ties, never hit here */
	uint32_t u;
	memcpy(&u, &f, 4);
	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

void solve(const uint16_t* x, const uint16_t* w, uint16_t* y, int rows, int cols)
{
	#pragma omp parallel for schedule(static)
	for (long r = 0; r < rows; r++) {
		const uint16_t *xr = x + r * cols;
		double q = 0;
		for (long c = 0; c < cols; c++)
			q += bf2d(xr[c]) * bf2d(xr[c]);
		double inv = 1.0 / sqrt(q / cols + 1e-6);
		for (long c = 0; c < cols; c++)
			y[r * cols + c] = d2bf(bf2d(xr[c]) * inv * bf2d(w[c]));
	}
}
