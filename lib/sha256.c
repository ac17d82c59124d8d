/*
 * OpenSSL's SHA256_Init/Update/Final, not EVP: the first EVP digest of a
 * process loads and activates the default provider and builds its
 * algorithm tables, 1.5-2 ms that every pmurec and pmuvalidate run paid
 * before its first byte was hashed (docs/fixed-cost.md).  The low-level
 * functions run the same assembly (SHA-NI or AVX2, chosen by libcrypto's
 * CPU detection at load) at the same speed, with no set-up.  They are
 * deprecated in OpenSSL 3 but still part of its API; should a release drop
 * them, EVP_Digest* is the drop-in.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "error.h"
#include "sha256.h"

int pmu_sha256_init(struct pmu_sha256 *s)
{
	SHA256_CTX *ctx = malloc(sizeof(*ctx));

	s->ctx = NULL;
	if (!ctx)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate digest context");
	if (SHA256_Init(ctx) != 1) {
		free(ctx);
		return pmu_error(PMU_ERR_CRYPTO, "cannot initialise SHA-256");
	}
	s->ctx = ctx;
	return 0;
}

int pmu_sha256_update(struct pmu_sha256 *s, const void *buf, size_t len)
{
	if (SHA256_Update(s->ctx, buf, len) != 1)
		return pmu_error(PMU_ERR_CRYPTO, "SHA-256 update failed");
	return 0;
}

int pmu_sha256_final_hex(struct pmu_sha256 *s, char hex[PMU_SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[SHA256_DIGEST_LENGTH];
	unsigned int len = SHA256_DIGEST_LENGTH;
	int ok = SHA256_Final(md, s->ctx) == 1 && len == PMU_SHA256_LEN;

	pmu_sha256_release(s);
	if (!ok)
		return pmu_error(PMU_ERR_CRYPTO, "SHA-256 finalisation failed");
	for (unsigned int i = 0; i < len; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * len] = '\0';
	return 0;
}

void pmu_sha256_release(struct pmu_sha256 *s)
{
	free(s->ctx);
	s->ctx = NULL;
}

int pmu_sha256_buf(const void *buf, size_t len, char hex[PMU_SHA256_HEX])
{
	struct pmu_sha256 s;
	int err = pmu_sha256_init(&s);

	if (err)
		return err;
	err = pmu_sha256_update(&s, buf, len);
	if (err) {
		pmu_sha256_release(&s);
		return err;
	}
	return pmu_sha256_final_hex(&s, hex);
}

#define BLOCK (1u << 20)

int pmu_sha256_file(int dirfd, const char *path, char hex[PMU_SHA256_HEX], uint64_t *size)
{
	struct pmu_sha256 s;
	unsigned char *buf;
	uint64_t total = 0;
	int fd, err;

	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	buf = malloc(BLOCK);
	if (!buf) {
		close(fd);
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate read buffer");
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	err = pmu_sha256_init(&s);
	while (!err) {
		ssize_t n = read(fd, buf, BLOCK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = pmu_error(PMU_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (n == 0) {
			err = pmu_sha256_final_hex(&s, hex);
			break;
		}
		total += (uint64_t)n;
		err = pmu_sha256_update(&s, buf, (size_t)n);
	}
	if (err && s.ctx)
		pmu_sha256_release(&s);
	free(buf);
	close(fd);
	if (!err && size)
		*size = total;
	return err;
}
