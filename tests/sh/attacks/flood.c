/* t14 attack "stdout/stderr flood": 3 MB to stdout and 3 MB to stderr on the
 * first call (a verdict line after them could be lost, a log could grow
 * without bound), then a correct rowsum. */
#include <stdio.h>
#include <string.h>

void solve(const float* x, float* y, int rows, int cols)
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
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
