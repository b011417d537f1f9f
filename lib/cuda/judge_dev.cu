/*
 * judge_dev: the judge's own GPU code, built with nvcc where the toolkit is
 * and linked into kharness-cuda only.
 *  - cuda_fill: the input generator (lib/gen_value.h on the device), so that
 *    every timed call of a batch gets inputs no kernel has seen before at
 *    the cost of one write of them (a 64 MB array in ~25 us on an H100),
 *    instead of a host fill and a copy;
 *  - cuda_compare / cuda_equal: the check of a timed call on the device,
 *    so that checking one call of every batch costs a pass over its arrays,
 *    not copies to the host (which took ~0.1 s at 4096x4096 and, between
 *    batches, left the GPU idle long enough to change the next batch's
 *    timing).  The host comparison (harness.c) is the one that explains a
 *    mismatch; these only count, with the same rules.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "../dtype.h"
#include "../gen_value.h"
}

__global__ static void fill_kernel(void *p, int dt, long long n, struct gen_spec s)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		double v = gen_value(&s, (uint64_t)i);
		switch (dt) {
		case DT_F16: ((__half *)p)[i] = __float2half_rn((float)v); break;
		case DT_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v); break;
		case DT_F32: ((float *)p)[i] = (float)v; break;
		case DT_F64: ((double *)p)[i] = v; break;
		case DT_I8: ((signed char *)p)[i] = (signed char)v; break;
		case DT_U8: ((unsigned char *)p)[i] = (unsigned char)v; break;
		case DT_I32: ((int *)p)[i] = (int)v; break;
		case DT_U32: ((unsigned *)p)[i] = (unsigned)v; break;
		default: ((long long *)p)[i] = (long long)v; break;
		}
	}
}

/* 4-byte types, four consecutive elements a thread and one 16-byte store:
 * the same values as fill_kernel at 1.8x its speed (bench/gpu-gen.cu on an
 * H100: 256 arrays of 64 MiB in 8.2 ms against 14.8; memset 5.9). */
__device__ static uint32_t bits32(double v, int dt)
{
	return dt == DT_F32 ? __float_as_uint((float)v) : dt == DT_I32 ? (uint32_t)(int)v : (uint32_t)(unsigned)v;
}

__global__ static void fill4_kernel(uint4 *p, int dt, long long n4, struct gen_spec s)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
		uint64_t k = 4 * (uint64_t)i;
		p[i] = make_uint4(bits32(gen_value(&s, k), dt), bits32(gen_value(&s, k + 1), dt),
				  bits32(gen_value(&s, k + 2), dt), bits32(gen_value(&s, k + 3), dt));
	}
}

/* One thread a 1 KiB block: its poisoned sector, 32 bytes of byte. */
__global__ static void poison_kernel(unsigned char *p, int byte, unsigned long long n, uint64_t seed)
{
	unsigned long long blocks = (n + GEN_POISON_BLOCK - 1) / GEN_POISON_BLOCK;
	for (unsigned long long b = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; b < blocks;
	     b += (unsigned long long)gridDim.x * blockDim.x) {
		uint64_t count, at = gen_poison_span(seed, b, n, &count);
		if (count == GEN_POISON_SECTOR && (uintptr_t)(p + at) % 16 == 0) {
			uint4 v;
			v.x = v.y = v.z = v.w = 0x01010101u * (unsigned)byte;
			((uint4 *)(p + at))[0] = v;
			((uint4 *)(p + at))[1] = v;
		} else
			for (uint64_t k = 0; k < count; k++)
				p[at + k] = (unsigned char)byte;
	}
}

/* 0, or -1 with the CUDA error in e (ERRBUF bytes). */
extern "C" int cuda_poison(void *p, int byte, size_t n, uint64_t seed, char *e)
{
	if (!n)
		return 0;
	unsigned long long blocks = (n + GEN_POISON_BLOCK - 1) / GEN_POISON_BLOCK, t = (blocks + 255) / 256;
	poison_kernel<<<(unsigned)(t < 132 * 16 ? t : 132 * 16), 256>>>((unsigned char *)p, byte, n, seed);
	cudaError_t r = cudaGetLastError();
	if (r != cudaSuccess) {
		snprintf(e, 256, "poisoning outputs on the GPU: %s", cudaGetErrorString(r));
		return -1;
	}
	return 0;
}

/* 0, or -1 with the CUDA error in e (ERRBUF bytes). */
extern "C" int cuda_fill(void *p, int dt, long long n, const struct gen_spec *s, char *e)
{
	if (n <= 0)
		return 0;
	if ((dt == DT_F32 || dt == DT_I32 || dt == DT_U32) && (uintptr_t)p % 16 == 0 && n % 4 == 0) {
		long long b4 = (n / 4 + 255) / 256;
		fill4_kernel<<<(unsigned)(b4 < 132 * 16 ? b4 : 132 * 16), 256>>>((uint4 *)p, dt, n / 4, *s);
	} else {
		long long blocks = (n + 255) / 256;
		fill_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256>>>(p, dt, n, *s);
	}
	cudaError_t r = cudaGetLastError();
	if (r != cudaSuccess) {
		snprintf(e, 256, "generating inputs on the GPU: %s", cudaGetErrorString(r));
		return -1;
	}
	return 0;
}

__device__ static double load_as_double(const void *p, int dt, long long i)
{
	switch (dt) {
	case DT_F16: return (double)__half2float(((const __half *)p)[i]);
	case DT_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
	case DT_F32: return (double)((const float *)p)[i];
	case DT_F64: return ((const double *)p)[i];
	case DT_I8: return (double)((const signed char *)p)[i];
	case DT_U8: return (double)((const unsigned char *)p)[i];
	case DT_I32: return (double)((const int *)p)[i];
	case DT_U32: return (double)((const unsigned *)p)[i];
	default: return (double)((const long long *)p)[i];
	}
}

struct cmp_acc {
	unsigned long long bad, first, max_abs, max_rel; /* doubles >= 0 as their bits: ordered like integers */
	unsigned int got_varies, want_varies;
};

/* One thread's counts, then the warp's (shuffles), then the block's (shared
 * memory), and one set of atomics a block: with atomics a thread, the
 * 2 million threads of a 16 M-element comparison made 8 million atomics on
 * one cache line, 3.5 ms of every check at matmul's 4096^3 (docs/gpu.md). */
#define CMP_THREADS 256

/* What a thread, a warp or a block has seen of the comparison. */
struct cmp_part {
	unsigned long long bad, first;
	double mabs, mrel;
	unsigned gv, wv;
};

__device__ static void cmp_merge(struct cmp_part *p, const struct cmp_part *o)
{
	p->bad += o->bad;
	p->first = o->first < p->first ? o->first : p->first;
	p->mabs = fmax(p->mabs, o->mabs), p->mrel = fmax(p->mrel, o->mrel);
	p->gv |= o->gv, p->wv |= o->wv;
}

__global__ static void __launch_bounds__(CMP_THREADS) compare_kernel(const void *got, const void *want, int dt, long long n,
								    double atol, double rtol, struct cmp_acc *acc)
{
	double g0 = load_as_double(got, dt, 0), w0 = load_as_double(want, dt, 0);
	struct cmp_part p = {0, ~0ULL, 0, 0, 0, 0};
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		double g = load_as_double(got, dt, i), w = load_as_double(want, dt, i);
		p.gv |= !(g == g0 || (isnan(g) && isnan(g0)));
		p.wv |= !(w == w0 || (isnan(w) && isnan(w0)));
		int ok;
		if (isnan(w))
			ok = isnan(g);
		else if (isinf(w))
			ok = g == w;
		else if (!isfinite(g))
			ok = 0;
		else {
			double d = fabs(g - w);
			ok = d <= atol + rtol * fabs(w);
			p.mabs = fmax(p.mabs, d);
			if (w != 0)
				p.mrel = fmax(p.mrel, d / fabs(w));
		}
		if (!ok) {
			p.bad++;
			if ((unsigned long long)i < p.first)
				p.first = (unsigned long long)i;
		}
	}
	for (int o = 16; o > 0; o >>= 1) {
		struct cmp_part q = {__shfl_xor_sync(~0u, p.bad, o), __shfl_xor_sync(~0u, p.first, o),
				     __shfl_xor_sync(~0u, p.mabs, o), __shfl_xor_sync(~0u, p.mrel, o),
				     __shfl_xor_sync(~0u, p.gv, o), __shfl_xor_sync(~0u, p.wv, o)};
		cmp_merge(&p, &q);
	}
	__shared__ struct cmp_part s[CMP_THREADS / 32];
	if (threadIdx.x % 32 == 0)
		s[threadIdx.x / 32] = p;
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	for (int k = 1; k < CMP_THREADS / 32; k++)
		cmp_merge(&p, &s[k]);
	if (p.bad) {
		atomicAdd(&acc->bad, p.bad);
		atomicMin(&acc->first, p.first);
	}
	atomicMax(&acc->max_abs, (unsigned long long)__double_as_longlong(p.mabs));
	atomicMax(&acc->max_rel, (unsigned long long)__double_as_longlong(p.mrel));
	if (p.gv)
		atomicOr(&acc->got_varies, 1u);
	if (p.wv)
		atomicOr(&acc->want_varies, 1u);
}

__global__ static void differ_kernel(const unsigned char *a, const unsigned char *b, long long n, unsigned int *diff)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
		if (a[i] != b[i]) {
			*diff = 1;
			return;
		}
}

static void *scratch(size_t n, char *e)
{
	static void *p;
	if (!p && cudaMalloc(&p, n) != cudaSuccess) {
		snprintf(e, 256, "cudaMalloc for the comparison failed");
		p = NULL;
	}
	return p;
}

static int ck(cudaError_t r, const char *what, char *e)
{
	if (r == cudaSuccess)
		return 0;
	snprintf(e, 256, "%s: %s", what, cudaGetErrorString(r));
	return -1;
}

extern "C" int cuda_compare(const void *got, const void *want, int dt, long long n, double atol, double rtol,
			    long long *bad, long long *first, double *max_abs, double *max_rel, int *got_varies,
			    int *want_varies, char *e)
{
	struct cmp_acc h = {0, ~0ULL, 0, 0, 0, 0}, *d = (struct cmp_acc *)scratch(sizeof h, e);
	if (!d)
		return -1;
	if (n <= 0) {
		*bad = 0, *first = -1, *max_abs = *max_rel = 0, *got_varies = *want_varies = 0;
		return 0;
	}
	if (ck(cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice), "comparison setup", e) < 0)
		return -1;
	long long blocks = (n + CMP_THREADS - 1) / CMP_THREADS;
	compare_kernel<<<(unsigned)(blocks > 8192 ? 8192 : blocks), CMP_THREADS>>>(got, want, dt, n, atol, rtol, d);
	if (ck(cudaGetLastError(), "comparison kernel", e) < 0 ||
	    ck(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), "comparison result", e) < 0)
		return -1;
	*bad = (long long)h.bad;
	*first = h.bad ? (long long)h.first : -1;
	memcpy(max_abs, &h.max_abs, sizeof *max_abs);
	memcpy(max_rel, &h.max_rel, sizeof *max_rel);
	*got_varies = (int)h.got_varies, *want_varies = (int)h.want_varies;
	return 0;
}

extern "C" int cuda_equal(const void *a, const void *b, size_t bytes, int *same, char *e)
{
	unsigned int h = 0, *d = (unsigned int *)scratch(sizeof(struct cmp_acc), e);
	if (!d)
		return -1;
	if (ck(cudaMemset(d, 0, sizeof h), "equality setup", e) < 0)
		return -1;
	long long blocks = ((long long)bytes + 255) / 256;
	if (bytes)
		differ_kernel<<<(unsigned)(blocks > 8192 ? 8192 : blocks), 256>>>((const unsigned char *)a,
										  (const unsigned char *)b, (long long)bytes, d);
	if (ck(cudaGetLastError(), "equality kernel", e) < 0 || ck(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), "equality result", e) < 0)
		return -1;
	*same = h == 0;
	return 0;
}
