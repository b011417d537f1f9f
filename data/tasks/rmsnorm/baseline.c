/* rmsnorm baseline: convert, two passes per row in float, single thread. */
#include <math.h>
#include <stdint.h>
#include <string.h>

static float bf2f(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint16_t f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

void solve(const uint16_t* x, const uint16_t* w, uint16_t* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++) {
		double q = 0;
		for (long c = 0; c < cols; c++) {
			float v = bf2f(x[r * cols + c]);
			q += v * v;
		}
		float inv = 1.0f / sqrtf((float)(q / cols) + 1e-6f);
		for (long c = 0; c < cols; c++)
			y[r * cols + c] = f2bf(bf2f(x[r * cols + c]) * inv * bf2f(w[c]));
	}
}
