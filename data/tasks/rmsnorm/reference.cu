/* rmsnorm device reference: the arithmetic of reference.c (the mean square
 * in double from the bf16 inputs, the output rounded once to float and
 * then to bf16, nearest even, as reference.c's d2bf does), one 256-thread
 * block a row.  Used for the benchmark sizes, where the host reference
 * dominates the cost of a timed candidate; tests/gpu checks it against
 * reference.c at the test sizes. */
#include <stdint.h>

__device__ static double bf2d(uint16_t b)
{
	return (double)__uint_as_float((unsigned)b << 16);
}

__device__ static uint16_t d2bf(double d)
{
	float f = (float)d;
	unsigned u = __float_as_uint(f);
	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

__global__ void ref_rmsnorm(const uint16_t* x, const uint16_t* w, uint16_t* y, int cols)
{
	__shared__ double red[256];
	const uint16_t* xr = x + (long)blockIdx.x * cols;
	uint16_t* yr = y + (long)blockIdx.x * cols;
	double q = 0;
	for (int c = threadIdx.x; c < cols; c += 256)
		q += bf2d(xr[c]) * bf2d(xr[c]);
	red[threadIdx.x] = q;
	__syncthreads();
	for (int s = 128; s > 0; s /= 2) {
		if (threadIdx.x < s)
			red[threadIdx.x] += red[threadIdx.x + s];
		__syncthreads();
	}
	double inv = 1.0 / sqrt(red[0] / cols + 1e-6);
	for (int c = threadIdx.x; c < cols; c += 256)
		yr[c] = d2bf(bf2d(xr[c]) * inv * bf2d(w[c]));
}

/* bf16 arguments, as the build declares them; read as their bits. */
extern "C" void solve(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int rows, int cols)
{
	if (rows > 0 && cols > 0)
		ref_rmsnorm<<<rows, 256>>>((const uint16_t*)x, (const uint16_t*)w, (uint16_t*)y, cols);
}
