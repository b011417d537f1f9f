// bench/ck.cuh — CK(x): a CUDA runtime call that must succeed, for the
// stand-alone bench programs (bench/gpu-*.cu): on failure it names the call
// and its error on stderr and exits 1.
#ifndef KSCI_BENCH_CK_CUH
#define KSCI_BENCH_CK_CUH
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                        \
	do {                                                                         \
		cudaError_t e_ = (x);                                                \
		if (e_ != cudaSuccess) {                                             \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));     \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

#endif
