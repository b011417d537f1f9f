// bench/gpu-gen.cu — what making a timed batch's inputs costs on the GPU.
// ktime regenerates every call's inputs and poisons every call's outputs
// before each batch (softmax 4096x4096: 256 calls, 16 + 16 GiB); the judge's
// log showed 22 ms of that per batch against 18 ms of the batch itself.
// This times, over 256 arrays of 64 MiB (float): cudaMemsetAsync (the
// poison), the judge's cuda_fill (lib/cuda/judge_dev.cu, uniform and normal),
// a plain float4 store of a constant (the write bandwidth's ceiling), and two
// ways to a faster fill: gen_value four elements a thread (same values; what
// cuda_fill now does for 4-byte types), and a uniform in float arithmetic
// (other values).  Then checks that cuda_fill's values are the scalar
// kernel's, bit for bit.
//   build: nvcc -O2 -arch=sm_90 -Ilib -o gpu-gen bench/gpu-gen.cu
//   usage: gpu-gen   (prints: what, ms for the 256 arrays, TB/s written)
#include <algorithm>
#include <cstdio>
#include <vector>

#include "../lib/cuda/judge_dev.cu"

#include "ck.cuh"

__global__ void store4(float4 *p, size_t n4)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
		p[i] = make_float4(1.f, 2.f, 3.f, 4.f);
}

// The same values as cuda_fill (gen_value), four consecutive elements a
// thread, one float4 store.
__global__ void fill4(float4 *p, size_t n4, struct gen_spec s)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
		p[i] = make_float4((float)gen_value(&s, 4 * i), (float)gen_value(&s, 4 * i + 1),
				   (float)gen_value(&s, 4 * i + 2), (float)gen_value(&s, 4 * i + 3));
}

// Uniform in float arithmetic from one 64-bit hash per two elements (not
// gen_value's values: how far the arithmetic is from the ceiling).
__global__ void fillf(float4 *p, size_t n4, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
		uint64_t h = gen_mix(seed + (2 * i) * 0xD1B54A32D192ED03ULL), g = gen_mix(seed + (2 * i + 1) * 0xD1B54A32D192ED03ULL);
		const float k = 1.0f / 16777216.0f;
		p[i] = make_float4((float)(h >> 40) * k * 2 - 1, (float)((h >> 8) & 0xFFFFFF) * k * 2 - 1,
				   (float)(g >> 40) * k * 2 - 1, (float)((g >> 8) & 0xFFFFFF) * k * 2 - 1);
	}
}

int main()
{
	const int N = 256;
	const size_t bytes = 64u << 20, n = bytes / sizeof(float);
	char *arena;
	CK(cudaMalloc(&arena, (size_t)N * bytes));
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	char e[256];
	for (int what = 0; what < 6; what++) {
		std::vector<float> ms;
		for (int r = 0; r < 6; r++) {
			CK(cudaEventRecord(a));
			for (int s = 0; s < N; s++) {
				char *p = arena + (size_t)s * bytes;
				struct gen_spec sp = {what == 2 ? GEN_NORMAL : GEN_UNIFORM, what == 2 ? 0.0 : -1.0, 1.0,
						      (uint64_t)(r * 1000 + s)};
				if (what == 0)
					cudaMemsetAsync(p, 0xff, bytes);
				else if (what == 3)
					store4<<<132 * 16, 256>>>((float4 *)p, n / 4);
				else if (what == 4)
					fill4<<<132 * 16, 256>>>((float4 *)p, n / 4, sp);
				else if (what == 5)
					fillf<<<132 * 16, 256>>>((float4 *)p, n / 4, sp.seed);
				else if (cuda_fill(p, DT_F32, (long long)n, &sp, e) < 0) {
					fprintf(stderr, "%s\n", e);
					return 1;
				}
			}
			CK(cudaEventRecord(b));
			CK(cudaEventSynchronize(b));
			float t;
			CK(cudaEventElapsedTime(&t, a, b));
			if (r)
				ms.push_back(t);
		}
		std::sort(ms.begin(), ms.end());
		static const char *name[] = {"memset (poison)", "cuda_fill uniform", "cuda_fill normal", "float4 store",
						    "fill4 uniform", "fillf uniform"};
		printf("%-20s %7.2f ms  %5.2f TB/s\n", name[what], ms[ms.size() / 2],
		       (double)N * bytes / (ms[ms.size() / 2] * 1e-3) / 1e12);
	}
	// cuda_fill's fast path must give fill_kernel's values, bit for bit.
	std::vector<unsigned> h1(n), h2(n);
	for (int dt : {DT_F32, DT_I32, DT_U32}) {
		struct gen_spec sp = {dt == DT_F32 ? GEN_NORMAL : GEN_INT, dt == DT_F32 ? 0.0 : -1000.0, 1000.0, 12345};
		fill_kernel<<<65536, 256>>>(arena, dt, (long long)n, sp);
		if (cuda_fill(arena + bytes, dt, (long long)n, &sp, e) < 0)
			return 1;
		CK(cudaMemcpy(h1.data(), arena, bytes, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(h2.data(), arena + bytes, bytes, cudaMemcpyDeviceToHost));
		printf("cuda_fill (dt %d) %s the scalar kernel's values\n", dt, h1 == h2 ? "equals" : "DIFFERS FROM");
	}
	return 0;
}
