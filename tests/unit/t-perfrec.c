/*
 * t-perfrec: the perf ring-buffer reader and record decoder on synthetic
 * records laid out as the kernel writes them (perf_event_open(2)), with
 * sample_id_all and sample_type TID | TIME | IDENTIFIER, including records
 * that wrap around the end of the buffer and malformed ones.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perfrec.h"
#include "tap.h"

#define RF (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

static size_t put_hdr(unsigned char *p, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = { type, misc, (uint16_t)size };

	memcpy(p, &h, sizeof(h));
	return sizeof(h);
}

static size_t put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return 4;
}

static size_t put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return 8;
}

static size_t trailer(unsigned char *p, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id)
{
	return put32(p, pid) + put32(p + 4, tid) + put64(p + 8, t) + put64(p + 16, id);
}

static size_t fork_rec(unsigned char *p, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		       uint64_t t)
{
	size_t n = put_hdr(p, type, 0, 56);

	n += put32(p + n, pid) + put32(p + n + 4, ppid) + put32(p + n + 8, tid) + put32(p + n + 12, ptid);
	n += put64(p + n, t);
	n += trailer(p + n, pid, tid, t, 7);
	return n;
}

static size_t comm_rec(unsigned char *p, uint32_t pid, const char *name, uint16_t misc, uint64_t t)
{
	size_t len = strlen(name) + 1, pad = (len + 7) / 8 * 8, size = 8 + 8 + pad + 24, n;

	n = put_hdr(p, PERF_RECORD_COMM, misc, size);
	n += put32(p + n, pid) + put32(p + n + 4, pid);
	memset(p + n, 0, pad);
	memcpy(p + n, name, len);
	n += pad;
	n += trailer(p + n, pid, pid, t, 7);
	return n;
}

static size_t mmap2_rec(unsigned char *p, uint32_t pid, const char *file, uint32_t prot, uint64_t t)
{
	size_t len = strlen(file) + 1, pad = (len + 7) / 8 * 8, size = 8 + 64 + pad + 24, n;

	n = put_hdr(p, PERF_RECORD_MMAP2, 0, size);
	memset(p + n, 0, 64);
	put32(p + n, pid);
	put32(p + n + 4, pid);
	put32(p + n + 56, prot);
	n += 64;
	memset(p + n, 0, pad);
	memcpy(p + n, file, len);
	n += pad;
	n += trailer(p + n, pid, pid, t, 7);
	return n;
}

static size_t read_rec(unsigned char *p, uint32_t pid, uint32_t tid, uint64_t v, uint64_t en, uint64_t run,
		       uint64_t id, uint64_t t)
{
	size_t n = put_hdr(p, PERF_RECORD_READ, 0, 8 + 8 + 32 + 24);

	n += put32(p + n, pid) + put32(p + n + 4, tid);
	n += put64(p + n, v) + put64(p + n + 8, en) + put64(p + n + 16, run) + put64(p + n + 24, id);
	n += trailer(p + n, pid, tid, t, id);
	return n;
}

int main(void)
{
	unsigned char rec[512];
	struct pmu_perf_rec r;
	const char *why = NULL;
	size_t n;

	n = fork_rec(rec, PERF_RECORD_FORK, 200, 100, 201, 100, 5000);
	ok(pmu_perf_decode(rec, n, RF, &r, &why) == 0 && r.kind == PMU_PR_FORK && r.pid == 200 && r.ppid == 100 &&
		   r.tid == 201 && r.ptid == 100 && r.time == 5000 && r.id == 7,
	   "FORK: pid, ppid, tid, ptid and the trailer's time and id");
	n = fork_rec(rec, PERF_RECORD_EXIT, 200, 100, 200, 100, 6000);
	ok(pmu_perf_decode(rec, n, RF, &r, &why) == 0 && r.kind == PMU_PR_EXIT && r.time == 6000, "EXIT");
	n = comm_rec(rec, 300, "true", PERF_RECORD_MISC_COMM_EXEC, 7000);
	ok(pmu_perf_decode(rec, n, RF, &r, &why) == 0 && r.kind == PMU_PR_COMM && r.pid == 300 &&
		   !strcmp(r.str, "true") && (r.misc & PERF_RECORD_MISC_COMM_EXEC),
	   "COMM with the exec flag and its name");
	n = mmap2_rec(rec, 300, "/usr/bin/true", 5, 7100);
	ok(pmu_perf_decode(rec, n, RF, &r, &why) == 0 && r.kind == PMU_PR_MMAP2 && !strcmp(r.str, "/usr/bin/true") &&
		   r.prot == 5,
	   "MMAP2: file name and protection");
	n = read_rec(rec, 300, 301, 12345, 900, 800, 42, 8000);
	ok(pmu_perf_decode(rec, n, RF, &r, &why) == 0 && r.kind == PMU_PR_READ && r.tid == 301 && r.value == 12345 &&
		   r.enabled == 900 && r.running == 800 && r.read_id == 42,
	   "READ: value, enabled, running, id of one thread");
	{
		int rc = pmu_perf_decode(rec, n, RF | PERF_FORMAT_LOST, &r, &why);

		ok(rc == -1 && strstr(why, "read_format"), "READ with fewer values than its read_format: malformed (%s)",
		   why);
	}
	ok(pmu_perf_decode(rec, n, RF | PERF_FORMAT_GROUP, &r, &why) == -1, "a group READ is refused");
	{
		size_t m = put_hdr(rec, PERF_RECORD_LOST, 0, 8 + 16 + 24);

		m += put64(rec + m, 9) + put64(rec + m + 8, 3);
		m += trailer(rec + m, 0, 0, 9000, 9);
		ok(pmu_perf_decode(rec, m, RF, &r, &why) == 0 && r.kind == PMU_PR_LOST && r.lost == 3 && r.time == 9000,
		   "LOST: how many records the kernel dropped");
	}
	/* malformed */
	n = comm_rec(rec, 300, "true", 0, 7000);
	memset(rec + 16, 'x', n - 16 - 24);
	ok(pmu_perf_decode(rec, n, RF, &r, &why) == -1 && strstr(why, "terminated"),
	   "COMM whose name has no NUL: malformed");
	n = fork_rec(rec, PERF_RECORD_FORK, 1, 1, 1, 1, 1);
	ok(pmu_perf_decode(rec, n - 8, RF, &r, &why) == -1, "a record shorter than its header says: malformed");
	ok(pmu_perf_decode(rec, 4, RF, &r, &why) == -1, "four bytes: malformed");
	put_hdr(rec, PERF_RECORD_FORK, 0, 48);
	ok(pmu_perf_decode(rec, 48, RF, &r, &why) == -1, "FORK of the wrong size: malformed");
	put_hdr(rec, 0x7777, 0, 32);
	ok(pmu_perf_decode(rec, 32, RF, &r, &why) == 0 && r.kind == PMU_PR_OTHER, "an unknown type is passed over");

	/* the ring: 4 pages of metadata space would be real; 256 bytes of
	 * data here, records written across its end */
	{
		size_t page = 4096, ds = 256;
		unsigned char *m = calloc(1, page + ds);
		struct perf_event_mmap_page *mp = (void *)m;
		unsigned char stream[1024];
		size_t len = 0, got = 0, sz;
		uint64_t start = 200; /* the reader starts near the end: records wrap */
		struct pmu_perf_ring *g = calloc(1, sizeof(*g));
		const void *x;
		int kinds[8] = { 0 }, bad = 0;

		memset(m, 0, page + ds);
		mp->data_offset = page;
		len += fork_rec(stream + len, PERF_RECORD_FORK, 200, 100, 200, 100, 1);
		len += comm_rec(stream + len, 200, "a-long-command-name", PERF_RECORD_MISC_COMM_EXEC, 2);
		len += read_rec(stream + len, 200, 200, 1, 2, 3, 4, 5);
		len += fork_rec(stream + len, PERF_RECORD_EXIT, 200, 100, 200, 100, 6);
		for (size_t i = 0; i < len; i++)
			m[page + (start + i) % ds] = stream[i];
		mp->data_tail = start;
		mp->data_head = start + len;
		g->base = m;
		g->data_size = ds;
		pmu_perf_ring_begin(g);
		while ((x = pmu_perf_ring_next(g, &sz))) {
			got += sz;
			if (pmu_perf_decode(x, sz, RF, &r, &why) == 0)
				kinds[r.kind]++;
			else
				bad++;
			if (r.kind == PMU_PR_COMM)
				is_str(r.str, "a-long-command-name", "a record split by the buffer's end is whole");
		}
		pmu_perf_ring_done(g);
		ok(got == len && !bad && kinds[PMU_PR_FORK] == 1 && kinds[PMU_PR_COMM] == 1 && kinds[PMU_PR_READ] == 1 &&
			   kinds[PMU_PR_EXIT] == 1 && !g->broken,
		   "every record read back across the wrap, in order");
		ok(mp->data_tail == start + len, "the space is given back to the kernel");
		/* a header claiming more than was written stops the reader */
		put_hdr(m + page + (start + len) % ds, PERF_RECORD_FORK, 0, 200);
		mp->data_head = start + len + 56;
		pmu_perf_ring_begin(g);
		ok(!pmu_perf_ring_next(g, &sz) && g->broken, "a size past the written bytes breaks the ring, not the reader");
		free(g);
		free(m);
	}
	return done_testing();
}
