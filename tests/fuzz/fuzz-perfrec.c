/*
 * fuzz-perfrec: pmu_perfrec_decode() (lib/perfrec.c) on arbitrary records
 * under arbitrary formats.  Ring records come from the kernel, but a ring
 * is writable memory shared with whoever holds the fd, and perf.data files
 * come from anywhere: the decoder must never read outside the record.
 *
 * Input: 17 bytes of format (sample_type, regs_mask, sample_id_all), then
 * the record.  Rules checked (abort() on a violation):
 *   1. accepted  =>  header.size <= len; every pointer it hands out (chain,
 *      regs, stack, filename, comm) lies within the record, with its whole
 *      length; strings end within it; stack_dyn <= stack_size.
 *   2. refused   =>  a reason was written.
 *   3. decoding is deterministic: twice gives the same result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static int within(const uint8_t *b, size_t n, const void *p, uint64_t k)
{
	const uint8_t *q = p;

	return q >= b && q <= b + n && k <= (uint64_t)(b + n - q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct pmu_perfrec_fmt f;
	struct pmu_perfrec r, r2;
	char why[200] = "", why2[200] = "";
	uint8_t *buf;
	int rc, rc2;
	size_t n, sz;

	if (len < 17)
		return 0;
	memcpy(&f.sample_type, data, 8);
	memcpy(&f.regs_mask, data + 8, 8);
	f.sample_id_all = data[16] & 1;
	/* mostly formats the decoder reads: keep the fuzzer in the deep paths */
	if (data[16] & 2)
		f.sample_type &= 0x133ef;
	data += 17;
	n = len - 17;
	/* an exact-size heap copy: ASan sees any read past the record */
	buf = malloc(n ? n : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, n);
	rc = pmu_perfrec_decode(&f, buf, n, &r, why, sizeof(why));
	rc2 = pmu_perfrec_decode(&f, buf, n, &r2, why2, sizeof(why2));
	if (rc != rc2 || strcmp(why, why2))
		abort();
	if (rc) {
		if (!why[0])
			abort();
		free(buf);
		return 0;
	}
	sz = r.size;
	if (sz < 8 || sz > n)
		abort();
	if (r.chain && !within(buf, sz, r.chain, 8 * r.nchain))
		abort();
	if (r.regs && !within(buf, sz, r.regs, 8ull * r.nregs))
		abort();
	if (r.stack && (!within(buf, sz, r.stack, r.stack_size) || r.stack_dyn > r.stack_size))
		abort();
	if (r.filename && (!within(buf, sz, r.filename, strnlen(r.filename, sz) + 1)))
		abort();
	if (r.comm && (!within(buf, sz, r.comm, strnlen(r.comm, sz) + 1)))
		abort();
	if (r.build_id_size > 20)
		abort();
	/* reading every array entry stays inside (ASan checks) */
	for (uint64_t i = 0; r.chain && i < r.nchain; i++)
		(void)pmu_perfrec_u64(r.chain, i);
	for (uint32_t i = 0; r.regs && i < r.nregs; i++)
		(void)pmu_perfrec_u64(r.regs, i);
	free(buf);
	return 0;
}
