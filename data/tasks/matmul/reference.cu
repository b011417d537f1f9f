/* matmul device reference: the arithmetic of reference.c in double — each
 * product of two floats is exact in double, the sum over k is kept in
 * double and rounded to float once — on the FP64 tensor cores
 * (mma.sync m8n8k4 f64, sm_80 and later).  The hardware adds four products
 * a step in an order of its own, so a sum may differ from reference.c's k
 * order in its last bits of double: far below float's rounding, which is
 * all the comparison sees (bench/matmul-reference.sh counts, at the
 * benchmark sizes, the elements whose float differs from a one-thread-an-
 * element k-order double sum).  Used for benchmark sizes only, where the
 * host reference would take minutes; tests/gpu checks it against
 * reference.c.  The judge runs it once for every timed batch of a candidate
 * it checks: with FMAs on the FP64 units (4x4 elements a thread) a check
 * at 4096^3 took 17 ms on an H100, 0.27 s of a new matmul candidate's 1.0 s
 * in ktime (docs/gpu.md).
 *
 * A block computes 64x64 elements of C with 4 warps, each 32x32: 4x4
 * fragments of 8x8.  Tiles of A (64 rows x 32 k) and B (32 k x 64
 * columns) are staged through shared memory already converted to double,
 * each row padded by 4 doubles so that the 16 lanes of a half-warp read
 * 16 distinct bank pairs when loading fragments. */
#define BM 64 /* rows and columns of C a block */
#define BK 32 /* k a tile */
#define NT 128 /* threads a block: 4 warps, 2 x 2, each 32 x 32 of C */

__device__ __forceinline__ void dmma(double (&d)[2], double a, double b)
{
	asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
		     : "+d"(d[0]), "+d"(d[1])
		     : "d"(a), "d"(b));
}

__global__ void __launch_bounds__(NT) ref_mm(const float* A, const float* B, float* C, int M, int N, int K)
{
	__shared__ double As[BM][BK + 4]; /* m-major: a fragment's k runs along a row */
	__shared__ double Bs[BK][BM + 4]; /* k-major: a fragment's n runs along a row */
	int t = threadIdx.x, lane = t & 31, warp = t >> 5;
	int g = lane >> 2, q = lane & 3; /* fragment row (A, C) or column (B); k (A, B) or column pair (C) */
	int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
	int r0 = blockIdx.y * BM, c0 = blockIdx.x * BM;
	double acc[4][4][2] = {};
	/* The next tile is loaded into registers while this one is used. */
	float pa[BM * BK / NT], pb[BM * BK / NT];
	for (int k0 = 0; k0 < K; k0 += BK) {
		for (int s = 0; s < BM * BK / NT; s++) {
			int e = t + s * NT;
			int ar = e / BK, ak = e % BK; /* A: 64 rows x 32 k, a warp reads one row's 32 k */
			int bk = e / BM, bc = e % BM; /* B: 32 k x 64 columns */
			/* The first tile here rather than in a fetch() before the
			 * loop shared with the prefetch below: that form was 18 %
			 * slower on an H100 (7.08 against 6.01 ms at 4096^3; 255
			 * registers against 252; bench/matmul-reference.sh). */
			if (k0 == 0) {
				pa[s] = r0 + ar < M && ak < K ? A[(long)(r0 + ar) * K + ak] : 0.f;
				pb[s] = c0 + bc < N && bk < K ? B[(long)bk * N + c0 + bc] : 0.f;
			}
			As[ar][ak] = pa[s], Bs[bk][bc] = pb[s];
		}
		__syncthreads();
		if (k0 + BK < K)
			for (int s = 0; s < BM * BK / NT; s++) {
				int e = t + s * NT, k1 = k0 + BK;
				int ar = e / BK, ak = e % BK, bk = e / BM, bc = e % BM;
				pa[s] = r0 + ar < M && k1 + ak < K ? A[(long)(r0 + ar) * K + k1 + ak] : 0.f;
				pb[s] = c0 + bc < N && k1 + bk < K ? B[(long)(k1 + bk) * N + c0 + bc] : 0.f;
			}
		for (int k = 0; k < BK; k += 4) {
			double a[4], b[4];
			for (int i = 0; i < 4; i++)
				a[i] = As[wm + i * 8 + g][k + q], b[i] = Bs[k + q][wn + i * 8 + g];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					dmma(acc[i][j], a[i], b[j]);
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			int r = r0 + wm + i * 8 + g, c = c0 + wn + j * 8 + 2 * q;
			if (r < M && c < N)
				C[(long)r * N + c] = (float)acc[i][j][0];
			if (r < M && c + 1 < N)
				C[(long)r * N + c + 1] = (float)acc[i][j][1];
		}
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	ref_mm<<<dim3((N + BM - 1) / BM, (M + BM - 1) / BM), NT>>>(A, B, C, M, N, K);
}
