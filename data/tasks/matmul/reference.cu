/* matmul device reference: the same arithmetic as reference.c (products
 * summed in double, in k order), one thread per element of C, tiles staged
 * through shared memory.  Used for benchmark sizes only, where the host
 * reference would take minutes; tests/gpu checks it against reference.c. */
#define T 16

__global__ void ref_mm(const float* A, const float* B, float* C, int M, int N, int K)
{
	__shared__ float As[T][T], Bs[T][T + 1];
	int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
	double s = 0;
	for (int k0 = 0; k0 < K; k0 += T) {
		As[threadIdx.y][threadIdx.x] = r < M && k0 + threadIdx.x < K ? A[(long)r * K + k0 + threadIdx.x] : 0.f;
		Bs[threadIdx.y][threadIdx.x] = c < N && k0 + threadIdx.y < K ? B[(long)(k0 + threadIdx.y) * N + c] : 0.f;
		__syncthreads();
		for (int k = 0; k < T; k++)
			s += (double)As[threadIdx.y][k] * (double)Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (r < M && c < N)
		C[(long)r * N + c] = (float)s;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	ref_mm<<<dim3((N + T - 1) / T, (M + T - 1) / T), dim3(T, T)>>>(A, B, C, M, N, K);
}
