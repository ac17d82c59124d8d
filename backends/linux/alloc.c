/*
 * The alloc collector (spec 1.8, section 24.3): native allocation sampling
 * of the cohort, by bytes, with --alloc (every 512 KiB on average) or
 * --alloc-sample BYTES.  One stream, alloc.jsonl: config, sample (size,
 * address, estimates, call chain), free (of a sampled address), inc (one
 * per incarnation: its samples, estimated bytes and objects, live at its
 * end, dropped), loss, summary.
 *
 * Two ways in (config.via), chosen by --alloc-via (auto: preload, the
 * reason in the attached evidence; uprobe only when asked for, since it
 * traps the whole host):
 *
 *   uprobe   bpf/alloc.bpf.c on the C library the command loads (the first
 *            libc.so of its DT_NEEDED closure, lib/sdtnote.h): uprobes and
 *            uretprobes on malloc, calloc, realloc, a uprobe on free,
 *            attached for every process mapping it (pid -1) and filtered
 *            in the kernel by the cohort filter.  The host pays the trap:
 *            every call of those functions by any process traps into the
 *            kernel while attached.  Measured on the development VM (2
 *            vCPUs under a hypervisor, Linux 6.18): 30-60 us a trap, the
 *            same with perf's own uprobe and no BPF program, so a process
 *            outside the cohort paid 100-180 us per malloc/free pair
 *            instead of 15-20 ns (man pmurec: ALLOCATIONS).
 *   preload  pmurec's LD_PRELOAD interposer (alloc-preload.c,
 *            libpmu-alloc.so): the environment is set at probe, before
 *            the root is forked, and restored at open (the control
 *            channel's pattern, record/control.c).  pmurec listens on a
 *            SOCK_SEQPACKET socket at a random abstract address
 *            (PMUREC_ALLOC_ADDR) and each process of the command connects
 *            its own socket: no fd is inherited, so a program that closes
 *            its fds cannot lose the channel unseen nor be written into
 *            (alloc-preload.c).  SO_PASSCRED: the kernel names each
 *            message's sender; any process may connect, and records of
 *            processes outside the cohort are unattributed.  The
 *            connections are polled through one epoll fd.
 *
 * Both send the same records (bpf/alloc.h), decoded by allocrec.h.  They
 * go into a reorder heap by t_ns and are written once older than now -
 * REORDER_NS; a record of a task the follower has not reported yet waits
 * up to HOLD_NS.  An incarnation's end (INC_ENDED) goes into the heap too,
 * so that its inc record follows its last sample.  What belongs to no
 * incarnation is counted (summary.unattributed), never written.  Memory
 * stays flat: the heap holds at most HEAP_MAX records (the rest waits in
 * the ring or the socket, whose overflow is counted as loss), the live
 * table LIVE_MAX sampled addresses.
 *
 * A static binary has no C library to probe and ignores LD_PRELOAD:
 * unavailable, with the reason and a remedy.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/caps.h"
#include "collector.h"
#include "error.h"
#include "heap.h"
#include "lifecycle.h"
#include "linux/allocrec.h"
#include "linux/sampling.h"
#include "sdtnote.h"
#include "util.h"

#ifdef PMU_BPF_BUILT
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "linux/bpf/cohort.h"
#include "alloc.skel.h"
#endif

#define REORDER_NS 50000000ull   /* records younger than this wait for older ones */
/* preload: stamped in the processes, before a send that a preemption may delay */
#define PRELOAD_REORDER_NS 250000000ull
#define HOLD_NS 3000000000ull    /* a record of a task not reported yet waits this long */
#define DRAIN_NS 10000000ull     /* a drain gives the loop back after this */
#define RING_BYTES (4u << 20)
#define HEAP_MAX 16384           /* records in the reorder heap (each ~350 bytes) */
#define LIVE_MAX (1u << 18)      /* sampled addresses kept live (user space) */
#define LIVE_MAP 65536           /* ... in the kernel (uprobe) */

static const char REMEDY_PRIV[] = "run pmurec as root (or with CAP_BPF and CAP_PERFMON) for --alloc-via uprobe, "
				  "or use --alloc-via preload";
static const char *const func_names[PMU_ALLOC_F_N] = {
	"malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "memalign", "valloc", "pvalloc",
};

enum { LOSS_RESERVE, LOSS_PENDING, LOSS_LIVE, LOSS_CHANNEL, LOSS_N };
static const char *const loss_what[LOSS_N] = { "reserve", "pending-map", "live-map", "channel" };

/* a heap item: a record, or an incarnation's end (r NULL) */
struct item {
	uint64_t t, seq;
	union pmu_allocrec *r;
	int inc;
};

/* an incarnation's account */
struct incacc {
	bool written, ended;
	uint64_t samples, est_bytes, est_objects_milli, live_samples, live_est_bytes, dropped;
};

struct live {
	uint64_t addr, seq, est; /* seq 0: empty; ~0: deleted */
	int inc;
};

struct allocc {
	struct pmu_collector_env *env;
	bool unusable, preload, chains;
	uint64_t mean;
	char library[PATH_MAX];
	char exe[PATH_MAX];
	char fallback[600];  /* auto as root: why the uprobe path was not taken */
	/* uprobe */
#ifdef PMU_BPF_BUILT
	struct alloc_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link *links[8];
#endif
	int nlinks;
	int load_err;
	char load_why[600];
	uint32_t ring_bytes;
	int ncpu;
	uint64_t *lost_cpu; /* ncpu x LOSS_N (uprobe) */
	/* preload */
	int lis, ep;       /* the listening socket, the epoll fd over it and the connections */
	int *conns;        /* the connections, until their EOF */
	size_t nconns, capconns;
	char *old_preload;
	bool had_preload, env_set;
	/* the stream */
	struct pmu_stream *st;
	int err;
	struct pmu_heap heap;
	uint64_t hseq, last_written, stop_t;
	bool stalled, stopped;
	/* accounts */
	struct incacc *incs;
	size_t nincs;
	struct live *live;
	size_t nlive;
	uint64_t out_seq, samples, frees, est_bytes, unattributed, malformed, lost[LOSS_N];
	char malformed_first[200];
};

static void put(struct allocc *s, json_t *rec)
{
	if (!rec) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	if (s->err || !s->st) {
		json_decref(rec);
		return;
	}
	s->err = s->env->out->put(s->st, rec);
}

static void refuse(struct allocc *s, const char *why)
{
	if (!s->malformed++)
		snprintf(s->malformed_first, sizeof(s->malformed_first), "%s", why);
}

static struct incacc *acc(struct allocc *s, int id)
{
	if (id <= 0)
		return NULL;
	if ((size_t)id >= s->nincs) {
		size_t n = (size_t)id * 2 + 8;
		struct incacc *v = realloc(s->incs, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + s->nincs, 0, (n - s->nincs) * sizeof(*v));
		s->incs = v;
		s->nincs = n;
	}
	return &s->incs[id];
}

/* ---- the estimator (spec 1.8: sample.est_bytes, est_objects_milli) ------ */

/* A sample of size bytes under a Poisson process of mean m bytes stands for
 * 1 / P(sampled) allocations of its size, P = 1 - exp(-size / m). */
static void estimate(uint64_t size, uint64_t m, uint64_t *bytes, uint64_t *milli)
{
	double p;

	if (!size) {
		*bytes = 0;
		*milli = 1000;
		return;
	}
	p = -expm1(-(double)size / (double)m);
	*bytes = (uint64_t)llround((double)size / p);
	*milli = (uint64_t)llround(1000.0 / p);
}

/* ---- the live table: (incarnation, address) -> sample ------------------- */

static size_t live_slot(int inc, uint64_t addr)
{
	return (size_t)(((addr >> 4) ^ ((uint64_t)inc << 40)) * 0x9e3779b97f4a7c15ull >> 40) & (LIVE_MAX - 1);
}

static bool live_put(struct allocc *s, int inc, uint64_t addr, uint64_t seq, uint64_t est)
{
	if (!s->live && !(s->live = calloc(LIVE_MAX, sizeof(*s->live))))
		return false;
	if (s->nlive >= LIVE_MAX / 2)
		return false;
	for (size_t i = live_slot(inc, addr);; i = (i + 1) & (LIVE_MAX - 1)) {
		struct live *l = &s->live[i];

		if (l->seq && l->seq != ~0ull && l->inc == inc && l->addr == addr) {
			/* the same address sampled again without its free seen
			 * (a free lost): the former stays live, as every sample
			 * without its free record does (spec: live_samples) */
			l->seq = seq;
			l->est = est;
			return true;
		}
		if (!l->seq || l->seq == ~0ull) {
			*l = (struct live){ addr, seq, est, inc };
			s->nlive++;
			return true;
		}
	}
}

static struct live *live_find(struct allocc *s, int inc, uint64_t addr)
{
	if (!s->live)
		return NULL;
	for (size_t i = live_slot(inc, addr), k = 0; k < LIVE_MAX; k++, i = (i + 1) & (LIVE_MAX - 1)) {
		struct live *l = &s->live[i];

		if (!l->seq)
			return NULL;
		if (l->seq != ~0ull && l->inc == inc && l->addr == addr)
			return l;
	}
	return NULL;
}

/* ---- records ------------------------------------------------------------ */

static bool item_less(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int push(struct allocc *s, uint64_t t, union pmu_allocrec *r, int inc)
{
	struct item it = { t, ++s->hseq, r, inc };

	if (pmu_heap_push(&s->heap, &it)) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return -1;
	}
	return 0;
}

/* A decoded record from either path: kept for the heap (a lost record is
 * accounted at once). */
static int take_rec(struct allocc *s, const void *data, size_t len, pid_t sender)
{
	union pmu_allocrec d, *r;

	if (pmu_allocrec_decode(data, len, &d)) {
		refuse(s, pmu_error_detail());
		return 0;
	}
	if (sender && (pid_t)d.h.tgid != sender) {
		refuse(s, "alloc record: its process is not the sender's");
		return 0;
	}
	if (d.h.kind == PMU_ALLOC_REC_LOST) {
		const struct pmu_incarnation *in =
			pmu_cohort_find(s->env->cohort, (pid_t)d.h.tgid, (pid_t)d.h.tid, d.h.time_ns, d.h.time_ns);
		struct incacc *a = in ? acc(s, in->id) : NULL;

		s->lost[LOSS_CHANNEL] += d.l.channel;
		s->lost[LOSS_LIVE] += d.l.live_full;
		if (a)
			a->dropped += d.l.samples;
		return 0;
	}
	if (!(r = malloc(len))) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return -ENOMEM;
	}
	memcpy(r, &d, len);
	if (push(s, d.h.time_ns, r, 0)) {
		free(r);
		return -ENOMEM;
	}
	return s->heap.n >= HEAP_MAX ? -ENOBUFS : 0;
}

static void incname(char *b, size_t n, int id)
{
	snprintf(b, n, "i%d", id);
}

static void hexs(char *b, size_t n, uint64_t v)
{
	snprintf(b, n, "0x%" PRIx64, v);
}

static void write_inc(struct allocc *s, const struct pmu_incarnation *in, uint64_t t, bool exited)
{
	struct incacc *a = acc(s, in->id);
	json_t *o;
	char inc[24];

	if (!a || a->written)
		return;
	a->written = true;
#ifdef PMU_BPF_BUILT
	if (s->skel) {
		/* the samples of this process that found the ring full */
		__u32 k = (__u32)in->pid;
		__u64 v = 0;

		if (!bpf_map__lookup_elem(s->skel->maps.dropped, &k, sizeof(k), &v, sizeof(v), 0)) {
			a->dropped += v;
			bpf_map__delete_elem(s->skel->maps.dropped, &k, sizeof(k), 0);
		}
	}
#endif
	if (t < s->last_written)
		t = s->last_written;
	incname(inc, sizeof(inc), in->id);
	o = json_object();
	json_object_set_new(o, "type", json_string("inc"));
	json_object_set_new(o, "t_ns", json_integer((json_int_t)t));
	json_object_set_new(o, "inc", json_string(inc));
	json_object_set_new(o, "pid", json_integer(in->pid));
	json_object_set_new(o, "exited", json_boolean(exited));
	json_object_set_new(o, "samples", json_integer((json_int_t)a->samples));
	json_object_set_new(o, "est_bytes", json_integer((json_int_t)a->est_bytes));
	json_object_set_new(o, "est_objects", json_integer((json_int_t)((a->est_objects_milli + 500) / 1000)));
	json_object_set_new(o, "live_samples", json_integer((json_int_t)a->live_samples));
	json_object_set_new(o, "live_est_bytes", json_integer((json_int_t)a->live_est_bytes));
	json_object_set_new(o, "dropped", json_integer((json_int_t)a->dropped));
	s->last_written = t;
	put(s, o);
}

static const struct pmu_incarnation *inc_by_id(struct allocc *s, int id)
{
	const struct pmu_cohort *c = s->env->cohort;

	for (size_t k = 0; k < c->n; k++)
		if (c->incs[k].id == id)
			return &c->incs[k];
	return NULL;
}

/* One record in time order: 1 when it must wait for its task, else 0. */
static int process(struct allocc *s, struct item *it, uint64_t now, bool final)
{
	const union pmu_allocrec *r = it->r;
	const struct pmu_incarnation *in;
	struct incacc *a;
	char inc[24], b[40];
	json_t *o;

	if (!r) {
		if ((in = inc_by_id(s, it->inc)))
			write_inc(s, in, it->t, true);
		return 0;
	}
	in = pmu_cohort_find(s->env->cohort, (pid_t)r->h.tgid, (pid_t)r->h.tid, r->h.time_ns, r->h.time_ns);
	if (!in && !final && s->env->stops != PMU_STOPS_BEFORE_RUN && now < it->t + HOLD_NS)
		return 1;
	if (!in || !(a = acc(s, in->id)) || a->written) {
		if (r->h.kind == PMU_ALLOC_REC_SAMPLE)
			s->unattributed++;
		return 0;
	}
	if (it->t < s->last_written) {
		/* preload: stamped in the process, which may be preempted
		 * between its clock and its send for longer than the reorder
		 * window; what cannot be placed in time order is lost, said so */
		if (!s->preload) {
			refuse(s, "alloc record arrived after later records were written");
			return 0;
		}
		s->lost[LOSS_CHANNEL]++;
		if (r->h.kind == PMU_ALLOC_REC_SAMPLE)
			a->dropped++;
		return 0;
	}
	/* a failed allocation allocated nothing: no sample (its bytes would
	 * count in est_bytes and stay live for ever) */
	if (r->h.kind == PMU_ALLOC_REC_SAMPLE && !r->s.addr)
		return 0;
	incname(inc, sizeof(inc), in->id);
	o = json_object();
	if (r->h.kind == PMU_ALLOC_REC_SAMPLE) {
		uint64_t eb, em;

		estimate(r->s.size, s->mean, &eb, &em);
		json_object_set_new(o, "type", json_string("sample"));
		json_object_set_new(o, "t_ns", json_integer((json_int_t)it->t));
		json_object_set_new(o, "seq", json_integer((json_int_t)++s->out_seq));
		json_object_set_new(o, "inc", json_string(inc));
		json_object_set_new(o, "pid", json_integer(r->h.tgid));
		json_object_set_new(o, "tid", json_integer(r->h.tid));
		json_object_set_new(o, "func", json_string(func_names[r->s.func]));
		json_object_set_new(o, "size", json_integer((json_int_t)r->s.size));
		hexs(b, sizeof(b), r->s.addr);
		json_object_set_new(o, "addr", json_string(b));
		json_object_set_new(o, "est_bytes", json_integer((json_int_t)eb));
		json_object_set_new(o, "est_objects_milli", json_integer((json_int_t)em));
		if (s->chains && r->s.nchain) {
			char ch[PMU_ALLOC_CHAIN_MAX * 20 + 1];
			size_t n = 0;

			for (uint32_t i = 0; i < r->s.nchain; i++)
				n += (size_t)snprintf(ch + n, sizeof(ch) - n, "%s0x%" PRIx64, i ? " " : "",
						      (uint64_t)r->s.chain[i]);
			json_object_set_new(o, "chain", json_string(ch));
		}
		a->samples++;
		a->est_bytes += eb;
		a->est_objects_milli += em;
		s->samples++;
		s->est_bytes += eb;
		/* live until its free record: one that cannot be kept
		 * (its free unseen) stays live, and its loss is said */
		a->live_samples++;
		a->live_est_bytes += eb;
		if (!live_put(s, in->id, r->s.addr, s->out_seq, eb))
			s->lost[LOSS_LIVE]++;
	} else {
		struct live *l = live_find(s, in->id, r->f.addr);

		if (!l) {
			/* not a sample of this incarnation (an address sampled
			 * before an exec, or a sample not in the stream) */
			json_decref(o);
			return 0;
		}
		json_object_set_new(o, "type", json_string("free"));
		json_object_set_new(o, "t_ns", json_integer((json_int_t)it->t));
		json_object_set_new(o, "sample_seq", json_integer((json_int_t)l->seq));
		json_object_set_new(o, "inc", json_string(inc));
		json_object_set_new(o, "pid", json_integer(r->h.tgid));
		json_object_set_new(o, "tid", json_integer(r->h.tid));
		if (a->live_samples) {
			a->live_samples--;
			a->live_est_bytes -= l->est < a->live_est_bytes ? l->est : a->live_est_bytes;
		}
		l->seq = ~0ull;
		s->nlive--;
		s->frees++;
	}
	s->last_written = it->t;
	put(s, o);
	return 0;
}

/* Write what is older than wm, in time order, at most max records; true
 * when some that could be written are left. */
static bool flush(struct allocc *s, uint64_t wm, uint64_t now, bool final, size_t max)
{
	while (s->heap.n && ((const struct item *)pmu_heap_top(&s->heap))->t <= wm) {
		struct item it;

		if (!max--)
			return true;
		pmu_heap_pop(&s->heap, &it);
		if (process(s, &it, now, final)) {
			pmu_heap_push(&s->heap, &it); /* waits for its task: so does all behind it */
			break;
		}
		free(it.r);
	}
	return false;
}

/* ---- the preload channel ------------------------------------------------ */

static void conn_close(struct allocc *s, int fd)
{
	for (size_t i = 0; i < s->nconns; i++)
		if (s->conns[i] == fd) {
			s->conns[i] = s->conns[--s->nconns];
			break;
		}
	close(fd); /* and out of the epoll set */
}

static void conn_accept(struct allocc *s)
{
	int one = 1, fd;

	while ((fd = accept4(s->lis, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.fd = fd;
		if (s->nconns == s->capconns) {
			size_t nc = s->capconns ? 2 * s->capconns : 16;
			int *n = realloc(s->conns, nc * sizeof(*n));

			if (!n) {
				close(fd);
				s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
				return;
			}
			s->conns = n;
			s->capconns = nc;
		}
		if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
		    epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			continue;
		}
		s->conns[s->nconns++] = fd;
	}
	/* EMFILE and the like: the process's sends fail and it counts them (loss channel) */
}

/* Read what one connection holds (at most what the heap has room for): 1
 * when the heap is full and messages may be left, else 0. */
static int conn_read(struct allocc *s, int fd)
{
	union pmu_allocrec buf;
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];

	for (;;) {
		struct iovec iov = { &buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		pid_t pid = 0;
		ssize_t n;

		if (s->heap.n >= HEAP_MAX)
			return 1;
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			conn_close(s, fd); /* the process closed it, or exited */
			return 0;
		}
		if (n < 0)
			return 0;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;

				memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
				pid = uc.pid;
			}
		if (mh.msg_flags & MSG_TRUNC) {
			refuse(s, "alloc record longer than any kind");
			continue;
		}
		if (!pid) {
			refuse(s, "alloc record without its sender's credentials");
			continue;
		}
		if (take_rec(s, &buf, (size_t)n, pid) == -ENOMEM)
			return 0;
	}
}

/* Accept the new connections and read the ready ones: 1 when the heap is
 * full and messages may be left, else 0. */
static int chan_read(struct allocc *s)
{
	struct epoll_event ev[64];
	int n;

	if (s->ep < 0)
		return 0;
	do {
		if ((n = epoll_wait(s->ep, ev, 64, 0)) < 0)
			return 0;
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == s->lis)
				conn_accept(s);
			else if (conn_read(s, ev[i].data.fd))
				return 1;
		}
	} while (n == 64);
	return 0;
}

/* the interposer: $PMU_LIBDIR, next to pmurec, or ../lib/pmu from it */
static bool find_preload(char *out, size_t n)
{
	const char *d = getenv("PMU_LIBDIR");
	char exe[PATH_MAX], *slash;
	ssize_t l;

	if (d && *d) {
		snprintf(out, n, "%s/libpmu-alloc.so", d);
		return !access(out, R_OK);
	}
	if ((l = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return false;
	exe[l] = 0;
	if (!(slash = strrchr(exe, '/')))
		return false;
	*slash = 0;
	if (snprintf(out, n, "%s/libpmu-alloc.so", exe) < (int)n && !access(out, R_OK))
		return true;
	return snprintf(out, n, "%s/../lib/pmu/libpmu-alloc.so", exe) < (int)n && !access(out, R_OK);
}

/* ---- the command's executable ------------------------------------------- */

/* argv[0] as execvp(3) finds it; a script's interpreter (#!) instead */
static bool find_exe(const char *a0, char *out, size_t n)
{
	char buf[PATH_MAX + 3];
	int fd;
	ssize_t r;

	if (strchr(a0, '/'))
		snprintf(out, n, "%s", a0);
	else {
		const char *p = getenv("PATH");
		bool found = false;

		for (p = p ? p : "/usr/local/bin:/usr/bin:/bin"; p && !found;) {
			const char *e = strchr(p, ':');
			size_t dl = e ? (size_t)(e - p) : strlen(p);

			snprintf(out, n, "%.*s%s%s", (int)dl, p, dl ? "/" : "", a0);
			found = !access(out, X_OK);
			p = e ? e + 1 : NULL;
		}
		if (!found)
			return false;
	}
	if ((fd = open(out, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r > 2 && buf[0] == '#' && buf[1] == '!') {
		char *p = buf + 2, *e;

		buf[r] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		for (e = p; *e && *e != ' ' && *e != '\t' && *e != '\n'; e++)
			;
		*e = 0;
		if (*p != '/')
			return false;
		if (snprintf(out, n, "%s", p) >= (int)n)
			return false;
	}
	return true;
}

/* Whether the ELF file at path is dynamically linked (has PT_INTERP). */
static int dynamic(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), dyn = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
		dyn = 0;
		for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) != sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP)
				dyn = 1;
		}
	}
	close(fd);
	return dyn;
}

static int libc_of(void *ctx, const char *obj)
{
	const char *b = strrchr(obj, '/');

	b = b ? b + 1 : obj;
	if (strncmp(b, "libc.so", 7) && strncmp(b, "libc-", 5))
		return 0;
	snprintf(ctx, PATH_MAX, "%s", obj);
	return 1;
}

/*
 * A program with its own allocator: the executable or an object of its
 * closure loaded before the C library defines malloc, calloc, realloc or
 * free.  The executable's own calls bind to its definition (at link time,
 * or first in the lookup order): LD_PRELOAD's interposer comes after it
 * and the C library's malloc, which the uprobes watch, is not called, so
 * either path would say ok with no sample.  A library allocator (jemalloc,
 * tcmalloc) is interposed by LD_PRELOAD (it comes after the interposer,
 * whose dlsym(RTLD_NEXT) finds it) but not seen by uprobes on the C
 * library.
 */
struct ownmalloc {
	int nobj;               /* objects walked (0: the executable) */
	char obj[PATH_MAX];     /* the object that defines it */
	const char *sym;
	bool exe;               /* ... the executable */
};

static const char *defines_malloc(const char *path, bool symtab_too)
{
	static const char *const names[] = { "malloc", "calloc", "realloc", "free" };
	size_t best = sizeof(names) / sizeof(names[0]); /* the first of names it defines: malloc before free */
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (!(e = elf_begin(fd, ELF_C_READ, NULL))) {
		close(fd);
		return NULL;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_type == SHT_DYNSYM || (symtab_too && sh.sh_type == SHT_SYMTAB)) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    (GELF_ST_BIND(sym.st_info) != STB_GLOBAL && GELF_ST_BIND(sym.st_info) != STB_WEAK) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !(n = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			for (size_t k = 0; k < best; k++)
				if (!strcmp(n, names[k]))
					best = k;
		}
	}
	elf_end(e);
	close(fd);
	return best < sizeof(names) / sizeof(names[0]) ? names[best] : NULL;
}

static int own_malloc_of(void *ctx, const char *obj)
{
	struct ownmalloc *o = ctx;
	const char *b = strrchr(obj, '/');
	bool exe = o->nobj++ == 0;
	char libc[PATH_MAX];

	b = b ? b + 1 : obj;
	if (libc_of(libc, obj))
		return 1; /* the C library: what follows it does not come first */
	if (!strncmp(b, "ld-", 3))
		return 0; /* the interpreter: its minimal malloc is its own */
	/* the executable's .symtab too: its calls bind at link time */
	if ((o->sym = defines_malloc(obj, exe))) {
		snprintf(o->obj, sizeof(o->obj), "%s", obj);
		o->exe = exe;
		return 2;
	}
	return 0;
}

/* ---- probe -------------------------------------------------------------- */

static int uprobe_load(struct allocc *s);

static void unavailable(struct allocc *s, const char *why, const char *remedy)
{
	s->unusable = true;
	pmu_lc_unavailable_at(s->env->lc, pmu_now_mono_ns(), why, remedy);
}

static int preload_probe(struct allocc *s)
{
	char so[PATH_MAX], v[32], name[64];
	const char *old = getenv("LD_PRELOAD");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t rnd[2] = { 0, 0 };
	char *nv;
	int one = 1;

	if (!find_preload(so, sizeof(so))) {
		unavailable(s, "the LD_PRELOAD interposer libpmu-alloc.so is neither in $PMU_LIBDIR, next to pmurec nor "
			       "in ../lib/pmu from it",
			    "install pmu whole (make install), or set PMU_LIBDIR to the directory that holds libpmu-alloc.so");
		return 0;
	}
	if (!realpath(so, s->library))
		snprintf(s->library, sizeof(s->library), "%s", so);
	/* ld.so splits LD_PRELOAD at spaces and colons (ld.so(8)) */
	if (strpbrk(s->library, " :\t")) {
		char why[PATH_MAX + 100];

		snprintf(why, sizeof(why), "the interposer's path '%s' has a space or colon, which LD_PRELOAD cannot hold",
			 s->library);
		unavailable(s, why, "install pmu under a path without spaces or colons, or set PMU_LIBDIR to one");
		return 0;
	}
	/* an abstract address (unix(7)): nothing in the file system, gone
	 * with the socket; random, so that a process that has not read our
	 * environment does not happen on it */
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd[0] = pmu_now_mono_ns() * 0x9e3779b97f4a7c15ull, rnd[1] = (uint64_t)getpid();
	snprintf(name, sizeof(name), "pmurec-alloc-%d-%016" PRIx64 "%016" PRIx64, (int)getpid(), rnd[0], rnd[1]);
	memcpy(sa.sun_path + 1, name, strlen(name));
	if ((s->lis = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(s->lis, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    bind(s->lis, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) < 0 ||
	    listen(s->lis, SOMAXCONN) < 0 || (s->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (ev.data.fd = s->lis, epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lis, &ev)) < 0) {
		char why[200];

		snprintf(why, sizeof(why), "cannot create the interposer's channel: %s", strerror(errno));
		unavailable(s, why, "check the file-descriptor limit (ulimit -n)");
		return 0;
	}
	/* the command's environment: set now, before the root is forked;
	 * restored at open (record/control.c's pattern) */
	s->had_preload = old != NULL;
	if (old && !(s->old_preload = strdup(old)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (asprintf(&nv, "%s%s%s", s->library, old && *old ? " " : "", old ? old : "") < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	setenv("LD_PRELOAD", nv, 1);
	free(nv);
	setenv("PMUREC_ALLOC_ADDR", name, 1);
	snprintf(v, sizeof(v), "%" PRIu64, s->mean);
	setenv("PMUREC_ALLOC_SAMPLE", v, 1);
	setenv("PMUREC_ALLOC_CHAINS", s->chains ? "1" : "0", 1);
	s->env_set = true;
	pmu_lc_probed_ok(s->env->lc, pmu_now_mono_ns());
	return 0;
}

static void restore_env(struct allocc *s)
{
	if (!s->env_set)
		return;
	s->env_set = false;
	if (s->had_preload)
		setenv("LD_PRELOAD", s->old_preload, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv("PMUREC_ALLOC_ADDR");
	unsetenv("PMUREC_ALLOC_SAMPLE");
	unsetenv("PMUREC_ALLOC_CHAINS");
}

/*
 * The uprobe path cannot run here: unavailable with --alloc-via uprobe;
 * with auto (root), the preload path instead, the reason kept for the
 * attached evidence.
 */
static int uprobe_refused(struct allocc *s, const char *why, const char *remedy)
{
#ifdef PMU_BPF_BUILT
	alloc_bpf__destroy(s->skel);
	s->skel = NULL;
#endif
	free(s->lost_cpu);
	s->lost_cpu = NULL;
	if (s->env->cfg->alloc_via == PMU_ALLOC_UPROBE) {
		unavailable(s, why, remedy);
		return 0;
	}
	snprintf(s->fallback, sizeof(s->fallback), "%s", why);
	s->preload = true;
	return preload_probe(s);
}

static int x_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct allocc *s = calloc(1, sizeof(*s));
	const struct pmu_sampling_opts *so = env->cfg->sampling;
	char why[PATH_MAX + 200];
	bool root = pmu_caps_bpf();
	int dyn;

	(void)caps;
	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	*state = s;
	s->env = env;
	s->lis = s->ep = -1;
	s->heap = (struct pmu_heap)PMU_HEAP_INIT(struct item, item_less);
	s->mean = env->cfg->alloc_sample_bytes;
	s->chains = env->cfg->mode >= 2 &&
		    (so ? so->call_graph == PMU_CG_FP || so->call_graph == PMU_CG_DEFAULT : true);
	/*
	 * auto takes the preload path: it is confined to the cohort and costs
	 * tens of ns per allocation, where the uprobe path traps every call of
	 * malloc and free by any process on the host that maps the C library
	 * (30-60 us per trap measured on this project's VM, a hypervisor's
	 * guest; bench/probe).  The uprobe path is for commands that drop
	 * LD_PRELOAD (secure-exec, a cleared environment): --alloc-via uprobe.
	 */
	s->preload = env->cfg->alloc_via != PMU_ALLOC_UPROBE;
	if (env->cfg->alloc_via == PMU_ALLOC_AUTO)
		snprintf(s->fallback, sizeof(s->fallback), "%s",
			 "auto takes the preload path, confined to the cohort (the uprobe path traps every "
			 "process on the host that calls the C library's malloc and free: --alloc-via uprobe)");
	if (!env->cfg->argv || !env->cfg->argv[0]) {
		unavailable(s, s->preload ? "attached to a running process: it cannot be given LD_PRELOAD"
					  : "attached to a running process: its C library is not known from a command",
			    "launch the command under pmurec");
		return 0;
	}
	if (!find_exe(env->cfg->argv[0], s->exe, sizeof(s->exe))) {
		snprintf(why, sizeof(why), "the command '%s' is not found as execvp would find it", env->cfg->argv[0]);
		unavailable(s, why, "give the command's path");
		return 0;
	}
	if ((dyn = dynamic(s->exe)) <= 0) {
		snprintf(why, sizeof(why), "'%s' is %s: %s", s->exe,
			 dyn < 0 ? "not a 64-bit ELF executable" : "statically linked",
			 s->preload ? "LD_PRELOAD does not reach its allocator" : "it loads no C library to probe");
		unavailable(s, why, "link the program dynamically against the C library (its malloc is then sampled)");
		return 0;
	}
	{
		struct ownmalloc om = { 0 };

		if (pmu_sdt_closure(s->exe, own_malloc_of, &om) == 2 && (om.exe || !s->preload)) {
			snprintf(why, sizeof(why), "%s '%s' defines %s before the C library: %s", om.exe ? "the executable" : "its library",
				 om.obj, om.sym,
				 om.exe ? "its allocations are its own allocator's, which neither the interposer nor the "
					  "uprobes on the C library see"
					: "the uprobes on the C library do not see its allocator");
			if (om.exe || s->env->cfg->alloc_via == PMU_ALLOC_UPROBE) {
				unavailable(s, why, om.exe ? "build the program with the C library's malloc (or its "
							     "allocator as a shared library, which --alloc-via preload "
							     "interposes)"
							   : "use --alloc-via preload, which interposes it");
				return 0;
			}
		}
	}
	if (s->preload)
		return preload_probe(s);
	if (!root) {
		snprintf(why, sizeof(why), "--alloc-via uprobe: uid %d lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)",
			 (int)geteuid());
		unavailable(s, why, REMEDY_PRIV);
		return 0;
	}
	{
		int r = pmu_sdt_closure(s->exe, libc_of, s->library);

		if (r < 0 || r == 0) {
			snprintf(why, sizeof(why), "no C library (libc.so) in the objects '%s' loads%s%s", s->exe,
				 r < 0 ? ": " : "", r < 0 ? pmu_error_detail() : "");
			return uprobe_refused(s, why, "--alloc-via preload interposes whatever allocator the program "
						      "uses; the uprobe path knows the C library's only");
		}
	}
	if ((s->load_err = uprobe_load(s)) < 0) {
		if (s->load_err == PMU_ERR_NOMEM)
			return s->load_err;
		snprintf(s->load_why, sizeof(s->load_why), "%s", pmu_error_detail());
		s->load_err = 0;
		return uprobe_refused(s, s->load_why,
				      "run with PMU_BPF_LOG=1 to see the verifier's whole log; or --alloc-via preload");
	}
	pmu_lc_probed_ok(env->lc, pmu_now_mono_ns());
	return 0;
}

static bool x_usable(void *state)
{
	return !((struct allocc *)state)->unusable;
}

/* ---- the uprobe path ---------------------------------------------------- */

#ifdef PMU_BPF_BUILT
static char lb_last[600];

static int lb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	if (getenv("PMU_BPF_LOG")) {
		va_list c;
		va_copy(c, ap);
		vfprintf(stderr, fmt, c);
		va_end(c);
	}
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = 0;
	if (n > 0) {
		size_t used = strlen(lb_last);

		if (used + 3 < sizeof(lb_last))
			snprintf(lb_last + used, sizeof(lb_last) - used, "%s%.590s", used ? " | " : "", line);
	}
	return 0;
}

static int fail(int e, const char *what)
{
	return pmu_error(PMU_ERR_UNSUPPORTED, "%s: %s%s%s", what, strerror(e), lb_last[0] ? "; " : "", lb_last);
}

static int on_ring(void *ctx, void *data, size_t len)
{
	return take_rec(ctx, data, len, 0);
}

/* Open and load the programs and fill the thresholds, before the root is forked. */
static int uprobe_load(struct allocc *s)
{
	libbpf_print_fn_t old = libbpf_set_print(lb_print);
	int err = 0;

	lb_last[0] = 0;
	s->ncpu = libbpf_num_possible_cpus();
	if (s->ncpu <= 0 || !(s->lost_cpu = calloc((size_t)s->ncpu * LOSS_N, sizeof(uint64_t)))) {
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (!(s->skel = alloc_bpf__open())) {
		err = fail(errno, "cannot open the alloc bpf object");
		goto out;
	}
	s->ring_bytes = RING_BYTES;
	s->skel->rodata->ring_size = s->ring_bytes;
	s->skel->rodata->chains = s->chains;
	if (bpf_map__set_max_entries(s->skel->maps.rb, s->ring_bytes) ||
	    bpf_map__set_max_entries(s->skel->maps.live, LIVE_MAP)) {
		err = fail(errno, "cannot size the alloc maps");
		goto out;
	}
	if ((err = alloc_bpf__load(s->skel))) {
		err = fail(-err, "the kernel refused the alloc programs");
		goto out;
	}
	/* the thresholds: mean x -ln(u) at u's 4096 quantiles' midpoints */
	for (__u32 i = 0; i < PMU_ALLOC_TABLE; i++) {
		double u = (i + 0.5) / PMU_ALLOC_TABLE;
		__u64 v = (__u64)llround(-log(u) * (double)s->mean);

		if (!v)
			v = 1;
		if (bpf_map__update_elem(s->skel->maps.thresholds, &i, sizeof(i), &v, sizeof(v), BPF_ANY)) {
			err = fail(errno, "cannot fill the alloc thresholds");
			goto out;
		}
	}
out:
	libbpf_set_print(old);
	return err;
}

static int uprobe_open(struct allocc *s, pid_t root)
{
	static const struct {
		const char *func;
		int entry; /* 0 malloc, 1 calloc, 2 realloc, 3 free */
		bool ret;
	} at[] = {
		{ "malloc", 0, false }, { "malloc", 0, true }, { "calloc", 1, false }, { "calloc", 1, true },
		{ "realloc", 2, false }, { "realloc", 2, true }, { "free", 3, false },
	};
	libbpf_print_fn_t old = libbpf_set_print(lb_print);
	__u32 k = (__u32)root;
	__u64 v = PMU_COHORT_PRE_EXEC;
	int err = 0;

	lb_last[0] = 0;
	if (bpf_map__update_elem(s->skel->maps.pmu_members, &k, sizeof(k), &v, sizeof(v), BPF_ANY)) {
		err = fail(errno, "cannot add the root to the alloc members map");
		goto out;
	}
	/* the cohort filter's fork, exec and exit programs */
	if ((err = alloc_bpf__attach(s->skel))) {
		err = fail(-err, "cannot attach the alloc cohort filter");
		goto out;
	}
	for (size_t i = 0; i < PMU_ARRAY_SIZE(at); i++) {
		struct bpf_program *p = at[i].ret ? s->skel->progs.pmu_alloc_ret
				       : at[i].entry == 0 ? s->skel->progs.pmu_malloc
				       : at[i].entry == 1 ? s->skel->progs.pmu_calloc
				       : at[i].entry == 2 ? s->skel->progs.pmu_realloc
							  : s->skel->progs.pmu_free;
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = at[i].func, .retprobe = at[i].ret);
		struct bpf_link *l = bpf_program__attach_uprobe_opts(p, -1, s->library, 0, &o);

		if (!l) {
			char what[PATH_MAX + 64];

			snprintf(what, sizeof(what), "cannot attach a %s to %s in '%s'", at[i].ret ? "uretprobe" : "uprobe",
				 at[i].func, s->library);
			err = fail(errno, what);
			goto out;
		}
		s->links[s->nlinks++] = l;
	}
	if (!(s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.rb), on_ring, s, NULL)))
		err = fail(errno, "cannot map the alloc ring");
out:
	libbpf_set_print(old);
	return err;
}

static void read_losses(struct allocc *s)
{
	struct pmu_alloc_counters *pc = calloc((size_t)s->ncpu, sizeof(*pc));
	__u64 *cf = calloc((size_t)s->ncpu, sizeof(*cf));
	__u32 k = 0;

	if (pc && !bpf_map__lookup_elem(s->skel->maps.counters, &k, sizeof(k), pc, sizeof(*pc) * s->ncpu, 0))
		for (int c = 0; c < s->ncpu; c++) {
			s->lost_cpu[c * LOSS_N + LOSS_RESERVE] = pc[c].reserve_fail;
			s->lost_cpu[c * LOSS_N + LOSS_PENDING] = pc[c].pending_fail;
			s->lost_cpu[c * LOSS_N + LOSS_LIVE] = pc[c].live_fail;
		}
	/* a process the members map could not take: none of its calls is seen */
	if (cf && !bpf_map__lookup_elem(s->skel->maps.pmu_cohort_fail, &k, sizeof(k), cf, sizeof(*cf) * s->ncpu, 0))
		for (int c = 0; c < s->ncpu; c++)
			s->lost_cpu[c * LOSS_N + LOSS_PENDING] += cf[c];
	for (int c = 0; c < s->ncpu; c++)
		for (int w = 0; w < LOSS_N; w++)
			s->lost[w] += s->lost_cpu[c * LOSS_N + w];
	free(pc);
	free(cf);
}
#else
static int uprobe_load(struct allocc *s)
{
	(void)s;
#ifndef PMU_BPF_UNBUILT
#define PMU_BPF_UNBUILT "no eBPF toolchain at build time"
#endif
	return pmu_error(PMU_ERR_UNSUPPORTED, "the uprobe path was built without eBPF: %s (or use --alloc-via preload)",
			 PMU_BPF_UNBUILT);
}
#endif

/* Take what the heap has room for: 1 when records were left (heap full). */
static int take(struct allocc *s)
{
	if (s->preload)
		return chan_read(s);
#ifdef PMU_BPF_BUILT
	if (s->ring) {
		int n;

		if (s->heap.n >= HEAP_MAX)
			return 1;
		n = ring_buffer__consume(s->ring);
		if (n == -ENOBUFS)
			return 1;
		if (n < 0 && n != -ENOMEM && !s->err)
			s->err = pmu_error(PMU_ERR_IO, "cannot drain the alloc ring: %s", strerror(-n));
	}
#endif
	return 0;
}

/* ---- open, drain, stop -------------------------------------------------- */

static void write_config(struct allocc *s)
{
	json_t *c = json_object();

	json_object_set_new(c, "type", json_string("config"));
	json_object_set_new(c, "via", json_string(s->preload ? "preload" : "uprobe"));
	json_object_set_new(c, "library", json_string(s->library));
	json_object_set_new(c, "functions",
			    json_string(s->preload ? "malloc calloc realloc free posix_memalign aligned_alloc memalign "
						     "valloc pvalloc"
						   : "malloc calloc realloc free"));
	json_object_set_new(c, "sample_bytes", json_integer((json_int_t)s->mean));
	json_object_set_new(c, "chains", json_boolean(s->chains));
	if (!s->preload)
		json_object_set_new(c, "ring_bytes", json_integer(s->ring_bytes));
	json_object_set_new(c, "ncpus", json_integer(s->ncpu > 0 ? s->ncpu : (json_int_t)sysconf(_SC_NPROCESSORS_CONF)));
	json_object_set_new(c, "clock", json_string("monotonic"));
	put(s, c);
}

static int x_open(void *state, pid_t root, uint64_t t)
{
	struct allocc *s = state;
	struct pmu_out *o = s->env->out;
	char ev[PATH_MAX + 1000];
	int err;

	(void)root;
	pmu_lc_step(s->env->lc, "opened", t);
	if (s->preload) {
		/* the root has the environment: the recorder's later
		 * children do not */
		restore_env(s);
	} else {
#ifdef PMU_BPF_BUILT
		if (!s->env->followed)
			return pmu_error(PMU_ERR_UNSUPPORTED, "the cohort is not followed (%s): %s",
					 s->env->follow_reason ? s->env->follow_reason : "no follower",
					 s->env->follow_remedy ? s->env->follow_remedy : "see the cohort collector");
		if ((err = uprobe_open(s, root)))
			return err;
#endif
	}
	if ((err = o->open(o, "collectors/alloc/alloc.jsonl", "alloc", &s->st)))
		return err;
	write_config(s);
	if (s->preload)
		snprintf(ev, sizeof(ev),
			 "LD_PRELOAD=%s with PMUREC_ALLOC_ADDR given to the command before its exec (mean %" PRIu64
			 " bytes%s)%s%.600s",
			 s->library, s->mean, s->chains ? ", fp chains" : "",
			 s->fallback[0] ? "; the uprobe path was not taken: " : "", s->fallback);
	else
		snprintf(ev, sizeof(ev),
			 "uprobes on malloc, calloc, realloc and free and uretprobes on the first three in '%s' "
			 "(every process mapping it traps; cohort filter in the kernel), ring mapped (mean %" PRIu64
			 " bytes%s)",
			 s->library, s->mean, s->chains ? ", fp chains" : "");
	pmu_lc_attached(s->env->lc, pmu_now_mono_ns(), ev);
	return s->err;
}

static void x_task(void *state, const struct pmu_task_event *ev)
{
	struct allocc *s = state;

	if (ev->what != PMU_TASK_INC_ENDED || s->unusable || s->stopped)
		return;
	if (acc(s, ev->inc))
		s->incs[ev->inc].ended = true;
	push(s, ev->t, NULL, ev->inc);
}

static int x_fds(void *state, int *fds, int max)
{
	struct allocc *s = state;

	if (max < 1 || s->stalled)
		return 0;
	if (s->preload) {
		if (s->ep < 0)
			return 0;
		fds[0] = s->ep;
		return 1;
	}
#ifdef PMU_BPF_BUILT
	if (s->ring) {
		fds[0] = ring_buffer__epoll_fd(s->ring);
		return 1;
	}
#endif
	return 0;
}

static int x_drain(void *state, uint64_t now)
{
	struct allocc *s = state;
	uint64_t t0 = pmu_now_mono_ns();
	bool more;

	if (s->stopped)
		return s->err;
	s->stalled = false;
	do {
		int held = take(s);

		uint64_t win = s->preload ? PRELOAD_REORDER_NS : REORDER_NS;

		more = flush(s, now > win ? now - win : 0, now, false, 2048);
		if (!more && held && s->heap.n >= HEAP_MAX) {
			size_t had = s->heap.n;

			more = flush(s, UINT64_MAX, now, false, 2048);
			if (s->heap.n == had) {
				s->stalled = true;
				break;
			}
			more = true;
		}
	} while (more && !s->err && pmu_now_mono_ns() - t0 < DRAIN_NS);
	return s->err;
}

static void x_stop(void *state, uint64_t t)
{
	struct allocc *s = state;

	if (s->stopped)
		return;
	/* detach first: nothing is added after the last read */
#ifdef PMU_BPF_BUILT
	for (int i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	s->nlinks = 0;
	if (s->skel) {
		alloc_bpf__detach(s->skel);
		read_losses(s);
	}
#endif
	/* what the heap has room for now; the rest at emit */
	take(s);
	s->stopped = true;
	s->stop_t = pmu_now_mono_ns();
	pmu_lc_step(s->env->lc, "stopped", t);
}

/* ---- emit --------------------------------------------------------------- */

static uint64_t lost_total(const struct allocc *s)
{
	uint64_t n = 0;

	for (int w = 0; w < LOSS_N; w++)
		n += s->lost[w];
	return n;
}

static int x_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct allocc *s = state;
	uint64_t tl;
	json_t *sum;
	int err;

	if (!s || s->unusable)
		return 0;
	if (!s->st)
		return s->err;
	/* the rest, through the heap */
	while (take(s) && !s->err)
		flush(s, UINT64_MAX, UINT64_MAX, true, HEAP_MAX / 4);
	flush(s, UINT64_MAX, UINT64_MAX, true, SIZE_MAX);
	if (s->preload && s->ep >= 0) {
		while (s->nconns)
			conn_close(s, s->conns[s->nconns - 1]);
		close(s->lis);
		close(s->ep);
		s->lis = s->ep = -1;
	}
	tl = s->stop_t > s->last_written ? s->stop_t : s->last_written;
	if (tl > win->end_ns)
		tl = win->end_ns > s->last_written ? win->end_ns : s->last_written;
	/* incarnations alive at the stop (or whose end was not heard) */
	for (size_t k = 0; k < env->cohort->n; k++)
		write_inc(s, &env->cohort->incs[k], tl, false);
	/* loss: per CPU (uprobe), or as the interposers reported it */
	for (int w = 0; w < LOSS_N; w++) {
		if (s->lost_cpu) {
			for (int c = 0; c < s->ncpu; c++)
				if (s->lost_cpu[c * LOSS_N + w]) {
					json_t *l = json_object();

					json_object_set_new(l, "type", json_string("loss"));
					json_object_set_new(l, "t_ns", json_integer((json_int_t)tl));
					json_object_set_new(l, "cpu", json_integer(c));
					json_object_set_new(l, "lost", json_integer((json_int_t)s->lost_cpu[c * LOSS_N + w]));
					json_object_set_new(l, "what", json_string(loss_what[w]));
					put(s, l);
				}
			/* the live table here (not the kernel's) */
			if (w != LOSS_LIVE)
				continue;
			uint64_t kern = 0;
			for (int c = 0; c < s->ncpu; c++)
				kern += s->lost_cpu[c * LOSS_N + w];
			if (s->lost[w] <= kern)
				continue;
			json_t *l = json_object();

			json_object_set_new(l, "type", json_string("loss"));
			json_object_set_new(l, "t_ns", json_integer((json_int_t)tl));
			json_object_set_new(l, "lost", json_integer((json_int_t)(s->lost[w] - kern)));
			json_object_set_new(l, "what", json_string(loss_what[w]));
			put(s, l);
		} else if (s->lost[w]) {
			json_t *l = json_object();

			json_object_set_new(l, "type", json_string("loss"));
			json_object_set_new(l, "t_ns", json_integer((json_int_t)tl));
			json_object_set_new(l, "lost", json_integer((json_int_t)s->lost[w]));
			json_object_set_new(l, "what", json_string(loss_what[w]));
			put(s, l);
		}
	}
	sum = json_object();
	json_object_set_new(sum, "type", json_string("summary"));
	json_object_set_new(sum, "samples", json_integer((json_int_t)s->samples));
	json_object_set_new(sum, "frees", json_integer((json_int_t)s->frees));
	json_object_set_new(sum, "est_bytes", json_integer((json_int_t)s->est_bytes));
	json_object_set_new(sum, "unattributed", json_integer((json_int_t)s->unattributed));
	json_object_set_new(sum, "lost", json_integer((json_int_t)lost_total(s)));
	json_object_set_new(sum, "malformed", json_integer((json_int_t)s->malformed));
	put(s, sum);
	err = s->err;
	{
		int e2 = env->out->close(s->st);

		s->st = NULL;
		err = err ? err : e2;
	}
	if (lost_total(s)) {
		char why[400];

		snprintf(why, sizeof(why),
			 "%" PRIu64 " lost: %" PRIu64 " records found the ring full, %" PRIu64
			 " calls had no thread state, %" PRIu64 " sampled addresses could not be kept (their frees unseen), %" PRIu64
			 " records the interposer could not send (or sent too late to place in time order)",
			 lost_total(s), s->lost[LOSS_RESERVE], s->lost[LOSS_PENDING], s->lost[LOSS_LIVE], s->lost[LOSS_CHANNEL]);
		pmu_lc_lost(env->lc, "drop", win->end_ns, lost_total(s), why);
	}
	if (s->malformed)
		pmu_lc_lost(env->lc, "malformed", win->end_ns, s->malformed, s->malformed_first);
	pmu_lc_step(env->lc, "detached", win->end_ns);
	return err;
}

static bool x_failed(void *state, char *why, size_t n)
{
	struct allocc *s = state;
	const struct pmu_sampling_opts *so;

	if (!s || s->unusable || !lost_total(s))
		return false;
	so = s->env->cfg->sampling;
	if (so && so->allow_loss)
		return false;
	snprintf(why, n, "%" PRIu64 " allocation records lost (--allow-loss accepts a bundle with loss)", lost_total(s));
	return true;
}

static void x_release(void *state)
{
	struct allocc *s = state;

	if (!s)
		return;
	restore_env(s);
	while (s->heap.n) {
		struct item it;

		pmu_heap_pop(&s->heap, &it);
		free(it.r);
	}
	pmu_heap_free(&s->heap);
	if (s->st)
		s->env->out->close(s->st);
#ifdef PMU_BPF_BUILT
	for (int i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	ring_buffer__free(s->ring);
	alloc_bpf__destroy(s->skel);
#endif
	while (s->nconns)
		conn_close(s, s->conns[s->nconns - 1]);
	free(s->conns);
	if (s->lis >= 0)
		close(s->lis);
	if (s->ep >= 0)
		close(s->ep);
	free(s->old_preload);
	free(s->lost_cpu);
	free(s->live);
	free(s->incs);
	free(s);
}

static bool x_wanted(const struct pmu_run_config *cfg)
{
	return cfg->alloc_sample_bytes > 0;
}

const struct pmu_collector_ops pmu_alloc_collector = {
	.name = "alloc",
	.modes = 2 | 4,
	.wanted = x_wanted,
	.probe = x_probe,
	.usable = x_usable,
	.open = x_open,
	.task = x_task,
	.fds = x_fds,
	.drain = x_drain,
	.stop = x_stop,
	.emit = x_emit,
	.failed = x_failed,
	.release = x_release,
};
