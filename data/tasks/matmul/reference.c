/* matmul reference: double accumulation, the obvious loop. */
void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)A[(long)i * K + k] * (double)B[(long)k * N + j];
			C[(long)i * N + j] = (float)s;
		}
}
