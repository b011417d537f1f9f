/* attention reference: causal softmax(q k^T / sqrt(D)) v per row, in double. */
#include <math.h>
#include <stdlib.h>

void solve(const _Float16* q, const _Float16* k, const _Float16* v, _Float16* o, int B, int H, int S, int D)
{
	double scale = 1.0 / sqrt((double)D);
	#pragma omp parallel
	{
		double *s = malloc(sizeof(double) * (S > 0 ? S : 1)), *acc = malloc(sizeof(double) * (D > 0 ? D : 1));
		#pragma omp for collapse(2) schedule(dynamic, 16)
		for (long bh = 0; bh < (long)B * H; bh++)
			for (long i = 0; i < S; i++) {
				const _Float16 *qi = q + (bh * S + i) * D;
				double m = -INFINITY, l = 0;
				for (long j = 0; j <= i; j++) {
					const _Float16 *kj = k + (bh * S + j) * D;
					double d = 0;
					for (long t = 0; t < D; t++)
						d += (double)qi[t] * (double)kj[t];
					s[j] = d * scale;
					m = s[j] > m ? s[j] : m;
				}
				for (long t = 0; t < D; t++)
					acc[t] = 0;
				for (long j = 0; j <= i; j++) {
					double p = exp(s[j] - m);
					const _Float16 *vj = v + (bh * S + j) * D;
					l += p;
					for (long t = 0; t < D; t++)
						acc[t] += p * (double)vj[t];
				}
				for (long t = 0; t < D; t++)
					o[(bh * S + i) * D + t] = (_Float16)(acc[t] / l);
			}
		free(s);
		free(acc);
	}
}
