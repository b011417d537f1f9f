/*
 * gen_value: the input generator the judge uses on the host and on the GPU
 * (lib/cuda/fill.cu includes this file), so a GPU back end can regenerate
 * fresh inputs for every timed call at device speed.  Element i of a
 * stream is a pure function of (seed, i): a counter-based hash, no state,
 * any element computable independently (and so in parallel).
 *
 * Host and device compute the same double for every element; only the
 * conversion to the element type is each side's own (f16/bf16 rounding).
 * The judge never mixes the two for one comparison: what it checks was
 * generated on the side that checks it.
 */
#ifndef KSCI_GEN_VALUE_H
#define KSCI_GEN_VALUE_H

#include <stdint.h>

#ifdef __CUDACC__
#define KSCI_HD __host__ __device__ static inline
#else
#define KSCI_HD static inline
#endif

enum gen_dist { GEN_UNIFORM, GEN_NORMAL, GEN_INT, GEN_CONST };

struct gen_spec {
	int dist;     /* enum gen_dist */
	double a, b;  /* uniform/int: lo, hi; normal: mean, std; const: value, - */
	uint64_t seed;
};

KSCI_HD uint64_t gen_mix(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Element i's value as a double (integers exactly). */
KSCI_HD double gen_value(const struct gen_spec *s, uint64_t i)
{
	uint64_t h = gen_mix(s->seed + i * 0xD1B54A32D192ED03ULL); /* splitmix64's output for counter i */
	switch (s->dist) {
	case GEN_NORMAL: {
		/* Four 16-bit uniforms summed (Irwin-Hall), scaled to unit
		 * variance: bell-shaped, bounded at +-3.46 std, and a tenth of
		 * the cost of logf + cosf, which the host pays for every element
		 * of every timed call's inputs. */
		double z = (double)(h & 0xFFFF) + (double)((h >> 16) & 0xFFFF) + (double)((h >> 32) & 0xFFFF) +
			   (double)(h >> 48);
		z = (z + 2.0) * (1.0 / 65536.0) - 2.0;
		return s->a + s->b * z * 1.7320508075688772;
	}
	case GEN_INT: {
		uint64_t span = (uint64_t)(s->b - s->a + 1);
		return s->a + (double)(span ? (h >> 11) % span : 0);
	}
	case GEN_CONST:
		return s->a;
	default:
		return s->a + (s->b - s->a) * (double)(h >> 11) * (1.0 / 9007199254740992.0);
	}
}

/* Poisoned outputs before a timed batch (struct dev_ops.poison): not every
 * byte, one 32-byte sector in every 1 KiB block of an output, the sector
 * chosen by (seed, block), a fresh seed for every output of every batch.
 * A call that leaves any block of its output unwritten leaves poison there,
 * which the batch's check sees; a kernel cannot tell which sectors hold it
 * without reading its whole output, which costs what writing it does.  What
 * is not poisoned holds the previous batch's outputs, for other inputs.  On
 * an H100 the memset of every output byte was about a third of a memory-bound
 * size's input time (docs/gpu.md, "Poison by sectors"). */
#define GEN_POISON_BLOCK 1024
#define GEN_POISON_SECTOR 32

/* Block b's poisoned bytes in an output of n bytes (block b: bytes
 * [b * 1024, b * 1024 + 1024) cut at n): the first one's offset in the
 * output, and how many (32, fewer in a short last block); the host's and the
 * GPU's poison write exactly these. */
KSCI_HD uint64_t gen_poison_span(uint64_t seed, uint64_t b, uint64_t n, uint64_t *count)
{
	uint64_t at = b * GEN_POISON_BLOCK, len = n - at < GEN_POISON_BLOCK ? n - at : GEN_POISON_BLOCK;
	uint64_t sectors = (len + GEN_POISON_SECTOR - 1) / GEN_POISON_SECTOR;
	uint64_t off = (gen_mix(seed ^ (b * 0xD1B54A32D192ED03ULL)) % sectors) * GEN_POISON_SECTOR;
	*count = len - off < GEN_POISON_SECTOR ? len - off : GEN_POISON_SECTOR;
	return at + off;
}

#endif
