/* matmul seed (cuda): shared-memory tiling, each thread computes a TM x TN
 * micro-tile of a BM x BN block tile; K advances BK at a time.  Bounds are
 * checked on every load and store, so any M, N, K works.  The ktune
 * comments list the values kgen's mutate may try. */
#define BM 64 // ktune: 32 64 128
#define BN 64 // ktune: 32 64 128
#define BK 8  // ktune: 8 16 32
#define TM 4  // ktune: 1 2 4 8
#define TN 4  // ktune: 1 2 4 8

#define NTHREADS ((BM / TM) * (BN / TN))
static_assert(NTHREADS >= 32 && NTHREADS <= 1024, "BM/TM * BN/TN must give 32..1024 threads");
static_assert((BM + 1 + BN) * BK * 4 <= 48 * 1024, "tiles exceed 48 KB of shared memory");

__global__ void __launch_bounds__(NTHREADS) sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K)
{
	__shared__ float As[BK][BM + 1];
	__shared__ float Bs[BK][BN];
	const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
	const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
	float acc[TM][TN];
#pragma unroll
	for (int i = 0; i < TM; i++)
#pragma unroll
		for (int j = 0; j < TN; j++)
			acc[i][j] = 0.f;
	for (int k0 = 0; k0 < K; k0 += BK) {
		for (int i = threadIdx.x; i < BM * BK; i += NTHREADS) {
			int r = i / BK, c = i % BK, gr = row0 + r, gc = k0 + c;
			As[c][r] = gr < M && gc < K ? A[(long)gr * K + gc] : 0.f;
		}
		for (int i = threadIdx.x; i < BK * BN; i += NTHREADS) {
			int r = i / BN, c = i % BN, gr = k0 + r, gc = col0 + c;
			Bs[r][c] = gr < K && gc < N ? B[(long)gr * N + gc] : 0.f;
		}
		__syncthreads();
#pragma unroll
		for (int k = 0; k < BK; k++) {
			float a[TM], b[TN];
#pragma unroll
			for (int i = 0; i < TM; i++)
				a[i] = As[k][ty * TM + i];
#pragma unroll
			for (int j = 0; j < TN; j++)
				b[j] = Bs[k][tx + j * (BN / TN)];
#pragma unroll
			for (int i = 0; i < TM; i++)
#pragma unroll
				for (int j = 0; j < TN; j++)
					acc[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < TM; i++) {
		int r = row0 + ty * TM + i;
#pragma unroll
		for (int j = 0; j < TN; j++) {
			int c = col0 + tx + j * (BN / TN);
			if (r < M && c < N)
				C[(long)r * N + c] = acc[i][j];
		}
	}
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
	sgemm_tiled<<<grid, NTHREADS>>>(A, B, C, M, N, K);
}
