/*
 * fuzz-jsonbound: the bounded document parse (lib/jsonbound.c) against
 * jansson's own, unbounded parse of the same bytes.
 *
 *   byte 0:  bits 0-3  the parse budget for the small-budget run:
 *                      256 << bits bytes;
 *   rest:    the document.
 *
 * Asserted, for the text from the buffer and from a file (memfd):
 *   - with room to spare (budget 1 GiB): the same verdict as json_loadb()
 *     with JSON_REJECT_DUPLICATES, and an equal value; a NUL byte anywhere
 *     is PMU_ERR_CORRUPT; buffer and file agree on the error and its line;
 *   - with the small budget: an equal value or PMU_ERR_LIMIT (or, for a
 *     text jansson refuses, PMU_ERR_CORRUPT), never anything else;
 *   - one byte over max_bytes is PMU_ERR_LIMIT;
 *   - jansson never held more than the budget (what it allocated, counted
 *     by the allocation functions, against the bound the parse enforces),
 *     and no bounded parse leaves budget accounted to the thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "error.h"
#include "jsonbound.h"

__attribute__((noreturn)) static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-jsonbound: FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static int load_file(const char *p, size_t n, const struct pmu_json_limits *l, json_t **out, uint64_t *line)
{
	int fd = memfd_create("doc", MFD_CLOEXEC), err;
	size_t o = 0;

	if (fd < 0)
		fail("memfd_create", NULL);
	while (o < n) {
		ssize_t w = write(fd, p + o, n - o);

		if (w <= 0)
			fail("write", NULL);
		o += (size_t)w;
	}
	lseek(fd, 0, SEEK_SET);
	err = pmu_json_load_fd(fd, l, out, line);
	close(fd);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmu_json_limits big = { 1u << 20, 1u << 30, -1 }, small;
	const char *p = (const char *)data + 1;
	size_t n = size ? size - 1 : 0;
	json_t *ref, *a = NULL, *b = NULL;
	uint64_t la = 0, lb = 0;
	int ea, eb;

	if (!size || n > big.max_bytes)
		return 0;
	ref = memchr(p, '\0', n) ? NULL : json_loadb(p, n, JSON_REJECT_DUPLICATES, NULL);

	ea = pmu_json_load_buf(p, n, &big, &a, &la);
	eb = load_file(p, n, &big, &b, &lb);
	if (pmu_json_budget_used())
		fail("budget left accounted", NULL);
	if (ea != eb || la != lb)
		fail("buffer and file disagree", pmu_error_detail());
	if (ref ? ea || !json_equal(ref, a) || !json_equal(ref, b) : ea != PMU_ERR_CORRUPT || a || b)
		fail("verdict differs from json_loadb", pmu_error_detail());
	json_decref(a);
	json_decref(b);

	small = (struct pmu_json_limits){ big.max_bytes, (size_t)256 << (data[0] & 15), 3 };
	a = b = NULL;
	ea = pmu_json_load_buf(p, n, &small, &a, NULL);
	if (pmu_json_last_peak() > small.budget)
		fail("jansson held more than the budget (buffer)", NULL);
	eb = load_file(p, n, &small, &b, NULL);
	if (pmu_json_last_peak() > small.budget)
		fail("jansson held more than the budget (file)", NULL);
	if (pmu_json_budget_used())
		fail("budget left accounted", NULL);
	if (ea != eb)
		fail("buffer and file disagree under the small budget", pmu_error_detail());
	if (ea ? (ea != PMU_ERR_LIMIT && (ref || ea != PMU_ERR_CORRUPT)) || a || b
	       : !ref || !json_equal(ref, a) || !json_equal(ref, b))
		fail("small budget: neither the value nor PMU_ERR_LIMIT", pmu_error_detail());
	json_decref(a);
	json_decref(b);

	if (n) {
		small = (struct pmu_json_limits){ n - 1, big.budget, 3 };
		if (pmu_json_load_buf(p, n, &small, &a, NULL) != PMU_ERR_LIMIT ||
		    load_file(p, n, &small, &b, NULL) != PMU_ERR_LIMIT || a || b)
			fail("one byte over max_bytes is not PMU_ERR_LIMIT", pmu_error_detail());
	}
	json_decref(ref);
	return 0;
}
