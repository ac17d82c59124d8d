/*
 * perf.data writer and bounded reader (lib/perfdata.h).
 *
 * The layout written, from tools/perf/Documentation/perf.data-file-format.txt
 * (all little-endian on the hosts we run on: the file is in host order, as
 * perf writes it, and the magic says which):
 *
 *   0      struct perf_file_header (104 bytes): "PERFILE2", its size, the
 *          size of one attrs entry, the attrs, data and event_types
 *          sections ({offset, size}), the adds_features bitmap (256 bits)
 *   104    attrs: one entry, struct perf_event_attr (attr.size bytes) then
 *          the {offset, size} of its ids
 *   ...    the ids (u64 each, PERF_EVENT_IOC_ID of each CPU's event)
 *   ...    data: the records, as the kernel wrote them
 *   ...    one {offset, size} per feature bit set, in bit order, then the
 *          features' bodies in the same order
 *
 * perf (tools/perf/util/header.c read_attr) reads attr.size bytes of each
 * attrs entry and then its ids section, and refuses an attr larger than
 * the perf_event_attr it was built with; so attr.size is trimmed to the
 * smallest published size (PERF_ATTR_SIZE_VER*) that holds every non-zero
 * byte, which lets an older perf read what a newer kernel header wrote.
 */
#include "perfdata.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "../backends/collector.h" /* struct pmu_out (also built without -Ibackends: the fuzz harnesses) */
#include "error.h"

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif
#ifndef PERF_RECORD_MISC_BUILD_ID_SIZE
/* perf's own misc bit for build_id_event: the build-id's size is given */
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)
#endif
#ifndef PERF_RECORD_LOST_SAMPLES
#define PERF_RECORD_LOST_SAMPLES 13
#endif

/* feature bits (tools/perf/util/header.h, enum HEADER_*) */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_CLOCKID = 23,
	FEAT_CLOCK_DATA = 29,
	FEAT_BITS = 256,
};

#define FILE_HEADER_SIZE 104   /* magic, size, attr_size, 3 sections, 4 bitmap words */
#define NAME_ALIGN 64          /* perf_header_string and build-id file names */
#define BUILD_ID_EVENT_SIZE 36 /* header, pid, build_id[24] */
#define BUF_SIZE (64 * 1024)

static const char magic2[8] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2' };

/* a growable byte buffer for the feature bodies (small: maps and names) */
struct dbuf {
	unsigned char *p;
	size_t n, cap;
	bool oom;
};

static void db_put(struct dbuf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *q;

		while (cap < b->n + n)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void db_zero(struct dbuf *b, size_t n)
{
	static const unsigned char z[64];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		db_put(b, z, k);
		n -= k;
	}
}

static void db_u32(struct dbuf *b, uint32_t v) { db_put(b, &v, 4); }
static void db_u64(struct dbuf *b, uint64_t v) { db_put(b, &v, 8); }

/* struct perf_header_string: u32 len (with the NUL, padded to 64), bytes */
static void db_str(struct dbuf *b, const char *s)
{
	size_t n = strlen(s) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	db_u32(b, (uint32_t)len);
	db_put(b, s, n);
	db_zero(b, len - n);
}

struct pmu_perfdata_w {
	unsigned char *attr;   /* attr_sz bytes, size member trimmed */
	size_t attr_sz;
	uint64_t *ids;
	size_t nids;
	char *name;
	uint64_t sample_type;
	bool sample_id_all;
	int fd;                /* the data, waiting */
	uint64_t data_size;
	unsigned char *buf;    /* BUF_SIZE, not yet in fd */
	size_t nbuf;
	struct dbuf bids;      /* BUILD_ID section body, built as they come */
	uint64_t nbids;
	int err;               /* sticky */
};

static const size_t attr_vers[] = { 64, 72, 80, 96, 104, 112, 120, 128, 136 };

static size_t attr_trim(const unsigned char *a, size_t sz)
{
	size_t last = 0, i;

	for (i = 0; i < sz; i++)
		if (a[i])
			last = i + 1;
	for (i = 0; i < sizeof(attr_vers) / sizeof(attr_vers[0]); i++)
		if (attr_vers[i] >= last && attr_vers[i] <= sz)
			return attr_vers[i];
	return (sz + 7) / 8 * 8;
}

static int open_tmp(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
#endif
	/* a file system without O_TMPFILE: a named file, unlinked at once */
	if ((size_t)snprintf(path, sizeof(path), "%s/pmu-perfdata.XXXXXX", dir) >= sizeof(path))
		return pmu_error(PMU_ERR_INVAL, "temporary directory name too long: '%s'", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot create a temporary file in '%s': %s", dir, strerror(errno));
	unlink(path);
	return fd;
}

int pmu_perfdata_new(struct pmu_perfdata_w **wp, const struct perf_event_attr *attr, const uint64_t *ids,
		     size_t nids, const char *name, const char *tmpdir)
{
	struct pmu_perfdata_w *w;
	size_t sz = attr->size ? attr->size : PERF_ATTR_SIZE_VER0;
	int fd;

	*wp = NULL;
	if (sz < PERF_ATTR_SIZE_VER0 || sz > 4096)
		return pmu_error(PMU_ERR_INVAL, "perf_event_attr of %zu bytes", sz);
	w = calloc(1, sizeof(*w));
	if (!w)
		return PMU_ERR_NOMEM;
	w->fd = -1;
	w->attr = calloc(1, sz);
	w->ids = calloc(nids ? nids : 1, sizeof(*ids));
	w->name = strdup(name ? name : "unknown");
	w->buf = malloc(BUF_SIZE);
	if (!w->attr || !w->ids || !w->name || !w->buf) {
		pmu_perfdata_free(w);
		return PMU_ERR_NOMEM;
	}
	memcpy(w->attr, attr, sz);
	w->attr_sz = attr_trim(w->attr, sz);
	{
		uint32_t s32 = (uint32_t)w->attr_sz;

		memcpy(w->attr + offsetof(struct perf_event_attr, size), &s32, 4);
	}
	if (nids)
		memcpy(w->ids, ids, nids * sizeof(*ids));
	w->nids = nids;
	w->sample_type = attr->sample_type;
	w->sample_id_all = attr->sample_id_all;
	fd = open_tmp(tmpdir);
	if (fd < 0) {
		pmu_perfdata_free(w);
		return fd;
	}
	w->fd = fd;
	*wp = w;
	return 0;
}

static int flush(struct pmu_perfdata_w *w)
{
	size_t off = 0;

	while (off < w->nbuf) {
		ssize_t n = write(w->fd, w->buf + off, w->nbuf - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return w->err = pmu_error(PMU_ERR_IO, "cannot write perf.data's temporary file: %s",
						  n < 0 ? strerror(errno) : "short write");
		off += (size_t)n;
	}
	w->nbuf = 0;
	return 0;
}

static int put(struct pmu_perfdata_w *w, const void *p, size_t n)
{
	const unsigned char *c = p;

	if (w->err)
		return w->err;
	while (n) {
		size_t k = BUF_SIZE - w->nbuf;

		if (k > n)
			k = n;
		memcpy(w->buf + w->nbuf, c, k);
		w->nbuf += k;
		c += k;
		n -= k;
		w->data_size += k;
		if (w->nbuf == BUF_SIZE && flush(w))
			return w->err;
	}
	return 0;
}

/*
 * One record as the kernel wrote it.  A malformed record (a size that does
 * not fit in len) is refused and left out, and the writer goes on: that is
 * the caller's input, not the file's state.  An I/O error sticks.
 */
int pmu_perfdata_record(struct pmu_perfdata_w *w, const void *rec, size_t len)
{
	struct perf_event_header h;

	if (w->err)
		return w->err;
	if (len < sizeof(h))
		return pmu_error(PMU_ERR_CORRUPT, "perf record of %zu bytes", len);
	memcpy(&h, rec, sizeof(h));
	if (h.size < sizeof(h) || h.size > len)
		return pmu_error(PMU_ERR_CORRUPT, "perf record of size %u in %zu bytes", h.size, len);
	return put(w, rec, h.size);
}

/*
 * The sample_id trailer of a non-sample record (perf_event_open(2),
 * sample_id_all): the fields sample_type asks for, in the kernel's order.
 * Synthesized records take the first event's id and CPU 0 (unknown: perf
 * reads them as its own synthesized records, which carry zeros).
 */
static size_t id_trailer(const struct pmu_perfdata_w *w, unsigned char *p, pid_t pid, pid_t tid, uint64_t t)
{
	uint64_t st = w->sample_type, id = w->nids ? w->ids[0] : 0;
	size_t n = 0;

	if (!w->sample_id_all)
		return 0;
	if (st & PERF_SAMPLE_TID) {
		uint32_t v[2] = { (uint32_t)pid, (uint32_t)tid };

		memcpy(p + n, v, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		memcpy(p + n, &t, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		memcpy(p + n, &id, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		memcpy(p + n, &id, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		memset(p + n, 0, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		memcpy(p + n, &id, 8);
		n += 8;
	}
	return n;
}

#define TRAILER_MAX 48

int pmu_perfdata_comm(struct pmu_perfdata_w *w, pid_t pid, pid_t tid, const char *comm, uint64_t t, bool exec)
{
	unsigned char rec[8 + 8 + 24 + TRAILER_MAX];
	struct perf_event_header h = { PERF_RECORD_COMM, PERF_RECORD_MISC_USER, 0 };
	size_t cl = strnlen(comm, 15), pad = (cl + 1 + 7) / 8 * 8, n = 8;
	uint32_t pt[2] = { (uint32_t)pid, (uint32_t)tid };

	if (w->err)
		return w->err;
	if (exec)
		h.misc |= PERF_RECORD_MISC_COMM_EXEC;
	memcpy(rec + n, pt, 8);
	n += 8;
	memset(rec + n, 0, pad);
	memcpy(rec + n, comm, cl);
	n += pad;
	n += id_trailer(w, rec + n, pid, tid, t);
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	return put(w, rec, n);
}

int pmu_perfdata_mmap2(struct pmu_perfdata_w *w, pid_t pid, pid_t tid, uint64_t start, uint64_t len,
		       uint64_t pgoff, uint32_t prot, uint32_t flags, const char *path, const unsigned char *bid,
		       size_t bid_len, uint64_t t)
{
	unsigned char hd[8 + 8 + 24 + 24 + 8], tr[TRAILER_MAX], zero[8] = { 0 };
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 0 };
	uint32_t pt[2] = { (uint32_t)pid, (uint32_t)tid }, pf[2] = { prot, flags };
	uint64_t a[3] = { start, len, pgoff };
	size_t pl = strlen(path), pad = (pl + 1 + 7) / 8 * 8, tn, n;
	int err;

	if (w->err)
		return w->err;
	tn = id_trailer(w, tr, pid, tid, t);
	n = sizeof(hd) + pad + tn;
	if (n > UINT16_MAX)
		return pmu_error(PMU_ERR_LIMIT, "mapping path too long for an MMAP2 record: '%s'", path);
	if (bid && (bid_len == 0 || bid_len > 20))
		return pmu_error(PMU_ERR_INVAL, "build-id of %zu bytes", bid_len);
	memset(hd, 0, sizeof(hd));
	memcpy(hd + 8, pt, 8);
	memcpy(hd + 16, a, 24);
	/* maj, min, ino, ino_generation, or the build-id variant of the union:
	 * u8 size, 3 reserved bytes, build_id[20] */
	if (bid) {
		h.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		hd[40] = (unsigned char)bid_len;
		memcpy(hd + 44, bid, bid_len);
	}
	if (!(prot & 4 /* PROT_EXEC */))
		h.misc |= PERF_RECORD_MISC_MMAP_DATA;
	memcpy(hd + 64, pf, 8);
	h.size = (uint16_t)n;
	memcpy(hd, &h, sizeof(h));
	err = put(w, hd, sizeof(hd));
	if (!err)
		err = put(w, path, pl);
	if (!err)
		err = put(w, zero, pad - pl);
	if (!err)
		err = put(w, tr, tn);
	return err;
}

/*
 * perf_event__synthesize_kernel_mmap's record: PERF_RECORD_MMAP, misc
 * KERNEL, pid -1 (the host machine), tid 0, the file name perf's
 * machine__process_kernel_mmap_event takes for the host kernel with its
 * reference symbol ("_text"), whose address is the pgoff.
 */
int pmu_perfdata_kernel_mmap(struct pmu_perfdata_w *w, uint64_t text, uint64_t t)
{
	static const char name[] = "[kernel.kallsyms]_text"; /* 23 bytes with the NUL: 24 padded */
	unsigned char rec[8 + 8 + 24 + 24 + TRAILER_MAX] = { 0 };
	struct perf_event_header h = { PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 0 };
	uint32_t pt[2] = { (uint32_t)-1, 0 };
	uint64_t a[3] = { text, ~0ull - text, text };
	size_t n = 8;

	if (w->err)
		return w->err;
	if (!text)
		return pmu_error(PMU_ERR_INVAL, "the kernel's _text at address 0 (kallsyms restricted)");
	memcpy(rec + n, pt, 8);
	n += 8;
	memcpy(rec + n, a, 24);
	n += 24;
	memcpy(rec + n, name, sizeof(name));
	n += 24;
	n += id_trailer(w, rec + n, -1, 0, t);
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	return put(w, rec, n);
}

/*
 * struct build_id_event (perf's perf_record_header_build_id): header (misc:
 * the cpumode, and BUILD_ID_SIZE with the size at build_id[20]), pid,
 * build_id[24], the file name padded with NULs to a multiple of 64.  The
 * pid is the machine's, not the process's (perf_session__findnew_machine):
 * -1 (HOST_KERNEL_ID) for the host, which is all we write.
 */
int pmu_perfdata_build_id(struct pmu_perfdata_w *w, pid_t pid, bool kernel, const char *path,
			  const unsigned char *bid, size_t bid_len)
{
	unsigned char ev[BUILD_ID_EVENT_SIZE] = { 0 };
	struct perf_event_header h = { 0, 0, 0 };
	size_t n = strlen(path) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	int32_t machine = -1;

	(void)pid;
	if (w->err)
		return w->err;
	if (!bid || bid_len == 0 || bid_len > 20)
		return pmu_error(PMU_ERR_INVAL, "build-id of %zu bytes for '%s'", bid_len, path);
	if (BUILD_ID_EVENT_SIZE + len > UINT16_MAX)
		return pmu_error(PMU_ERR_LIMIT, "path too long for a build-id entry: '%s'", path);
	h.misc = (kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) | PERF_RECORD_MISC_BUILD_ID_SIZE;
	h.size = (uint16_t)(BUILD_ID_EVENT_SIZE + len);
	memcpy(ev, &h, sizeof(h));
	memcpy(ev + 8, &machine, 4);
	memcpy(ev + 12, bid, bid_len);
	ev[12 + 20] = (unsigned char)bid_len;
	db_put(&w->bids, ev, sizeof(ev));
	db_put(&w->bids, path, n);
	db_zero(&w->bids, len - n);
	if (w->bids.oom)
		return w->err = PMU_ERR_NOMEM;
	w->nbids++;
	return 0;
}

struct blob {
	struct pmu_out *out;
	struct pmu_stream *s;
	int err;
};

static void bput(struct blob *b, const void *p, size_t n)
{
	if (!b->err && n)
		b->err = b->out->blob_write(b->s, p, n);
}

int pmu_perfdata_finish(struct pmu_perfdata_w *w, const struct pmu_perfdata_host *h, struct pmu_out *out,
			const char *rel)
{
	struct dbuf feat[FEAT_BITS];
	uint64_t bitmap[FEAT_BITS / 64] = { 0 }, off, hdr[13];
	uint64_t attr_off = FILE_HEADER_SIZE, ids_off, data_off, feat_off;
	struct blob b = { out, NULL, 0 };
	size_t i, nfeat = 0;
	int err = w->err;

	memset(feat, 0, sizeof(feat));
	if (!err && !out->blob_open)
		err = pmu_error(PMU_ERR_UNSUPPORTED, "this bundle writer takes no binary files");
	if (!err)
		err = flush(w);
	if (err)
		goto out;

	/* the features' bodies, in memory (host strings, names, build-ids) */
	if (w->nbids) {
		db_put(&feat[FEAT_BUILD_ID], w->bids.p, w->bids.n);
	}
	if (h && h->hostname)
		db_str(&feat[FEAT_HOSTNAME], h->hostname);
	if (h && h->osrelease)
		db_str(&feat[FEAT_OSRELEASE], h->osrelease);
	if (h && h->version)
		db_str(&feat[FEAT_VERSION], h->version);
	if (h && h->arch)
		db_str(&feat[FEAT_ARCH], h->arch);
	if (h && (h->nr_cpus_avail || h->nr_cpus_online)) {
		db_u32(&feat[FEAT_NRCPUS], h->nr_cpus_avail);
		db_u32(&feat[FEAT_NRCPUS], h->nr_cpus_online);
	}
	if (h && h->cmdline && h->ncmdline) {
		db_u32(&feat[FEAT_CMDLINE], (uint32_t)h->ncmdline);
		for (i = 0; i < h->ncmdline; i++)
			db_str(&feat[FEAT_CMDLINE], h->cmdline[i] ? h->cmdline[i] : "");
	}
	/* EVENT_DESC: nr, attr_size, then per event: attr, nr_ids, name, ids */
	db_u32(&feat[FEAT_EVENT_DESC], 1);
	db_u32(&feat[FEAT_EVENT_DESC], (uint32_t)w->attr_sz);
	db_put(&feat[FEAT_EVENT_DESC], w->attr, w->attr_sz);
	db_u32(&feat[FEAT_EVENT_DESC], (uint32_t)w->nids);
	db_str(&feat[FEAT_EVENT_DESC], w->name);
	db_put(&feat[FEAT_EVENT_DESC], w->ids, w->nids * 8);
	if (h) {
		struct timespec res, mono, real;

		/* CLOCKID: the clock's resolution in ns; CLOCK_DATA: version 1,
		 * the clockid, the wall clock and the clock read together */
		if (!clock_getres(h->clockid, &res))
			db_u64(&feat[FEAT_CLOCKID], (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec);
		if (!clock_gettime(CLOCK_REALTIME, &real) && !clock_gettime(h->clockid, &mono)) {
			db_u32(&feat[FEAT_CLOCK_DATA], 1);
			db_u32(&feat[FEAT_CLOCK_DATA], (uint32_t)h->clockid);
			db_u64(&feat[FEAT_CLOCK_DATA], (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec);
			db_u64(&feat[FEAT_CLOCK_DATA], (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec);
		}
	}
	for (i = 0; i < FEAT_BITS; i++) {
		if (feat[i].oom) {
			err = PMU_ERR_NOMEM;
			goto out;
		}
		if (feat[i].n) {
			bitmap[i / 64] |= 1ull << (i % 64);
			nfeat++;
		}
	}

	ids_off = attr_off + w->attr_sz + 16;
	data_off = ids_off + w->nids * 8;
	feat_off = data_off + w->data_size;

	memcpy(&hdr[0], magic2, 8);
	hdr[1] = FILE_HEADER_SIZE;
	hdr[2] = w->attr_sz + 16;
	hdr[3] = attr_off;
	hdr[4] = w->attr_sz + 16;
	hdr[5] = data_off;
	hdr[6] = w->data_size;
	hdr[7] = 0; /* event_types: unused since perf 2.6.x */
	hdr[8] = 0;
	memcpy(&hdr[9], bitmap, sizeof(bitmap));

	err = out->blob_open(out, rel, false, &b.s);
	if (err)
		goto out;
	bput(&b, hdr, sizeof(hdr));
	bput(&b, w->attr, w->attr_sz);
	{
		uint64_t sec[2] = { ids_off, w->nids * 8 };

		bput(&b, sec, sizeof(sec));
	}
	bput(&b, w->ids, w->nids * 8);

	/* the data, from the temporary file */
	for (off = 0; !b.err && off < w->data_size;) {
		ssize_t n = pread(w->fd, w->buf, BUF_SIZE, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			b.err = pmu_error(PMU_ERR_IO, "cannot read perf.data's temporary file: %s",
					  n < 0 ? strerror(errno) : "short read");
			break;
		}
		bput(&b, w->buf, (size_t)n);
		off += (uint64_t)n;
	}

	/* the feature headers, then the bodies */
	off = feat_off + nfeat * 16;
	for (i = 0; i < FEAT_BITS; i++)
		if (feat[i].n) {
			uint64_t sec[2] = { off, feat[i].n };

			bput(&b, sec, sizeof(sec));
			off += feat[i].n;
		}
	for (i = 0; i < FEAT_BITS; i++)
		bput(&b, feat[i].p, feat[i].n);
	err = b.err;
	{
		int e2 = out->close(b.s);

		err = err ? err : e2;
	}
out:
	for (i = 0; i < FEAT_BITS; i++)
		free(feat[i].p);
	w->err = err ? err : PMU_ERR_INVAL; /* spent */
	return err;
}

void pmu_perfdata_free(struct pmu_perfdata_w *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->attr);
	free(w->ids);
	free(w->name);
	free(w->buf);
	free(w->bids.p);
	free(w);
}

/* ------------------------------------------------------------------ */
/* The reader                                                           */
/* ------------------------------------------------------------------ */

/*
 * Forward only: every byte is read once, in file order, and what an offset
 * names must lie ahead of (or, for the ids, inside a gap already passed
 * before the data section) what was read.  Limits keep the memory fixed:
 * attrs entries of at most 1 KiB, at most 256 attrs, records of at most
 * 64 KiB (their size is a u16).
 */
#define SCAN_MAX_ATTRS 256
#define SCAN_MAX_ATTR_SIZE 1024

struct scan {
	long (*rd)(void *ctx, void *buf, size_t n);
	void *ctx;
	uint64_t pos;
	char *why;
	size_t whylen;
	unsigned char buf[65536];
};

__attribute__((format(printf, 2, 3)))
static int refuse(struct scan *s, const char *fmt, ...)
{
	va_list ap;

	if (s->whylen) {
		va_start(ap, fmt);
		vsnprintf(s->why, s->whylen, fmt, ap);
		va_end(ap);
	}
	return PMU_ERR_CORRUPT;
}

/* Read n bytes into p (or drop them when p is NULL); what: for the message */
static int rd_exact(struct scan *s, void *p, uint64_t n, const char *what)
{
	while (n) {
		size_t k = n > sizeof(s->buf) ? sizeof(s->buf) : (size_t)n;
		long got = s->rd(s->ctx, p ? p : s->buf, k);

		if (got < 0) {
			if (s->whylen)
				snprintf(s->why, s->whylen, "read error at byte %" PRIu64, s->pos);
			return PMU_ERR_IO;
		}
		s->pos += (uint64_t)got;
		if ((size_t)got < k)
			return refuse(s, "file ends at byte %" PRIu64 " inside %s", s->pos, what);
		if (p)
			p = (unsigned char *)p + got;
		n -= (uint64_t)got;
	}
	return 0;
}

static int skip_to(struct scan *s, uint64_t off, const char *what)
{
	if (off < s->pos)
		return refuse(s, "%s at byte %" PRIu64 " lies behind byte %" PRIu64 " (overlapping or out of order)",
			      what, off, s->pos);
	return rd_exact(s, NULL, off - s->pos, what);
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

struct sec {
	uint64_t off, size;
	int bit;
};

static bool overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return an && bn && a < b + bn && b < a + an;
}

static int cmp_sec(const void *a, const void *b)
{
	const struct sec *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int scan_build_ids(struct scan *s, uint64_t size, struct pmu_perfdata_stats *st)
{
	uint64_t left = size;

	while (left) {
		unsigned char h[8];
		uint16_t sz;
		int err;

		if (left < BUILD_ID_EVENT_SIZE)
			return refuse(s, "BUILD_ID section: %" PRIu64 " bytes left, less than an entry", left);
		if ((err = rd_exact(s, h, 8, "the BUILD_ID section")))
			return err;
		memcpy(&sz, h + 6, 2);
		if (sz < BUILD_ID_EVENT_SIZE + 1 || sz > left)
			return refuse(s, "BUILD_ID entry at byte %" PRIu64 " has size %u (%" PRIu64 " bytes left)",
				      s->pos - 8, sz, left);
		if ((err = rd_exact(s, s->buf, sz - 8u, "a BUILD_ID entry")))
			return err;
		/* perf copies `size` bytes into a 20-byte build-id: a larger
		 * size smashes perf 6.1's stack (seen: buildid-list aborts) */
		if ((h[4] | h[5] << 8) & PERF_RECORD_MISC_BUILD_ID_SIZE && s->buf[4 + 20] > 20)
			return refuse(s, "BUILD_ID entry at byte %" PRIu64 " says its build-id has %u bytes (20 at most)",
				      s->pos - sz, s->buf[4 + 20]);
		if (!memchr(s->buf + BUILD_ID_EVENT_SIZE - 8, 0, sz - BUILD_ID_EVENT_SIZE))
			return refuse(s, "BUILD_ID entry at byte %" PRIu64 ": file name without its NUL", s->pos - sz);
		left -= sz;
		st->build_ids++;
	}
	return 0;
}

int pmu_perfdata_scan(long (*rd)(void *ctx, void *buf, size_t n), void *ctx, struct pmu_perfdata_stats *st,
		      char *why, size_t whylen)
{
	struct scan *s;
	struct sec *idsec = NULL, feats[FEAT_BITS];
	unsigned char hdr[FILE_HEADER_SIZE], *ab;
	uint64_t attr_size, attrs_off, attrs_size, data_off, data_size, et_off, et_size, bm[4], nattrs, i, end;
	size_t nfeat = 0;
	int err;

	memset(st, 0, sizeof(*st));
	if (whylen)
		why[0] = 0;
	s = calloc(1, sizeof(*s));
	ab = malloc(SCAN_MAX_ATTR_SIZE);
	idsec = calloc(SCAN_MAX_ATTRS, sizeof(*idsec));
	if (!s || !ab || !idsec) {
		free(s);
		free(ab);
		free(idsec);
		return PMU_ERR_NOMEM;
	}
	s->rd = rd;
	s->ctx = ctx;
	s->why = why;
	s->whylen = whylen;

	if ((err = rd_exact(s, hdr, sizeof(hdr), "the file header")))
		goto out;
	if (memcmp(hdr, magic2, 8)) {
		err = !memcmp(hdr, "2ELIFREP", 8) ? refuse(s, "a perf.data of the other byte order")
			: !memcmp(hdr, "PERFFILE", 8) ? refuse(s, "a version 1 perf.data (PERFFILE), not PERFILE2")
			: refuse(s, "no PERFILE2 magic");
		goto out;
	}
	if (le64(hdr + 8) != FILE_HEADER_SIZE) {
		err = refuse(s, "header size %" PRIu64 ", not %d", le64(hdr + 8), FILE_HEADER_SIZE);
		goto out;
	}
	attr_size = le64(hdr + 16);
	attrs_off = le64(hdr + 24);
	attrs_size = le64(hdr + 32);
	data_off = le64(hdr + 40);
	data_size = le64(hdr + 48);
	et_off = le64(hdr + 56);
	et_size = le64(hdr + 64);
	for (i = 0; i < 4; i++)
		bm[i] = le64(hdr + 72 + 8 * i);
	st->features = bm[0];

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > SCAN_MAX_ATTR_SIZE) {
		err = refuse(s, "attr_size %" PRIu64 " outside [%d, %d]", attr_size, PERF_ATTR_SIZE_VER0 + 16,
			     SCAN_MAX_ATTR_SIZE);
		goto out;
	}
	if (attrs_size % attr_size) {
		err = refuse(s, "attrs section of %" PRIu64 " bytes is not a multiple of attr_size %" PRIu64,
			     attrs_size, attr_size);
		goto out;
	}
	nattrs = attrs_size / attr_size;
	if (nattrs == 0 || nattrs > SCAN_MAX_ATTRS) {
		err = refuse(s, "%" PRIu64 " attrs (1 to %d taken)", nattrs, SCAN_MAX_ATTRS);
		goto out;
	}
	/* header < attrs < data, none overlapping; data's end must not wrap */
	if (attrs_off < FILE_HEADER_SIZE || attrs_off > UINT64_MAX - attrs_size ||
	    data_off < attrs_off + attrs_size || data_off > UINT64_MAX - data_size ||
	    data_off + data_size > UINT64_MAX / 2) {
		err = refuse(s, "sections out of order or overlapping: header %d, attrs [%" PRIu64 ", +%" PRIu64
			     "), data [%" PRIu64 ", +%" PRIu64 ")", FILE_HEADER_SIZE, attrs_off, attrs_size,
			     data_off, data_size);
		goto out;
	}
	if (et_size && (et_off < FILE_HEADER_SIZE || et_off > data_off || et_size > data_off - et_off ||
			overlaps(et_off, et_size, attrs_off, attrs_size))) {
		err = refuse(s, "event_types section [%" PRIu64 ", +%" PRIu64 ") overlaps another or lies "
			     "outside the space before the data", et_off, et_size);
		goto out;
	}

	if ((err = skip_to(s, attrs_off, "the attrs section")))
		goto out;
	for (i = 0; i < nattrs; i++) {
		uint32_t asz;
		uint64_t ioff, isz, j;

		if ((err = rd_exact(s, ab, attr_size, "the attrs section")))
			goto out;
		asz = le32(ab + 4);
		if (!asz)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz + 16 != attr_size) {
			err = refuse(s, "attr %" PRIu64 " has size %u, the header's attr_size %" PRIu64 " less 16",
				     i, asz, attr_size);
			goto out;
		}
		if (i == 0)
			st->sample_type = le64(ab + 24);
		ioff = le64(ab + asz);
		isz = le64(ab + asz + 8);
		if (isz % 8 || ioff < FILE_HEADER_SIZE || ioff > data_off || isz > data_off - ioff ||
		    overlaps(ioff, isz, attrs_off, attrs_size) || overlaps(ioff, isz, et_off, et_size)) {
			err = refuse(s, "attr %" PRIu64 "'s ids [%" PRIu64 ", +%" PRIu64 ") overlap another section "
				     "or lie outside the space before the data", i, ioff, isz);
			goto out;
		}
		for (j = 0; j < i; j++)
			if (overlaps(ioff, isz, idsec[j].off, idsec[j].size)) {
				err = refuse(s, "the ids of attrs %" PRIu64 " and %" PRIu64 " overlap", j, i);
				goto out;
			}
		idsec[i].off = ioff;
		idsec[i].size = isz;
		st->nids += isz / 8;
	}
	st->nattrs = nattrs;

	if ((err = skip_to(s, data_off, "the data section")))
		goto out;
	end = data_off + data_size;
	while (s->pos < end) {
		struct perf_event_header h;
		uint64_t left = end - s->pos;

		if (left < sizeof(h)) {
			err = refuse(s, "data section ends %" PRIu64 " bytes into a record header at byte %" PRIu64,
				     left, s->pos);
			goto out;
		}
		if ((err = rd_exact(s, &h, sizeof(h), "the data section")))
			goto out;
		if (h.size < sizeof(h) || h.size - sizeof(h) > left - sizeof(h)) {
			err = refuse(s, "record at byte %" PRIu64 " (type %u, size %u) overruns the data section, "
				     "which ends at byte %" PRIu64, s->pos - sizeof(h), h.type, h.size, end);
			goto out;
		}
		if ((err = rd_exact(s, s->buf, h.size - sizeof(h), "a record")))
			goto out;
		st->records++;
		switch (h.type) {
		case PERF_RECORD_SAMPLE: st->samples++; break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2: st->mmaps++; break;
		case PERF_RECORD_COMM: st->comms++; break;
		case PERF_RECORD_FORK: st->forks++; break;
		case PERF_RECORD_EXIT: st->exits++; break;
		case PERF_RECORD_THROTTLE: st->throttles++; break;
		case PERF_RECORD_UNTHROTTLE: st->unthrottles++; break;
		case PERF_RECORD_LOST:
			if (h.size < sizeof(h) + 16) {
				err = refuse(s, "LOST record at byte %" PRIu64 " of %u bytes", s->pos - h.size, h.size);
				goto out;
			}
			st->lost_records += le64(s->buf + 8);
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (h.size < sizeof(h) + 8) {
				err = refuse(s, "LOST_SAMPLES record at byte %" PRIu64 " of %u bytes", s->pos - h.size,
					     h.size);
				goto out;
			}
			st->lost_samples += le64(s->buf);
			break;
		default: break;
		}
	}

	/* the feature sections: a {offset, size} per bit set, in bit order */
	for (i = 0; i < FEAT_BITS; i++) {
		unsigned char sec[16];

		if (!(bm[i / 64] >> (i % 64) & 1))
			continue;
		if ((err = rd_exact(s, sec, 16, "the feature section headers")))
			goto out;
		feats[nfeat].off = le64(sec);
		feats[nfeat].size = le64(sec + 8);
		feats[nfeat].bit = (int)i;
		if (feats[nfeat].off > UINT64_MAX / 2 || feats[nfeat].size > UINT64_MAX / 2) {
			err = refuse(s, "feature %" PRIu64 "'s section [%" PRIu64 ", +%" PRIu64 ") lies outside any file",
				     i, feats[nfeat].off, feats[nfeat].size);
			goto out;
		}
		nfeat++;
	}
	qsort(feats, nfeat, sizeof(feats[0]), cmp_sec);
	for (i = 0; i < nfeat; i++) {
		char what[48];

		snprintf(what, sizeof(what), "feature %d's section", feats[i].bit);
		if (feats[i].off < s->pos) {
			err = refuse(s, "%s at byte %" PRIu64 " overlaps what lies before it (byte %" PRIu64 ")", what,
				     feats[i].off, s->pos);
			goto out;
		}
		if ((err = skip_to(s, feats[i].off, what)))
			goto out;
		if (feats[i].bit == FEAT_BUILD_ID)
			err = scan_build_ids(s, feats[i].size, st);
		else
			err = rd_exact(s, NULL, feats[i].size, what);
		if (err)
			goto out;
	}
	/* whatever follows the last section is read (size) but not judged */
	for (;;) {
		long got = rd(ctx, s->buf, sizeof(s->buf));

		if (got < 0) {
			if (whylen)
				snprintf(why, whylen, "read error at byte %" PRIu64, s->pos);
			err = PMU_ERR_IO;
			goto out;
		}
		if (got == 0)
			break;
		s->pos += (uint64_t)got;
	}
out:
	st->size = s->pos;
	free(s);
	free(ab);
	free(idsec);
	return err;
}
