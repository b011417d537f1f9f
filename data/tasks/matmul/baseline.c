/* matmul baseline: the straightforward loop a user writes first (i-j-k,
 * single thread, float accumulation). */
void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float s = 0;
			for (int k = 0; k < K; k++)
				s += A[(long)i * K + k] * B[(long)k * N + j];
			C[(long)i * N + j] = s;
		}
}
