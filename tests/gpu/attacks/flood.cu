/* attacks.sh 7, "stdout/stderr flood": 3 MB to stdout and 3 MB to stderr on
 * the child's first call (a verdict line after them could be lost, a log
 * could grow without bound), then a correct axpy.  The child's log is capped
 * at 1 MiB and the record keeps only its tail: expected verified, timed,
 * each stage's log under 64 KB. */
#include <stdio.h>
#include <string.h>

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	static int done;
	if (!done) {
		static char line[1024];
		done = 1;
		memset(line, 'F', sizeof line - 1);
		line[sizeof line - 1] = '\n';
		for (int i = 0; i < 3 * 1024; i++) {
			fwrite(line, 1, sizeof line, stdout);
			fwrite(line, 1, sizeof line, stderr);
		}
		fflush(stdout);
	}
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
