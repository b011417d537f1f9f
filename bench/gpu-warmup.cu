// bench/gpu-warmup.cu — how does a memory-bound kernel's time move in the
// first tens of seconds of load after the GPU has been idle?  The first
// ktime run after an idle spell timed every role of softmax 4096x4096 at
// 75 us against 79-80 us in the runs after it (and 91 against 73 us in
// another session), at a constant SM clock; a placement experiment
// (bench/gpu-placement.cu) showed no effect of where buffers land.  This runs
// the softmax task's seed (data/tasks/softmax/seed.cu, included) back to back
// for SECONDS and prints, every 0.5 s, the median time of its calls in that
// window (CUDA events, 10 calls a sample).  Run nvidia-smi beside it for the
// clocks and the HBM temperature (bench/gpu-warmup.sh does).
//   build: nvcc -O2 -arch=sm_90 -I. -o gpu-warmup bench/gpu-warmup.cu
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "data/tasks/softmax/seed.cu"

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 40;
	int rows = 4096, cols = 4096;
	float *x, *y;
	cudaMalloc(&x, sizeof(float) * rows * cols);
	cudaMalloc(&y, sizeof(float) * rows * cols);
	cudaMemset(x, 0, sizeof(float) * rows * cols);
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	auto t0 = std::chrono::steady_clock::now();
	double next = 0.5;
	std::vector<double> w;
	for (;;) {
		cudaEventRecord(a);
		for (int i = 0; i < 10; i++)
			solve(x, y, rows, cols);
		cudaEventRecord(b);
		cudaEventSynchronize(b);
		float ms;
		cudaEventElapsedTime(&ms, a, b);
		w.push_back(100.0 * ms);
		double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		if (t >= next) {
			std::sort(w.begin(), w.end());
			printf("%6.1f s  %8.2f us  (%zu samples)\n", t, w[w.size() / 2], w.size());
			fflush(stdout);
			w.clear();
			next += 0.5;
			if (t >= secs)
				break;
		}
	}
	return cudaGetLastError() != cudaSuccess;
}
