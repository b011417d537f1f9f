/* attention seed: q, k, v converted to float once per (b, h) slice; per
 * query row, scores with ACC independent accumulators, softmax, and the
 * output as axpys over D (vectorisable).  Slices over THREADS workers. */
#include <math.h>
#include <stdlib.h>

#define ACC 8      // ktune: 1 4 8 16
#define THREADS 1  // ktune: 1 2 4

void solve(const _Float16* q, const _Float16* k, const _Float16* v, _Float16* o, int B, int H, int S, int D)
{
	if (S <= 0)
		return;
	float scale = 1.0f / sqrtf((float)D);
	#pragma omp parallel num_threads(THREADS)
	{
		long n = (long)S * D;
		float *qf = malloc(sizeof(float) * n), *kf = malloc(sizeof(float) * n), *vf = malloc(sizeof(float) * n);
		float *s = malloc(sizeof(float) * S), *acc = malloc(sizeof(float) * D);
		#pragma omp for schedule(static)
		for (long bh = 0; bh < (long)B * H; bh++) {
			for (long x = 0; x < n; x++) {
				qf[x] = (float)q[bh * n + x];
				kf[x] = (float)k[bh * n + x];
				vf[x] = (float)v[bh * n + x];
			}
			for (long i = 0; i < S; i++) {
				const float *qi = qf + i * D;
				float m = -INFINITY;
				for (long j = 0; j <= i; j++) {
					const float *kj = kf + j * D;
					float a[ACC] = {0};
					long t = 0;
					for (; t + ACC <= D; t += ACC)
						for (int u = 0; u < ACC; u++)
							a[u] += qi[t + u] * kj[t + u];
					float d = 0;
					for (int u = 0; u < ACC; u++)
						d += a[u];
					for (; t < D; t++)
						d += qi[t] * kj[t];
					s[j] = d * scale;
					m = s[j] > m ? s[j] : m;
				}
				float l = 0;
				for (long t = 0; t < D; t++)
					acc[t] = 0;
				for (long j = 0; j <= i; j++) {
					float p = expf(s[j] - m);
					const float *vj = vf + j * D;
					l += p;
					for (long t = 0; t < D; t++)
						acc[t] += p * vj[t];
				}
				float inv = 1.0f / l;
				for (long t = 0; t < D; t++)
					o[(bh * S + i) * D + t] = (_Float16)(acc[t] * inv);
			}
		}
		free(qf);
		free(kf);
		free(vf);
		free(s);
		free(acc);
	}
}
