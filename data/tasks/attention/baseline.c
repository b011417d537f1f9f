/* attention baseline: per row, scores, softmax and weighted sum in float,
 * single thread — the loop a user writes first. */
#include <math.h>
#include <stdlib.h>

void solve(const _Float16* q, const _Float16* k, const _Float16* v, _Float16* o, int B, int H, int S, int D)
{
	float scale = 1.0f / sqrtf((float)D);
	float *s = malloc(sizeof(float) * (S > 0 ? S : 1)), *acc = malloc(sizeof(float) * (D > 0 ? D : 1));
	for (long bh = 0; bh < (long)B * H; bh++)
		for (long i = 0; i < S; i++) {
			float m = -INFINITY, l = 0;
			for (long j = 0; j <= i; j++) {
				float d = 0;
				for (long t = 0; t < D; t++)
					d += (float)q[(bh * S + i) * D + t] * (float)k[(bh * S + j) * D + t];
				s[j] = d * scale;
				m = fmaxf(m, s[j]);
			}
			for (long t = 0; t < D; t++)
				acc[t] = 0;
			for (long j = 0; j <= i; j++) {
				float p = expf(s[j] - m);
				l += p;
				for (long t = 0; t < D; t++)
					acc[t] += p * (float)v[(bh * S + j) * D + t];
			}
			for (long t = 0; t < D; t++)
				o[(bh * S + i) * D + t] = (_Float16)(acc[t] / l);
		}
	free(s);
	free(acc);
}
