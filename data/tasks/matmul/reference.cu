/* matmul device reference: the same arithmetic as reference.c (products
 * summed in double, in k order: a product of two floats is exact in double,
 * so a fused multiply-add gives the same sum), tiles staged through shared
 * memory already converted to double, 4x4 elements of C a thread.  Used for
 * benchmark sizes only, where the host reference would take minutes;
 * tests/gpu checks it against reference.c.  The judge runs it once for every
 * timed batch of a candidate it checks: one thread an element took 25-38 ms
 * at 4096^3 on an H200, 0.55 s of a candidate's 2.5 s in ktime (docs/gpu.md). */
#define BM 64 /* rows and columns of C a block */
#define BK 16 /* k a tile */
#define TY 16 /* threads a block: TY x TY, each 4 x 4 elements, strided by TY */

__global__ void ref_mm(const float* A, const float* B, float* C, int M, int N, int K)
{
	__shared__ double As[BK][BM], Bs[BK][BM];
	int tx = threadIdx.x, ty = threadIdx.y, t = ty * TY + tx;
	int r0 = blockIdx.y * BM, c0 = blockIdx.x * BM;
	double s[4][4] = {};
	for (int k0 = 0; k0 < K; k0 += BK) {
		for (int q = 0; q < BM * BK / (TY * TY); q++) {
			int e = t + q * TY * TY;
			int ar = e / BK, ak = e % BK; /* A: 64 rows x 16 k */
			int bk = e / BM, bc = e % BM; /* B: 16 k x 64 columns */
			As[ak][ar] = r0 + ar < M && k0 + ak < K ? (double)A[(long)(r0 + ar) * K + k0 + ak] : 0.0;
			Bs[bk][bc] = c0 + bc < N && k0 + bk < K ? (double)B[(long)(k0 + bk) * N + c0 + bc] : 0.0;
		}
		__syncthreads();
		for (int k = 0; k < BK; k++) {
			double a[4], b[4];
			for (int i = 0; i < 4; i++)
				a[i] = As[k][ty + i * TY], b[i] = Bs[k][tx + i * TY];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					s[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			int r = r0 + ty + i * TY, c = c0 + tx + j * TY;
			if (r < M && c < N)
				C[(long)r * N + c] = (float)s[i][j];
		}
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	ref_mm<<<dim3((N + BM - 1) / BM, (M + BM - 1) / BM), dim3(TY, TY)>>>(A, B, C, M, N, K);
}
