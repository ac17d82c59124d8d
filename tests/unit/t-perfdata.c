/*
 * t-perfdata: lib/perfdata.c against the real kernel and Debian's perf.
 *
 * The test samples itself: a cpu-clock sampling event on its own busy
 * thread (perf_event_open, an mmap'd ring), the kernel's records fed to the
 * writer with a synthesized COMM and MMAP2s of its own executable (with
 * its build-id, from its PT_NOTE) and the libraries it maps, written through
 * a small pmu_out that writes a file.  Then `perf script -i`, `perf report
 * -i --stdio` and `perf buildid-list -i` read it: no warning, the same
 * sample count, this test's own function names, the build-id; and
 * pmu_perfdata_scan agrees with the counts.  The scanner's refusals
 * (truncated file, overlapping sections, a record overrunning the data)
 * are checked on mutated copies.  Without perf_event_open or perf, the
 * parts that need them skip with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "error.h"
#include "perfdata.h"
#include "tap.h"

/* ---- a pmu_out that writes one file ---- */

struct fout {
	struct pmu_out o;
	char path[512];
	FILE *f;
};

static int fo_blob_open(struct pmu_out *o, const char *rel, bool shared, struct pmu_stream **s)
{
	struct fout *fo = o->ctx;

	(void)shared;
	snprintf(fo->path + strlen(fo->path), sizeof(fo->path) - strlen(fo->path), "/%s", rel);
	fo->f = fopen(fo->path, "wb");
	if (!fo->f)
		return PMU_ERR_IO;
	*s = (struct pmu_stream *)fo;
	return 0;
}

static int fo_blob_write(struct pmu_stream *s, const void *p, size_t n)
{
	struct fout *fo = (struct fout *)s;

	return fwrite(p, 1, n, fo->f) == n ? 0 : PMU_ERR_IO;
}

static int fo_close(struct pmu_stream *s)
{
	struct fout *fo = (struct fout *)s;

	return fclose(fo->f) ? PMU_ERR_IO : 0;
}

/* ---- the sampled work ---- */

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t pd_busy_inner(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static void pd_busy_loop(uint64_t ns)
{
	struct timespec a, b;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100; i++)
			x = pd_busy_inner(x);
		/* some kernel time too: samples in [kernel.kallsyms] */
		for (int i = 0; i < 20; i++)
			x += (uint64_t)syscall(SYS_getppid);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)(b.tv_nsec - a.tv_nsec) < ns);
	sink = x;
}

/* ---- the executable's build-id and maps ---- */

static unsigned char exe_bid[20];
static size_t exe_bid_len;

static int find_bid(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program is the one without a name */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *e = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + 12 <= e) {
			uint32_t nsz, dsz, type;

			memcpy(&nsz, p, 4);
			memcpy(&dsz, p + 4, 4);
			memcpy(&type, p + 8, 4);
			p += 12;
			if (type == 3 /* NT_GNU_BUILD_ID */ && nsz == 4 && !memcmp(p, "GNU", 4) && dsz <= 20) {
				memcpy(exe_bid, p + 4, dsz);
				exe_bid_len = dsz;
				return 1;
			}
			p += (nsz + 3) / 4 * 4 + (dsz + 3) / 4 * 4;
		}
	}
	return 1;
}

/* _text's address, 0 when kallsyms is restricted */
static uint64_t kernel_text(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256];
	unsigned long long a;
	char ty;
	uint64_t r = 0;

	if (!f)
		return 0;
	for (int i = 0; i < 100000 && fgets(line, sizeof(line), f); i++)
		if (sscanf(line, "%llx %c %255s", &a, &ty, name) == 3 && !strcmp(name, "_text")) {
			r = a;
			break;
		}
	fclose(f);
	return r;
}

/* the running kernel's build-id, from /sys/kernel/notes (ELF notes) */
static size_t kernel_bid(unsigned char *bid)
{
	unsigned char b[4096];
	size_t n = 0, off = 0;
	FILE *f = fopen("/sys/kernel/notes", "rb");

	if (!f)
		return 0;
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	while (off + 12 <= n) {
		uint32_t nsz, dsz, type;

		memcpy(&nsz, b + off, 4);
		memcpy(&dsz, b + off + 4, 4);
		memcpy(&type, b + off + 8, 4);
		off += 12;
		if (type == 3 && nsz == 4 && off + 4 + dsz <= n && !memcmp(b + off, "GNU", 4) && dsz <= 20) {
			memcpy(bid, b + off + 4, dsz);
			return dsz;
		}
		off += (nsz + 3) / 4 * 4 + (dsz + 3) / 4 * 4;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* MMAP2s of every executable file mapping of this process; returns how many */
static int synth_maps(struct pmu_perfdata_w *w, const char *exe, uint64_t t)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], path[2048] = "";
		uint32_t prot = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %2047[^\n]", &lo, &hi, perms, &off, path) < 4)
			continue;
		if (perms[2] != 'x' || path[0] != '/')
			continue;
		prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) | 4;
		bool me = !strcmp(path, exe);
		if (pmu_perfdata_mmap2(w, getpid(), (pid_t)syscall(SYS_gettid), lo, hi - lo, off, prot, MAP_PRIVATE,
				       path, me ? exe_bid : NULL, me ? exe_bid_len : 0, t))
			return -1;
		n++;
	}
	fclose(f);
	return n;
}

/* ---- running perf ---- */

/* Run argv with stdout and stderr into files; returns the exit status */
static int run(char *const argv[], const char *out, const char *err)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			b = realloc(b, cap);
		}
		size_t k = fread(b + n, 1, 4096, f);
		n += k;
		if (k < 4096)
			break;
	}
	fclose(f);
	b[n] = 0;
	if (len)
		*len = n;
	return b;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- the scanner over memory ---- */

struct mem {
	const unsigned char *p;
	size_t n, off;
};

static long mem_rd(void *ctx, void *buf, size_t n)
{
	struct mem *m = ctx;
	size_t k = m->n - m->off < n ? m->n - m->off : n;

	memcpy(buf, m->p + m->off, k);
	m->off += k;
	return (long)k;
}

static int scan_mem(const void *p, size_t n, struct pmu_perfdata_stats *st, char *why, size_t wl)
{
	struct mem m = { p, n, 0 };

	return pmu_perfdata_scan(mem_rd, &m, st, why, wl);
}

static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void negative_tests(const unsigned char *file, size_t n)
{
	struct pmu_perfdata_stats st;
	unsigned char *c = malloc(n);
	char why[256];
	int err;

	/* truncated: the file cut in the middle of its data section */
	err = scan_mem(file, get64(file + 40) + get64(file + 48) / 2 + 3, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "ends"), "scan refuses a truncated file (%s)", why);
	err = scan_mem(file, 50, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "header"), "scan refuses a truncated header (%s)", why);

	/* overlapping sections: data starting inside the attrs */
	memcpy(c, file, n);
	put64(c + 40, get64(c + 24) + 8);
	err = scan_mem(c, n, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "overlapping"), "scan refuses data overlapping the attrs (%s)", why);

	/* the ids pointing into the attrs */
	memcpy(c, file, n);
	{
		uint64_t aoff = get64(c + 24), asz = get64(c + 16);

		put64(c + aoff + asz - 16, aoff);
	}
	err = scan_mem(c, n, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "ids"), "scan refuses ids overlapping the attrs (%s)", why);

	/* a feature section pointing back into the data */
	memcpy(c, file, n);
	put64(c + get64(c + 40) + get64(c + 48), get64(c + 40));
	err = scan_mem(c, n, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "overlaps"), "scan refuses a feature section inside the data (%s)", why);

	/* a record overrunning the data section: the data section made 8
	 * bytes shorter, so its last record runs past its end */
	memcpy(c, file, n);
	put64(c + 48, get64(c + 48) - 8);
	err = scan_mem(c, n, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "overruns"), "scan refuses a record overrunning the data (%s)", why);

	/* a record of size 0 */
	memcpy(c, file, n);
	memset(c + get64(c + 40) + 6, 0, 2);
	err = scan_mem(c, n, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "size 0"), "scan refuses a record of size 0 (%s)", why);

	/* a build-id entry whose size byte says more than 20 bytes (perf
	 * would copy them into its 20-byte buffer); the BUILD_ID section is
	 * the first feature's */
	memcpy(c, file, n);
	{
		uint64_t bo = get64(c + get64(c + 40) + get64(c + 48));

		c[bo + 12 + 20] = 164;
	}
	err = scan_mem(c, n, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "164 bytes"), "scan refuses a build-id of 164 bytes (%s)", why);

	/* not perf.data */
	memcpy(c, file, n);
	c[0] = 'X';
	err = scan_mem(c, n, &st, why, sizeof(why));
	ok(err == PMU_ERR_CORRUPT && strstr(why, "magic"), "scan refuses a file without the magic (%s)", why);
	free(c);
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr;
	struct pmu_perfdata_w *w = NULL;
	struct pmu_perfdata_stats st;
	char dir[] = "/tmp/t-perfdata.XXXXXX", exe[1024], comm[32] = "t-perfdata", why[256], file[600], cmd_out[600],
	     cmd_err[600];
	uint64_t id = 0, nsamples = 0, nrecords = 0, t0, ktext;
	unsigned char kbid[20];
	size_t kbid_len = 0;
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE), npages = 64, flen;
	unsigned char *ring, *file_bytes;
	int fd, err, nmaps;
	struct utsname un;

	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(file, sizeof(file), "%s/perf.data", dir);
	snprintf(cmd_out, sizeof(cmd_out), "%s/out", dir);
	snprintf(cmd_err, sizeof(cmd_err), "%s/err", dir);
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = 0;
	dl_iterate_phdr(find_bid, NULL);
	ok(exe_bid_len == 20, "this test's own build-id is found (%zu bytes)", exe_bid_len);
	{
		FILE *f = fopen("/proc/self/comm", "r");

		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
	}

	/* the writer refuses a malformed record and goes on */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 100000; /* 10 kHz of cpu-clock ns */
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	attr.disabled = 1;
	/* the kernel too when its map can be named (root, kptr_restrict) */
	ktext = kernel_text();
	attr.exclude_kernel = ktext == 0;
	attr.exclude_hv = 1;
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;

	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		char r[160];

		snprintf(r, sizeof(r), "perf_event_open(cpu-clock) on this thread: %s (perf_event_paranoid?)",
			 strerror(errno));
		skip("%s", r);
		return done_testing();
	}
	ioctl(fd, PERF_EVENT_IOC_ID, &id);
	ring = mmap(NULL, (npages + 1) * pagesz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		printf("Bail out! mmap of the ring: %s\n", strerror(errno));
		return 1;
	}
	err = pmu_perfdata_new(&w, &attr, &id, 1, "cpu-clock", dir);
	ok(!err, "writer made (%s)", err ? pmu_strerror(err) : "ok");
	if (err)
		return done_testing();
	{
		unsigned char bad[16] = { 0 };

		bad[6] = 64; /* size 64 in 16 bytes */
		ok(pmu_perfdata_record(w, bad, sizeof(bad)) == PMU_ERR_CORRUPT, "a record larger than its bytes is refused");
	}

	t0 = now_ns();
	ok(!pmu_perfdata_comm(w, getpid(), (pid_t)syscall(SYS_gettid), comm, t0, true), "COMM synthesized");
	nmaps = synth_maps(w, exe, t0);
	ok(nmaps >= 1, "MMAP2s synthesized for the executable mappings (%d)", nmaps);
	ok(!pmu_perfdata_build_id(w, getpid(), false, exe, exe_bid, exe_bid_len), "build-id entry for %s", exe);
	if (ktext) {
		ok(!pmu_perfdata_kernel_mmap(w, ktext, t0), "kernel MMAP synthesized (_text at 0x%" PRIx64 ")", ktext);
		kbid_len = kernel_bid(kbid);
		if (kbid_len)
			ok(!pmu_perfdata_build_id(w, -1, true, "[kernel.kallsyms]", kbid, kbid_len),
			   "build-id entry for the kernel");
	} else {
		skip("%s", "kernel samples: /proc/kallsyms shows no _text address (kptr_restrict)");
	}

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	pd_busy_loop(150 * 1000000ull);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	/* the ring: records between data_tail and data_head, wrapping */
	{
		struct perf_event_mmap_page *mp = (void *)ring;
		unsigned char *data = ring + pagesz, rec[65536];
		uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
		size_t dsz = npages * pagesz;

		while (tail < head) {
			struct perf_event_header h;

			for (size_t i = 0; i < sizeof(h); i++)
				((unsigned char *)&h)[i] = data[(tail + i) % dsz];
			if (h.size < sizeof(h))
				break;
			for (size_t i = 0; i < h.size; i++)
				rec[i] = data[(tail + i) % dsz];
			if (h.type == PERF_RECORD_SAMPLE)
				nsamples++;
			if (pmu_perfdata_record(w, rec, h.size))
				break;
			nrecords++;
			tail += h.size;
		}
		__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	}
	ok(nsamples > 100, "the kernel gave samples (%" PRIu64 " in %" PRIu64 " records)", nsamples, nrecords);

	{
		struct fout fo = { { NULL, NULL, fo_close, NULL, fo_blob_open, fo_blob_write }, "", NULL };
		struct pmu_perfdata_host h = { 0 };

		fo.o.ctx = &fo;
		snprintf(fo.path, sizeof(fo.path), "%s", dir);
		uname(&un);
		h.hostname = un.nodename;
		h.osrelease = un.release;
		h.version = un.version;
		h.arch = un.machine;
		h.nr_cpus_avail = (unsigned)sysconf(_SC_NPROCESSORS_CONF);
		h.nr_cpus_online = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
		h.cmdline = (const char *const *)argv;
		h.ncmdline = (size_t)argc;
		h.clockid = CLOCK_MONOTONIC;
		err = pmu_perfdata_finish(w, &h, &fo.o, "perf.data");
		ok(!err, "perf.data written (%s)", err ? pmu_error_detail() : file);
		pmu_perfdata_free(w);
	}
	munmap(ring, (npages + 1) * pagesz);
	close(fd);

	file_bytes = (unsigned char *)slurp(file, &flen);
	if (!file_bytes) {
		printf("Bail out! cannot read %s\n", file);
		return 1;
	}
	err = scan_mem(file_bytes, flen, &st, why, sizeof(why));
	ok(!err, "scan accepts the file (%s)", err ? why : "ok");
	is_int((long long)st.size, (long long)flen, "scan read every byte");
	is_int((long long)st.samples, (long long)nsamples, "scan: SAMPLE count");
	is_int((long long)st.records, (long long)(nrecords + 1 + (uint64_t)nmaps + (ktext != 0)),
	       "scan: records (ring + COMM + MMAP2s + kernel MMAP)");
	is_int((long long)st.comms, 1, "scan: one COMM");
	is_int((long long)st.mmaps, nmaps + (ktext != 0), "scan: MMAP2s and the kernel MMAP");
	is_int((long long)st.nattrs, 1, "scan: one attr");
	is_int((long long)st.nids, 1, "scan: one id");
	is_int((long long)st.build_ids, 1 + (kbid_len != 0), "scan: the build-ids");
	ok(st.sample_type == attr.sample_type, "scan: sample_type");
	ok(st.features & (1u << 2), "scan: BUILD_ID feature bit");

	negative_tests(file_bytes, flen);

	if (access("/usr/bin/perf", X_OK) && system("command -v perf >/dev/null 2>&1")) {
		skip("%s", "perf is not installed (Debian: linux-perf)");
		return done_testing();
	}
	/* perf script: one line per sample, named by this test's functions */
	{
		char *a[] = { "perf", "script", "-i", file, "-F", "tid,ip,sym", NULL };
		int rc = run(a, cmd_out, cmd_err);
		char *o = slurp(cmd_out, NULL), *e = slurp(cmd_err, NULL);

		is_int(rc, 0, "perf script exits 0");
		ok(e && !*e, "perf script says nothing on stderr");
		if (e && *e)
			printf("#   stderr: %.2000s\n", e);
		is_int(o ? (long long)count_lines(o) : -1, (long long)nsamples, "perf script: the same sample count");
		ok(o && strstr(o, "pd_busy_inner"), "perf script names pd_busy_inner");
		free(o);
		free(e);
	}
	{
		char *a[] = { "perf", "report", "-i", file, "--stdio", NULL };
		int rc = run(a, cmd_out, cmd_err);
		char *o = slurp(cmd_out, NULL), *e = slurp(cmd_err, NULL), n[64];

		is_int(rc, 0, "perf report exits 0");
		ok(e && !*e, "perf report says nothing on stderr");
		if (e && *e)
			printf("#   stderr: %.2000s\n", e);
		ok(o && strstr(o, "pd_busy_inner"), "perf report names pd_busy_inner");
		snprintf(n, sizeof(n), "# Samples: %" PRIu64 " ", nsamples);
		ok(o && (strstr(o, n) || (nsamples >= 1000 && strstr(o, "# Samples: "))),
		   "perf report counts the samples (%s)", n);
		ok(o && strstr(o, "cpu-clock"), "perf report names the event from EVENT_DESC");
		if (ktext) {
			/* kernel samples are named ([k] and a name, not an address) */
			const char *k = o ? strstr(o, "[k] ") : NULL;

			if (k)
				ok(strncmp(k + 4, "0x", 2), "perf report names kernel functions (%.*s)",
				   (int)strcspn(k + 4, "\n"), k + 4);
			else
				skip("%s", "no kernel sample in this run");
		}
		free(o);
		free(e);
	}
	{
		char *a[] = { "perf", "buildid-list", "-i", file, NULL }, hex[41];
		int rc = run(a, cmd_out, cmd_err);
		char *o = slurp(cmd_out, NULL), *e = slurp(cmd_err, NULL);

		for (size_t i = 0; i < exe_bid_len; i++)
			sprintf(hex + 2 * i, "%02x", exe_bid[i]);
		is_int(rc, 0, "perf buildid-list exits 0");
		ok(e && !*e, "perf buildid-list says nothing on stderr");
		ok(o && strstr(o, hex) && strstr(o, exe), "perf buildid-list prints %s %s", hex, exe);
		if (o && !strstr(o, hex))
			printf("#   stdout: %.1000s\n", o);
		free(o);
		free(e);
	}
	{
		char *a[] = { "perf", "report", "-i", file, "--header-only", NULL };
		char *o;

		run(a, cmd_out, cmd_err);
		o = slurp(cmd_out, NULL);
		ok(o && strstr(o, "# hostname : ") && strstr(o, "# os release : ") && strstr(o, "# nrcpus online"),
		   "perf report --header-only shows the host features");
		ok(o && strstr(o, "clockid"), "perf report --header-only shows the clock");
		if (o && !strstr(o, "clockid"))
			printf("#   header: %.3000s\n", o);
		free(o);
	}
	free(file_bytes);
	if (getenv("T_PERFDATA_KEEP"))
		printf("# kept %s\n", file);
	else {
		char c[700];

		snprintf(c, sizeof(c), "rm -rf '%s'", dir);
		if (system(c))
			printf("# cannot remove %s\n", dir);
	}
	return done_testing();
}
