/* transpose seed (cuda): tiles of TR rows x TC columns of x staged through
 * shared memory, so that reads (along x's rows) and writes (along y's rows)
 * are both coalesced.  A thread reads micro-tiles of VEC x VEC: VEC vector
 * loads from VEC consecutive rows, transposed in registers and stored to
 * shared memory as VEC vectors, already in y's orientation; the write phase
 * copies vectors of shared memory to y's rows.  With VEC > 1 both the loads
 * and the stores are vectors, where rows, cols and the pointers allow it
 * (else narrower).  A 1-D grid walks the tiles (no 65535 limit), in the
 * order of x's rows or of y's rows.  The knobs:
 *   TC       tile width: columns of x, i.e. y rows a tile writes
 *   TR       tile height: rows of x, i.e. the length of the y row segments
 *            a tile writes (TR >= 32 keeps the swizzle inside a row)
 *   THREADS  threads a block (capped at one micro-tile a thread)
 *   VEC      floats a global load and store: 1, float2, float4
 *   SWIZZLE  shared memory layout: 0 pads each row by VEC floats (free of
 *            bank conflicts for VEC 1, VEC-way conflicts on the stores
 *            otherwise); 1 XORs the vector index with the row, free of
 *            conflicts for every VEC
 *   ORDER    0: consecutive blocks take consecutive tiles along x's rows
 *            (neighbouring reads); 1: along y's rows (neighbouring writes;
 *            for wide x, a few consecutive blocks fill whole y rows)
 *   STREAM   x read with __ldcs and y written with __stcs (evict-first)
 *            instead of plain loads and stores
 *   LOADS    floats a thread loads (in flight) before storing them to
 *            shared memory, at least one micro-tile (VEC * VEC); more
 *            passes over the tile otherwise.  Each takes a data register
 *            and, across rows, an address
 *   ALIGN    1: where y's rows do not start on 32-byte sectors (rows % 8,
 *            or y itself), write whole sectors only: each y row's segment
 *            is shifted back to a sector boundary (by 0..7 elements, a
 *            different shift for each y row), so a tile reads 8 more rows
 *            of x (a halo, mostly from L2) and writes TR elements from a
 *            sector boundary; otherwise each segment's first and last
 *            sectors are written half by one block, half by another.
 *            Single floats (VEC does not apply there); shapes whose y rows
 *            are aligned take the VEC path whatever ALIGN says
 * The defaults are an all-round kernel; on an H100 (2026-11) they moved
 * 92 %, 87 % and 94 % of the copy bandwidth at the three bench_cuda sizes.
 * Exact: only copies.
 * The ktune comments list the values kgen's mutate may try. */
#define TC 32        // ktune: 32 64 128
#define TR 64        // ktune: 32 64 128
#define THREADS 256  // ktune: 64 128 256 512 1024
#define VEC 4        // ktune: 1 2 4
#define SWIZZLE 1    // ktune: 0 1
#define ORDER 1      // ktune: 0 1
#define STREAM 0     // ktune: 0 1
#define LOADS 8      // ktune: 4 8 16 32 64
#define ALIGN 1      // ktune: 0 1

template <int V> struct vec_of;
template <> struct vec_of<1> { typedef float t; };
template <> struct vec_of<2> { typedef float2 t; };
template <> struct vec_of<4> { typedef float4 t; };

/* The shape of the work for vector width V. */
template <int V> struct shape {
	static constexpr int MT = (TR / V) * (TC / V);         /* micro-tiles a tile */
	static constexpr int NT = THREADS < MT ? THREADS : MT; /* threads a block */
	static constexpr int PR = MT / NT;                     /* micro-tiles a thread */
	static constexpr int PC0 = LOADS / (V * V) > 0 ? LOADS / (V * V) : 1;
	static constexpr int PC = PC0 < PR ? PC0 : PR;         /* of them in flight */
	static constexpr int WX = TR / V;                      /* vectors a y row segment */
	static constexpr int PW = TC * WX / NT;                /* vectors a thread writes */
	static constexpr int L = TR + (SWIZZLE ? 0 : V);       /* shared row, floats */
	static constexpr int U = 32 / V;                       /* vectors a bank row */
	static constexpr int SMEM = TC * L * 4;
};

template <typename T> __device__ __forceinline__ T ld(const T* p)
{
	return STREAM ? __ldcs(p) : *p;
}

template <typename T> __device__ __forceinline__ void st(T* p, T v)
{
	if (STREAM)
		__stcs(p, v);
	else
		*p = v;
}

/* Where vector q of shared row cl lives. */
template <int V> __device__ __forceinline__ int sidx(int cl, int q)
{
	typedef shape<V> S;
	return cl * S::L + V * (SWIZZLE ? q ^ (cl / V % S::U) : q);
}

/* Tile (r0, c0) of x into shared memory, in y's orientation.  FULL: the
 * tile lies inside x, no bounds checks (so the loads issue back to back). */
template <int V, bool FULL> __device__ __forceinline__ void load_tile(const float* __restrict__ x, float* s,
		int rows, int cols, long r0, long c0)
{
	typedef shape<V> S;
	typedef typename vec_of<V>::t T;
	for (int p0 = 0; p0 < S::PR; p0 += S::PC) {
		float a[S::PC][V][V];
#pragma unroll
		for (int p = 0; p < S::PC; p++) {
			int m = threadIdx.x + (p0 + p) * S::NT, mx = m % (TC / V), my = m / (TC / V);
			long c = c0 + V * mx;
#pragma unroll
			for (int k = 0; k < V; k++) {
				long r = r0 + V * my + k;
				T v = T();
				if (FULL || (r < rows && c < cols))
					v = ld(reinterpret_cast<const T*>(x + r * cols + c));
				const float* f = reinterpret_cast<const float*>(&v);
#pragma unroll
				for (int e = 0; e < V; e++)
					a[p][k][e] = f[e];
			}
		}
#pragma unroll
		for (int p = 0; p < S::PC; p++) {
			int m = threadIdx.x + (p0 + p) * S::NT, mx = m % (TC / V), my = m / (TC / V);
#pragma unroll
			for (int e = 0; e < V; e++) {
				T v;
				float* f = reinterpret_cast<float*>(&v);
#pragma unroll
				for (int k = 0; k < V; k++)
					f[k] = a[p][k][e];
				*reinterpret_cast<T*>(s + sidx<V>(V * mx + e, my)) = v;
			}
		}
	}
}

/* Shared memory to y's rows c0 .. c0 + TC - 1, columns r0 .. r0 + TR - 1. */
template <int V, bool FULL> __device__ __forceinline__ void store_tile(float* __restrict__ y, const float* s,
		int rows, int cols, long r0, long c0)
{
	typedef shape<V> S;
	typedef typename vec_of<V>::t T;
#pragma unroll 4
	for (int p = 0; p < S::PW; p++) {
		int n = threadIdx.x + p * S::NT, cl = n / S::WX, q = n % S::WX;
		long c = c0 + cl, r = r0 + V * q;
		if (FULL || (c < cols && r < rows))
			st(reinterpret_cast<T*>(y + c * rows + r), *reinterpret_cast<const T*>(s + sidx<V>(cl, q)));
	}
}

/* One tile a block.  The 1-D grid has fewer than 2^31 blocks for any x
 * that fits in a GPU's memory (a tile is at least 32 x 32). */
template <int V> __global__ void __launch_bounds__(shape<V>::NT) transpose_tiles(const float* __restrict__ x,
		float* __restrict__ y, int rows, int cols, int ntr, int ntc)
{
	extern __shared__ float4 smem4[];
	float* s = reinterpret_cast<float*>(smem4);
	int b = blockIdx.x;
	long tr = ORDER ? b % ntr : b / ntc, tc = ORDER ? b / ntr : b % ntc;
	long r0 = tr * TR, c0 = tc * TC;
	bool full = r0 + TR <= rows && c0 + TC <= cols;
	if (full)
		load_tile<V, true>(x, s, rows, cols, r0, c0);
	else
		load_tile<V, false>(x, s, rows, cols, r0, c0);
	__syncthreads();
	if (full)
		store_tile<V, true>(y, s, rows, cols, r0, c0);
	else
		store_tile<V, false>(y, s, rows, cols, r0, c0);
}

/* ALIGN: y row c of tile (tr, tc) gets elements r0 - sh(c) .. r0 - sh(c)
 * + TR - 1, where sh(c) puts the first on a 32-byte boundary; shared
 * memory holds x rows r0 - 8 .. r0 + TR - 1 in y's orientation, each row
 * padded to an odd length (no bank conflicts). */
#define HALO 8
#define LA (TR + HALO + 1)
#define NTA (THREADS < TR * TC ? THREADS : TR * TC)
#define LOADS_A (LOADS < 32 ? LOADS : 32)

/* ALIGN's loads: x rows r0 .. r0 + TR - 1 to shared columns HALO .., then
 * the halo rows r0 - HALO .. r0 - 1 to columns 0 .. HALO - 1; all of a
 * chunk's loads issued before its stores.  FULL: tile and halo inside x. */
template <bool FULL> __device__ __forceinline__ void load_aligned(const float* __restrict__ x, float* s,
		int rows, int cols, long r0, long c0)
{
	const int P = TR * TC / NTA, PC = LOADS_A < P ? LOADS_A : P;
	const int PH = (HALO * TC + NTA - 1) / NTA;
	float h[PH];
#pragma unroll
	for (int p = 0; p < PH; p++) {
		int m = threadIdx.x + p * NTA;
		long r = r0 - HALO + m / TC, c = c0 + m % TC;
		h[p] = 0.f;
		if ((HALO * TC % NTA == 0 || m < HALO * TC) && (FULL || (r >= 0 && r < rows && c < cols)))
			h[p] = x[r * cols + c];
	}
	for (int p0 = 0; p0 < P; p0 += PC) {
		float a[PC];
#pragma unroll
		for (int p = 0; p < PC; p++) {
			int m = threadIdx.x + (p0 + p) * NTA;
			long r = r0 + m / TC, c = c0 + m % TC;
			a[p] = 0.f;
			if (FULL || (r < rows && c < cols))
				a[p] = x[r * cols + c];
		}
#pragma unroll
		for (int p = 0; p < PC; p++) {
			int m = threadIdx.x + (p0 + p) * NTA;
			s[m % TC * LA + HALO + m / TC] = a[p];
		}
	}
#pragma unroll
	for (int p = 0; p < PH; p++) {
		int m = threadIdx.x + p * NTA;
		if (HALO * TC % NTA == 0 || m < HALO * TC)
			s[m % TC * LA + m / TC] = h[p];
	}
}

template <bool FULL> __device__ __forceinline__ void store_aligned(float* __restrict__ y, const float* s,
		int rows, int cols, long r0, long c0)
{
	long y0 = (long)((unsigned long)y / 4 % HALO);
#pragma unroll 4
	for (int p = 0; p < TC * TR / NTA; p++) {
		int n = threadIdx.x + p * NTA, cl = n / TR, i = n % TR;
		long c = c0 + cl;
		int sh = (int)((y0 + c * rows) % HALO);
		long r = r0 - sh + i;
		if (FULL || (c < cols && r >= 0 && r < rows))
			st(y + c * rows + r, s[cl * LA + HALO - sh + i]);
	}
}

/* A template only so that it is built where ALIGN is on. */
template <int A> __global__ void __launch_bounds__(NTA) transpose_aligned(const float* __restrict__ x, float* __restrict__ y,
		int rows, int cols, int ntr, int ntc)
{
	extern __shared__ float4 smem4[];
	float* s = reinterpret_cast<float*>(smem4);
	int b = blockIdx.x;
	long tr = ORDER ? b % ntr : b / ntc, tc = ORDER ? b / ntr : b % ntc;
	long r0 = tr * TR, c0 = tc * TC;
	bool full = r0 >= HALO && r0 + TR <= rows && c0 + TC <= cols;
	if (full)
		load_aligned<true>(x, s, rows, cols, r0, c0);
	else
		load_aligned<false>(x, s, rows, cols, r0, c0);
	__syncthreads();
	if (full)
		store_aligned<true>(y, s, rows, cols, r0, c0);
	else
		store_aligned<false>(y, s, rows, cols, r0, c0);
}

template <int A> static void launch_aligned(const float* x, float* y, int rows, int cols)
{
	const int smem = TC * LA * 4;
	if (smem > 48 * 1024) {
		static bool set;
		if (!set)
			cudaFuncSetAttribute(transpose_aligned<A>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
		set = true;
	}
	int ntr = (rows + HALO - 1 + TR - 1) / TR, ntc = (cols + TC - 1) / TC;
	transpose_aligned<A><<<(unsigned)((long)ntr * ntc), NTA, smem>>>(x, y, rows, cols, ntr, ntc);
}

template <int V> static void launch(const float* x, float* y, int rows, int cols)
{
	typedef shape<V> S;
	if (S::SMEM > 48 * 1024) {
		static bool set;
		if (!set)
			cudaFuncSetAttribute(transpose_tiles<V>, cudaFuncAttributeMaxDynamicSharedMemorySize, S::SMEM);
		set = true;
	}
	int ntr = (rows + TR - 1) / TR, ntc = (cols + TC - 1) / TC;
	transpose_tiles<V><<<(unsigned)((long)ntr * ntc), S::NT, S::SMEM>>>(x, y, rows, cols, ntr, ntc);
}

extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	if (rows <= 0 || cols <= 0)
		return;
	unsigned long a = (unsigned long)x | (unsigned long)y;
	if constexpr (ALIGN)
		if (rows % 8 != 0 || (unsigned long)y % 32 != 0) {
			launch_aligned<ALIGN>(x, y, rows, cols);
			return;
		}
	/* if constexpr: no kernel is built for a width above VEC. */
	if constexpr (VEC >= 4)
		if (rows % 4 == 0 && cols % 4 == 0 && a % 16 == 0) {
			launch<4>(x, y, rows, cols);
			return;
		}
	if constexpr (VEC >= 2)
		if (rows % 2 == 0 && cols % 2 == 0 && a % 8 == 0) {
			launch<2>(x, y, rows, cols);
			return;
		}
	launch<1>(x, y, rows, cols);
}
