/* softmax seed (cuda): one block per row; the block reduces the row's max,
 * then the sum of exp(x - max), then writes y.  ONLINE fuses the first two
 * passes (running max with rescaled sum); FASTEXP uses __expf.  The ktune
 * comments list the values kgen's mutate may try. */
#define BLOCK 128  // ktune: 64 128 256 512 1024
#define ONLINE 0   // ktune: 0 1
#define FASTEXP 0  // ktune: 0 1

#if FASTEXP
#define EXP(v) __expf(v)
#else
#define EXP(v) expf(v)
#endif

/* Combine (m, s) pairs: s is a sum of exp(x - m). */
__device__ static void merge(float& m, float& s, float m2, float s2)
{
	float mm = fmaxf(m, m2);
	s = (m == -INFINITY ? 0.f : s * EXP(m - mm)) + (m2 == -INFINITY ? 0.f : s2 * EXP(m2 - mm));
	m = mm;
}

__global__ void __launch_bounds__(BLOCK) softmax_rows(const float* x, float* y, int cols)
{
	__shared__ float sm[BLOCK], ss[BLOCK];
	const float* xr = x + (long)blockIdx.x * cols;
	float* yr = y + (long)blockIdx.x * cols;
	float m = -INFINITY, s = 0.f;
#if ONLINE
	for (int c = threadIdx.x; c < cols; c += BLOCK)
		merge(m, s, xr[c], 1.f);
#else
	for (int c = threadIdx.x; c < cols; c += BLOCK)
		m = fmaxf(m, xr[c]);
#endif
	sm[threadIdx.x] = m;
	ss[threadIdx.x] = s;
	__syncthreads();
	for (int w = BLOCK / 2; w > 0; w /= 2) {
		if (threadIdx.x < w) {
#if ONLINE
			float a = sm[threadIdx.x], b = ss[threadIdx.x];
			merge(a, b, sm[threadIdx.x + w], ss[threadIdx.x + w]);
			sm[threadIdx.x] = a;
			ss[threadIdx.x] = b;
#else
			sm[threadIdx.x] = fmaxf(sm[threadIdx.x], sm[threadIdx.x + w]);
#endif
		}
		__syncthreads();
	}
	m = sm[0];
#if ONLINE
	s = ss[0];
#else
	__syncthreads();
	s = 0.f;
	for (int c = threadIdx.x; c < cols; c += BLOCK)
		s += EXP(xr[c] - m);
	ss[threadIdx.x] = s;
	__syncthreads();
	for (int w = BLOCK / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			ss[threadIdx.x] += ss[threadIdx.x + w];
		__syncthreads();
	}
	s = ss[0];
#endif
	float inv = 1.f / s;
	for (int c = threadIdx.x; c < cols; c += BLOCK)
		yr[c] = EXP(xr[c] - m) * inv;
}

extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	if (rows <= 0 || cols <= 0)
		return;
	softmax_rows<<<rows, BLOCK>>>(x, y, cols);
}
