/*
 * The eBPF follower's loader: bpf/follow.bpf.c through its bpftool
 * skeleton (build/bpf/follow.skel.h), libbpf 1.x.  See follow_bpf.h.
 *
 * Fixed cost.  libbpf resolves CO-RE relocations against a BTF: by default
 * /sys/kernel/btf/vmlinux, 5.5 MB parsed on every open (tens of ms).  The
 * build makes a minimal BTF for exactly these programs (`bpftool gen
 * min_core_btf`, about 1 KB) and embeds it together with the build host's
 * /sys/kernel/notes.  It is valid only for the kernel it was cut from, so
 * it is used only when the running kernel's GNU build-id equals the build
 * host's; otherwise the full BTF is parsed and btf_source says why.  The
 * programs are raw_tp (attached by name), so nothing else needs vmlinux BTF.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "linux/caps.h"
#include "error.h"
#include "follow.skel.h"
#include "linux/follow_bpf.h"

/* build/bpf/follow.min.btf.c, generated at build time */
extern const unsigned char pmu_bpf_min_btf[];
extern const size_t pmu_bpf_min_btf_len;
extern const unsigned char pmu_bpf_build_notes[];
extern const size_t pmu_bpf_build_notes_len;

#define SEQ_WINDOW (1u << 16) /* seqs behind the highest seen checked for duplicates */

struct pmu_bpf_follow {
	struct follow_bpf *skel;
	struct ring_buffer *ring;
	pmu_bpf_record_fn cb;
	void *arg;
	int cb_stop;
	uint64_t delivered, malformed, seq_max;
	char first_malformed[200]; /* what was wrong with the first refused record */
	uint8_t *seen;          /* SEQ_WINDOW bits, by seq % SEQ_WINDOW */
	unsigned ncpu;
	uint64_t *dropped_cpu, *map_fail_cpu, *count_fail_cpu;
	int *ev_fd;             /* nev * ncpu counting events, -1 where not opened */
	unsigned nev, ev_cpus;
	struct pmu_bpf_counters *pc;
	double open_ms, load_ms, attach_ms;
	char btf_source[200];
	const char *exit_hook; /* static: which program decides group_dead */
};

static const char REMEDY_PRIV[] =
	"run pmurec as root, or grant it CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep); "
	"the ptrace follower needs neither";
static const char REMEDY_BTF[] = "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y";
static const char REMEDY_KERNEL[] = "see the reason; the ptrace follower does not need eBPF";

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int unavailable(struct pmu_bpf_why *why, enum pmu_bpf_avail a, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int unavailable(struct pmu_bpf_why *why, enum pmu_bpf_avail a, const char *remedy, const char *fmt, ...)
{
	va_list ap;
	why->avail = a;
	why->remedy = remedy;
	va_start(ap, fmt);
	vsnprintf(why->reason, sizeof(why->reason), fmt, ap);
	va_end(ap);
	return pmu_error(PMU_ERR_UNSUPPORTED, "ebpf follower unavailable: %s", why->reason);
}

/* ---- libbpf's messages: kept for the reason, never printed -------------- */

/* pmu_bpf_follow_open is not reentrant: libbpf's print hook is global */
static char lb_log[4096];
static size_t lb_len;

static int lb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char line[1024];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* keep the tail: the verifier's last lines say why */
	if (lb_len + n >= sizeof(lb_log)) {
		size_t keep = sizeof(lb_log) / 2;
		if (lb_len > keep) {
			memmove(lb_log, lb_log + lb_len - keep, keep);
			lb_len = keep;
		}
		if ((size_t)n >= sizeof(lb_log) - lb_len)
			n = sizeof(lb_log) - lb_len - 1;
	}
	memcpy(lb_log + lb_len, line, n);
	lb_len += n;
	lb_log[lb_len] = 0;
	return 0;
}

/* the last few lines of the captured log, on one line */
static const char *lb_tail(char *buf, size_t cap)
{
	size_t start = lb_len > cap - 1 ? lb_len - (cap - 1) : 0;
	size_t j = 0;
	for (size_t i = start; i < lb_len && j + 1 < cap; i++)
		buf[j++] = lb_log[i] == '\n' ? ' ' : lb_log[i];
	while (j && buf[j - 1] == ' ')
		j--;
	buf[j] = 0;
	return buf;
}

/* ---- privilege and BTF ---------------------------------------------------- */

/* The GNU build-id note in an ELF note blob (Elf64_Nhdr: namesz, descsz,
 * type; name and desc each padded to 4).  0 and the id, or -1. */
static int gnu_build_id(const unsigned char *p, size_t n, const unsigned char **id, size_t *idlen)
{
	size_t off = 0;
	while (off + 12 <= n) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, p + off, 4);
		memcpy(&dsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		size_t name = off + 12, nend = name + ((nsz + 3ull) & ~3ull);
		size_t dend = nend + ((dsz + 3ull) & ~3ull);
		if (nsz > n || dsz > n || dend > n)
			return -1;
		if (type == 3 && nsz == 4 && !memcmp(p + name, "GNU", 4)) {
			*id = p + nend;
			*idlen = dsz;
			return 0;
		}
		off = dend;
	}
	return -1;
}

static void hex(char *out, size_t cap, const unsigned char *p, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 3 <= cap; i++)
		j += snprintf(out + j, cap - j, "%02x", p[i]);
	if (cap)
		out[j < cap ? j : cap - 1] = 0;
}

/* -1 when the minimal BTF does not fit the running kernel (why in src) */
static int min_btf_fits(char *src, size_t cap)
{
	const unsigned char *bid, *rid;
	size_t blen, rlen;
	unsigned char run[4096];
	char bh[64], rh[64];

	if (!pmu_bpf_min_btf_len) {
		snprintf(src, cap, "full vmlinux BTF: no minimal BTF was made at build time");
		return -1;
	}
	if (gnu_build_id(pmu_bpf_build_notes, pmu_bpf_build_notes_len, &bid, &blen)) {
		snprintf(src, cap, "full vmlinux BTF: the build host's kernel build-id was not recorded");
		return -1;
	}
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, run, sizeof(run)) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0 || gnu_build_id(run, n, &rid, &rlen)) {
		snprintf(src, cap, "full vmlinux BTF: cannot read the running kernel's build-id from '/sys/kernel/notes'");
		return -1;
	}
	hex(bh, sizeof(bh), bid, blen);
	hex(rh, sizeof(rh), rid, rlen);
	if (blen != rlen || memcmp(bid, rid, blen)) {
		snprintf(src, cap, "full vmlinux BTF: running kernel %.40s is not the build host's %.40s", rh, bh);
		return -1;
	}
	snprintf(src, cap, "minimal BTF made at build time for kernel build-id %.40s", rh);
	return 0;
}

/* the embedded minimal BTF as a file libbpf can open */
static int min_btf_memfd(void)
{
	int fd = syscall(SYS_memfd_create, "pmu-follow-btf", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < pmu_bpf_min_btf_len) {
		ssize_t w = write(fd, pmu_bpf_min_btf + off, pmu_bpf_min_btf_len - off);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += w;
	}
	return fd;
}

/* ---- records --------------------------------------------------------------- */

static bool seen_test_set(struct pmu_bpf_follow *f, uint64_t seq)
{
	uint32_t i = seq % SEQ_WINDOW;
	bool was = f->seen[i / 8] & (1u << (i % 8));
	f->seen[i / 8] |= 1u << (i % 8);
	return was;
}

static void seen_clear(struct pmu_bpf_follow *f, uint64_t seq)
{
	uint32_t i = seq % SEQ_WINDOW;
	f->seen[i / 8] &= ~(1u << (i % 8));
}

/* count a refused record; the first one is described, so that the
 * lifecycle's reason can name it */
static void refuse(struct pmu_bpf_follow *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(struct pmu_bpf_follow *f, const char *fmt, ...)
{
	va_list ap;

	if (!f->malformed++) {
		va_start(ap, fmt);
		vsnprintf(f->first_malformed, sizeof(f->first_malformed), fmt, ap);
		va_end(ap);
	}
}

static int on_sample(void *ctx, void *data, size_t len)
{
	struct pmu_bpf_follow *f = ctx;
	union pmu_bpf_rec r;

	if (pmu_bpf_decode(data, len, &r)) {
		refuse(f, "%s", pmu_error_detail());
		return 0;
	}
	uint64_t s = r.h.seq;
	if (s > f->seq_max) {
		/* the window slides: forget the bits of the seqs it leaves behind */
		uint64_t n = s - f->seq_max;
		if (n >= SEQ_WINDOW)
			memset(f->seen, 0, SEQ_WINDOW / 8);
		else
			for (uint64_t q = f->seq_max + 1; q <= s; q++)
				seen_clear(f, q);
		f->seq_max = s;
	} else if (f->seq_max - s >= SEQ_WINDOW) {
		/* too old to check for a duplicate: not trusted */
		refuse(f, "bpf record seq %llu: %llu behind the newest, too old to check for a duplicate",
		       (unsigned long long)s, (unsigned long long)(f->seq_max - s));
		return 0;
	}
	if (seen_test_set(f, s)) {
		refuse(f, "bpf record seq %llu: delivered twice", (unsigned long long)s);
		return 0;
	}
	f->delivered++;
	if (f->cb && f->cb(&r, f->arg)) {
		f->cb_stop = 1;
		return -ECANCELED; /* libbpf stops at a negative return */
	}
	return 0;
}

/* ---- the API ------------------------------------------------------------------ */

/*
 * The counting events of the per-CPU method: one per CPU per event (pid
 * -1, that CPU: perf_event_open(2) needs CAP_PERFMON or paranoid <= 0, as
 * the follower does anyway), each fd at its CPU's index of pmu_ev<i>.  A
 * CPU on which an event does not open (offline, or the PMU refuses) keeps
 * no fd: the programs' reads there fail and every member slice on it is
 * counted as lost; none opening anywhere is unavailable, with the reason.
 */
static int open_events(struct pmu_bpf_follow *f, const struct pmu_bpf_follow_opts *o, struct pmu_bpf_why *why)
{
	struct bpf_map *map[PMU_BPF_NEV] = { f->skel->maps.pmu_ev0, f->skel->maps.pmu_ev1, f->skel->maps.pmu_ev2,
					     f->skel->maps.pmu_ev3 };
	int first_err = 0;

	f->ev_fd = malloc(sizeof(int) * f->nev * f->ncpu);
	if (!f->ev_fd)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the ebpf follower's counters");
	for (unsigned i = 0; i < f->nev * f->ncpu; i++)
		f->ev_fd[i] = -1;
	for (unsigned c = 0; c < f->ncpu; c++) {
		bool all = true;
		for (unsigned i = 0; i < f->nev; i++) {
			struct perf_event_attr a = *o->ev_attr[i];
			a.size = sizeof(a);
			a.disabled = 0;
			a.inherit = 0;
			a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
			int fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)c, -1, PERF_FLAG_FD_CLOEXEC);
			__u32 k = c;
			if (fd < 0 || bpf_map__update_elem(map[i], &k, sizeof(k), &fd, sizeof(fd), BPF_ANY)) {
				if (!first_err)
					first_err = errno;
				if (fd >= 0)
					close(fd);
				all = false;
				continue;
			}
			f->ev_fd[i * f->ncpu + c] = fd;
		}
		f->ev_cpus += all;
	}
	if (f->ev_cpus == 0)
		return unavailable(why, first_err == EACCES || first_err == EPERM ? PMU_BPF_NO_PRIVILEGE : PMU_BPF_KERNEL,
		                   first_err == EACCES || first_err == EPERM ? REMEDY_PRIV : REMEDY_KERNEL,
		                   "cannot open the per-CPU counting events on any CPU: %s", strerror(first_err));
	return 0;
}

/*
 * Attach every program but one exit entry.  sched_process_exit gained its
 * group_dead argument in Linux 6.16; before that, the kernel refuses the
 * two-argument raw_tp at attach with EINVAL (bpf_probe_register(): the
 * program reads past the tracepoint's arguments), and the kprobe on
 * taskstats_exit(tsk, group_dead) takes its place (follow.bpf.c says why
 * that point is equivalent).  Trying is the test: nothing guesses from the
 * kernel's version.  Both programs are loaded; the one not attached costs
 * its verification only.
 */
static int attach_all(struct pmu_bpf_follow *f, bool kprobe, struct pmu_bpf_why *why, char *tail, size_t ntail)
{
	struct follow_bpf *s = f->skel;
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
		const char *what;
	} tp[] = {
		{ s->progs.on_fork, &s->links.on_fork, "sched_process_fork" },
		{ s->progs.on_exec, &s->links.on_exec, "sched_process_exec" },
		{ s->progs.on_switch, &s->links.on_switch, "sched_switch" },
	};
	int e;

	for (size_t i = 0; i < sizeof(tp) / sizeof(tp[0]); i++) {
		*tp[i].link = bpf_program__attach(tp[i].prog);
		if (!*tp[i].link) {
			e = errno;
			return unavailable(why, e == EPERM ? PMU_BPF_NO_PRIVILEGE : PMU_BPF_ATTACH,
			                   e == EPERM ? REMEDY_PRIV : REMEDY_KERNEL,
			                   "cannot attach to the %s tracepoint: %s; %s", tp[i].what, strerror(e),
			                   lb_tail(tail, ntail));
		}
	}
	if (!kprobe)
		s->links.on_exit = bpf_program__attach(s->progs.on_exit);
	if (s->links.on_exit) {
		f->exit_hook = "tracepoint sched_process_exit(task, group_dead)";
		return 0;
	}
	e = kprobe ? EINVAL : errno;
	if (e != EINVAL)
		return unavailable(why, e == EPERM ? PMU_BPF_NO_PRIVILEGE : PMU_BPF_ATTACH,
		                   e == EPERM ? REMEDY_PRIV : REMEDY_KERNEL,
		                   "cannot attach to the sched_process_exit tracepoint: %s; %s", strerror(e),
		                   lb_tail(tail, ntail));
	s->links.on_exit_kprobe = bpf_program__attach_kprobe(s->progs.on_exit_kprobe, false, "taskstats_exit");
	if (s->links.on_exit_kprobe) {
		f->exit_hook = kprobe ? "kprobe taskstats_exit(task, group_dead) (requested)"
		                      : "kprobe taskstats_exit(task, group_dead) (sched_process_exit has no "
		                        "group_dead before Linux 6.16)";
		return 0;
	}
	e = errno;
	return unavailable(why, e == EPERM ? PMU_BPF_NO_PRIVILEGE : PMU_BPF_ATTACH,
	                   e == EPERM ? REMEDY_PRIV : REMEDY_KERNEL,
	                   "sched_process_exit(task, group_dead) needs Linux 6.16 or later, and the kprobe on "
	                   "taskstats_exit that stands in for it before 6.16 cannot attach: %s (a kernel without "
	                   "CONFIG_TASKSTATS or CONFIG_KPROBES?); %s",
	                   strerror(e), lb_tail(tail, ntail));
}

int pmu_bpf_follow_open(const struct pmu_bpf_follow_opts *opts, struct pmu_bpf_follow **out,
                        struct pmu_bpf_why *why)
{
	struct pmu_bpf_follow_opts o = opts ? *opts : (struct pmu_bpf_follow_opts){0};
	long page = sysconf(_SC_PAGESIZE), hz = sysconf(_SC_CLK_TCK);
	char tail[300];
	int err, btf_fd = -1;

	*out = NULL;
	memset(why, 0, sizeof(*why));
	if (!o.ring_bytes)
		o.ring_bytes = 1u << 20;
	if (!o.max_members)
		o.max_members = 8192;
	if (o.ring_bytes < (size_t)page || (o.ring_bytes & (o.ring_bytes - 1)) || o.ring_bytes > (1u << 30)) {
		why->avail = PMU_BPF_KERNEL;
		snprintf(why->reason, sizeof(why->reason), "ring size %zu is not a power of two from the page size to 1 GiB",
		         o.ring_bytes);
		return pmu_error(PMU_ERR_INVAL, "%s", why->reason);
	}
	if (hz <= 0 || 1000000000L % hz) {
		why->avail = PMU_BPF_KERNEL;
		snprintf(why->reason, sizeof(why->reason), "clock tick rate %ld does not divide a second", hz);
		return pmu_error(PMU_ERR_INVAL, "%s", why->reason);
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return unavailable(why, PMU_BPF_NO_BTF, REMEDY_BTF, "the running kernel has no BTF: '/sys/kernel/btf/vmlinux': %s",
		                   strerror(errno));
	if (!pmu_caps_bpf())
		return unavailable(why, PMU_BPF_NO_PRIVILEGE, REMEDY_PRIV,
		                   "uid %d lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)", (int)geteuid());

	struct pmu_bpf_follow *f = calloc(1, sizeof(*f));
	if (!f)
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the ebpf follower");
	f->seen = calloc(SEQ_WINDOW / 8, 1);
	int nc = libbpf_num_possible_cpus();
	f->ncpu = nc > 0 ? nc : 0;
	f->dropped_cpu = calloc(f->ncpu + 1, sizeof(uint64_t));
	f->map_fail_cpu = calloc(f->ncpu + 1, sizeof(uint64_t));
	f->count_fail_cpu = calloc(f->ncpu + 1, sizeof(uint64_t));
	f->pc = calloc(f->ncpu + 1, sizeof(*f->pc));
	if (!f->seen || !f->dropped_cpu || !f->map_fail_cpu || !f->count_fail_cpu || !f->pc || nc <= 0) {
		pmu_bpf_follow_close(f);
		return pmu_error(PMU_ERR_NOMEM, "cannot allocate the ebpf follower");
	}

	char btf_path[64] = "";
	bool use_min = false;
	if (o.btf == PMU_BPF_BTF_FULL) {
		snprintf(f->btf_source, sizeof(f->btf_source), "full vmlinux BTF: requested");
	} else if (min_btf_fits(f->btf_source, sizeof(f->btf_source)) == 0) {
		btf_fd = min_btf_memfd();
		if (btf_fd >= 0) {
			snprintf(btf_path, sizeof(btf_path), "/proc/self/fd/%d", btf_fd);
			use_min = true;
		} else {
			snprintf(f->btf_source, sizeof(f->btf_source), "full vmlinux BTF: memfd for the minimal BTF: %s",
			         strerror(errno));
		}
	}
	if (o.btf == PMU_BPF_BTF_MIN && !use_min) {
		err = unavailable(why, PMU_BPF_NO_BTF, REMEDY_KERNEL, "minimal BTF requested but %s", f->btf_source);
		pmu_bpf_follow_close(f);
		return err;
	}

	libbpf_print_fn_t old = libbpf_set_print(lb_print);
	lb_len = 0;
	lb_log[0] = 0;
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = use_min ? btf_path : NULL);

	double t0 = now_ms();
	f->skel = follow_bpf__open_opts(&oo);
	double t1 = now_ms();
	f->open_ms = t1 - t0;
	if (!f->skel) {
		err = unavailable(why, PMU_BPF_KERNEL, REMEDY_KERNEL, "cannot open the bpf object: %s; %s", strerror(errno),
		                  lb_tail(tail, sizeof(tail)));
		goto fail;
	}
	f->skel->rodata->cohort_cgid = o.cgroup_id;
	f->skel->rodata->ns_per_tick = 1000000000ull / hz;
	f->nev = o.nev > PMU_BPF_NEV ? PMU_BPF_NEV : o.nev;
	f->skel->rodata->nev = f->nev;
	if (bpf_map__set_max_entries(f->skel->maps.pmu_ev0, f->ncpu) ||
	    bpf_map__set_max_entries(f->skel->maps.pmu_ev1, f->ncpu) ||
	    bpf_map__set_max_entries(f->skel->maps.pmu_ev2, f->ncpu) ||
	    bpf_map__set_max_entries(f->skel->maps.pmu_ev3, f->ncpu) ||
	    bpf_map__set_max_entries(f->skel->maps.rb, o.ring_bytes) ||
	    bpf_map__set_max_entries(f->skel->maps.members, o.max_members)) {
		err = unavailable(why, PMU_BPF_KERNEL, REMEDY_KERNEL, "cannot size the maps: %s", strerror(errno));
		goto fail;
	}

	err = follow_bpf__load(f->skel);
	double t2 = now_ms();
	f->load_ms = t2 - t1;
	if (err) {
		int e = -err;
		if (e == EPERM)
			err = unavailable(why, PMU_BPF_NO_PRIVILEGE, REMEDY_PRIV, "the kernel refused to load the programs: %s; %s",
			                  strerror(e), lb_tail(tail, sizeof(tail)));
		else if (strstr(lb_log, "PROG LOAD LOG") || strstr(lb_log, "failed to load program"))
			err = unavailable(why, PMU_BPF_VERIFIER, REMEDY_KERNEL, "the verifier rejected a program: %s; %s",
			                  strerror(e), lb_tail(tail, sizeof(tail)));
		else
			err = unavailable(why, PMU_BPF_KERNEL, REMEDY_KERNEL, "cannot load the bpf object: %s; %s",
			                  strerror(e), lb_tail(tail, sizeof(tail)));
		goto fail;
	}

	if (f->nev && (err = open_events(f, &o, why)))
		goto fail;
	err = attach_all(f, o.exit_kprobe, why, tail, sizeof(tail));
	f->attach_ms = now_ms() - t2;
	if (err)
		goto fail;
	f->ring = ring_buffer__new(bpf_map__fd(f->skel->maps.rb), on_sample, f, NULL);
	if (!f->ring) {
		err = unavailable(why, PMU_BPF_KERNEL, REMEDY_KERNEL, "cannot map the ring buffer: %s", strerror(errno));
		goto fail;
	}
	libbpf_set_print(old);
	if (btf_fd >= 0)
		close(btf_fd);
	*out = f;
	return 0;
fail:
	libbpf_set_print(old);
	if (btf_fd >= 0)
		close(btf_fd);
	pmu_bpf_follow_close(f);
	return err;
}

int pmu_bpf_follow_add_root(struct pmu_bpf_follow *f, pid_t pid)
{
	__u32 k = pid;
	__u8 one = 1;
	if (pid <= 0)
		return pmu_error(PMU_ERR_INVAL, "cannot follow pid %d", (int)pid);
	if (bpf_map__update_elem(f->skel->maps.members, &k, sizeof(k), &one, sizeof(one), BPF_ANY))
		return pmu_error(PMU_ERR_LIMIT, "cannot add pid %d to the ebpf follower's members: %s", (int)pid,
		                 strerror(errno));
	return 0;
}

int pmu_bpf_follow_fd(const struct pmu_bpf_follow *f)
{
	return f && f->ring ? ring_buffer__epoll_fd(f->ring) : -1;
}

int pmu_bpf_follow_drain(struct pmu_bpf_follow *f, pmu_bpf_record_fn cb, void *arg)
{
	f->cb = cb;
	f->arg = arg;
	f->cb_stop = 0;
	int n = ring_buffer__consume(f->ring);
	if (n < 0 && !f->cb_stop)
		return pmu_error(PMU_ERR_IO, "cannot drain the ebpf follower's ring: %s", strerror(-n));
	return n < 0 ? 0 : n;
}

/* keys of any size up to 8 bytes: members (a tgid), dying (a task's address) */
static int count_keys(int fd, size_t *n)
{
	__u64 key, next;
	const void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		++*n;
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? 0 : -1;
}

/* members, plus threads between their exit and their last switch: both
 * maps are emptied only after the last record is committed */
int pmu_bpf_follow_members(struct pmu_bpf_follow *f, size_t *n)
{
	*n = 0;
	if (count_keys(bpf_map__fd(f->skel->maps.members), n) || count_keys(bpf_map__fd(f->skel->maps.dying), n))
		return pmu_error(PMU_ERR_IO, "cannot walk the ebpf follower's members: %s", strerror(errno));
	return 0;
}

int pmu_bpf_follow_dying(struct pmu_bpf_follow *f, size_t *n)
{
	*n = 0;
	if (count_keys(bpf_map__fd(f->skel->maps.dying), n))
		return pmu_error(PMU_ERR_IO, "cannot walk the ebpf follower's dying threads: %s", strerror(errno));
	return 0;
}

void pmu_bpf_follow_stats(struct pmu_bpf_follow *f, struct pmu_bpf_follow_stats *st)
{
	memset(st, 0, sizeof(*st));
	__u32 k = 0;
	st->ncpu = f->ncpu;
	if (f->skel && f->skel->bss)
		st->assigned = __atomic_load_n(&f->skel->bss->seq_next, __ATOMIC_ACQUIRE);
	if (f->skel && bpf_map__lookup_elem(f->skel->maps.counters, &k, sizeof(k), f->pc,
	                                    sizeof(*f->pc) * f->ncpu, 0) == 0) {
		for (unsigned c = 0; c < f->ncpu; c++) {
			f->dropped_cpu[c] = f->pc[c].reserve_fail;
			f->map_fail_cpu[c] = f->pc[c].map_fail;
			f->count_fail_cpu[c] = f->pc[c].count_fail;
			st->count_fail += f->pc[c].count_fail;
			st->dropped += f->pc[c].reserve_fail;
			st->map_fail += f->pc[c].map_fail;
		}
	}
	st->delivered = f->delivered;
	st->malformed = f->malformed;
	snprintf(st->first_malformed, sizeof(st->first_malformed), "%s", f->first_malformed);
	st->gaps = st->assigned > f->delivered ? st->assigned - f->delivered : 0;
	st->dropped_cpu = f->dropped_cpu;
	st->map_fail_cpu = f->map_fail_cpu;
	st->open_ms = f->open_ms;
	st->load_ms = f->load_ms;
	st->attach_ms = f->attach_ms;
	snprintf(st->btf_source, sizeof(st->btf_source), "%s", f->btf_source);
	st->exit_hook = f->exit_hook ? f->exit_hook : "";
	st->count_fail_cpu = f->count_fail_cpu;
	st->ev_cpus = f->ev_cpus;
}

void pmu_bpf_follow_close(struct pmu_bpf_follow *f)
{
	if (!f)
		return;
	ring_buffer__free(f->ring);
	follow_bpf__destroy(f->skel);
	free(f->seen);
	free(f->dropped_cpu);
	free(f->map_fail_cpu);
	free(f->count_fail_cpu);
	for (unsigned i = 0; f->ev_fd && i < f->nev * f->ncpu; i++)
		if (f->ev_fd[i] >= 0)
			close(f->ev_fd[i]);
	free(f->ev_fd);
	free(f->pc);
	free(f);
}
