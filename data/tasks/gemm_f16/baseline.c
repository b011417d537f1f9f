/* gemm_f16 baseline: the straightforward loop with a float accumulator,
 * single thread. */
void solve(const _Float16* A, const _Float16* B, _Float16* C, int M, int N, int K)
{
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++) {
			float s = 0;
			for (long k = 0; k < K; k++)
				s += (float)A[i * K + k] * (float)B[k * N + j];
			C[i * N + j] = (_Float16)s;
		}
}
