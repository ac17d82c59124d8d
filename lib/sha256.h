#ifndef PMU_SHA256_H
#define PMU_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define PMU_SHA256_LEN 32
#define PMU_SHA256_HEX (2 * PMU_SHA256_LEN + 1)

/* Streaming SHA-256 through OpenSSL's SHA256_* functions (sha256.c says
 * why not EVP). */
struct pmu_sha256 {
	void *ctx; /* SHA256_CTX, NULL once released */
};

int pmu_sha256_init(struct pmu_sha256 *s);
int pmu_sha256_update(struct pmu_sha256 *s, const void *buf, size_t len);
/* Writes the lowercase hex digest (NUL-terminated) and releases the context. */
int pmu_sha256_final_hex(struct pmu_sha256 *s, char hex[PMU_SHA256_HEX]);
void pmu_sha256_release(struct pmu_sha256 *s);

/* Digest of a whole file, read in large blocks; *size gets its length. */
int pmu_sha256_file(int dirfd, const char *path, char hex[PMU_SHA256_HEX], uint64_t *size);
int pmu_sha256_buf(const void *buf, size_t len, char hex[PMU_SHA256_HEX]);

#endif
