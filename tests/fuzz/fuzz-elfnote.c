/*
 * fuzz-elfnote: the ELF build-id note reader (lib/elfnote.c) on untrusted
 * bytes, read through a callback over the input as the validator reads a
 * retained file with pread().
 *
 * Asserted: the reader answers 0, PMU_ERR_NOTFOUND or PMU_ERR_CORRUPT
 * (never another error: the input is in memory); on 0 the build-id is 1 to
 * PMU_ELF_BID_MAX bytes that occur in the input after a "GNU\0" owner; it
 * never reads outside the input (the callback aborts on a read past its
 * end, ASan on any other overrun); and a second run on the same bytes
 * gives the same answer (no state).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfnote.h"
#include "error.h"

struct mem {
	const uint8_t *p;
	size_t n;
};

static long mem_read(void *ctx, void *buf, size_t n, uint64_t off)
{
	struct mem *m = ctx;

	if (off > m->n || n > m->n - off) {
		fprintf(stderr, "fuzz-elfnote: FAIL: read of %zu bytes at %llu past the input's %zu\n", n,
			(unsigned long long)off, m->n);
		abort();
	}
	memcpy(buf, m->p + off, n);
	return (long)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	unsigned char bid[PMU_ELF_BID_MAX], bid2[PMU_ELF_BID_MAX];
	size_t len = 0, len2 = 0;
	int err = pmu_elf_build_id(mem_read, &m, size, bid, &len);
	int err2 = pmu_elf_build_id(mem_read, &m, size, bid2, &len2);

	if (err != 0 && err != PMU_ERR_NOTFOUND && err != PMU_ERR_CORRUPT) {
		fprintf(stderr, "fuzz-elfnote: FAIL: unexpected error %s\n", pmu_errname(err));
		abort();
	}
	if (err != err2 || len != len2 || (err == 0 && memcmp(bid, bid2, len))) {
		fprintf(stderr, "fuzz-elfnote: FAIL: two reads of the same bytes differ\n");
		abort();
	}
	if (err == 0) {
		bool found = false;

		if (len < 1 || len > PMU_ELF_BID_MAX) {
			fprintf(stderr, "fuzz-elfnote: FAIL: build-id of %zu bytes\n", len);
			abort();
		}
		for (size_t i = 0; !found && i + 4 + len <= size; i++)
			found = !memcmp(data + i, "GNU", 4) && memmem(data + i + 4, size - i - 4, bid, len);
		if (!found) {
			fprintf(stderr, "fuzz-elfnote: FAIL: the build-id is not in the input after a GNU owner\n");
			abort();
		}
	} else if (len) {
		fprintf(stderr, "fuzz-elfnote: FAIL: a length with an error\n");
		abort();
	}
	return 0;
}
