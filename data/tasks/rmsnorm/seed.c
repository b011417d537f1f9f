/* rmsnorm seed: bf16 -> float by a shift, ACC independent accumulators for
 * the sum of squares (vectorisable), rows over THREADS workers. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ACC 8      // ktune: 1 4 8 16
#define THREADS 1  // ktune: 1 2 4

static inline float bf2f(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

void solve(const uint16_t* x, const uint16_t* w, uint16_t* y, int rows, int cols)
{
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long r = 0; r < rows; r++) {
		const uint16_t *xr = x + r * cols;
		uint16_t *yr = y + r * cols;
		float q[ACC] = {0};
		long c = 0;
		for (; c + ACC <= cols; c += ACC)
			for (int k = 0; k < ACC; k++) {
				float v = bf2f(xr[c + k]);
				q[k] += v * v;
			}
		double s = 0;
		for (int k = 0; k < ACC; k++)
			s += q[k];
		for (; c < cols; c++)
			s += (double)bf2f(xr[c]) * bf2f(xr[c]);
		float inv = (float)(1.0 / sqrt(s / cols + 1e-6));
		for (c = 0; c < cols; c++)
			yr[c] = f2bf(bf2f(xr[c]) * inv * bf2f(w[c]));
	}
}
