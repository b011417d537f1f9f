/* gemm_f16 reference: products of the fp16 inputs summed in double, in k
 * order, rounded to fp16 once. */
void solve(const _Float16* A, const _Float16* B, _Float16* C, int M, int N, int K)
{
	#pragma omp parallel for schedule(static)
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++) {
			double s = 0;
			for (long k = 0; k < K; k++)
				s += (double)A[i * K + k] * (double)B[k * N + j];
			C[i * N + j] = (_Float16)s;
		}
}
