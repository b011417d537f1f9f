// gemm_f16 seed: tensor cores through WMMA (16x16x16, fp32 accumulate).
// A block computes a BM x BN tile of C with WARPS_M x WARPS_N warps; each
// k-step stages a BM x BK slice of A and a BK x BN slice of B in shared
// memory (rows padded by 8 halves against bank conflicts; the buffer is reused
// as the epilogue scratch), with 16-byte
// loads when the tile is whole and aligned and bounds-checked scalar loads
// (zero fill) at the edges.  Each warp writes its fragments through a small
// shared scratch so that C's edges are bounds-checked too.
#include <mma.h>
using namespace nvcuda;

typedef half T;
#define TO_T(x) __float2half(x)

#define BM 128     // ktune: 64 128 256
#define BN 128     // ktune: 64 128 256
#define BK 32      // ktune: 16 32
#define WARPS_M 2  // ktune: 1 2 4
#define WARPS_N 4  // ktune: 1 2 4
#define PAD 8

#define WM (BM / WARPS_M)
#define WN (BN / WARPS_N)
#define FM (WM / 16)
#define FN (WN / 16)
#define NT (WARPS_M * WARPS_N * 32)

#define AB_BYTES (2 * (BM * (BK + PAD) + BK * (BN + PAD)))
#define SCRATCH_BYTES (4 * WARPS_M * WARPS_N * 256)
#define SMEM_BYTES (AB_BYTES > SCRATCH_BYTES ? AB_BYTES : SCRATCH_BYTES)

static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile must be a multiple of 16");

__device__ __forceinline__ void load_tile(T* dst, int ld_dst, const T* src, long ld_src, long r0, long c0, int rows,
					  int cols, long R, long C)
{
	bool whole = r0 + rows <= R && c0 + cols <= C && (ld_src % 8) == 0 && (c0 % 8) == 0;
	if (whole) {
		for (int i = threadIdx.x; i < rows * cols / 8; i += NT) {
			int r = i / (cols / 8), c = (i % (cols / 8)) * 8;
			*(uint4*)(dst + r * ld_dst + c) = *(const uint4*)(src + (r0 + r) * ld_src + c0 + c);
		}
	} else {
		for (int i = threadIdx.x; i < rows * cols; i += NT) {
			int r = i / cols, c = i % cols;
			dst[r * ld_dst + c] = r0 + r < R && c0 + c < C ? src[(r0 + r) * ld_src + c0 + c] : TO_T(0.0f);
		}
	}
}

__global__ void __launch_bounds__(NT) gemm_wmma(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
						int M, int N, int K)
{
	// The A/B slices and, after the k loop, the epilogue scratch share one buffer.
	__shared__ __align__(128) unsigned char smem[SMEM_BYTES];
	T* As = (T*)smem;
	T* Bs = As + BM * (BK + PAD);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	int wm = warp / WARPS_N, wn = warp % WARPS_N;
	long m0 = (long)blockIdx.y * BM, n0 = (long)blockIdx.x * BN;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
	for (int i = 0; i < FM; i++)
		for (int j = 0; j < FN; j++)
			wmma::fill_fragment(acc[i][j], 0.0f);
	for (long k0 = 0; k0 < K; k0 += BK) {
		load_tile(As, BK + PAD, A, K, m0, k0, BM, BK, M, K);
		load_tile(Bs, BN + PAD, B, N, k0, n0, BK, BN, K, N);
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[FM];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[FN];
			for (int i = 0; i < FM; i++)
				wmma::load_matrix_sync(a[i], As + (wm * WM + i * 16) * (BK + PAD) + kk, BK + PAD);
			for (int j = 0; j < FN; j++)
				wmma::load_matrix_sync(b[j], Bs + kk * (BN + PAD) + wn * WN + j * 16, BN + PAD);
			for (int i = 0; i < FM; i++)
				for (int j = 0; j < FN; j++)
					wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
		}
		__syncthreads();
	}
	float* s = (float*)smem + warp * 256;
	for (int i = 0; i < FM; i++)
		for (int j = 0; j < FN; j++) {
			wmma::store_matrix_sync(s, acc[i][j], 16, wmma::mem_row_major);
			__syncwarp();
			long r0 = m0 + wm * WM + i * 16, c0 = n0 + wn * WN + j * 16;
			for (int e = lane; e < 256; e += 32) {
				long r = r0 + e / 16, c = c0 + e % 16;
				if (r < M && c < N)
					C[r * N + c] = TO_T(s[e]);
			}
			__syncwarp();
		}
}

extern "C" void solve(const T* A, const T* B, T* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
	gemm_wmma<<<grid, NT>>>(A, B, C, M, N, K);
}
