/* rmsnorm seed (cuda): ROW_THREADS threads share a row, BLOCK / ROW_THREADS
 * rows a block; the sum of squares is reduced by warp shuffles, then (a row
 * wider than a warp) through shared memory.  Values stay packed bf16 in
 * registers (8 a 16-byte load) and are widened to float for the arithmetic;
 * y is rounded to bf16 once.  The knobs that decide a memory-bound row
 * kernel's speed on current GPUs:
 *   ROW_THREADS  threads a row: 16 or 32 for short rows (1024 columns), up
 *                to 1024 (a block a row) for long ones
 *   BLOCK        threads a block (rows a block = BLOCK / ROW_THREADS)
 *   VEC          bf16 a load and a store (4, 8 or 16 bytes), where the row
 *                length and the pointers allow it, else narrower
 *   CACHE        loads a thread keeps in registers: a row of at most
 *                ROW_THREADS * VEC * CACHE values is read from memory once
 *                (and the matching values of w are loaded before the
 *                reduction); a longer row is read twice, the second time
 *                mostly from L2, CACHE loads in flight a thread.  Capped so
 *                that the kept x takes at most a quarter of a thread's
 *                registers at BLOCK threads
 *   STREAM       x's last read with __ldcs and y written with __stcs
 *                (evict-first), instead of plain loads and stores
 * The ktune comments list the values kgen's mutate may try. */
#define ROW_THREADS 128 // ktune: 16 32 64 128 256 512 1024
#define BLOCK 256       // ktune: 128 256 512 1024
#define VEC 8           // ktune: 2 4 8
#define CACHE 4         // ktune: 1 2 4 8 16
#define STREAM 0        // ktune: 0 1

#define RT (ROW_THREADS < BLOCK ? ROW_THREADS : BLOCK) /* threads a row */
#define RPB (BLOCK / RT)                               /* rows a block */
#define WPR ((RT + 31) / 32)                           /* warps a row */
#define NC_MAX (32768 / (BLOCK * VEC) > 0 ? 32768 / (BLOCK * VEC) : 1)
#define NC (CACHE < NC_MAX ? CACHE : NC_MAX)           /* loads kept */

/* A load of V bf16 as raw bits: 16-bit element i of the vector is
 * column j * V + i. */
template <int V> struct raw_of;
template <> struct raw_of<1> { typedef unsigned short t; };
template <> struct raw_of<2> { typedef unsigned int t; };
template <> struct raw_of<4> { typedef uint2 t; };
template <> struct raw_of<8> { typedef uint4 t; };

template <typename T> __device__ __forceinline__ T ld(const T* p, bool last)
{
	return STREAM && last ? __ldcs(p) : *p;
}

template <typename T> __device__ __forceinline__ void st(T* p, T v)
{
	if (STREAM)
		__stcs(p, v);
	else
		*p = v;
}

/* The V values of a raw vector as floats (a bf16 is the upper half of a
 * float). */
template <int V> __device__ __forceinline__ void widen(const typename raw_of<V>::t& r, float* f)
{
	if constexpr (V == 1) {
		f[0] = __uint_as_float((unsigned)*reinterpret_cast<const unsigned short*>(&r) << 16);
	} else {
		const unsigned* u = reinterpret_cast<const unsigned*>(&r);
#pragma unroll
		for (int i = 0; i < V / 2; i++) {
			f[2 * i] = __uint_as_float(u[i] << 16);
			f[2 * i + 1] = __uint_as_float(u[i] & 0xffff0000u);
		}
	}
}

template <int V> __device__ __forceinline__ typename raw_of<V>::t narrow(const float* f)
{
	typename raw_of<V>::t r;
	if constexpr (V == 1) {
		__nv_bfloat16 b = __float2bfloat16_rn(f[0]);
		r = *reinterpret_cast<typename raw_of<V>::t*>(&b);
	} else {
		unsigned* u = reinterpret_cast<unsigned*>(&r);
#pragma unroll
		for (int i = 0; i < V / 2; i++) {
			__nv_bfloat162 b = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
			u[i] = *reinterpret_cast<unsigned*>(&b);
		}
	}
	return r;
}

template <int V> __device__ __forceinline__ float sumsq(const typename raw_of<V>::t& r)
{
	float f[V], q = 0.f;
	widen<V>(r, f);
#pragma unroll
	for (int i = 0; i < V; i++)
		q = fmaf(f[i], f[i], q);
	return q;
}

/* y's vector from x's and w's. */
template <int V> __device__ __forceinline__ typename raw_of<V>::t scale(const typename raw_of<V>::t& xr,
									    const typename raw_of<V>::t& wr, float inv)
{
	float a[V], g[V];
	widen<V>(xr, a);
	widen<V>(wr, g);
#pragma unroll
	for (int i = 0; i < V; i++)
		a[i] = a[i] * inv * g[i];
	return narrow<V>(a);
}

/* The row's sum over its RT threads.  Every thread of the block calls it
 * (rows past the end too), as it syncs the block when a row spans several
 * warps. */
__device__ __forceinline__ float row_sum(float s, float (*sh)[WPR])
{
#pragma unroll
	for (int o = (RT < 32 ? RT : 32) / 2; o > 0; o /= 2)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if (WPR > 1) {
		int row = threadIdx.x / RT;
		if (threadIdx.x % 32 == 0)
			sh[row][threadIdx.x % RT / 32] = s;
		__syncthreads();
		s = sh[row][0];
#pragma unroll
		for (int k = 1; k < WPR; k++)
			s += sh[row][k];
	}
	return s;
}

template <int V> __global__ void __launch_bounds__(BLOCK) rmsnorm_rows(const __nv_bfloat16* __restrict__ x,
		const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y, int rows, int cols)
{
	typedef typename raw_of<V>::t T;
	__shared__ float sh[RPB][WPR];
	int r = blockIdx.x * RPB + threadIdx.x / RT, t = threadIdx.x % RT, nv = cols / V;
	bool live = r < rows;
	const T* xv = reinterpret_cast<const T*>(x) + (long)(live ? r : 0) * nv;
	const T* wv = reinterpret_cast<const T*>(w);
	T* yv = reinterpret_cast<T*>(y) + (long)(live ? r : 0) * nv;
	int end = live ? nv : 0;
	T c[NC];
	float q = 0.f;
	if (nv <= RT * NC) { /* the row in registers: one read */
		T g[NC];
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = t + k * RT;
			c[k] = j < end ? ld(xv + j, true) : T();
			g[k] = j < end ? wv[j] : T();
		}
#pragma unroll
		for (int k = 0; k < NC; k++)
			q += sumsq<V>(c[k]);
		float inv = rsqrtf(row_sum(q, sh) / cols + 1e-6f);
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = t + k * RT;
			if (j < end)
				st(yv + j, scale<V>(c[k], g[k], inv));
		}
		return;
	}
	/* Two reads, NC loads in flight a thread: the second mostly hits L2,
	 * where the first left the row. */
	for (int j0 = 0; j0 < end; j0 += RT * NC) {
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = j0 + t + k * RT;
			c[k] = j < end ? ld(xv + j, false) : T();
		}
#pragma unroll
		for (int k = 0; k < NC; k++)
			q += sumsq<V>(c[k]);
	}
	float inv = rsqrtf(row_sum(q, sh) / cols + 1e-6f);
	for (int j0 = 0; j0 < end; j0 += RT * NC) {
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = j0 + t + k * RT;
			c[k] = j < end ? ld(xv + j, true) : T();
		}
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = j0 + t + k * RT;
			if (j < end)
				st(yv + j, scale<V>(c[k], wv[j], inv));
		}
	}
}

extern "C" void solve(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int rows, int cols)
{
	if (rows <= 0 || cols <= 0)
		return;
	unsigned long a = (unsigned long)x | (unsigned long)w | (unsigned long)y;
	int blocks = (rows + RPB - 1) / RPB;
	/* if constexpr: no kernel is built for a width above VEC. */
	if constexpr (VEC >= 8)
		if (cols % 8 == 0 && a % 16 == 0) {
			rmsnorm_rows<8><<<blocks, BLOCK>>>(x, w, y, rows, cols);
			return;
		}
	if constexpr (VEC >= 4)
		if (cols % 4 == 0 && a % 8 == 0) {
			rmsnorm_rows<4><<<blocks, BLOCK>>>(x, w, y, rows, cols);
			return;
		}
	if (cols % 2 == 0 && a % 4 == 0)
		rmsnorm_rows<2><<<blocks, BLOCK>>>(x, w, y, rows, cols);
	else
		rmsnorm_rows<1><<<blocks, BLOCK>>>(x, w, y, rows, cols);
}
