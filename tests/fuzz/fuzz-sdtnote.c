/*
 * fuzz-sdtnote: the USDT note reader (lib/sdtnote.c, through libelf) on
 * untrusted bytes: an ELF image in memory, as pmu_sdt_read_mem() takes it.
 * Seeds (tests/fuzz/corpus/sdtnote/), built on Debian 12 x86-64 from
 * <sys/sdt.h>: probes3-elf64, three probes (prov:two, prov:none,
 * other:three) in a static executable without libc (gcc -Os -nostdlib
 * -static -fno-asynchronous-unwind-tables -Wl,--build-id=none
 * -Wl,-z,max-page-size=0x10 -Wl,-z,norelro; strip -R .comment: 1 KB);
 * semaphore-elf64, python:gc__start with a semaphore (_SDT_HAS_SEMAPHORES,
 * python_gc__start_semaphore in .probes), built the same way;
 * probes3-rel64, the first's source as a relocatable object (gcc -Os -c).
 *
 * Asserted: the reader answers 0 or PMU_ERR_CORRUPT (never another error:
 * the input is in memory); every probe handed to fn has a nonempty
 * provider and name, each NUL-terminated inside its field and found in the
 * input, an argument layout NUL-terminated in its field, and nargs its
 * count of words; it never reads outside the input (ASan); and a second
 * run on the same bytes gives the same probes (no state).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sdtnote.h"

struct run {
	const uint8_t *in;
	size_t len;
	size_t n;
	uint64_t sum; /* over every field of every probe, in order */
};

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-sdtnote: FAIL: %s\n", what);
	abort();
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static int words(const char *s)
{
	int n = 0;

	for (const char *q = s; *q; q++)
		n += *q != ' ' && *q != '\t' && (q == s || q[-1] == ' ' || q[-1] == '\t');
	return n;
}

static int seen(void *ctx, const struct pmu_sdt_probe *p)
{
	struct run *r = ctx;
	size_t lp = strnlen(p->provider, sizeof(p->provider)), ln = strnlen(p->name, sizeof(p->name));
	size_t la = strnlen(p->args, sizeof(p->args));

	if (lp == 0 || lp == sizeof(p->provider) || ln == 0 || ln == sizeof(p->name) || la == sizeof(p->args))
		fail("a probe's string is empty or not NUL-terminated in its field");
	if (!memmem(r->in, r->len, p->provider, lp) || !memmem(r->in, r->len, p->name, ln))
		fail("a probe's provider or name is not in the input");
	if (p->nargs != words(p->args))
		fail("nargs is not the count of the layout's words");
	r->n++;
	r->sum = mix(r->sum, p->provider, lp);
	r->sum = mix(r->sum, p->name, ln);
	r->sum = mix(r->sum, p->args, la);
	r->sum = mix(r->sum, &p->pc, sizeof(p->pc));
	r->sum = mix(r->sum, &p->semaphore, sizeof(p->semaphore));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run a = { data, size, 0, 0xcbf29ce484222325ull }, b = a;
	int err = pmu_sdt_read_mem(data, size, seen, &a);
	int err2 = pmu_sdt_read_mem(data, size, seen, &b);

	if (err != 0 && err != PMU_ERR_CORRUPT) {
		fprintf(stderr, "fuzz-sdtnote: FAIL: unexpected error %s: %s\n", pmu_errname(err), pmu_error_detail());
		abort();
	}
	if (err != err2 || a.n != b.n || a.sum != b.sum)
		fail("two reads of the same bytes differ");
	return 0;
}
