/*
 * sha256: FIPS 180-4 SHA-256, used for record ids and cache keys.
 * Written for ksci from the standard; no allocation, caller owns the context.
 */
#ifndef KSCI_SHA256_H
#define KSCI_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t n;
	unsigned char buf[64];
	size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, unsigned char out[32]);
/* Lower-case hex of the digest, truncated to nhex (<= 64) chars, NUL-terminated. */
void sha256_hex(struct sha256 *s, char *out, size_t nhex);

#endif
