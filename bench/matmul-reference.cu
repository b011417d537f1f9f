/* bench/matmul-reference.cu — the driver of bench/matmul-reference.sh, built
 * with one matmul device reference (its solve).  For each size M N K given
 * as arguments: A and B uniform in [-1, 1) (a hash of the index), the
 * reference's solve timed with events (2 calls to warm, then the median of
 * 10), and its C compared with a one-thread-an-element sum of the products
 * in double in k order, rounded to float once — reference.c's arithmetic.
 * Prints per size: the median ms, TFLOP/s, the elements whose float
 * differs from that sum (and the largest difference).  Exit 1 if any
 * element differs by more than the task's tolerance (atol 1e-3, rtol 1e-4),
 * or a CUDA call failed (CK, bench/ck.cuh: the call is named on stderr). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ck.cuh"

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K);

__global__ void fill(float* x, long n, unsigned salt)
{
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ULL ^ salt;
		h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ULL, h ^= h >> 29;
		x[i] = (float)((h >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
	}
}

__global__ void korder(const float* A, const float* B, float* C, int M, int N, int K)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	if (i >= (long)M * N)
		return;
	int r = (int)(i / N), c = (int)(i % N);
	double s = 0;
	for (int k = 0; k < K; k++)
		s = fma((double)A[(long)r * K + k], (double)B[(long)k * N + c], s);
	C[i] = (float)s;
}

static int cmp(const void* a, const void* b)
{
	float x = *(const float*)a, y = *(const float*)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char** argv)
{
	int bad = 0;
	for (int a = 1; a + 2 < argc; a += 3) {
		int M = atoi(argv[a]), N = atoi(argv[a + 1]), K = atoi(argv[a + 2]);
		long mk = (long)M * K, kn = (long)K * N, mn = (long)M * N;
		float *A, *B, *C, *R;
		CK(cudaMalloc(&A, mk * 4 + 4));
		CK(cudaMalloc(&B, kn * 4 + 4));
		CK(cudaMalloc(&C, mn * 4 + 4));
		CK(cudaMalloc(&R, mn * 4 + 4));
		fill<<<1024, 256>>>(A, mk, 1u);
		fill<<<1024, 256>>>(B, kn, 2u);
		cudaEvent_t e0, e1;
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		float ms[10];
		for (int i = 0; i < 12; i++) {
			CK(cudaEventRecord(e0));
			solve(A, B, C, M, N, K);
			CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1));
			if (i >= 2)
				CK(cudaEventElapsedTime(&ms[i - 2], e0, e1));
		}
		CK(cudaGetLastError());
		qsort(ms, 10, sizeof ms[0], cmp);
		float med = (ms[4] + ms[5]) / 2, kms;
		CK(cudaEventRecord(e0));
		korder<<<(unsigned)((mn + 255) / 256), 256>>>(A, B, R, M, N, K);
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&kms, e0, e1));
		CK(cudaGetLastError());
		float *hc = (float*)malloc(mn * 4 + 4), *hr = (float*)malloc(mn * 4 + 4);
		CK(cudaMemcpy(hc, C, mn * 4, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hr, R, mn * 4, cudaMemcpyDeviceToHost));
		long differ = 0, outside = 0;
		double maxd = 0;
		for (long i = 0; i < mn; i++) {
			double d = fabs((double)hc[i] - (double)hr[i]);
			differ += hc[i] != hr[i];
			outside += !(d <= 1e-3 + 1e-4 * fabs((double)hr[i]));
			maxd = d > maxd ? d : maxd;
		}
		printf("%dx%dx%d: %.3f ms, %.1f TFLOP/s (k-order sum %.3f ms); %ld of %ld elements differ from the k-order sum "
		       "(max %.3g), %ld outside the tolerance\n",
		       M, N, K, med, 2.0 * M * N * K / (med * 1e-3) / 1e12, kms, differ, mn, maxd, outside);
		bad |= outside > 0;
		free(hc);
		free(hr);
		CK(cudaFree(A));
		CK(cudaFree(B));
		CK(cudaFree(C));
		CK(cudaFree(R));
	}
	return bad;
}
