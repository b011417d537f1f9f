/* layernorm seed (cuda): y = (x - mean) / sqrt(var + 1e-5) * gamma + beta
 * over each row.  A team of ROW_THREADS threads normalises a row,
 * BLOCK / ROW_THREADS teams a block; reductions by warp shuffles, then (a
 * team wider than a warp) through shared memory.  A long row may be spread
 * over the CLUSTER blocks of a thread-block cluster (sm_90), one slice a
 * block, whose partial statistics meet in distributed shared memory: more
 * blocks, and so more loads in flight, for rows too few to fill the GPU.
 * The knobs that decide a memory-bound row kernel's speed:
 *   ROW_THREADS  threads a row in a block: 32 a warp a row (narrow rows),
 *                1024 a block (at most BLOCK)
 *   BLOCK        threads a block (rows a block = BLOCK / ROW_THREADS)
 *   VEC          floats a load and a store (float2, float4), where the row
 *                length and the pointers allow it, else one
 *   CACHE        loads a thread keeps in registers: a slice of at most
 *                ROW_THREADS * VEC * CACHE floats is read from memory once;
 *                0, or a longer slice: read again for each pass
 *   CLUSTER      blocks a row at most: the fewest (a power of two) whose
 *                slices fit CACHE (one load a thread, for CACHE 0)
 *   ONEPASS      0: mean, then the centred variance (a second reduction;
 *                a second read when the slice is not cached); 1: one
 *                reduction of (count, mean, M2) triples merged by Chan's
 *                formula, each thread's own centred over its values
 *   PRELOAD      gamma and beta loaded with x, before the reductions (more
 *                registers; their latency hidden), else after (cached only)
 *   LDHINT       x's loads: 0 __ldg, 1 __ldcs (streaming, evict first)
 *   STHINT       y's stores: 0 plain, 1 __stcs (streaming)
 *   WARPS_SM     warps a multiprocessor must be able to hold, through
 *                __launch_bounds__'s blocks a multiprocessor: a register
 *                cap (64 a thread at 32, 32 at 64); 1: one block, no cap
 *                but BLOCK's (the compiler hoists more loads, fewer rows
 *                are in flight); 0: the compiler's choice
 * The ktune comments list the values kgen's mutate may try; every
 * combination is valid (ROW_THREADS above BLOCK means BLOCK). */
#define ROW_THREADS 256 // ktune: 32 64 128 256 512 1024
#define BLOCK 256       // ktune: 128 256 512 1024
#define VEC 4           // ktune: 1 2 4
#define CACHE 4         // ktune: 0 1 2 4 8 16
#define CLUSTER 1       // ktune: 1 2 4 8
#define ONEPASS 0       // ktune: 0 1
#define PRELOAD 0       // ktune: 0 1
#define LDHINT 0        // ktune: 0 1
#define STHINT 0        // ktune: 0 1
#define WARPS_SM 0      // ktune: 0 1 32 48 64

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define RT (ROW_THREADS < BLOCK ? ROW_THREADS : BLOCK) /* threads a row */
#define TPB (BLOCK / RT)                               /* rows a block */
#define WPT ((RT + 31) / 32)                           /* warps a row */
#define NC (CACHE > 0 ? CACHE : 1)
#define NG (PRELOAD ? NC : 1)
#if WARPS_SM > 0
#define BOUNDS __launch_bounds__(BLOCK, WARPS_SM * 32 / BLOCK > 1 ? WARPS_SM * 32 / BLOCK : 1)
#else
#define BOUNDS __launch_bounds__(BLOCK)
#endif

template <int V> struct vec_of;
template <> struct vec_of<1> { typedef float t; };
template <> struct vec_of<2> { typedef float2 t; };
template <> struct vec_of<4> { typedef float4 t; };

template <class T> __device__ __forceinline__ T ldx(const T* p)
{
#if LDHINT
	return __ldcs(p);
#else
	return __ldg(p);
#endif
}

template <class T> __device__ __forceinline__ void sty(T* p, T v)
{
#if STHINT
	__stcs(p, v);
#else
	*p = v;
#endif
}

enum { OP_SUM, OP_CHAN };

/* (n, m, q): n values of mean m and sum of squared deviations q, merged
 * with (n2, m2, q2) (Chan et al.). */
__device__ __forceinline__ void merge(float& n, float& m, float& q, float n2, float m2, float q2)
{
	float nn = n + n2;
	if (nn > 0.f) {
		float d = m2 - m, f = n2 / nn;
		m += d * f;
		q += q2 + d * d * n * f;
		n = nn;
	}
}

/* OP_SUM: a summed over the row's team; OP_CHAN: (a, b, c) = (n, m, q)
 * merged.  Every thread of the team ends with the same bits (merges in lane
 * order, not the butterfly's).  Every thread of the block calls it (rows
 * past the end too), as it syncs the block when a row spans several warps. */
template <int OP> __device__ static void team_reduce(float& a, float& b, float& c, float (*sh)[WPT][3])
{
	for (int o = (RT < 32 ? RT : 32) / 2; o > 0; o /= 2) {
		float a2 = __shfl_xor_sync(0xffffffffu, a, o);
		if (OP == OP_SUM) {
			a += a2;
		} else {
			float b2 = __shfl_xor_sync(0xffffffffu, b, o), c2 = __shfl_xor_sync(0xffffffffu, c, o);
			if (threadIdx.x & o) {
				float t;
				t = a, a = a2, a2 = t;
				t = b, b = b2, b2 = t;
				t = c, c = c2, c2 = t;
			}
			merge(a, b, c, a2, b2, c2);
		}
	}
	if (WPT > 1) {
		int row = threadIdx.x / RT, w = threadIdx.x % RT / 32;
		if (threadIdx.x % 32 == 0)
			sh[row][w][0] = a, sh[row][w][1] = b, sh[row][w][2] = c;
		__syncthreads();
		a = sh[row][0][0], b = sh[row][0][1], c = sh[row][0][2];
		for (int k = 1; k < WPT; k++)
			if (OP == OP_SUM)
				a += sh[row][k][0];
			else
				merge(a, b, c, sh[row][k][0], sh[row][k][1], sh[row][k][2]);
		__syncthreads();
	}
}

/* The team results of the nc blocks of a cluster combined, rank 0 first in
 * every block, so all agree.  csh is this reduction's own buffer: a block
 * may still read another's previous one.  The last reduction only arrives
 * at the closing barrier; the kernel waits on it before it exits, so no
 * block leaves while another reads its shared memory. */
template <int OP> __device__ static void cluster_reduce(float& a, float& b, float& c, float (*csh)[3], int nc, bool last)
{
	cg::cluster_group cl = cg::this_cluster();
	int row = threadIdx.x / RT;
	if (threadIdx.x % RT == 0)
		csh[row][0] = a, csh[row][1] = b, csh[row][2] = c;
	cl.sync();
	const float* p = cl.map_shared_rank(&csh[row][0], 0);
	a = p[0], b = p[1], c = p[2];
	for (int k = 1; k < nc; k++) {
		p = cl.map_shared_rank(&csh[row][0], k);
		if (OP == OP_SUM)
			a += p[0];
		else
			merge(a, b, c, p[0], p[1], p[2]);
	}
	if (last)
		cl.barrier_arrive();
}

/* y = (v - m) * inv * g + b, component by component. */
template <class T> __device__ __forceinline__ T norm(T v, float m, float inv, T g, T b)
{
	const float *fv = reinterpret_cast<const float*>(&v), *fg = reinterpret_cast<const float*>(&g),
		    *fb = reinterpret_cast<const float*>(&b);
	T o;
	float* fo = reinterpret_cast<float*>(&o);
#pragma unroll
	for (int i = 0; i < (int)(sizeof(T) / sizeof(float)); i++)
		fo[i] = fmaf((fv[i] - m) * inv, fg[i], fb[i]);
	return o;
}

/* Block blockIdx.x / nc (its cluster, when CL) holds rows from
 * (blockIdx.x / nc) * TPB, one a team; the block of cluster rank k has
 * slice k of each, per vectors long. */
template <int V, bool CL>
__global__ void BOUNDS layernorm_rows(const float* __restrict__ x, const float* __restrict__ gamma,
		const float* __restrict__ beta, float* __restrict__ y, int rows, int cols, int nc)
{
	typedef typename vec_of<V>::t T;
	__shared__ float sh[TPB][WPT][3];
	__shared__ float csh[2][TPB][3];
	int t = threadIdx.x % RT, rank = CL ? (int)cg::this_cluster().block_rank() : 0;
	long r = (long)(CL ? blockIdx.x / nc : blockIdx.x) * TPB + threadIdx.x / RT;
	bool live = r < rows;
	int nv = cols / V, per = (nv + nc - 1) / nc;
	int j0 = rank * per, j1 = !live ? j0 : j0 + per < nv ? j0 + per : nv;
	const T* xv = reinterpret_cast<const T*>(x + (live ? r : 0) * cols);
	T* yv = reinterpret_cast<T*>(y + (live ? r : 0) * cols);
	const T *gv = reinterpret_cast<const T*>(gamma), *bv = reinterpret_cast<const T*>(beta);
	float a = 0.f, b = 0.f, c = 0.f, m, inv;
	T zero;
	float* fz = reinterpret_cast<float*>(&zero);
#pragma unroll
	for (int i = 0; i < V; i++)
		fz[i] = 0.f;
	if (CACHE > 0 && per <= RT * NC) { /* the slice in registers: one read */
		T v[NC], g[NG], bb[NG];
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = j0 + t + k * RT;
			v[k] = j < j1 ? ldx(xv + j) : zero;
			if (PRELOAD) {
				g[k % NG] = j < j1 ? __ldg(gv + j) : zero;
				bb[k % NG] = j < j1 ? __ldg(bv + j) : zero;
			}
		}
		float s = 0.f, n = 0.f;
#pragma unroll
		for (int k = 0; k < NC; k++) {
			const float* f = reinterpret_cast<const float*>(&v[k]);
#pragma unroll
			for (int i = 0; i < V; i++)
				s += f[i];
			n += j0 + t + k * RT < j1 ? V : 0;
		}
		if (ONEPASS) {
			b = n > 0.f ? s / n : 0.f;
		} else {
			a = s;
			team_reduce<OP_SUM>(a, b, c, sh);
			if (CL)
				cluster_reduce<OP_SUM>(a, b, c, csh[1], nc, false);
			b = a / cols;
		}
		/* b is the mean: the thread's own (ONEPASS) or the row's. */
		float q = 0.f;
#pragma unroll
		for (int k = 0; k < NC; k++) {
			const float* f = reinterpret_cast<const float*>(&v[k]);
			bool ok = j0 + t + k * RT < j1;
#pragma unroll
			for (int i = 0; i < V; i++) {
				float d = ok ? f[i] - b : 0.f;
				q += d * d;
			}
		}
		if (ONEPASS) {
			a = n, c = q;
			team_reduce<OP_CHAN>(a, b, c, sh);
			if (CL)
				cluster_reduce<OP_CHAN>(a, b, c, csh[0], nc, true);
			m = b, q = c;
		} else {
			m = b, a = q;
			team_reduce<OP_SUM>(a, b, c, sh);
			if (CL)
				cluster_reduce<OP_SUM>(a, b, c, csh[0], nc, true);
			q = a;
		}
		inv = rsqrtf(fmaxf(q / cols, 0.f) + 1e-5f);
#pragma unroll
		for (int k = 0; k < NC; k++) {
			int j = j0 + t + k * RT;
			if (j < j1) {
				T gk = PRELOAD ? g[k % NG] : __ldg(gv + j), bk = PRELOAD ? bb[k % NG] : __ldg(bv + j);
				sty(yv + j, norm(v[k], m, inv, gk, bk));
			}
		}
	} else { /* streaming: the slice read for the statistics, then again */
		if (ONEPASS) {
			/* Each thread's sums shifted by its first value, so they
			 * cancel little whatever the row's mean. */
			float k0 = j0 + t < j1 ? __ldg(reinterpret_cast<const float*>(xv + j0 + t)) : 0.f;
			float s = 0.f, q = 0.f, n = 0.f;
#pragma unroll 4
			for (int j = j0 + t; j < j1; j += RT) {
				T v = ldx(xv + j);
				const float* f = reinterpret_cast<const float*>(&v);
#pragma unroll
				for (int i = 0; i < V; i++) {
					float d = f[i] - k0;
					s += d, q += d * d;
				}
				n += V;
			}
			a = n;
			b = n > 0.f ? k0 + s / n : 0.f;
			c = n > 0.f ? fmaxf(q - s * (s / n), 0.f) : 0.f;
			team_reduce<OP_CHAN>(a, b, c, sh);
			if (CL)
				cluster_reduce<OP_CHAN>(a, b, c, csh[0], nc, true);
			m = b;
			inv = rsqrtf(fmaxf(c / cols, 0.f) + 1e-5f);
		} else {
#pragma unroll 4
			for (int j = j0 + t; j < j1; j += RT) {
				T v = ldx(xv + j);
				const float* f = reinterpret_cast<const float*>(&v);
#pragma unroll
				for (int i = 0; i < V; i++)
					a += f[i];
			}
			team_reduce<OP_SUM>(a, b, c, sh);
			if (CL)
				cluster_reduce<OP_SUM>(a, b, c, csh[1], nc, false);
			m = a / cols;
			a = 0.f;
#pragma unroll 4
			for (int j = j0 + t; j < j1; j += RT) {
				T v = ldx(xv + j);
				const float* f = reinterpret_cast<const float*>(&v);
#pragma unroll
				for (int i = 0; i < V; i++)
					a += (f[i] - m) * (f[i] - m);
			}
			team_reduce<OP_SUM>(a, b, c, sh);
			if (CL)
				cluster_reduce<OP_SUM>(a, b, c, csh[0], nc, true);
			inv = rsqrtf(fmaxf(a / cols, 0.f) + 1e-5f);
		}
#pragma unroll 4
		for (int j = j0 + t; j < j1; j += RT)
			sty(yv + j, norm(ldx(xv + j), m, inv, __ldg(gv + j), __ldg(bv + j)));
	}
	if (CL)
		cg::this_cluster().barrier_wait();
}

template <int V> static void launch(const float* x, const float* gamma, const float* beta, float* y, int rows,
		int cols, long groups, int nc)
{
	if constexpr (CLUSTER > 1) {
		if (nc > 1) {
			cudaLaunchConfig_t cfg = {};
			cudaLaunchAttribute at[1];
			at[0].id = cudaLaunchAttributeClusterDimension;
			at[0].val.clusterDim.x = nc;
			at[0].val.clusterDim.y = 1;
			at[0].val.clusterDim.z = 1;
			cfg.gridDim = dim3((unsigned)(groups * nc));
			cfg.blockDim = dim3(BLOCK);
			cfg.stream = 0;
			cfg.attrs = at;
			cfg.numAttrs = 1;
			cudaLaunchKernelEx(&cfg, layernorm_rows<V, true>, x, gamma, beta, y, rows, cols, nc);
			return;
		}
	}
	layernorm_rows<V, false><<<(unsigned)groups, BLOCK>>>(x, gamma, beta, y, rows, cols, 1);
}

extern "C" void solve(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols)
{
	if (rows <= 0 || cols <= 0)
		return;
	unsigned long a = (unsigned long)x | (unsigned long)y | (unsigned long)gamma | (unsigned long)beta;
	int v = VEC >= 4 && cols % 4 == 0 && a % 16 == 0 ? 4 : VEC >= 2 && cols % 2 == 0 && a % 8 == 0 ? 2 : 1;
	long fit = (long)RT * NC;
	int nc = 1;
	while (nc < CLUSTER && cols / v > fit * nc)
		nc *= 2;
	long groups = ((long)rows + TPB - 1) / TPB;
	if (v == 4)
		launch<4>(x, gamma, beta, y, rows, cols, groups, nc);
	else if (v == 2)
		launch<2>(x, gamma, beta, y, rows, cols, groups, nc);
	else
		launch<1>(x, gamma, beta, y, rows, cols, groups, nc);
}
