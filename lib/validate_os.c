/*
 * The rules of the OS-event collectors' streams (spec 1.7, bundle-spec
 * section 23): the syscalls stream (SYSCALLS-SHAPE, and TIME-ORDER,
 * TIME-WINDOW, ATTRIBUTION, LOSS, MALFORMED, TRUNCATED of its records), the
 * syscall-stats stream (SYSCALL-STATS: the histogram of section 23.4 against
 * count, min, max and total) and the sched stream (SCHED-SHAPE: the parts of
 * each interval and of each thread's wall time).
 *
 * Record by record, as every stream: what is held is a stream's counters
 * and one small entry per thread (the syscalls stream: its last seq and
 * return; the sched stream: the sums of its off intervals until its thread
 * record), up to OS_THREADS_MAX threads, and the keys of the repetition's
 * stats with their counts (one per incarnation, system call, errno and
 * file: what the raw calls are matched against), up to OS_KEYS_MAX; past
 * either bound those rules are not applied, which is said once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jsonl.h"
#include "oshist.h"
#include "sysname.h"
#include "util.h"
#include "validate_int.h"

#define OS_THREADS_MAX (1u << 20)
#define OS_KEYS_MAX (1u << 21)
#define RAW_CALLS_MAX 4096         /* bytes of config.raw_calls held */

#if defined(__x86_64__)
#define HOST_ARCH "x86_64"
#elif defined(__aarch64__)
#define HOST_ARCH "aarch64"
#else
#define HOST_ARCH ""
#endif

enum { OS_SYSCALLS, OS_STATS, OS_SCHED };
enum { PH_START, PH_FD, PH_BODY, PH_END };

/* One thread's entry: the key is (hash of its incarnation, tid). */
struct os_thread {
	uint64_t key;                  /* 0: empty */
	uint64_t last_seq, last_ret;   /* syscalls: its previous call's seq and return (t_ns) */
	uint64_t last_end;             /* sched: its previous off interval's end */
	uint64_t first_begin;          /* sched: where its first off interval of this life began */
	uint64_t runq, wait_s, wait_d, wait_other, vol, invol; /* sched: sums of its off records */
	uint64_t offs, line;           /* sched: off records, the first one's line */
	uint64_t done_t;               /* sched: its thread record's t_ns */
	bool done;                     /* sched: its thread record came */
};

struct os_state {
	int kind, phase;
	uint64_t configs, summaries;
	/* syscalls */
	char raw_calls[RAW_CALLS_MAX + 2]; /* " name name ... " */
	bool raw_known, arch_host, bound_set;
	uint64_t bound;
	uint64_t calls, fds, lost, lost_reserve, truncations, max_seq, first_trunc_line;
	uint64_t sum_line, sum_calls, sum_fds, sum_seq_end, sum_unattr, sum_trunc, sum_lost, sum_malformed;
	uint64_t lost_statsmap, lost_inflight, unmatched, unmatched_line;
	/* syscall-stats */
	uint64_t stats, stat_calls, sum_stats;
	uint64_t unentered, sum_unentered; /* unentered records' counts, the summary's */
	/* sched */
	bool chains;
	uint64_t offs, threads, sum_offs, sum_threads;
	/* per thread */
	struct os_thread *tt;
	size_t nt, capt;
	bool t_full;
};

/* The syscall-stats stream's keys: hash of (inc, nr, errno, dev, ino) ->
 * the calls its stat counted that no raw call has matched yet. */
struct os_xref {
	uint64_t *key, *cnt;
	size_t n, cap;
	bool full, summary;
	uint64_t lost;                 /* the summary's */
};

void pmu_v_os_reset(struct v *v)
{
	if (!v->osx)
		return;
	free(v->osx->key);
	free(v->osx->cnt);
	free(v->osx);
	v->osx = NULL;
}

static uint64_t xref_key(const struct pmu_jrec *r)
{
	const struct pmu_jfield *inc = rf(r, "inc"), *dev = rf(r, "dev");
	uint64_t h = inc ? hash_bytes(inc->s, inc->slen) : 1;

	h = (h ^ ri(r, "nr")) * 0xff51afd7ed558ccdull;
	h = (h ^ ri(r, "errno")) * 0xc4ceb9fe1a85ec53ull;
	h = (h ^ (dev ? hash_bytes(dev->s, dev->slen) : 0)) * 0xff51afd7ed558ccdull;
	h = (h ^ ri(r, "ino")) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 31;
	return h ? h : 1;
}

/* the slot of key k (its key 0 when absent) */
static size_t xref_slot(const struct os_xref *x, uint64_t k)
{
	size_t i = k & (x->cap - 1);

	while (x->key[i] && x->key[i] != k)
		i = (i + 1) & (x->cap - 1);
	return i;
}

static void xref_add(struct v *v, uint64_t k, uint64_t count)
{
	struct os_xref *x = v->osx;
	size_t i;

	if (x->full)
		return;
	if (2 * (x->n + 1) > x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 256;
		struct os_xref nx = { calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(uint64_t)), 0, cap, false,
				      false, 0 };

		if (x->n >= OS_KEYS_MAX || !nx.key || !nx.cnt) {
			free(nx.key);
			free(nx.cnt);
			x->full = true;
			return;
		}
		for (size_t j = 0; j < x->cap; j++)
			if (x->key[j]) {
				i = xref_slot(&nx, x->key[j]);
				nx.key[i] = x->key[j];
				nx.cnt[i] = x->cnt[j];
			}
		free(x->key);
		free(x->cnt);
		x->key = nx.key;
		x->cnt = nx.cnt;
		x->cap = cap;
	}
	i = xref_slot(x, k);
	if (!x->key[i]) {
		x->key[i] = k;
		x->n++;
	}
	x->cnt[i] += count;
}

/* One raw call against the stats: false when no stat has a call left for it. */
static bool xref_take(struct os_xref *x, uint64_t k)
{
	size_t i;

	if (!x->cap)
		return false;
	i = xref_slot(x, k);
	if (!x->key[i] || !x->cnt[i])
		return false;
	x->cnt[i]--;
	return true;
}

int pmu_v_os_kind(const struct pmu_streamdef *sd)
{
	if (!strcmp(sd->kind, "syscalls"))
		return OS_SYSCALLS;
	if (!strcmp(sd->kind, "syscall-stats"))
		return OS_STATS;
	if (!strcmp(sd->kind, "sched"))
		return OS_SCHED;
	return -1;
}

int pmu_v_os_begin(struct stream_state *s)
{
	int k = pmu_v_os_kind(s->sd);

	if (k < 0)
		return 0;
	if (!(s->os = calloc(1, sizeof(*s->os))))
		return PMU_ERR_NOMEM;
	s->os->kind = k;
	return 0;
}

/* ---- helpers -------------------------------------------------------------- */

static bool fis(const struct pmu_jfield *f, const char *s)
{
	size_t n = strlen(s);

	return f && f->type == PMU_JV_STR && f->slen == n && !memcmp(f->s, s, n);
}

static bool is_hexdig(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* "0x" and 1 to 16 lowercase hex digits: s[0..n) */
static bool hex_ok(const char *s, size_t n)
{
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++)
		if (!is_hexdig(s[i]))
			return false;
	return true;
}

/* n hex values separated by one space (n 0: any number, at least one) */
static bool hex_list_ok(const struct pmu_jfield *f, int want)
{
	const char *p, *e;
	int n = 0;

	if (!f || f->type != PMU_JV_STR || !f->slen)
		return false;
	for (p = f->s, e = f->s + f->slen; p <= e; n++) {
		const char *sp = memchr(p, ' ', (size_t)(e - p)), *end = sp ? sp : e;

		if (!hex_ok(p, (size_t)(end - p)))
			return false;
		if (!sp)
			return want == 0 || n + 1 == want;
		p = sp + 1;
	}
	return false;
}

/* "MAJOR:MINOR", decimal */
static bool dev_ok(const struct pmu_jfield *f)
{
	size_t i = 0, digits = 0;

	if (!f || f->type != PMU_JV_STR)
		return false;
	for (; i < f->slen && f->s[i] >= '0' && f->s[i] <= '9'; i++)
		digits++;
	if (!digits || digits > 10 || i >= f->slen || f->s[i] != ':')
		return false;
	for (i++, digits = 0; i < f->slen && f->s[i] >= '0' && f->s[i] <= '9'; i++)
		digits++;
	return digits && digits <= 10 && i == f->slen;
}

static void os_loss(struct v *v, const char *file, uint64_t rec, const char *what)
{
	eval(v, PMU_CHECK_LOSS);
	pmu_v_report_sev(v, PMU_CHECK_LOSS, v->tolerate_loss ? PMU_SEV_WARNING : PMU_SEV_ERROR, file, rec, "%s%s",
			 what, v->tolerate_loss ? " (tolerated: run.json tolerate_loss)" : "");
}

/* The entry of thread (inc, tid), made when absent; NULL when the table
 * is full (said once). */
static struct os_thread *thread_of(struct v *v, struct stream_state *s, enum pmu_check c, const struct pmu_jfield *inc,
				   uint64_t tid)
{
	struct os_state *os = s->os;
	uint64_t key = (inc ? hash_bytes(inc->s, inc->slen) : 1) * 0x9e3779b97f4a7c15ull ^ (tid * 0xc2b2ae3d27d4eb4full);

	if (!key)
		key = 1;
	if (os->t_full)
		return NULL;
	if (2 * (os->nt + 1) > os->capt) {
		size_t cap = os->capt ? 2 * os->capt : 64;
		struct os_thread *nv;

		if (os->nt >= OS_THREADS_MAX || !(nv = calloc(cap, sizeof(*nv)))) {
			os->t_full = true;
			report(v, c, s->file, 0, "more than %u threads: their per-thread rules are not checked",
			       OS_THREADS_MAX);
			return NULL;
		}
		for (size_t i = 0; i < os->capt; i++)
			if (os->tt[i].key)
				for (size_t k = os->tt[i].key & (cap - 1);; k = (k + 1) & (cap - 1))
					if (!nv[k].key) {
						nv[k] = os->tt[i];
						break;
					}
		free(os->tt);
		os->tt = nv;
		os->capt = cap;
	}
	for (size_t k = key & (os->capt - 1);; k = (k + 1) & (os->capt - 1)) {
		if (os->tt[k].key == key)
			return &os->tt[k];
		if (!os->tt[k].key) {
			os->tt[k].key = key;
			os->nt++;
			return &os->tt[k];
		}
	}
}

/* Config first and once, summary last and once; returns false for a
 * record that has no place. */
static bool os_phase(struct v *v, struct stream_state *s, enum pmu_check c, uint64_t rec, const char *type)
{
	struct os_state *os = s->os;

	if (os->phase == PH_END) {
		report(v, c, s->file, rec, "a %s record after the summary", type);
		return !strcmp(type, "summary") ? false : true;
	}
	if (!strcmp(type, "config")) {
		if (os->phase != PH_START || os->configs)
			report(v, c, s->file, rec, "a second config, or config not first");
		os->configs++;
		os->phase = PH_FD;
		return os->configs == 1;
	}
	if (os->phase == PH_START && os->kind != OS_STATS) {
		report(v, c, s->file, rec, "a %s record before the config", type);
		os->phase = PH_FD;
	}
	if (!strcmp(type, "summary")) {
		os->phase = PH_END;
		os->summaries++;
		return true;
	}
	if (!strcmp(type, "fd")) {
		if (os->phase > PH_FD)
			report(v, c, s->file, rec, "an fd record after the call, loss or truncation records");
		return true;
	}
	os->phase = PH_BODY;
	return true;
}

/* ---- syscalls --------------------------------------------------------------- */

static bool raw_call_named(const struct os_state *os, const struct pmu_jfield *sc)
{
	char w[80];

	if (!os->raw_known || sc->slen + 2 >= sizeof(w))
		return true;
	snprintf(w, sizeof(w), " %.*s ", (int)sc->slen, sc->s);
	return strstr(os->raw_calls, w) != NULL;
}

static bool name_in(const struct pmu_jfield *sc, const char *const *names)
{
	for (; *names; names++)
		if (fis(sc, *names))
			return true;
	return false;
}

static void identity(struct v *v, struct stream_state *s, enum pmu_check c, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *dev = rf(r, "dev"), *ino = rf(r, "ino"), *ft = rf(r, "ftype");

	if (!dev != !ino || (ft && !dev))
		report(v, c, s->file, rec, "dev and ino come together (ftype with them)");
	else if (dev && !dev_ok(dev))
		report(v, c, s->file, rec, "dev '%.*s' is not MAJOR:MINOR", (int)(dev->slen > 40 ? 40 : dev->slen),
		       dev->s);
}

static void call_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	static const char *const pipes[] = { "pipe", "pipe2", "socketpair", NULL };
	static const char *const dups[] = { "dup2", "dup3", NULL };
	struct os_state *os = s->os;
	const struct pmu_jfield *sc = rf(r, "syscall"), *ret = rf(r, "ret"), *err = rf(r, "errno"),
				*ename = rf(r, "error"), *bytes = rf(r, "bytes"), *flags = rf(r, "flags"),
				*req = rf(r, "request");
	uint64_t t = ri(r, "t_ns"), dur = ri(r, "dur_ns"), seq = ri(r, "seq"), nr = ri(r, "nr");
	enum pmu_check C = PMU_CHECK_SYSCALLS_SHAPE;

	os->calls++;
	if (os->truncations)
		report(v, C, s->file, rec, "a call record after the truncation record (line %llu)",
		       (unsigned long long)os->first_trunc_line);
	/* it began at t - dur: inside the window, and inside its incarnation's life */
	if (dur > t || (v->run_ok && t - dur < v->run_start)) {
		eval(v, PMU_CHECK_TIME_WINDOW);
		report(v, PMU_CHECK_TIME_WINDOW, s->file, rec, "the call began at %lld, before the run's start %llu",
		       (long long)(t - dur), (unsigned long long)v->run_start);
	} else {
		pmu_v_attribute(v, s->file, rec, r, true, t - dur, t);
	}
	if (!ret == !err)
		report(v, C, s->file, rec, "a call has exactly one of ret and errno");
	/* a name only with its number; a number may lack one: the kernel's
	 * restart codes (ERESTARTNOHAND, 514 ...) have none in the C library */
	if (ename && !err)
		report(v, C, s->file, rec, "error without errno");
	if (err && (err->i <= 0 || err->i > 4095))
		report(v, C, s->file, rec, "errno %lld is not an error number (1 to 4095)", (long long)err->i);
	if (bytes && (!ret || bytes->i != ret->i))
		report(v, C, s->file, rec, "bytes is a successful call's ret");
	if (rf(r, "fd2") && !name_in(sc, pipes))
		report(v, C, s->file, rec, "fd2 belongs to pipe, pipe2 and socketpair, not %.*s", (int)sc->slen, sc->s);
	if (rf(r, "newfd") && !name_in(sc, dups))
		report(v, C, s->file, rec, "newfd belongs to dup2 and dup3, not %.*s", (int)sc->slen, sc->s);
	if ((req || rf(r, "request_name")) && !fis(sc, "ioctl"))
		report(v, C, s->file, rec, "request belongs to ioctl, not %.*s", (int)sc->slen, sc->s);
	if (rf(r, "request_name") && !req)
		report(v, C, s->file, rec, "request_name without request");
	if (rf(r, "cmd") && !fis(sc, "fcntl"))
		report(v, C, s->file, rec, "cmd belongs to fcntl, not %.*s", (int)sc->slen, sc->s);
	if (!rf(r, "path") != !rf(r, "path_source"))
		report(v, C, s->file, rec, "path and path_source come together");
	if (fis(rf(r, "path_source"), "proc-fd"))
		report(v, C, s->file, rec, "path_source proc-fd is the fd records'; a call's path is its own");
	if (rf(r, "path2") && !rf(r, "path"))
		report(v, C, s->file, rec, "path2 without path");
	if (!rf(r, "path2") != !rf(r, "path2_source"))
		report(v, C, s->file, rec, "path2 and path2_source come together");
	if ((rf(r, "path_truncated") && !rf(r, "path")) || (rf(r, "path2_truncated") && !rf(r, "path2")))
		report(v, C, s->file, rec, "path_truncated (path2_truncated) without its path");
	{
		/* a path resolved in the kernel is absolute, even a cut one */
		const struct pmu_jfield *p = rf(r, "path"), *ps = rf(r, "path_source");
		const struct pmu_jfield *p2 = rf(r, "path2"), *ps2 = rf(r, "path2_source");

		if (p && ps && !fis(ps, "relative") && p->slen && p->s[0] != '/')
			report(v, C, s->file, rec, "path_source %.*s is an absolute path; '%.*s' is relative", (int)ps->slen,
			       ps->s, (int)(p->slen > 60 ? 60 : p->slen), p->s);
		if (p2 && ps2 && !fis(ps2, "relative") && p2->slen && p2->s[0] != '/')
			report(v, C, s->file, rec, "path2_source %.*s is an absolute path; '%.*s' is relative",
			       (int)ps2->slen, ps2->s, (int)(p2->slen > 60 ? 60 : p2->slen), p2->s);
	}
	identity(v, s, C, rec, r);
	if ((flags && !hex_ok(flags->s, flags->slen)) || (req && !hex_ok(req->s, req->slen)))
		report(v, C, s->file, rec, "flags and request are 0x-prefixed lowercase hex");
	if (!hex_list_ok(rf(r, "args"), 6))
		report(v, C, s->file, rec, "args is not six 0x-prefixed lowercase hex values separated by one space");
	if (!raw_call_named(os, sc))
		report(v, C, s->file, rec, "'%.*s' is not one of config's raw_calls", (int)(sc->slen > 60 ? 60 : sc->slen),
		       sc->s);
	if (os->arch_host) {
		const char *name = pmu_syscall_name((long)nr);

		if (!name || !fis(sc, name))
			report(v, C, s->file, rec, "system call %llu of %s is '%s', not '%.*s'", (unsigned long long)nr,
			       HOST_ARCH, name ? name : "(none)", (int)(sc->slen > 60 ? 60 : sc->slen), sc->s);
	}
	/* seq: handed out at each record's reserve, so a thread's calls,
	 * which return one after another, have increasing seqs */
	if (seq == 0)
		report(v, C, s->file, rec, "seq 0 (the kernel's numbers begin at 1)");
	if (seq > os->max_seq)
		os->max_seq = seq;
	struct os_thread *th = thread_of(v, s, C, NULL, ri(r, "tid"));

	if (th) {
		if (th->last_seq && seq <= th->last_seq)
			report(v, C, s->file, rec, "seq %llu is not above the previous call's %llu on tid %llu",
			       (unsigned long long)seq, (unsigned long long)th->last_seq,
			       (unsigned long long)ri(r, "tid"));
		/* a thread's calls follow one another; but an exec from a thread
		 * that is not the leader returns as the leader's pid (the kernel
		 * swaps the tids), which the old leader may have used meanwhile */
		else if (th->last_seq && dur <= t && t - dur < th->last_ret && !fis(sc, "execve") &&
			 !fis(sc, "execveat"))
			report(v, C, s->file, rec, "the call began at %llu, before the previous call of tid %llu returned "
			       "(%llu)", (unsigned long long)(t - dur), (unsigned long long)ri(r, "tid"),
			       (unsigned long long)th->last_ret);
		th->last_seq = seq;
		th->last_ret = t;
	}
	/* every raw call is counted in the stat of its key (the syscall-stats
	 * stream beside it was read first) */
	if (v->osx && !v->osx->full && !xref_take(v->osx, xref_key(r)) && !os->unmatched++)
		os->unmatched_line = rec;
}

static void on_syscalls(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct os_state *os = s->os;
	enum pmu_check C = PMU_CHECK_SYSCALLS_SHAPE;

	if (!os_phase(v, s, C, rec, type))
		return;
	if (!strcmp(type, "config")) {
		const struct pmu_jfield *rc = rf(r, "raw_calls"), *mb = rf(r, "max_output_bytes");

		if (rc && rc->slen <= RAW_CALLS_MAX) {
			snprintf(os->raw_calls, sizeof(os->raw_calls), " %.*s ", (int)rc->slen, rc->s);
			os->raw_known = true;
		}
		os->arch_host = HOST_ARCH[0] && fis(rf(r, "arch"), HOST_ARCH);
		os->bound_set = mb != NULL;
		os->bound = ri(r, "max_output_bytes");
		return;
	}
	if (!strcmp(type, "summary")) {
		os->sum_line = rec;
		os->sum_calls = ri(r, "calls");
		os->sum_fds = ri(r, "fd_records");
		os->sum_seq_end = ri(r, "seq_end");
		os->sum_unattr = ri(r, "unattributed");
		os->sum_trunc = ri(r, "truncated");
		os->sum_lost = ri(r, "lost");
		os->sum_malformed = ri(r, "malformed");
		if (os->sum_malformed) {
			eval(v, PMU_CHECK_MALFORMED);
			report(v, PMU_CHECK_MALFORMED, s->file, rec, "%llu records from the kernel could not be decoded",
			       (unsigned long long)os->sum_malformed);
		}
		return;
	}
	uint64_t t = ri(r, "t_ns");

	pmu_v_time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	if (!strcmp(type, "fd")) {
		os->fds++;
		pmu_v_attribute_proc(v, s->file, rec, r, t, t, true);
		identity(v, s, C, rec, r);
		if (!fis(rf(r, "path_source"), "proc-fd"))
			report(v, C, s->file, rec, "an fd record's path_source is proc-fd");
	} else if (!strcmp(type, "call")) {
		call_rec(v, s, rec, r);
	} else if (!strcmp(type, "loss")) {
		uint64_t lost = ri(r, "lost");
		const struct pmu_jfield *w = rf(r, "what");
		char what[160];

		os->lost += lost;
		if (fis(w, "reserve"))
			os->lost_reserve += lost;
		else if (fis(w, "stats-map"))
			os->lost_statsmap += lost;
		else if (fis(w, "inflight-map"))
			os->lost_inflight += lost;
		if (!lost)
			report(v, C, s->file, rec, "a loss record of nothing lost");
		snprintf(what, sizeof(what), "%llu %s on cpu %llu (%.*s)", (unsigned long long)lost,
			 fis(w, "reserve") ? "raw records lost: the ring was full"
			 : fis(w, "inflight-map") ? "calls lost: their entry could not be kept"
			 : fis(w, "stats-map") ? "calls in no statistic: the map was full" : "updates lost",
			 (unsigned long long)ri(r, "cpu"), w ? (int)w->slen : 0, w ? w->s : "");
		if (lost)
			os_loss(v, s->file, rec, what);
	} else if (!strcmp(type, "truncation")) {
		const struct pmu_jfield *why = rf(r, "reason");

		if (os->truncations++)
			report(v, C, s->file, rec, "a second truncation record");
		else
			os->first_trunc_line = rec;
		if (!os->bound_set || ri(r, "max_output_bytes") != os->bound)
			report(v, C, s->file, rec, "the truncation's max_output_bytes is not config's");
		/* the bound the run asked for: the raw records are a prefix,
		 * the statistics whole (section 23.5) */
		eval(v, PMU_CHECK_TRUNCATED);
		pmu_v_report_sev(v, PMU_CHECK_TRUNCATED, PMU_SEV_WARNING, s->file, rec,
				 "raw call records stop at --max-output-bytes %llu: %.*s (the statistics are whole)",
				 (unsigned long long)ri(r, "max_output_bytes"), why ? (int)why->slen : 0,
				 why ? why->s : "");
	}
}

static void syscalls_end(struct v *v, struct stream_state *s)
{
	struct os_state *os = s->os;
	enum pmu_check C = PMU_CHECK_SYSCALLS_SHAPE;

	if (!os->configs)
		report(v, C, s->file, 0, "the syscalls stream has no config record");
	if (!os->summaries) {
		report(v, C, s->file, 0, "the syscalls stream has no summary record at its end");
		return;
	}
#define SAYS(cond, ...) do { if (cond) report(v, C, s->file, os->sum_line, __VA_ARGS__); } while (0)
	SAYS(os->sum_calls != os->calls, "summary says %llu calls, the stream has %llu call records",
	     (unsigned long long)os->sum_calls, (unsigned long long)os->calls);
	SAYS(os->sum_fds != os->fds, "summary says %llu fd records, the stream has %llu",
	     (unsigned long long)os->sum_fds, (unsigned long long)os->fds);
	SAYS(os->sum_lost != os->lost, "summary says %llu lost, the loss records sum to %llu",
	     (unsigned long long)os->sum_lost, (unsigned long long)os->lost);
	SAYS((os->sum_trunc > 0) != (os->truncations > 0), "summary says %llu truncated, the stream has %llu "
	     "truncation records", (unsigned long long)os->sum_trunc, (unsigned long long)os->truncations);
	SAYS(os->max_seq > os->sum_seq_end, "a call has seq %llu, above the summary's seq_end %llu",
	     (unsigned long long)os->max_seq, (unsigned long long)os->sum_seq_end);
	/* every sequence number is a call written, unattributed, truncated or
	 * lost at the reserve; a record that could not be decoded had one too */
	uint64_t accounted = os->calls + os->sum_unattr + os->sum_trunc + os->lost_reserve;

	SAYS(os->sum_malformed ? os->sum_seq_end < accounted : os->sum_seq_end != accounted,
	     "seq_end %llu is not calls %llu + unattributed %llu + truncated %llu + lost reserves %llu",
	     (unsigned long long)os->sum_seq_end, (unsigned long long)os->calls, (unsigned long long)os->sum_unattr,
	     (unsigned long long)os->sum_trunc, (unsigned long long)os->lost_reserve);
#undef SAYS
	/* the statistics beside: each raw call in the stat of its key, but for
	 * the calls the statistics map could not take; and their summary's
	 * lost is what this stream's loss records say the maps lost */
	if (!v->osx)
		return;
	eval(v, PMU_CHECK_SYSCALL_STATS);
	if (os->unmatched > os->lost_statsmap)
		report(v, PMU_CHECK_SYSCALL_STATS, s->file, os->unmatched_line, "%llu raw calls are in no stat of their "
		       "incarnation, system call, errno and file (first: this one)%s", (unsigned long long)os->unmatched,
		       os->lost_statsmap ? ", more than the statistics map lost" : "");
	if (v->osx->summary && v->osx->lost != os->lost_statsmap + os->lost_inflight)
		report(v, PMU_CHECK_SYSCALL_STATS, s->file, os->sum_line, "the syscall-stats summary says %llu calls lost, "
		       "the loss records of stats-map and inflight-map here sum to %llu", (unsigned long long)v->osx->lost,
		       (unsigned long long)(os->lost_statsmap + os->lost_inflight));
}

/* ---- syscall-stats ---------------------------------------------------------- */

static void stat_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *h = rf(r, "hist");
	uint64_t count = ri(r, "count"), total = ri(r, "total_ns"), mn = ri(r, "min_ns"), mx = ri(r, "max_ns");
	unsigned __int128 lo_sum = 0, hi_sum = 0;
	unsigned b, first = 0, last = 0, prev = 0;
	uint64_t n, sum = 0, lo, hi;
	size_t at = 0;
	int k, pairs = 0;
	enum pmu_check C = PMU_CHECK_SYSCALL_STATS;

	s->os->stats++;
	s->os->stat_calls += count;
	if (v->osx)
		xref_add(v, xref_key(r), count);
	pmu_v_attribute_proc(v, s->file, rec, r, 0, 0, false);
	if (rf(r, "error") && !rf(r, "errno"))
		report(v, C, s->file, rec, "error without errno");
	identity(v, s, C, rec, r);
	if (!count) {
		report(v, C, s->file, rec, "a stat of no call");
		return;
	}
	if (mn > mx) {
		report(v, C, s->file, rec, "min_ns %llu is above max_ns %llu", (unsigned long long)mn,
		       (unsigned long long)mx);
		return;
	}
	while (h && (k = pmu_oshist_next(h->s, h->slen, &at, &b, &n)) != 0) {
		if (k < 0 || (pairs && b <= prev)) {
			report(v, C, s->file, rec, "hist is not BUCKET:COUNT pairs ascending by bucket (0 to %d), one space "
			       "apart, each count at least 1 (at byte %zu)", PMU_OSHIST_BUCKETS - 1, at + 1);
			return;
		}
		if (!pairs++)
			first = b;
		last = prev = b;
		sum += n;
		pmu_oshist_bounds(b, &lo, &hi);
		lo_sum += (unsigned __int128)n * lo;
		hi_sum += (unsigned __int128)n * (hi == UINT64_MAX ? UINT64_MAX : hi - 1);
	}
	if (sum != count) {
		report(v, C, s->file, rec, "the histogram's counts sum to %llu, count is %llu", (unsigned long long)sum,
		       (unsigned long long)count);
		return;
	}
	if (pmu_oshist_bucket(mn) != first || pmu_oshist_bucket(mx) != last)
		report(v, C, s->file, rec, "min_ns %llu (bucket %u) and max_ns %llu (bucket %u) are not in the "
		       "histogram's first and last buckets (%u, %u)", (unsigned long long)mn, pmu_oshist_bucket(mn),
		       (unsigned long long)mx, pmu_oshist_bucket(mx), first, last);
	else if ((unsigned __int128)total < (unsigned __int128)count * mn ||
		 (unsigned __int128)total > (unsigned __int128)count * mx || total < lo_sum || total > hi_sum)
		report(v, C, s->file, rec, "total_ns %llu is outside what %llu calls of %llu to %llu ns in these "
		       "buckets can sum to", (unsigned long long)total, (unsigned long long)count,
		       (unsigned long long)mn, (unsigned long long)mx);
	else if (count == 1 && (total != mn || mn != mx))
		report(v, C, s->file, rec, "one call: total_ns, min_ns and max_ns are its duration");
}

/* calls seen only at sys_exit (seccomp refused them, or they were in
 * flight at the attach): a count, no duration, no file */
static void unentered_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *err = rf(r, "errno");
	enum pmu_check C = PMU_CHECK_SYSCALL_STATS;

	s->os->unentered += ri(r, "count");
	pmu_v_attribute_proc(v, s->file, rec, r, 0, 0, false);
	if (!err != !rf(r, "error"))
		report(v, C, s->file, rec, "errno and error come together");
	if (err && (err->i <= 0 || err->i > 4095))
		report(v, C, s->file, rec, "errno %lld is not an error number (1 to 4095)", (long long)err->i);
	if (!ri(r, "count"))
		report(v, C, s->file, rec, "an unentered record of no call");
}

static void on_stats(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct os_state *os = s->os;

	if (!os_phase(v, s, PMU_CHECK_SYSCALL_STATS, rec, type))
		return;
	if (!strcmp(type, "stat")) {
		stat_rec(v, s, rec, r);
		return;
	}
	if (!strcmp(type, "unentered")) {
		unentered_rec(v, s, rec, r);
		return;
	}
	/* the summary */
	uint64_t lost = ri(r, "lost");

	os->sum_line = rec;
	os->sum_stats = ri(r, "stats");
	os->sum_calls = ri(r, "calls");
	os->sum_unentered = ri(r, "unentered");
	if (v->osx) {
		v->osx->summary = true;
		v->osx->lost = lost;
	}
	if (lost) {
		char what[128];

		snprintf(what, sizeof(what), "%llu calls are in no statistic (the map was full, or their entry was "
			 "not kept)", (unsigned long long)lost);
		os_loss(v, s->file, rec, what);
	}
}

static void stats_end(struct v *v, struct stream_state *s)
{
	struct os_state *os = s->os;
	enum pmu_check C = PMU_CHECK_SYSCALL_STATS;

	if (!os->summaries) {
		report(v, C, s->file, 0, "the syscall-stats stream has no summary record at its end");
		return;
	}
	if (os->sum_stats != os->stats)
		report(v, C, s->file, os->sum_line, "summary says %llu stats, the stream has %llu stat records",
		       (unsigned long long)os->sum_stats, (unsigned long long)os->stats);
	if (os->sum_calls != os->stat_calls)
		report(v, C, s->file, os->sum_line, "summary says %llu calls, the stat records' counts sum to %llu",
		       (unsigned long long)os->sum_calls, (unsigned long long)os->stat_calls);
	if (os->sum_unentered != os->unentered)
		report(v, C, s->file, os->sum_line, "summary says %llu unentered calls, the unentered records' counts "
		       "sum to %llu", (unsigned long long)os->sum_unentered, (unsigned long long)os->unentered);
}

/* ---- sched ------------------------------------------------------------------ */

static void off_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	struct os_state *os = s->os;
	const struct pmu_jfield *st = rf(r, "state"), *wait = rf(r, "wait_ns"), *chain = rf(r, "chain");
	uint64_t t = ri(r, "t_ns"), off = ri(r, "off_ns"), runq = ri(r, "runq_ns"), w = ri_of(wait);
	bool R = fis(st, "R");
	enum pmu_check C = PMU_CHECK_SCHED_SHAPE;

	os->offs++;
	if (off > t || (v->run_ok && t - off < v->run_start)) {
		eval(v, PMU_CHECK_TIME_WINDOW);
		report(v, PMU_CHECK_TIME_WINDOW, s->file, rec, "the interval began at %lld, before the run's start %llu",
		       (long long)(t - off), (unsigned long long)v->run_start);
	} else {
		pmu_v_attribute(v, s->file, rec, r, true, t - off, t);
	}
	if (R == (wait != NULL))
		report(v, C, s->file, rec, "%s", R ? "a preempted thread (R) waited for no wakeup: no wait_ns"
		       : "wait_ns is the wait of a thread that left in S, D or other");
	if (w + runq != off || w > off)
		report(v, C, s->file, rec, "wait_ns %llu + runq_ns %llu is not off_ns %llu", (unsigned long long)w,
		       (unsigned long long)runq, (unsigned long long)off);
	if (chain && !os->chains)
		report(v, C, s->file, rec, "a chain, but config's chains is none");
	else if (chain && !hex_list_ok(chain, 0))
		report(v, C, s->file, rec, "chain is not 0x-prefixed lowercase hex addresses separated by one space");
	struct os_thread *th = thread_of(v, s, C, rf(r, "inc"), ri(r, "tid"));

	if (!th)
		return;
	if (th->done && t - off >= th->done_t) {
		/* a new life of the tid: a thread that is not the leader exec'd
		 * and took the leader's pid, after the leader's record */
		uint64_t key = th->key, prev = th->done_t;

		memset(th, 0, sizeof(*th));
		th->key = key;
		th->done_t = prev;
	} else if (th->done) {
		report(v, C, s->file, rec, "an off interval of tid %llu after its thread record",
		       (unsigned long long)ri(r, "tid"));
	}
	if (th->offs && t - off < th->last_end)
		report(v, C, s->file, rec, "the interval began at %llu, before the previous one of tid %llu ended (%llu)",
		       (unsigned long long)(t - off), (unsigned long long)ri(r, "tid"),
		       (unsigned long long)th->last_end);
	th->last_end = t;
	if (!th->offs++) {
		th->line = rec;
		th->first_begin = t - off;
	}
	th->runq += runq;
	if (R)
		th->invol++;
	else
		th->vol++;
	if (fis(st, "S"))
		th->wait_s += w;
	else if (fis(st, "D"))
		th->wait_d += w;
	else if (!R)
		th->wait_other += w;
}

static void thread_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	uint64_t t = ri(r, "t_ns"), start = ri(r, "start_ns"), tid = ri(r, "tid");
	uint64_t on = ri(r, "on_cpu_ns"), runq = ri(r, "runq_ns"), sl = ri(r, "sleep_ns"), bl = ri(r, "blocked_ns"),
		 ot = ri(r, "other_ns"), un = ri(r, "unobserved_ns");
	unsigned __int128 parts = (unsigned __int128)on + runq + sl + bl + ot + un;
	enum pmu_check C = PMU_CHECK_SCHED_SHAPE;

	s->os->threads++;
	check_window(v, s->file, rec, "start_ns", start);
	if (start > t) {
		report(v, C, s->file, rec, "start_ns %llu is after t_ns %llu", (unsigned long long)start,
		       (unsigned long long)t);
		return;
	}
	pmu_v_attribute(v, s->file, rec, r, true, start, t);
	if (parts != t - start)
		report(v, C, s->file, rec, "on_cpu, runq, sleep, blocked, other and unobserved sum to %llu ns, not t_ns - "
		       "start_ns = %llu", (unsigned long long)parts, (unsigned long long)(t - start));
	struct os_thread *th = thread_of(v, s, C, rf(r, "inc"), tid);

	if (!th)
		return;
	/* done_t: the end of the tid's previous life, if it had one */
	if (th->done_t && start < th->done_t) {
		report(v, C, s->file, rec, "a second thread record of tid %llu that begins before the first ended (%llu)",
		       (unsigned long long)tid, (unsigned long long)th->done_t);
		return;
	}
	if (th->done) {
		/* a new life without off intervals (see off_rec) */
		uint64_t key = th->key;

		memset(th, 0, sizeof(*th));
		th->key = key;
	}
	th->done = true;
	th->done_t = t;
	/* its off intervals lie in its life */
	if (th->offs && th->first_begin < start)
		report(v, C, s->file, rec, "an off interval of tid %llu began at %llu (line %llu), before this thread "
		       "record's start_ns %llu", (unsigned long long)tid, (unsigned long long)th->first_begin,
		       (unsigned long long)th->line, (unsigned long long)start);
	/* the off records are parts of the totals (the short ones are only there) */
	if (th->runq > runq || th->wait_s > sl || th->wait_d > bl || th->wait_other > ot)
		report(v, C, s->file, rec, "the off records of tid %llu hold more than its totals (runq %llu > %llu, "
		       "S %llu > sleep %llu, D %llu > blocked %llu or other %llu > %llu)", (unsigned long long)tid,
		       (unsigned long long)th->runq, (unsigned long long)runq, (unsigned long long)th->wait_s,
		       (unsigned long long)sl, (unsigned long long)th->wait_d, (unsigned long long)bl,
		       (unsigned long long)th->wait_other, (unsigned long long)ot);
	if (th->vol > ri(r, "voluntary") || th->invol > ri(r, "involuntary"))
		report(v, C, s->file, rec, "tid %llu has %llu off records in S, D or other and %llu in R, more than its "
		       "%llu voluntary and %llu involuntary switches", (unsigned long long)tid,
		       (unsigned long long)th->vol, (unsigned long long)th->invol,
		       (unsigned long long)ri(r, "voluntary"), (unsigned long long)ri(r, "involuntary"));
}

static void on_sched(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct os_state *os = s->os;
	enum pmu_check C = PMU_CHECK_SCHED_SHAPE;

	if (!os_phase(v, s, C, rec, type))
		return;
	if (!strcmp(type, "config")) {
		os->chains = fis(rf(r, "chains"), "fp");
		return;
	}
	if (!strcmp(type, "summary")) {
		os->sum_line = rec;
		os->sum_offs = ri(r, "offs");
		os->sum_threads = ri(r, "threads");
		os->sum_lost = ri(r, "lost");
		os->sum_malformed = ri(r, "malformed");
		if (os->sum_malformed) {
			eval(v, PMU_CHECK_MALFORMED);
			report(v, PMU_CHECK_MALFORMED, s->file, rec, "%llu records from the kernel could not be decoded",
			       (unsigned long long)os->sum_malformed);
		}
		return;
	}
	uint64_t t = ri(r, "t_ns");

	pmu_v_time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	if (!strcmp(type, "off")) {
		off_rec(v, s, rec, r);
	} else if (!strcmp(type, "thread")) {
		thread_rec(v, s, rec, r);
	} else if (!strcmp(type, "loss")) {
		uint64_t lost = ri(r, "lost");
		const struct pmu_jfield *w = rf(r, "what");
		char what[160];

		os->lost += lost;
		if (!lost)
			report(v, C, s->file, rec, "a loss record of nothing lost");
		snprintf(what, sizeof(what), "%llu scheduling %s on cpu %llu (%.*s)", (unsigned long long)lost,
			 fis(w, "reserve") ? "records lost: the ring was full" : "updates lost: a map was full",
			 (unsigned long long)ri(r, "cpu"), w ? (int)w->slen : 0, w ? w->s : "");
		if (lost)
			os_loss(v, s->file, rec, what);
	}
}

static void sched_end(struct v *v, struct stream_state *s)
{
	struct os_state *os = s->os;
	enum pmu_check C = PMU_CHECK_SCHED_SHAPE;

	if (!os->configs)
		report(v, C, s->file, 0, "the sched stream has no config record");
	/* every thread with an off interval has its totals */
	for (size_t i = 0; i < os->capt; i++)
		if (os->tt[i].key && os->tt[i].offs && !os->tt[i].done)
			report(v, C, s->file, os->tt[i].line, "this thread's off intervals have no thread record");
	if (!os->summaries) {
		report(v, C, s->file, 0, "the sched stream has no summary record at its end");
		return;
	}
	if (os->sum_offs != os->offs)
		report(v, C, s->file, os->sum_line, "summary says %llu offs, the stream has %llu off records",
		       (unsigned long long)os->sum_offs, (unsigned long long)os->offs);
	if (os->sum_threads != os->threads)
		report(v, C, s->file, os->sum_line, "summary says %llu threads, the stream has %llu thread records",
		       (unsigned long long)os->sum_threads, (unsigned long long)os->threads);
	if (os->sum_lost != os->lost)
		report(v, C, s->file, os->sum_line, "summary says %llu lost, the loss records sum to %llu",
		       (unsigned long long)os->sum_lost, (unsigned long long)os->lost);
}

/* ---- dispatch ----------------------------------------------------------------- */

void pmu_v_on_os(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	switch (s->os->kind) {
	case OS_SYSCALLS:
		eval(v, PMU_CHECK_SYSCALLS_SHAPE);
		on_syscalls(v, s, rec, r, type);
		break;
	case OS_STATS:
		eval(v, PMU_CHECK_SYSCALL_STATS);
		if (!s->os->stats && !s->os->summaries && !v->osx)
			v->osx = calloc(1, sizeof(*v->osx)); /* NULL: the raw calls are not matched */
		on_stats(v, s, rec, r, type);
		break;
	default:
		eval(v, PMU_CHECK_SCHED_SHAPE);
		on_sched(v, s, rec, r, type);
		break;
	}
}

void pmu_v_os_end(struct v *v, struct stream_state *s)
{
	switch (s->os->kind) {
	case OS_SYSCALLS:
		eval(v, PMU_CHECK_SYSCALLS_SHAPE);
		syscalls_end(v, s);
		break;
	case OS_STATS:
		eval(v, PMU_CHECK_SYSCALL_STATS);
		stats_end(v, s);
		break;
	default:
		eval(v, PMU_CHECK_SCHED_SHAPE);
		sched_end(v, s);
		break;
	}
	free(s->os->tt);
	free(s->os);
	s->os = NULL;
}
