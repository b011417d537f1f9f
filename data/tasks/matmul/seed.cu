/* matmul seed (cuda): FP32 SGEMM in the SIMT "warp tiling" style.
 *
 * A block computes a BM x BN tile of C with WARPS_M x WARPS_N warps, a warp a
 * WM x WN tile with its lanes arranged LANES_M x LANES_N, a lane a TM x TN
 * micro-tile made of 4 x 4 pieces spaced one lane grid apart, so that the
 * lanes of a warp read neighbouring float4s of shared memory and write
 * neighbouring float4s of C.  Tile sizes are derived from the knobs and are
 * never knobs themselves, so that every combination is a kernel:
 *
 *   THREAD_TILE  TM * 100 + TN, the lane's micro-tile (at most 128 sums)
 *   LANES_N      lanes of a warp along N; 32 / LANES_N along M
 *   WARPS        WARPS_M * 10 + WARPS_N, the block's warp grid (2 to 8 warps)
 *   BK           K per shared-memory tile
 *   STAGES       shared-memory tiles in flight (cp.async ring)
 *   MINB         blocks per SM to budget registers and shared memory for
 *   GROUP_M      block rows that walk N together, for L2 reuse of B
 *   FRAGDB       1: double-buffer the fragments in registers, reading the
 *                next tile's first ones while the last FMAs of this one run
 *
 * K advances BK at a time through a ring of STAGES shared-memory buffers
 * filled by cp.async, so global loads run STAGES - 1 tiles ahead of the
 * FMAs and no registers stage them.  A is stored transposed, As[k][m], so
 * that both operands are read as float4; its copies are 4 bytes each and a
 * warp copies 8 k by 4 m, which with a row stride of 4 mod 32 words lands in
 * 32 different banks and reads four whole 32-byte sectors.  B is copied 16
 * bytes at a time.  Knobs that would not fit are lowered rather than
 * rejected: MINB where its register cap would not hold the sums, then
 * STAGES and BK where MINB blocks' shared memory would not fit an SM (KT, NS
 * and MINB_EFF below are what the kernel uses).
 *
 * Two instances: the fast one when every tile is whole and B and C are
 * 16-byte aligned (every bench size); the checked one for anything else,
 * which copies element by element with zero fill and stores element by
 * element.  K == 0 leaves the sums at zero, so C is zeros, as the reference
 * gives.  Sums are fp32 in k order within a thread.
 */
#include <stdint.h>

#define THREAD_TILE 808 // ktune: 404 408 804 808 816 1608
#define LANES_N 8       // ktune: 4 8 16
#define WARPS 42        // ktune: 12 21 22 14 41 24 42
#define BK 32           // ktune: 8 16 32
#define STAGES 3        // ktune: 2 3 4 5
#define MINB 1          // ktune: 1 2 3 4
#define GROUP_M 8       // ktune: 1 4 8 16
#define FRAGDB 0        // ktune: 0 1

#define TM (THREAD_TILE / 100)
#define TN (THREAD_TILE % 100)
#define LANES_M (32 / LANES_N)
#define WARPS_M (WARPS / 10)
#define WARPS_N (WARPS % 10)
#define WM (LANES_M * TM)
#define WN (LANES_N * TN)
#define BM (WARPS_M * WM)
#define BN (WARPS_N * WN)
#define NT (32 * WARPS_M * WARPS_N)
/* As row stride: 4 mod 32 words keeps the transposing copies off each
 * other's banks and the float4 reads aligned. */
#define SA ((BM + 31) / 32 * 32 + 4)

static_assert(TM % 4 == 0 && TN % 4 == 0 && TM * TN <= 128, "THREAD_TILE is TM*100+TN, multiples of 4");
static_assert(LANES_M * LANES_N == 32 && WARPS_M >= 1 && WARPS_N >= 1 && NT <= 1024, "bad warp layout");
static_assert(BK % 8 == 0 && STAGES >= 2, "BK must be a multiple of 8, STAGES at least 2");

/* Registers the kernel needs: the sums, one set of fragments and about 40
 * for addresses and loop state (ptxas for sm_90a).  A MINB whose register
 * cap is below that would only spill, so it falls back to one that fits. */
#define REG_EST (TM * TN + TM + TN + 40)
static __host__ __device__ constexpr int fit_minb(int b) { return b > 1 && (b * NT > 2048 || REG_EST > 65536 / (b * NT) / 8 * 8) ? fit_minb(b - 1) : b; }
#define MINB_EFF fit_minb(MINB)

/* A block may have 227 KB; MINB_EFF blocks share an SM's 228 KB, less 1 KB
 * each.  Stages go first, then BK halves, until the budget holds (or BK = 8
 * with two stages, which always fits one block). */
#define SMEM_MAX (227 * 1024)
#define SMEM_BUDGET (MINB_EFF == 1 ? SMEM_MAX : 228 * 1024 / MINB_EFF - 1024)
static __host__ __device__ constexpr int stage_bytes(int kt) { return 4 * kt * (SA + BN); }
static __host__ __device__ constexpr int fit_bk(int kt) { return kt > 8 && 2 * stage_bytes(kt) > SMEM_BUDGET ? fit_bk(kt / 2) : kt; }
static __host__ __device__ constexpr int fit_stages(int kt, int ns) { return ns > 2 && ns * stage_bytes(kt) > SMEM_BUDGET ? fit_stages(kt, ns - 1) : ns; }
#define KT fit_bk(BK)
#define NS fit_stages(KT, STAGES)
#define STAGE_FLOATS (KT * (SA + BN))
#define SMEM_BYTES (NS * stage_bytes(KT))
static_assert(SMEM_BYTES <= SMEM_MAX, "tiles exceed shared memory");

static __device__ __forceinline__ unsigned smem_addr(const float* p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void cp_async4(float* dst, const float* src)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}

/* n == 0 copies nothing and fills the 4 bytes with zeros. */
static __device__ __forceinline__ void cp_async4_zfill(float* dst, const float* src, int n)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(n) : "memory");
}

static __device__ __forceinline__ void cp_async16(float* dst, const float* src)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}

static __device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int PENDING>
static __device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

/* Copy one K tile into the stage at as (B's part follows A's).  For A, warp
 * w copies 8 k by 4 m (lane l: row w * 4 + l / 8, column l % 8), then the
 * next 8 k, then 4 * WARPS rows down; pa points at the thread's first
 * element of the tile.  For B, thread t takes float4 t of the tile's rows in
 * order, then NT further on; pb points at its first element.  Only where a
 * tile has fewer elements than the block has threads does a thread skip
 * copies. */
#define AROWS (4 * NT / 32)
static __device__ __forceinline__ void load_tile(float* as, const float* pa, const float* pb, int N, int K)
{
	const int lane = threadIdx.x % 32, am = threadIdx.x / 32 * 4 + lane / 8, ak = lane % 8;
	const int bk = threadIdx.x / (BN / 4), bn = threadIdx.x % (BN / 4) * 4;
	float* ad = as + ak * SA + am;
	float* bd = as + KT * SA + bk * BN + bn;
#pragma unroll
	for (int g = 0; g < (BM + AROWS - 1) / AROWS; g++) {
		if (BM % AROWS != 0 && am >= BM)
			break;
#pragma unroll
		for (int j = 0; j < KT / 8; j++)
			cp_async4(ad + j * 8 * SA + g * AROWS, pa + (size_t)g * AROWS * K + j * 8);
	}
	constexpr int NB = KT * BN / 4;
#pragma unroll
	for (int i = 0; i < (NB + NT - 1) / NT; i++) {
		/* i * NT is a whole number of rows, or the thread is in row 0. */
		const int k = i * NT / (BN / 4), n = i * NT % (BN / 4) * 4;
		if (NB % NT != 0 && bk + k >= KT)
			break;
		cp_async16(bd + k * BN + n, pb + (size_t)k * N + n);
	}
}

/* The same tile for the checked instance, element by element with zero fill
 * outside the matrices, in loops left rolled: unrolled, the addresses of
 * every copy stay live across the K loop and small blocks spill. */
static __device__ __forceinline__ void load_tile_checked(float* as, const float* A, const float* B, int M, int N,
							 int K, int row0, int col0, int k0)
{
	float* bs = as + KT * SA;
#pragma unroll 1
	for (int e = threadIdx.x; e < BM * KT; e += NT) {
		const int c = e / 32, l = e % 32;
		const int k = c % (KT / 8) * 8 + l % 8, m = c / (KT / 8) * 4 + l / 8;
		const bool in = row0 + m < M && k0 + k < K;
		cp_async4_zfill(as + k * SA + m, in ? A + (size_t)(row0 + m) * K + k0 + k : A, in ? 4 : 0);
	}
#pragma unroll 1
	for (int e = threadIdx.x; e < KT * BN; e += NT) {
		const int k = e / BN, n = e % BN;
		const bool in = k0 + k < K && col0 + n < N;
		cp_async4_zfill(bs + k * BN + n, in ? B + (size_t)(k0 + k) * N + col0 + n : B, in ? 4 : 0);
	}
}

template <bool CHECKED>
static __device__ __forceinline__ void load(float* as, const float* pa, const float* pb, const float* A,
					    const float* B, int M, int N, int K, int row0, int col0, int k0)
{
	if (CHECKED)
		load_tile_checked(as, A, B, M, N, K, row0, col0, k0);
	else
		load_tile(as, pa, pb, N, K);
}

/* The lane's fragments for step k of the stage whose A and B parts (moved
 * to the lane's first row and column) are as and bs. */
static __device__ __forceinline__ void load_frags(float* a, float* b, const float* as, const float* bs, int k)
{
#pragma unroll
	for (int p = 0; p < TM / 4; p++) {
		const float4 v = *(const float4*)(as + k * SA + p * LANES_M * 4);
		a[4 * p] = v.x, a[4 * p + 1] = v.y, a[4 * p + 2] = v.z, a[4 * p + 3] = v.w;
	}
#pragma unroll
	for (int p = 0; p < TN / 4; p++) {
		const float4 v = *(const float4*)(bs + k * BN + p * LANES_N * 4);
		b[4 * p] = v.x, b[4 * p + 1] = v.y, b[4 * p + 2] = v.z, b[4 * p + 3] = v.w;
	}
}

static __device__ __forceinline__ void fma_frags(float (*acc)[TN], const float* a, const float* b)
{
#pragma unroll
	for (int i = 0; i < TM; i++)
#pragma unroll
		for (int j = 0; j < TN; j++)
			acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

template <bool CHECKED>
__global__ void __launch_bounds__(NT, MINB_EFF)
	sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
	extern __shared__ float4 smem4[];
	float* smem = (float*)smem4;

	/* Blocks run GROUP_M block rows at a time across all of N, so the B
	 * columns in flight are shared by GROUP_M rows while they sit in L2. */
	const int gm = (M + BM - 1) / BM, gn = (N + BN - 1) / BN;
	const int width = GROUP_M * gn, pid = blockIdx.x;
	const int first = pid / width * GROUP_M, gsize = min(gm - first, GROUP_M);
	const int row0 = (first + pid % width % gsize) * BM, col0 = pid % width / gsize * BN;

	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int wm = warp / WARPS_N, wn = warp % WARPS_N;
	const int lm = lane / LANES_N, ln = lane % LANES_N;
	/* The lane's first row and column inside the block; piece p of the
	 * micro-tile is p * LANES_M * 4 rows (p * LANES_N * 4 columns) on. */
	const int r0 = wm * WM + lm * 4, c0 = wn * WN + ln * 4;

	float acc[TM][TN];
#pragma unroll
	for (int i = 0; i < TM; i++)
#pragma unroll
		for (int j = 0; j < TN; j++)
			acc[i][j] = 0.f;

	/* load_tile's first elements for this thread; unused when checked. */
	const float* pa = A + (size_t)(row0 + warp * 4 + lane / 8) * K + lane % 8;
	const float* pb = B + (size_t)(threadIdx.x / (BN / 4)) * N + col0 + threadIdx.x % (BN / 4) * 4;
	const size_t bstep = (size_t)KT * N;
	const int ntiles = (K + KT - 1) / KT;
	int k0 = 0;
#pragma unroll
	for (int s = 0; s < NS - 1; s++) {
		if (s < ntiles)
			load<CHECKED>(smem + s * STAGE_FLOATS, pa, pb, A, B, M, N, K, row0, col0, k0);
		cp_async_commit();
		pa += KT, pb += bstep, k0 += KT;
	}
#if FRAGDB
	/* Barrier kt + 1 sits before the last k step of tile kt, once every
	 * fragment of tile kt is in registers: the first fragments of tile kt + 1
	 * are then read while the last FMAs of tile kt run. */
	cp_async_wait<NS - 2>();
	__syncthreads();
	if (NS - 1 < ntiles)
		load<CHECKED>(smem + (NS - 1) * STAGE_FLOATS, pa, pb, A, B, M, N, K, row0, col0, k0);
	cp_async_commit();
	pa += KT, pb += bstep, k0 += KT;
	int rs = 0, ws = 0;
	float a[2][TM], b[2][TN];
	load_frags(a[0], b[0], smem + r0, smem + KT * SA + c0, 0);
	for (int kt = 0; kt < ntiles; kt++) {
#pragma unroll
		for (int k = 0; k < KT; k++) {
			if (k == KT - 1) {
				rs = rs + 1 == NS ? 0 : rs + 1;
				cp_async_wait<NS - 2>();
				__syncthreads();
				if (kt + NS < ntiles)
					load<CHECKED>(smem + ws * STAGE_FLOATS, pa, pb, A, B, M, N, K, row0, col0, k0);
				cp_async_commit();
				pa += KT, pb += bstep, k0 += KT;
				ws = ws + 1 == NS ? 0 : ws + 1;
			}
			const float* st = smem + rs * STAGE_FLOATS;
			load_frags(a[(k + 1) % 2], b[(k + 1) % 2], st + r0, st + KT * SA + c0, (k + 1) % KT);
			fma_frags(acc, a[k % 2], b[k % 2]);
		}
	}
#else
	int rs = 0, ws = NS - 1;
	for (int kt = 0; kt < ntiles; kt++) {
		/* Tile kt has landed for this thread; the barrier makes it whole
		 * and frees stage ws, which every thread finished reading as the
		 * previous iteration's rs. */
		cp_async_wait<NS - 2>();
		__syncthreads();
		if (kt + NS - 1 < ntiles)
			load<CHECKED>(smem + ws * STAGE_FLOATS, pa, pb, A, B, M, N, K, row0, col0, k0);
		cp_async_commit();
		pa += KT, pb += bstep, k0 += KT;

		const float* st = smem + rs * STAGE_FLOATS;
#pragma unroll
		for (int k = 0; k < KT; k++) {
			float a[TM], b[TN];
			load_frags(a, b, st + r0, st + KT * SA + c0, k);
			fma_frags(acc, a, b);
		}
		rs = rs + 1 == NS ? 0 : rs + 1;
		ws = ws + 1 == NS ? 0 : ws + 1;
	}
#endif
	cp_async_wait<0>();

#pragma unroll
	for (int i = 0; i < TM; i++) {
		const int r = row0 + r0 + i / 4 * LANES_M * 4 + i % 4;
#pragma unroll
		for (int p = 0; p < TN / 4; p++) {
			const int c = col0 + c0 + p * LANES_N * 4;
			float* dst = C + (size_t)r * N + c;
			if (!CHECKED) {
				*(float4*)dst = make_float4(acc[i][4 * p], acc[i][4 * p + 1], acc[i][4 * p + 2], acc[i][4 * p + 3]);
			} else if (r < M) {
#pragma unroll
				for (int q = 0; q < 4; q++)
					if (c + q < N)
						dst[q] = acc[i][4 * p + q];
			}
		}
	}
}

template <bool CHECKED>
static void launch(const float* A, const float* B, float* C, int M, int N, int K)
{
	/* Above 48 KB a block must opt in; asked every call (it costs far less
	 * than the kernel) so a device reset between calls cannot undo it. */
	if (SMEM_BYTES > 48 * 1024)
		cudaFuncSetAttribute(sgemm<CHECKED>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
	const int blocks = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
	sgemm<CHECKED><<<blocks, NT, SMEM_BYTES>>>(A, B, C, M, N, K);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	const bool fast = K > 0 && M % BM == 0 && N % BN == 0 && K % KT == 0 &&
			  ((uintptr_t)B | (uintptr_t)C) % 16 == 0;
	if (fast)
		launch<false>(A, B, C, M, N, K);
	else
		launch<true>(A, B, C, M, N, K);
}
