/* softmax seed (cuda): ROW_THREADS threads share a row, BLOCK / ROW_THREADS
 * rows a block; reductions by warp shuffles, then (a row wider than a warp)
 * through shared memory.  The knobs that decide a memory-bound row kernel's
 * speed on current GPUs:
 *   ROW_THREADS  threads a row: 32 is a warp a row (narrow rows), 1024 a block
 *   BLOCK        threads a block (rows a block = BLOCK / ROW_THREADS)
 *   VEC          floats a load and a store (float2, float4), where the row
 *                length and the pointers allow it, else one
 *   CACHE        loads a thread keeps in registers: a row of at most
 *                ROW_THREADS * VEC * CACHE floats is read from memory once;
 *                0, or a longer row: read again for each pass
 *   ONLINE       the passes that re-read the row: max and sum fused (a
 *                running max with a rescaled sum), two reads instead of three
 *   FASTEXP      __expf instead of expf
 * The defaults are the first seed's kernel (one 128-thread block a row,
 * three reads of the row).  The ktune comments list the values kgen's
 * mutate may try. */
#define ROW_THREADS 128 // ktune: 32 64 128 256 512 1024
#define BLOCK 128       // ktune: 128 256 512 1024
#define VEC 1           // ktune: 1 2 4
#define CACHE 0         // ktune: 0 2 4 8 16
#define ONLINE 0        // ktune: 0 1
#define FASTEXP 0       // ktune: 0 1

#if FASTEXP
#define EXP(v) __expf(v)
#else
#define EXP(v) expf(v)
#endif

#define RT (ROW_THREADS < BLOCK ? ROW_THREADS : BLOCK) /* threads a row */
#define RPB (BLOCK / RT)                               /* rows a block */
#define WPR ((RT + 31) / 32)                           /* warps a row */
#define NC (CACHE > 0 ? CACHE : 1)

template <int V> struct vec_of;
template <> struct vec_of<1> { typedef float t; };
template <> struct vec_of<2> { typedef float2 t; };
template <> struct vec_of<4> { typedef float4 t; };

/* Combine (m, s) pairs: s is a sum of exp(x - m). */
__device__ static void merge(float& m, float& s, float m2, float s2)
{
	float mm = fmaxf(m, m2);
	s = (m == -INFINITY ? 0.f : s * EXP(m - mm)) + (m2 == -INFINITY ? 0.f : s2 * EXP(m2 - mm));
	m = mm;
}

/* The row's max (op 0), sum (op 1) or (m, s) pair (op 2, in m and s) over
 * its RT threads.  Every thread of the block calls it (rows past the end
 * too), as it syncs the block when a row spans several warps. */
template <int OP> __device__ static void row_reduce(float& m, float& s, float (*sh)[WPR][2])
{
	for (int o = (RT < 32 ? RT : 32) / 2; o > 0; o /= 2) {
		float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
		if (OP == 0)
			m = fmaxf(m, m2);
		else if (OP == 1)
			s += s2;
		else
			merge(m, s, m2, s2);
	}
	if (WPR > 1) {
		int row = threadIdx.x / RT, w = threadIdx.x % RT / 32;
		if (threadIdx.x % 32 == 0)
			sh[row][w][0] = m, sh[row][w][1] = s;
		__syncthreads();
		m = sh[row][0][0], s = sh[row][0][1];
		for (int k = 1; k < WPR; k++) {
			if (OP == 0)
				m = fmaxf(m, sh[row][k][0]);
			else if (OP == 1)
				s += sh[row][k][1];
			else
				merge(m, s, sh[row][k][0], sh[row][k][1]);
		}
		__syncthreads();
	}
}

template <int V> __global__ void __launch_bounds__(BLOCK) softmax_rows(const float* x, float* y, int rows, int cols)
{
	typedef typename vec_of<V>::t T;
	__shared__ float sh[RPB][WPR][2];
	int r = blockIdx.x * RPB + threadIdx.x / RT, t = threadIdx.x % RT, nv = cols / V;
	bool live = r < rows;
	const T* xv = reinterpret_cast<const T*>(x + (long)(live ? r : 0) * cols);
	T* yv = reinterpret_cast<T*>(y + (long)(live ? r : 0) * cols);
	float m = -INFINITY, s = 0.f;
	if (CACHE > 0 && nv <= RT * CACHE) { /* the row in registers: one read */
		float c[NC][V];
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = t + k * RT;
			T v;
			if (live && j < nv)
				v = xv[j];
			const float* f = reinterpret_cast<const float*>(&v);
#pragma unroll
			for (int i = 0; i < V; i++) {
				c[k][i] = live && j < nv ? f[i] : -INFINITY;
				m = fmaxf(m, c[k][i]);
			}
		}
		row_reduce<0>(m, s, sh);
#pragma unroll
		for (int k = 0; k < NC; k++)
#pragma unroll
			for (int i = 0; i < V; i++) {
				c[k][i] = c[k][i] == -INFINITY ? 0.f : EXP(c[k][i] - m);
				s += c[k][i];
			}
		row_reduce<1>(m, s, sh);
		float inv = 1.f / s;
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = t + k * RT;
			if (live && j < nv) {
				T v;
				float* f = reinterpret_cast<float*>(&v);
#pragma unroll
				for (int i = 0; i < V; i++)
					f[i] = c[k][i] * inv;
				yv[j] = v;
			}
		}
		return;
	}
	/* Streaming: the row read once for the max and sum (ONLINE) or twice,
	 * then again for the output. */
	for (int j = live ? t : nv; j < nv; j += RT) {
		T v = xv[j];
		const float* f = reinterpret_cast<const float*>(&v);
		for (int i = 0; i < V; i++)
			if (ONLINE)
				merge(m, s, f[i], 1.f);
			else
				m = fmaxf(m, f[i]);
	}
	if (ONLINE) {
		row_reduce<2>(m, s, sh);
	} else {
		row_reduce<0>(m, s, sh);
		for (int j = live ? t : nv; j < nv; j += RT) {
			T v = xv[j];
			const float* f = reinterpret_cast<const float*>(&v);
			for (int i = 0; i < V; i++)
				s += EXP(f[i] - m);
		}
		row_reduce<1>(m, s, sh);
	}
	float inv = 1.f / s;
	for (int j = live ? t : nv; j < nv; j += RT) {
		T v = xv[j];
		float* f = reinterpret_cast<float*>(&v);
		for (int i = 0; i < V; i++)
			f[i] = EXP(f[i] - m) * inv;
		yv[j] = v;
	}
}

extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	if (rows <= 0 || cols <= 0)
		return;
	unsigned long a = (unsigned long)x | (unsigned long)y;
	int blocks = (rows + RPB - 1) / RPB;
	if (VEC >= 4 && cols % 4 == 0 && a % 16 == 0)
		softmax_rows<4><<<blocks, BLOCK>>>(x, y, rows, cols);
	else if (VEC >= 2 && cols % 2 == 0 && a % 8 == 0)
		softmax_rows<2><<<blocks, BLOCK>>>(x, y, rows, cols);
	else
		softmax_rows<1><<<blocks, BLOCK>>>(x, y, rows, cols);
}
