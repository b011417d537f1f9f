// gemm_bf16 device reference: the same arithmetic as reference.c (products
// summed in double, in k order, one rounding to bf16), one thread per
// element, tiles staged through shared memory.  Used for the cuda benchmark
// sizes, where the host reference would take minutes.
#define T 16

__global__ void ref_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K)
{
	__shared__ double As[T][T], Bs[T][T + 1];
	int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
	double s = 0;
	for (int k0 = 0; k0 < K; k0 += T) {
		As[threadIdx.y][threadIdx.x] = r < M && k0 + threadIdx.x < K ? (double)__bfloat162float(A[(long)r * K + k0 + threadIdx.x]) : 0.0;
		Bs[threadIdx.y][threadIdx.x] = c < N && k0 + threadIdx.y < K ? (double)__bfloat162float(B[(long)(k0 + threadIdx.y) * N + c]) : 0.0;
		__syncthreads();
		for (int k = 0; k < T; k++)
			s += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (r < M && c < N)
		C[(long)r * N + c] = __double2bfloat16(s);
}

extern "C" void solve(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	ref_gemm<<<dim3((N + T - 1) / T, (M + T - 1) / T), dim3(T, T)>>>(A, B, C, M, N, K);
}
