/*
 * libpmu-alloc.so: the alloc collector's LD_PRELOAD interposer, for
 * recording without privilege (spec 1.8: config.via "preload").
 *
 * pmurec puts it in the command's LD_PRELOAD with PMUREC_ALLOC_ADDR (the
 * abstract AF_UNIX address where pmurec listens, SOCK_SEQPACKET),
 * PMUREC_ALLOC_SAMPLE (the mean sampling interval, bytes) and
 * PMUREC_ALLOC_CHAINS (1: frame-pointer call chains).  Without them every
 * call goes straight to the C library.
 *
 * Each process connects its own socket, at its first record: no fd is
 * inherited across exec, so a program that closes every fd or reuses the
 * numbers cannot take the channel away or be written into.  Before each
 * send the socket's identity (fstat: a socket of the st_dev and st_ino it
 * had when connected) is checked, one fstat per record: if the program
 * closed the fd or the number is now another file, the number is left
 * alone (it is not ours any more) and a new socket is connected.  The
 * socket is close-on-exec: an exec'd image that keeps the interposer
 * connects afresh from the environment, one that drops it (a cleared
 * environment, secure-exec) is not handed a stray fd.  A forked child
 * drops its parent's connection, counters, live table and countdown
 * (pthread_atfork) and connects its own.
 *
 * It wraps malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 * memalign, valloc and pvalloc, finding the next definitions with
 * dlsym(RTLD_NEXT); dlsym itself may allocate, so calls made while it runs
 * are served from a small static arena (never freed).  Sampling is the
 * uprobe path's (bpf/alloc.bpf.c): per thread, a byte countdown from a
 * threshold drawn from an exponential distribution (its own xorshift
 * generator), the call that crosses it sampled.  A sampled address is kept
 * in a lock-free table so that its free (or a realloc moving it) sends a
 * free record; every other free costs one load when no sample is live.
 * A thread-local guard keeps the interposer's own work (the clock, the
 * send) out of the sampling.
 *
 * Records (bpf/alloc.h) go one per message, without blocking: what cannot
 * be sent is counted, and the counts go in a final PMU_ALLOC_REC_LOST
 * message at exit (the collector reports them; a process killed before
 * its destructors runs takes them along, which the collector cannot see).
 * The kernel's SCM_CREDENTIALS say which process sent each message; the
 * record's own tgid must agree.
 *
 * Never sanitized, no pmu library: it runs inside any program.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/alloc.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);

/* the bootstrap arena: what dlsym allocates while the real functions are looked up */
static _Alignas(16) char arena[64 * 1024];
static size_t arena_used;
static int resolving;

static int on;             /* recording: the environment was valid */
static struct sockaddr_un addr; /* pmurec's */
static socklen_t addrlen;
static int chan = -1;      /* this process's socket (under chan_lock), -1: none yet */
static dev_t chan_dev;     /* ... its identity when connected */
static ino_t chan_ino;
static atomic_flag chan_lock = ATOMIC_FLAG_INIT;
static double mean;        /* PMUREC_ALLOC_SAMPLE */
static int want_chains;
static _Atomic uint64_t seq, lost_records, lost_samples, lost_live;

/* a thread's state: the countdown, its generator and the guard */
static TLS int64_t t_left;
static TLS uint64_t t_rng;
static TLS int t_in, t_init;

/* The live table: sampled addresses (open addressing, linear probing; a
 * freed slot becomes a tombstone that a later insert may take). */
#define LIVE_SLOTS (1u << 16)
#define LIVE_PROBES 64
#define TOMB ((uintptr_t)1)
static _Atomic uintptr_t live_addr[LIVE_SLOTS];
static uint64_t live_seq[LIVE_SLOTS];
static _Atomic long live_n;

static int in_arena(const void *p)
{
	return (const char *)p >= arena && (const char *)p < arena + sizeof(arena);
}

static void *arena_alloc(size_t n)
{
	size_t at = (__atomic_fetch_add(&arena_used, (n + 15) & ~(size_t)15, __ATOMIC_RELAXED));

	if (at + n > sizeof(arena))
		return NULL;
	return arena + at;
}

static void resolve(void)
{
	resolving = 1;
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_valloc = dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	resolving = 0;
}

static void on_fork_child(void);

__attribute__((constructor)) static void init(void)
{
	const char *a = getenv("PMUREC_ALLOC_ADDR"), *m = getenv("PMUREC_ALLOC_SAMPLE"), *c = getenv("PMUREC_ALLOC_CHAINS");
	char *end;
	double v;
	size_t al;

	if (!real_malloc)
		resolve();
	if (!a || !m)
		return;
	al = strlen(a);
	if (!al || al + 1 > sizeof(addr.sun_path))
		return;
	v = strtod(m, &end);
	if (*end || end == m || !(v >= 1))
		return;
	/* an abstract address: a NUL, then the name (unix(7)) */
	addr.sun_family = AF_UNIX;
	addr.sun_path[0] = 0;
	memcpy(addr.sun_path + 1, a, al);
	addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + al);
	mean = v;
	want_chains = c && *c == '1';
	pthread_atfork(NULL, NULL, on_fork_child);
	on = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* an exponential threshold of mean `mean` bytes, at least 1 */
static int64_t draw(void)
{
	uint64_t x = t_rng;
	double u;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t_rng = x;
	u = ((x >> 11) + 0.5) * (1.0 / 9007199254740992.0); /* (0, 1) */
	u = -log(u) * mean;
	return u < 1 ? 1 : u > 9e18 ? INT64_MAX : (int64_t)u;
}

static void thread_init(void)
{
	t_init = 1;
	/* the pid too: a forked child's thread has its parent's address */
	t_rng = (now_ns() ^ ((uint64_t)(uintptr_t)&t_left * 0x9e3779b97f4a7c15ull) ^
		 ((uint64_t)getpid() << 32)) | 1;
	t_left = draw();
}

/* Whether this call of n bytes is sampled: the countdown (every call's
 * path: inlined) */
static inline __attribute__((always_inline)) int crossing(size_t n)
{
	if (!on || t_in)
		return 0;
	if (!t_init)
		thread_init();
	t_left -= (int64_t)(n > INT64_MAX ? INT64_MAX : n);
	if (t_left > 0)
		return 0;
	t_left = draw();
	return 1;
}

static void lock_chan(void)
{
	while (atomic_flag_test_and_set_explicit(&chan_lock, memory_order_acquire))
		sched_yield();
}

static void unlock_chan(void)
{
	atomic_flag_clear_explicit(&chan_lock, memory_order_release);
}

/* Whether fd is still the socket this process connected. */
static int still_ours(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && S_ISSOCK(st.st_mode) && st.st_dev == chan_dev && st.st_ino == chan_ino;
}

/* This process's socket, connected now if the program closed or replaced
 * it (or none was yet): -1 when pmurec cannot be reached.  Under chan_lock. */
static int channel(void)
{
	struct stat st;
	int fd, big = 4 << 20;

	if (still_ours(chan))
		return chan;
	/* the number is closed or another file now: the program's, not ours to close */
	chan = -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, addrlen) || fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	/* room for bursts between pmurec's drains (capped at net.core.wmem_max) */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	chan_dev = st.st_dev;
	chan_ino = st.st_ino;
	return chan = fd;
}

/* 1: a wait for room timed out; no thread waits again until a send goes through */
static atomic_int stalled;

static void send_rec(const void *r, size_t n, int is_sample)
{
	int fd, ok;

	int saved = errno; /* the program's errno is not ours to change */

	lock_chan();
	fd = channel();
	ok = fd >= 0 && send(fd, r, n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n;
	if (!ok && fd >= 0 && errno == EAGAIN && !atomic_load(&stalled)) {
		/* back-pressure: the socket's buffer is full (pmurec drains it on
		 * its timer); the program waits for room, at most a second,
		 * rather than lose the record (a sampling rate of one byte sends
		 * one record per allocation).  A wait that found no room means
		 * pmurec is not reading (stopped, or gone): no more waits until
		 * a send goes through, so the program is held a second at most */
		struct pollfd pf = { .fd = fd, .events = POLLOUT };

		if (poll(&pf, 1, 1000) == 1)
			ok = send(fd, r, n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n;
		if (!ok)
			atomic_store(&stalled, 1);
	}
	if (ok)
		atomic_store(&stalled, 0);
	unlock_chan();
	errno = saved;
	if (ok)
		return;
	atomic_fetch_add(&lost_records, 1);
	if (is_sample)
		atomic_fetch_add(&lost_samples, 1);
}

/*
 * A forked child starts its own account: its own connection (the
 * parent's is closed in the child only), no losses (the parent reports
 * its own: copied, they were reported once per child), no live samples
 * (a free of a block the parent sampled is not the child's sample: a
 * free record naming it would name another incarnation's sample) and a
 * countdown drawn afresh (copied, parent and children sampled in lock
 * step).  A thread of the parent may have held the lock at the fork:
 * none runs in the child.
 */
static void on_fork_child(void)
{
	atomic_flag_clear(&chan_lock);
	if (still_ours(chan))
		close(chan);
	chan = -1;
	atomic_store(&lost_records, 0);
	atomic_store(&lost_samples, 0);
	atomic_store(&lost_live, 0);
	if (atomic_load(&live_n)) {
		for (size_t i = 0; i < LIVE_SLOTS; i++)
			atomic_store_explicit(&live_addr[i], 0, memory_order_relaxed);
		atomic_store(&live_n, 0);
	}
	t_init = 0; /* the forking thread's: reseeded at its next call */
}

static void hdr(struct pmu_alloc_hdr *h, uint16_t kind, uint16_t size)
{
	h->seq = atomic_fetch_add(&seq, 1) + 1;
	h->time_ns = now_ns();
	h->kind = kind;
	h->size = size;
	h->cpu = 0;
	h->tgid = (uint32_t)getpid();
	h->tid = (uint32_t)syscall(SYS_gettid);
}

/*
 * The caller's chain by frame pointers: the return address into the
 * caller, then up the frames.  A frame pointer is any word on the stack
 * of code built without them, so each frame is read with
 * process_vm_readv() on this process (a fault is an error, not a signal):
 * about a microsecond a frame, for a sampled call only.
 */
static uint32_t chain_of(__u64 *chain, void *fp0)
{
	uintptr_t fp = (uintptr_t)fp0;
	uint32_t n = 0;
	pid_t self = getpid();

	while (n < PMU_ALLOC_CHAIN_MAX) {
		uintptr_t fr[2];
		struct iovec l = { fr, sizeof(fr) }, r = { (void *)fp, sizeof(fr) };

		if (!fp || (fp & 7) || process_vm_readv(self, &l, 1, &r, 1, 0) != (ssize_t)sizeof(fr) || !fr[1])
			break;
		chain[n++] = fr[1];
		if (fr[0] <= fp)
			break;
		fp = fr[0];
	}
	return n;
}

static void live_put(uintptr_t a, uint64_t s)
{
	size_t i = (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 48) & (LIVE_SLOTS - 1);

	for (int k = 0; k < LIVE_PROBES; k++, i = (i + 1) & (LIVE_SLOTS - 1)) {
		uintptr_t cur = atomic_load_explicit(&live_addr[i], memory_order_relaxed);

		if ((cur == 0 || cur == TOMB) &&
		    atomic_compare_exchange_strong(&live_addr[i], &cur, a)) {
			live_seq[i] = s; /* read only by a free of a, after this call returned */
			atomic_fetch_add(&live_n, 1);
			return;
		}
	}
	atomic_fetch_add(&lost_live, 1);
}

/* the sample's seq when a was sampled and live (now removed), else 0 */
static uint64_t live_take(uintptr_t a)
{
	size_t i = (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 48) & (LIVE_SLOTS - 1);

	for (int k = 0; k < LIVE_PROBES; k++, i = (i + 1) & (LIVE_SLOTS - 1)) {
		uintptr_t cur = atomic_load_explicit(&live_addr[i], memory_order_acquire);

		if (cur == 0)
			return 0;
		if (cur == a) {
			uint64_t s = live_seq[i];

			if (atomic_compare_exchange_strong(&live_addr[i], &cur, TOMB)) {
				atomic_fetch_sub(&live_n, 1);
				return s;
			}
			return 0;
		}
	}
	return 0;
}

__attribute__((noinline)) static void sample(size_t n, void *p, uint32_t func, void *fp)
{
	struct pmu_alloc_sample r;

	t_in = 1;
	memset(&r, 0, offsetof(struct pmu_alloc_sample, chain));
	hdr(&r.h, PMU_ALLOC_REC_SAMPLE, sizeof(r));
	r.size = n;
	r.addr = (uint64_t)(uintptr_t)p;
	r.func = func;
	r.nchain = want_chains ? chain_of(r.chain, fp) : 0;
	if (r.nchain < PMU_ALLOC_CHAIN_MAX)
		memset(&r.chain[r.nchain], 0, (PMU_ALLOC_CHAIN_MAX - r.nchain) * sizeof(r.chain[0]));
	if (p)
		live_put((uintptr_t)p, r.h.seq);
	send_rec(&r, sizeof(r), 1);
	t_in = 0;
}

__attribute__((noinline)) static void gone_slow(void *p)
{
	struct pmu_alloc_free r;
	uint64_t s;

	if (!(s = live_take((uintptr_t)p)))
		return;
	t_in = 1;
	hdr(&r.h, PMU_ALLOC_REC_FREE, sizeof(r));
	r.addr = (uint64_t)(uintptr_t)p;
	r.sample_seq = s;
	send_rec(&r, sizeof(r), 0);
	t_in = 0;
}

/* the free record of sample os at p, stamped t0 (realloc) */
__attribute__((noinline)) static void realloc_gone(void *p, uint64_t os, uint64_t t0)
{
	struct pmu_alloc_free r;

	t_in = 1;
	hdr(&r.h, PMU_ALLOC_REC_FREE, sizeof(r));
	r.h.time_ns = t0;
	r.addr = (uint64_t)(uintptr_t)p;
	r.sample_seq = os;
	send_rec(&r, sizeof(r), 0);
	t_in = 0;
}

/* every free's path: one load when no sample is live */
static inline __attribute__((always_inline)) void gone(void *p)
{
	if (p && on && atomic_load_explicit(&live_n, memory_order_relaxed))
		gone_slow(p);
}

__attribute__((destructor)) static void fini(void)
{
	struct pmu_alloc_lost r;
	struct pollfd pf;
	int fd;

	if (!on || !(atomic_load(&lost_records) || atomic_load(&lost_live)))
		return;
	t_in = 1;
	hdr(&r.h, PMU_ALLOC_REC_LOST, sizeof(r));
	r.channel = atomic_load(&lost_records);
	r.samples = atomic_load(&lost_samples);
	r.live_full = atomic_load(&lost_live);
	/* the last word: wait a little for room */
	lock_chan();
	if ((fd = channel()) >= 0) {
		pf.fd = fd;
		pf.events = POLLOUT;
		if (poll(&pf, 1, 1000) == 1)
			send(fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	unlock_chan();
	t_in = 0;
}

/* ---- the wrappers ------------------------------------------------------- */

/* the caller's frame: our frame's saved frame pointer and return address
 * are the first pair the chain walk reads */
#define FP() __builtin_frame_address(0)

EXPORT void *malloc(size_t n)
{
	void *p;

	if (!real_malloc) {
		if (resolving)
			return arena_alloc(n);
		resolve();
	}
	if (!crossing(n))
		return real_malloc(n);
	p = real_malloc(n);
	sample(n, p, PMU_ALLOC_F_MALLOC, FP());
	return p;
}

EXPORT void *calloc(size_t a, size_t b)
{
	size_t n;
	void *p;

	if (!real_calloc) {
		if (resolving) {
			if (__builtin_mul_overflow(a, b, &n))
				return NULL;
			return arena_alloc(n); /* static: zeroed */
		}
		resolve();
	}
	if (__builtin_mul_overflow(a, b, &n) || !crossing(n))
		return real_calloc(a, b);
	p = real_calloc(a, b);
	sample(n, p, PMU_ALLOC_F_CALLOC, FP());
	return p;
}

EXPORT void *realloc(void *old, size_t n)
{
	uint64_t os = 0, t0 = 0;
	void *p;
	int s;

	if (in_arena(old)) {
		/* a bootstrap block: copied out (its size is unknown: at most the rest of the arena) */
		size_t have = (size_t)(arena + sizeof(arena) - (char *)old);

		p = malloc(n);
		if (p)
			memcpy(p, old, n < have ? n : have);
		return p;
	}
	if (!real_realloc) {
		if (resolving)
			return old ? NULL : arena_alloc(n);
		resolve();
	}
	/*
	 * A sampled old block leaves the live table before the real realloc,
	 * and its free record is stamped then: once realloc has freed it,
	 * another thread may get the address and sample it, and that sample
	 * must be neither taken here nor written before this free.
	 */
	if (old && on && !t_in && atomic_load_explicit(&live_n, memory_order_relaxed) &&
	    (os = live_take((uintptr_t)old)))
		t0 = now_ns();
	s = crossing(n);
	p = real_realloc(old, n);
	/* the old block is gone when it moved, or when realloc(old, 0)
	 * freed it (or it is sampled anew in place); a failed realloc
	 * leaves it where it was, still live */
	if (os) {
		if ((p != old && (p || !n)) || (s && p == old))
			realloc_gone(old, os, t0);
		else
			live_put((uintptr_t)old, os);
	}
	if (s)
		sample(n, p, PMU_ALLOC_F_REALLOC, FP());
	return p;
}

EXPORT void free(void *p)
{
	if (!p || in_arena(p))
		return;
	if (!real_free)
		resolve();
	if (!t_in)
		gone(p);
	real_free(p);
}

EXPORT int posix_memalign(void **out, size_t al, size_t n)
{
	int r;

	if (!real_posix_memalign)
		resolve();
	if (!crossing(n))
		return real_posix_memalign(out, al, n);
	r = real_posix_memalign(out, al, n);
	sample(n, r ? NULL : *out, PMU_ALLOC_F_POSIX_MEMALIGN, FP());
	return r;
}

EXPORT void *aligned_alloc(size_t al, size_t n)
{
	void *p;

	if (!real_aligned_alloc)
		resolve();
	if (!crossing(n))
		return real_aligned_alloc(al, n);
	p = real_aligned_alloc(al, n);
	sample(n, p, PMU_ALLOC_F_ALIGNED_ALLOC, FP());
	return p;
}

EXPORT void *memalign(size_t al, size_t n)
{
	void *p;

	if (!real_memalign)
		resolve();
	if (!crossing(n))
		return real_memalign(al, n);
	p = real_memalign(al, n);
	sample(n, p, PMU_ALLOC_F_MEMALIGN, FP());
	return p;
}

EXPORT void *valloc(size_t n)
{
	void *p;

	if (!real_valloc)
		resolve();
	if (!crossing(n))
		return real_valloc(n);
	p = real_valloc(n);
	sample(n, p, PMU_ALLOC_F_VALLOC, FP());
	return p;
}

EXPORT void *pvalloc(size_t n)
{
	void *p;

	if (!real_pvalloc)
		resolve();
	if (!crossing(n))
		return real_pvalloc(n);
	p = real_pvalloc(n);
	sample(n, p, PMU_ALLOC_F_PVALLOC, FP());
	return p;
}
