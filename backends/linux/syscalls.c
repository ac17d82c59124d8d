/*
 * The syscalls collector (spec 1.7, section 23): every system call of the
 * cohort from the raw_syscalls tracepoints, through bpf/syscalls.bpf.c.
 *
 *   syscalls.jsonl       config, the fds the root had before the run (fd,
 *                        from /proc/PID/fd), one call record per call of
 *                        the I/O family (exact ns, file identity read in
 *                        the kernel, paths), loss, truncation, summary.
 *   syscall-stats.jsonl  one stat per incarnation x call x errno x file,
 *                        for every call, aggregated in the kernel; summary.
 *
 * The ring is consumed on the loop's timer (drain); its records go into a
 * reorder heap by t_ns (the call's exit) and are written once older than
 * now - REORDER_NS, or at the end.  A record whose task the follower has
 * not reported yet waits up to HOLD_NS (the eBPF follower reports tasks as
 * they go, like the sampling collector's hold).  What belongs to no
 * incarnation is counted (summary.unattributed), not written.
 *
 * Memory stays flat: the heap holds at most HEAP_MAX records.  When the
 * writer is slower than the cohort's calls, the heap fills and records are
 * no longer taken out of the ring (back-pressure): the ring, memory the
 * kernel holds (config.ring_bytes), fills in turn and counts every record
 * it cannot take as loss, which the bundle records.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "linux/caps.h"
#include "collector.h"
#include "error.h"
#include "heap.h"
#include "lifecycle.h"
#include "linux/sampling.h"
#include "sysname.h"
#include "util.h"
#if __has_include("ioctlname.h")
#include "ioctlname.h"
#define HAVE_IOCTLNAME 1
#endif

#ifdef PMU_BPF_BUILT
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "linux/bpf/cohort.h"
#include "linux/sysrec.h"
#include "syscalls.skel.h"

#define REORDER_NS 50000000ull   /* records younger than this wait for older ones */
#define DRAIN_NS 10000000ull     /* a drain gives the loop back after this */
#define HOLD_NS 3000000000ull    /* a record of a task not reported yet waits this long */
#define RING_BYTES (8u << 20)    /* the default: --syscall-ring-kb */
/*
 * The reorder heap's bound, in records (each kept at its own size: 136
 * bytes without paths, 648 with): at most about 10 MiB.  Many times what
 * REORDER_NS of calls fills at the rate the writer writes them.
 */
#define HEAP_MAX 16384
#define RING_HELD (-ENOBUFS)     /* on_sample: the heap is full, the rest stays in the ring */
#define STATS_MAX 131072         /* statistics entries (incarnation x call x errno x file) */
#define PATHS_MAX 65536          /* file identities whose path is kept for the stats */

static const char REMEDY_PRIV[] = "run pmurec as root, or grant it CAP_BPF and CAP_PERFMON "
				  "(setcap cap_bpf,cap_perfmon+ep)";
static const char REMEDY_BTF[] = "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y";
static const char REMEDY_KERNEL[] = "see the reason; the other collectors do not need it";

/*
 * The raw family (spec 1.7: config.raw_calls) and what the programs do at
 * each: C_FD_ENTER reads the file of args[fd] at sys_enter (before a close
 * frees it), C_FD_RET the returned fd's at sys_exit, C_FD_PAIR the int[2]
 * at args[fd]; C_PATH/C_PATH2 read the path arguments; C_DENTRY resolves
 * the opened file's path from its dentry chain.
 */
#define R PMU_SYS_C_RAW
#define FE PMU_SYS_C_FD_ENTER
#define FR PMU_SYS_C_FD_RET
#define FP PMU_SYS_C_FD_PAIR
#define P1 PMU_SYS_C_PATH
#define P2 PMU_SYS_C_PATH2
#define B PMU_SYS_C_BYTES
#define D PMU_SYS_C_DENTRY
static const struct cls {
	const char *name;
	uint8_t flags, fd_arg, path_arg, path2_arg;
	int8_t flags_arg; /* the argument written as flags, -1 none */
} classes[] = {
	{ "open", R | FR | P1 | D, 0, 0, 0, 1 },       { "openat", R | FR | P1 | D, 0, 1, 0, 2 },
	{ "openat2", R | FR | P1 | D, 0, 1, 0, -1 },   { "creat", R | FR | P1 | D, 0, 0, 0, -1 },
	{ "close", R | FE, 0, 0, 0, -1 },              { "close_range", R, 0, 0, 0, 2 },
	{ "dup", R | FE, 0, 0, 0, -1 },                { "dup2", R | FE, 0, 0, 0, -1 },
	{ "dup3", R | FE, 0, 0, 0, 2 },                { "fcntl", R | FE, 0, 0, 0, 2 },
	{ "pipe", R | FP, 0, 0, 0, -1 },               { "pipe2", R | FP, 0, 0, 0, 1 },
	{ "socket", R | FR, 0, 0, 0, 1 },              { "socketpair", R | FP, 3, 0, 0, 1 },
	{ "accept", R | FR, 0, 0, 0, -1 },             { "accept4", R | FR, 0, 0, 0, 3 },
	{ "connect", R | FE, 0, 0, 0, -1 },            { "bind", R | FE, 0, 0, 0, -1 },
	{ "read", R | FE | B, 0, 0, 0, -1 },           { "pread64", R | FE | B, 0, 0, 0, -1 },
	{ "readv", R | FE | B, 0, 0, 0, -1 },          { "preadv", R | FE | B, 0, 0, 0, -1 },
	{ "preadv2", R | FE | B, 0, 0, 0, 5 },         { "write", R | FE | B, 0, 0, 0, -1 },
	{ "pwrite64", R | FE | B, 0, 0, 0, -1 },       { "writev", R | FE | B, 0, 0, 0, -1 },
	{ "pwritev", R | FE | B, 0, 0, 0, -1 },        { "pwritev2", R | FE | B, 0, 0, 0, 5 },
	{ "sendfile", R | FE | B, 0, 0, 0, -1 },       { "splice", R | FE | B, 0, 0, 0, 5 },
	{ "copy_file_range", R | FE | B, 0, 0, 0, 5 }, { "tee", R | FE | B, 0, 0, 0, 3 },
	{ "fsync", R | FE, 0, 0, 0, -1 },              { "fdatasync", R | FE, 0, 0, 0, -1 },
	{ "sync_file_range", R | FE, 0, 0, 0, 3 },     { "syncfs", R | FE, 0, 0, 0, -1 },
	{ "flock", R | FE, 0, 0, 0, 1 },               { "ioctl", R | FE, 0, 0, 0, -1 },
	{ "mmap", R | FE, 4, 0, 0, 3 },                { "munmap", R, 0, 0, 0, -1 },
	{ "mprotect", R, 0, 0, 0, 2 },                 { "truncate", R | P1, 0, 0, 0, -1 },
	{ "ftruncate", R | FE, 0, 0, 0, -1 },          { "fallocate", R | FE, 0, 0, 0, 1 },
	{ "rename", R | P1 | P2, 0, 0, 1, -1 },        { "renameat", R | P1 | P2, 0, 1, 3, -1 },
	{ "renameat2", R | P1 | P2, 0, 1, 3, 4 },      { "unlink", R | P1, 0, 0, 0, -1 },
	{ "unlinkat", R | P1, 0, 1, 0, 2 },            { "mkdir", R | P1, 0, 0, 0, -1 },
	{ "mkdirat", R | P1, 0, 1, 0, -1 },            { "execve", R | P1, 0, 0, 0, -1 },
	{ "execveat", R | P1, 0, 1, 0, 4 },
};
#undef R
#undef FE
#undef FR
#undef FP
#undef P1
#undef P2
#undef B
#undef D

/* the calls whose child returns through sys_exit without entering them */
static const char *const forks[] = { "clone", "clone3", "fork", "vfork" };

/* fcntl(2)'s commands, <linux/fcntl.h> and <asm-generic/fcntl.h> */
static const struct {
	unsigned long cmd;
	const char *name;
} fcntl_cmds[] = {
	{ 0, "F_DUPFD" },        { 1, "F_GETFD" },          { 2, "F_SETFD" },         { 3, "F_GETFL" },
	{ 4, "F_SETFL" },        { 5, "F_GETLK" },          { 6, "F_SETLK" },         { 7, "F_SETLKW" },
	{ 8, "F_SETOWN" },       { 9, "F_GETOWN" },         { 10, "F_SETSIG" },       { 11, "F_GETSIG" },
	{ 15, "F_SETOWN_EX" },   { 16, "F_GETOWN_EX" },     { 36, "F_OFD_GETLK" },    { 37, "F_OFD_SETLK" },
	{ 38, "F_OFD_SETLKW" },  { 1024, "F_SETLEASE" },    { 1025, "F_GETLEASE" },   { 1026, "F_NOTIFY" },
	{ 1030, "F_DUPFD_CLOEXEC" }, { 1031, "F_SETPIPE_SZ" }, { 1032, "F_GETPIPE_SZ" }, { 1033, "F_ADD_SEALS" },
	{ 1034, "F_GET_SEALS" },
};

enum { LOSS_RESERVE, LOSS_INFLIGHT, LOSS_STATS, LOSS_N };
static const char *const loss_what[LOSS_N] = { "reserve", "inflight-map", "stats-map" };

struct item {
	uint64_t t, seq;
	union pmu_sysrec *r;
};

struct pathent {
	uint64_t ino;
	uint32_t dev;
	char *path;
};

struct sysc {
	struct pmu_collector_env *env;
	bool unusable;
	/* loaded at probe (before the root is forked, so that the load's
	 * time is not the command's): its error waits for open */
	int load_err;
	char load_why[600];
	uint64_t t_load0, t_load1, t_load2;
	struct syscalls_bpf *skel;
	struct ring_buffer *ring;
	int ncpu;
	uint32_t ring_bytes;
	const struct cls *by_nr[PMU_SYS_NR_MAX];
	char raw_calls[1024];
	pid_t root;
	struct pmu_stream *ys;      /* syscalls.jsonl, open from open to emit */
	int err;
	/* the reorder heap: at most HEAP_MAX records */
	struct pmu_heap heap;     /* of struct item, by (t, seq) */
	bool stalled;               /* full, and its oldest waits for its task */
	uint64_t hseq;
	uint64_t last_written;
	/* the root's fds before the run, written before the first call */
	json_t *fds;
	bool fds_done;
	/* counts */
	uint64_t calls, fd_records, unattributed, truncated, malformed, out_bytes;
	bool trunc_written;
	char malformed_first[200];
	uint64_t stop_t;
	uint64_t lost[LOSS_N];      /* summed over CPUs, at stop */
	uint64_t *lost_cpu;         /* ncpu x LOSS_N */
	uint64_t seq_end;
	bool stopped;
	/* file identity -> path, for the stats */
	struct pathent *paths;
	size_t npaths;
};

/* "0x" and v in lowercase hex at p (19 bytes at most, NUL not written):
 * the end.  The writer's hot loop: six a record, snprintf costs more than
 * the rest of the record. */
static char *hex_at(char *p, uint64_t v)
{
	static const char d[] = "0123456789abcdef";
	char t[16];
	int n = 0;

	*p++ = '0';
	*p++ = 'x';
	do
		t[n++] = d[v & 15];
	while ((v >>= 4));
	while (n)
		*p++ = t[--n];
	return p;
}

static json_t *hexs(uint64_t v)
{
	char b[24];

	*hex_at(b, v) = 0;
	return json_string(b);
}

/*
 * An errno's name: glibc's, else the kernel's own (include/linux/errno.h:
 * a call interrupted by a signal returns ERESTARTSYS and the like to the
 * tracepoint, before the restart), else "errno-N".  b holds the last.
 */
static const char *errname(int e, char *b, size_t n)
{
	static const char *const kern[] = {
		"ERESTARTSYS", "ERESTARTNOINTR", "ERESTARTNOHAND", "ENOIOCTLCMD", "ERESTART_RESTARTBLOCK",
		"EPROBE_DEFER", "EOPENSTALE", "ENOPARAM", NULL, "EBADHANDLE", "ENOTSYNC", "EBADCOOKIE",
		"ENOTSUPP", "ETOOSMALL", "ESERVERFAULT", "EBADTYPE", "EJUKEBOX", "EIOCBQUEUED", "ERECALLCONFLICT",
	};
	const char *g = strerrorname_np(e);

	if (g)
		return g;
	if (e >= 512 && e < 512 + (int)PMU_ARRAY_SIZE(kern) && kern[e - 512])
		return kern[e - 512];
	snprintf(b, n, "errno-%d", e);
	return b;
}

static void incname(char *b, size_t n, int id)
{
	snprintf(b, n, "i%d", id);
}

static const char *ftype_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "reg";
	case S_IFDIR: return "dir";
	case S_IFCHR: return "chr";
	case S_IFBLK: return "blk";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "sock";
	case S_IFLNK: return "lnk";
	case 0: return "anon"; /* fs/anon_inodes.c: no type bits */
	default: return "unknown";
	}
}

/* the kernel's dev_t (include/linux/kdev_t.h: MINORBITS 20) */
static void kdev(char *b, size_t n, uint32_t dev)
{
	snprintf(b, n, "%u:%u", dev >> 20, dev & 0xfffff);
}

static void put(struct sysc *s, json_t *rec)
{
	if (!rec) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	if (s->err || !s->ys) {
		json_decref(rec);
		return;
	}
	s->err = s->env->out->put(s->ys, rec);
}

/* ---- file identity -> path (for the stats) ------------------------------- */

static size_t path_slot(uint32_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ull) ^ dev;

	return (size_t)(h % PATHS_MAX);
}

static void path_remember(struct sysc *s, uint32_t dev, uint64_t ino, const char *path)
{
	if (!path || !*path || (!s->paths && !(s->paths = calloc(PATHS_MAX, sizeof(*s->paths)))))
		return;
	for (size_t i = path_slot(dev, ino), k = 0; k < 64; k++, i = (i + 1) % PATHS_MAX) {
		struct pathent *p = &s->paths[i];

		if (p->path && p->dev == dev && p->ino == ino) {
			if (strcmp(p->path, path)) { /* the latest name wins */
				char *d = strdup(path);
				if (d) {
					free(p->path);
					p->path = d;
				}
			}
			return;
		}
		if (!p->path) {
			if ((p->path = strdup(path))) {
				p->dev = dev;
				p->ino = ino;
				s->npaths++;
			}
			return;
		}
	}
}

static const char *path_of(const struct sysc *s, uint32_t dev, uint64_t ino)
{
	if (!s->paths)
		return NULL;
	for (size_t i = path_slot(dev, ino), k = 0; k < 64; k++, i = (i + 1) % PATHS_MAX) {
		const struct pathent *p = &s->paths[i];

		if (!p->path)
			return NULL;
		if (p->dev == dev && p->ino == ino)
			return p->path;
	}
	return NULL;
}

/* ---- the reorder heap: a min-heap by (t, seq) ---------------------------- */

static bool before(const struct item *a, const struct item *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static bool item_less(const void *a, const void *b)
{
	return before(a, b);
}

static int heap_push(struct sysc *s, struct item it)
{
	return pmu_heap_push(&s->heap, &it) ? -1 : 0;
}

static struct item heap_pop(struct sysc *s)
{
	struct item top;

	pmu_heap_pop(&s->heap, &top);
	return top;
}

/* ---- records ---------------------------------------------------------------- */

static void refuse(struct sysc *s, const char *why)
{
	if (!s->malformed++)
		snprintf(s->malformed_first, sizeof(s->malformed_first), "%s", why);
}

static int on_sample(void *ctx, void *data, size_t len)
{
	struct sysc *s = ctx;
	union pmu_sysrec d, *r;

	if (pmu_sysrec_decode(data, len, &d)) {
		refuse(s, pmu_error_detail());
		return 0;
	}
	/* kept at its own size: a record without paths is a fifth of one with */
	if (!(r = malloc(len))) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return -ENOMEM;
	}
	memcpy(r, &d, len);
	if (heap_push(s, (struct item){ d.h.time_ns, d.h.seq, r })) {
		free(r);
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return -ENOMEM;
	}
	/* full: the ring keeps the rest (libbpf stops after this record) */
	return s->heap.n >= HEAP_MAX ? RING_HELD : 0;
}

/* Take what the heap has room for out of the ring: 1 when records were
 * left there (the heap is full), 0 when the ring is empty. */
static int take(struct sysc *s)
{
	int n;

	if (s->heap.n >= HEAP_MAX)
		return 1;
	n = ring_buffer__consume(s->ring);
	if (n == RING_HELD)
		return 1;
	if (n < 0 && !s->err)
		s->err = pmu_error(PMU_ERR_IO, "cannot drain the syscalls ring: %s", strerror(-n));
	return 0;
}

/* The root's fds, read at open, written once its incarnation is known. */
static void write_fds(struct sysc *s)
{
	const struct pmu_incarnation *in;
	size_t i;
	json_t *f;

	if (s->fds_done)
		return;
	s->fds_done = true;
	json_array_foreach(s->fds, i, f) {
		uint64_t t = (uint64_t)json_integer_value(json_object_get(f, "t_ns"));
		char inc[24];

		in = pmu_cohort_find(s->env->cohort, s->root, s->root, t, t);
		/* read before the follower had the root: its start is the
		 * earliest time it can be attributed at */
		for (size_t k = 0; !in && k < s->env->cohort->n; k++)
			if (s->env->cohort->incs[k].pid == s->root)
				in = &s->env->cohort->incs[k];
		if (!in)
			continue;
		if (t < in->start_ns)
			json_object_set_new(f, "t_ns", json_integer((json_int_t)in->start_ns));
		incname(inc, sizeof(inc), in->id);
		json_object_set_new(f, "inc", json_string(inc));
		json_object_set_new(f, "pid", json_integer(s->root));
		s->fd_records++;
		s->last_written = (uint64_t)json_integer_value(json_object_get(f, "t_ns"));
		put(s, json_incref(f));
	}
	json_decref(s->fds);
	s->fds = NULL;
}

/* what a path lacks (spec: path_truncated), NULL when it is whole */
static const char *path_cut(bool head, bool tail)
{
	return head && tail ? "head+tail" : head ? "head" : tail ? "tail" : NULL;
}

static json_t *call_rec(struct sysc *s, const union pmu_sysrec *r, const struct pmu_incarnation *in)
{
	const struct pmu_sys_call *c = &r->c;
	const struct cls *cl = c->nr < PMU_SYS_NR_MAX ? s->by_nr[c->nr] : NULL;
	const char *name = pmu_syscall_name(c->nr);
	json_t *o = json_object();
	char b[400], inc[24];
	bool failed = c->ret < 0 && c->ret >= -4095;

	if (!o)
		return NULL;
	incname(inc, sizeof(inc), in->id);
	json_object_set_new(o, "type", json_string("call"));
	json_object_set_new(o, "t_ns", json_integer((json_int_t)c->h.time_ns));
	json_object_set_new(o, "dur_ns", json_integer((json_int_t)c->dur_ns));
	json_object_set_new(o, "seq", json_integer((json_int_t)c->h.seq));
	json_object_set_new(o, "inc", json_string(inc));
	json_object_set_new(o, "pid", json_integer(c->tgid));
	json_object_set_new(o, "tid", json_integer(c->tid));
	if (name)
		json_object_set_new(o, "syscall", json_string(name));
	else {
		snprintf(b, sizeof(b), "syscall_%u", c->nr);
		json_object_set_new(o, "syscall", json_string(b));
	}
	json_object_set_new(o, "nr", json_integer(c->nr));
	if (failed) {
		char eb[24];

		json_object_set_new(o, "errno", json_integer(-c->ret));
		json_object_set_new(o, "error", json_string(errname((int)-c->ret, eb, sizeof(eb))));
	} else {
		json_object_set_new(o, "ret", json_integer((json_int_t)c->ret));
		if (cl && cl->flags & PMU_SYS_C_BYTES && c->ret >= 0)
			json_object_set_new(o, "bytes", json_integer((json_int_t)c->ret));
	}
	if (cl) {
		/* fds are ints; a negative one (mmap's -1, close(-1)) is none */
		if (c->flags & PMU_SYS_F_FD2) {
			if (c->fd1 >= 0)
				json_object_set_new(o, "fd", json_integer(c->fd1));
			if (c->fd2 >= 0)
				json_object_set_new(o, "fd2", json_integer(c->fd2));
		} else if (cl->flags & PMU_SYS_C_FD_RET) {
			if (!failed && c->ret >= 0 && c->ret <= INT32_MAX)
				json_object_set_new(o, "fd", json_integer((json_int_t)c->ret));
		} else if (cl->flags & PMU_SYS_C_FD_ENTER && (int)c->args[cl->fd_arg] >= 0)
			json_object_set_new(o, "fd", json_integer((int)c->args[cl->fd_arg]));
		if ((!strcmp(cl->name, "dup2") || !strcmp(cl->name, "dup3")) && (int)c->args[1] >= 0)
			json_object_set_new(o, "newfd", json_integer((int)c->args[1]));
		if (cl->flags_arg >= 0)
			json_object_set_new(o, "flags", hexs(c->args[cl->flags_arg]));
		if (!strcmp(cl->name, "ioctl")) {
			json_object_set_new(o, "request", hexs((uint32_t)c->args[1]));
#ifdef HAVE_IOCTLNAME
			const char *rn = pmu_ioctl_name((unsigned long)(uint32_t)c->args[1]);
			if (rn)
				json_object_set_new(o, "request_name", json_string(rn));
#endif
		}
		if (!strcmp(cl->name, "fcntl"))
			for (size_t i = 0; i < PMU_ARRAY_SIZE(fcntl_cmds); i++)
				if (fcntl_cmds[i].cmd == (uint32_t)c->args[1])
					json_object_set_new(o, "cmd", json_string(fcntl_cmds[i].name));
	}
	if (c->flags & PMU_SYS_F_FILE) {
		kdev(b, sizeof(b), c->dev);
		json_object_set_new(o, "dev", json_string(b));
		json_object_set_new(o, "ino", json_integer((json_int_t)c->ino));
		json_object_set_new(o, "ftype", json_string(ftype_of(c->mode)));
	}
	if (r->h.kind == PMU_SYS_REC_CALL_PATH) {
		const char *src = c->flags & PMU_SYS_F_PATH_DENTRY ? "dentry"
				  : c->flags & PMU_SYS_F_PATH_CWD  ? "argument+cwd"
				  : c->flags & PMU_SYS_F_PATH_DIRFD ? "argument+dirfd"
				  : c->flags & PMU_SYS_F_PATH_REL  ? "relative"
				  : c->flags & PMU_SYS_F_PATH_ARG  ? "argument"
								   : NULL;
		const char *cut = path_cut(c->flags & PMU_SYS_F_PATH_HEAD, c->flags & PMU_SYS_F_PATH_TRUNC);

		if (src && r->p.path[0]) {
			json_object_set_new(o, "path", json_string(r->p.path));
			json_object_set_new(o, "path_source", json_string(src));
			if (cut)
				json_object_set_new(o, "path_truncated", json_string(cut));
			else if (c->flags & PMU_SYS_F_FILE)
				path_remember(s, c->dev, c->ino, r->p.path);
		}
		if (c->flags & PMU_SYS_F_PATH2 && r->p.path2[0]) {
			src = c->flags & PMU_SYS_F_P2_CWD     ? "argument+cwd"
			      : c->flags & PMU_SYS_F_P2_DIRFD ? "argument+dirfd"
			      : c->flags & PMU_SYS_F_P2_REL   ? "relative"
							      : "argument";
			cut = path_cut(c->flags & PMU_SYS_F_P2_HEAD, c->flags & PMU_SYS_F_P2_TRUNC);
			json_object_set_new(o, "path2", json_string(r->p.path2));
			json_object_set_new(o, "path2_source", json_string(src));
			if (cut)
				json_object_set_new(o, "path2_truncated", json_string(cut));
		}
	}
	{
		char *e = b;

		for (int i = 0; i < 6; i++) {
			if (i)
				*e++ = ' ';
			e = hex_at(e, c->args[i]);
		}
		*e = 0;
	}
	json_object_set_new(o, "args", json_string(b));
	return o;
}

/* One record in time order: 1 when it must wait for its task, else 0. */
static int process(struct sysc *s, struct item *it, uint64_t now, bool final)
{
	const struct pmu_sys_call *c = &it->r->c;
	const struct pmu_incarnation *in =
		pmu_cohort_find(s->env->cohort, (pid_t)c->tgid, (pid_t)c->tid, c->h.time_ns, c->h.time_ns);
	json_t *o;

	if (!in && !final && s->env->stops != PMU_STOPS_BEFORE_RUN && now < it->t + HOLD_NS)
		return 1;
	if (!in) {
		s->unattributed++;
		return 0;
	}
	write_fds(s);
	if (it->t < s->last_written) {
		refuse(s, "syscall record arrived after later records were written");
		return 0;
	}
	if (s->trunc_written) {
		s->truncated++;
		return 0;
	}
	if (!(o = call_rec(s, it->r, in))) {
		put(s, NULL);
		return 0;
	}
	if (s->env->cfg->max_output_bytes) {
		size_t len = json_dumpb(o, NULL, 0, JSON_COMPACT) + 1;

		if (s->out_bytes + len > s->env->cfg->max_output_bytes) {
			json_t *tr = json_object();

			json_decref(o);
			json_object_set_new(tr, "type", json_string("truncation"));
			json_object_set_new(tr, "t_ns", json_integer((json_int_t)it->t));
			json_object_set_new(tr, "max_output_bytes",
					    json_integer((json_int_t)s->env->cfg->max_output_bytes));
			json_object_set_new(tr, "reason",
					    json_string("--max-output-bytes reached: no more call records; the "
							"statistics (syscall-stats) go on"));
			s->trunc_written = true;
			s->truncated++;
			s->last_written = it->t;
			put(s, tr);
			return 0;
		}
		s->out_bytes += len;
	}
	s->calls++;
	s->last_written = it->t;
	put(s, o);
	return 0;
}

/* Write what is older than wm, in time order, at most max records; true
 * when some that could be written are left. */
static bool flush(struct sysc *s, uint64_t wm, uint64_t now, bool final, size_t max)
{
	while (s->heap.n && ((const struct item *)pmu_heap_top(&s->heap))->t <= wm) {
		struct item it;

		if (!max--)
			return true;
		it = heap_pop(s);
		if (process(s, &it, now, final)) {
			heap_push(s, it); /* waits for its task: so does all behind it */
			break;
		}
		free(it.r);
	}
	return false;
}

/*
 * The ring is emptied into the heap first (cheap: a copy per record), as
 * far as the heap has room, then records are written in slices, the ring
 * emptied again between them; the loop is given back after DRAIN_NS.
 *
 * A full heap with nothing older than the watermark (the writer is behind
 * by more than HEAP_MAX records) writes its oldest slice anyway: what
 * stays in the ring was reserved after every record in the heap, and a
 * record's t_ns is taken just before its reserve (the same sys_exit, a few
 * us), so none of it is older.  Only a record waiting for its task stops
 * the writing (stalled: at most HOLD_NS); the ring then fills and counts
 * its loss.
 */
static int sys_drain(void *state, uint64_t now)
{
	struct sysc *s = state;
	uint64_t t0 = pmu_now_mono_ns();
	bool more;

	if (!s->ring)
		return 0;
	s->stalled = false;
	do {
		size_t had;
		int held = take(s);

		more = flush(s, now > REORDER_NS ? now - REORDER_NS : 0, now, false, 2048);
		if (!more && held && s->heap.n >= HEAP_MAX) {
			had = s->heap.n;
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

static int sys_fds(void *state, int *fds, int max)
{
	struct sysc *s = state;

	/* stalled, the ring stays readable: the loop's tick, not a spin */
	if (!s->ring || max < 1 || s->stalled)
		return 0;
	fds[0] = ring_buffer__epoll_fd(s->ring);
	return 1;
}

/* ---- probe, open ------------------------------------------------------------ */

static int sys_load(struct sysc *s);

static int sys_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct sysc *s = calloc(1, sizeof(*s));
	uint64_t t = pmu_now_mono_ns();
	char why[200];

	(void)caps;
	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	*state = s;
	s->env = env;
	s->heap = (struct pmu_heap)PMU_HEAP_INIT(struct item, item_less);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, sizeof(why), "the running kernel has no BTF: '/sys/kernel/btf/vmlinux': %s", strerror(errno));
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, t, why, REMEDY_BTF);
		return 0;
	}
	if (!pmu_caps_bpf()) {
		snprintf(why, sizeof(why), "uid %d lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to load eBPF programs",
			 (int)geteuid());
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, t, why, REMEDY_PRIV);
		return 0;
	}
	/* the host's kernel refusing the programs (its verifier, a map type
	 * or helper it lacks) is what this host cannot do: unavailable, with
	 * the kernel's say, and the bundle stays valid */
	if ((s->load_err = sys_load(s)) < 0) {
		if (s->load_err == PMU_ERR_NOMEM)
			return s->load_err;
		snprintf(s->load_why, sizeof(s->load_why), "%s", pmu_error_detail());
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), s->load_why,
				      "run with PMU_BPF_LOG=1 to see the verifier's whole log; a kernel with BPF ring "
				      "buffers, task storage, bpf_loop and BTF (Linux 5.17 or later)");
		return 0;
	}
	s->load_err = 0;
	pmu_lc_probed_ok(env->lc, t);
	return 0;
}

static bool sys_usable(void *state)
{
	return !((struct sysc *)state)->unusable;
}

/* libbpf's messages: the last one kept for the reason, none printed */
static char lb_last[600];

static int lb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	if (getenv("PMU_BPF_LOG")) { /* the verifier's whole say, for whoever debugs a refusal */
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
	/* the first messages say what failed (the program, the verifier's
	 * first lines); the last ones only that the skeleton did not load */
	if (n > 0) {
		size_t used = strlen(lb_last);

		if (used + 3 < sizeof(lb_last))
			snprintf(lb_last + used, sizeof(lb_last) - used, "%s%.590s", used ? " | " : "", line);
	}
	return 0;
}

/* Whether the root's fd has O_CLOEXEC (/proc/PID/fdinfo/FD "flags:", octal). */
static bool cloexec(pid_t root, const char *fd)
{
	char p[320], line[128];
	bool ce = false;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/fdinfo/%s", (int)root, fd);
	if (!(f = fopen(p, "re")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags:", 6)) {
			ce = strtoul(line + 6, NULL, 8) & O_CLOEXEC;
			break;
		}
	fclose(f);
	return ce;
}

/* The fds the root holds before its exec and keeps across it (no
 * O_CLOEXEC): fd records (spec: proc-fd). */
static void read_root_fds(struct sysc *s, pid_t root)
{
	char dir[64];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)root);
	if (!(d = opendir(dir)))
		return;
	s->fds = json_array();
	while ((e = readdir(d))) {
		char p[320], target[4096];
		struct stat st;
		ssize_t n;
		json_t *f;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end || end == e->d_name)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (cloexec(root, e->d_name))
			continue; /* pmurec's own: it does not reach the command */
		n = readlink(p, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		f = json_object();
		json_object_set_new(f, "type", json_string("fd"));
		json_object_set_new(f, "t_ns", json_integer((json_int_t)pmu_now_mono_ns()));
		json_object_set_new(f, "fd", json_integer(fd));
		if (!stat(p, &st)) {
			char dv[32];

			snprintf(dv, sizeof(dv), "%u:%u", major(st.st_dev), minor(st.st_dev));
			json_object_set_new(f, "dev", json_string(dv));
			json_object_set_new(f, "ino", json_integer((json_int_t)st.st_ino));
			json_object_set_new(f, "ftype", json_string(ftype_of(st.st_mode)));
			path_remember(s, (uint32_t)(major(st.st_dev) << 20 | minor(st.st_dev)), st.st_ino, target);
		}
		json_object_set_new(f, "path", json_string(target));
		json_object_set_new(f, "path_source", json_string("proc-fd"));
		json_array_append_new(s->fds, f);
	}
	closedir(d);
}

static int fail_open(struct sysc *s, int e, const char *what)
{
	const char *remedy = e == EPERM || e == EACCES ? REMEDY_PRIV : REMEDY_KERNEL;

	return pmu_error(PMU_ERR_UNSUPPORTED, "%s: %s%s%s (%s)", what, strerror(e), lb_last[0] ? "; " : "", lb_last,
			 remedy);
	(void)s;
}

static void write_config(struct sysc *s)
{
	json_t *c = json_object();
	struct utsname u;

	uname(&u);
	json_object_set_new(c, "type", json_string("config"));
	json_object_set_new(c, "mechanism", json_string("raw_tp sys_enter/sys_exit (eBPF)"));
	json_object_set_new(c, "filter", json_string("members"));
	json_object_set_new(c, "raw_calls", json_string(s->raw_calls));
	json_object_set_new(c, "ring_bytes", json_integer(s->ring_bytes));
	json_object_set_new(c, "ncpus", json_integer(s->ncpu));
	if (s->env->cfg->max_output_bytes)
		json_object_set_new(c, "max_output_bytes", json_integer((json_int_t)s->env->cfg->max_output_bytes));
	json_object_set_new(c, "arch", json_string(u.machine));
	json_object_set_new(c, "clock", json_string("monotonic"));
	put(s, c);
}

/*
 * Open and load the programs, size and fill their maps: everything that
 * needs no root.  Called by probe, before the root is forked: libbpf's
 * reading of the kernel's BTF and the verifier take 0.2-0.4 s here, which
 * would otherwise be the held root's time.
 */
static int sys_load(struct sysc *s)
{
	struct pmu_collector_env *env = s->env;
	libbpf_print_fn_t old;
	size_t nraw = 0;
	uint64_t t0, t1, t2;
	int err = 0;

	s->ncpu = libbpf_num_possible_cpus();
	if (s->ncpu <= 0 || !(s->lost_cpu = calloc((size_t)s->ncpu * LOSS_N, sizeof(uint64_t))))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	old = libbpf_set_print(lb_print);
	lb_last[0] = 0;
	t0 = pmu_now_mono_ns();
	if (!(s->skel = syscalls_bpf__open())) {
		err = fail_open(s, errno, "cannot open the syscalls bpf object");
		goto out;
	}
	/* the cohort is the process tree, as the follower follows it, never
	 * its cgroup (cohort.bpf.h); the launcher's execve attempts */
	s->skel->rodata->nr_execve = (__u32)pmu_syscall_nr("execve");
	s->skel->rodata->nr_execveat = (__u32)pmu_syscall_nr("execveat");
	s->ring_bytes = env->cfg->syscall_ring_kb ? env->cfg->syscall_ring_kb * 1024u : RING_BYTES;
	if (s->ring_bytes < (uint32_t)sysconf(_SC_PAGESIZE))
		s->ring_bytes = (uint32_t)sysconf(_SC_PAGESIZE); /* the kernel's least */
	s->skel->rodata->ring_size = s->ring_bytes;
	/* not preallocated: an entry (1.3 KiB, most of it the histogram) is
	 * allocated at its first call; a make -j2 of 30 small C files makes
	 * 12,000 (a compiler per file, each header a file) */
	if (bpf_map__set_max_entries(s->skel->maps.stats, STATS_MAX)) {
		err = fail_open(s, errno, "cannot size the syscalls statistics map");
		goto out;
	}
	if (bpf_map__set_max_entries(s->skel->maps.rb, s->ring_bytes)) {
		err = fail_open(s, errno, "cannot size the syscalls ring");
		goto out;
	}
	t1 = pmu_now_mono_ns();
	if ((err = syscalls_bpf__load(s->skel))) {
		err = fail_open(s, -err, "the kernel refused the syscalls programs");
		goto out;
	}
	t2 = pmu_now_mono_ns();
	/* the raw family, by this arch's numbers */
	for (size_t i = 0; i < PMU_ARRAY_SIZE(classes); i++) {
		long nr = pmu_syscall_nr(classes[i].name);
		struct pmu_sys_class v = { classes[i].flags, classes[i].fd_arg, classes[i].path_arg, classes[i].path2_arg, 0 };
		__u32 k = (__u32)nr;

		if (nr < 0 || nr >= PMU_SYS_NR_MAX)
			continue;
		s->by_nr[nr] = &classes[i];
		if (bpf_map__update_elem(s->skel->maps.calls, &k, sizeof(k), &v, sizeof(v), BPF_ANY)) {
			err = fail_open(s, errno, "cannot fill the syscalls class map");
			goto out;
		}
		nraw += (size_t)snprintf(s->raw_calls + nraw, sizeof(s->raw_calls) - nraw, "%s%s", nraw ? " " : "",
					 classes[i].name);
	}
	/* the calls a child returns from without entering them (unentered
	 * calls in bpf/syscalls.bpf.c): not raw, only marked */
	for (size_t i = 0; i < PMU_ARRAY_SIZE(forks); i++) {
		long nr = pmu_syscall_nr(forks[i]);
		struct pmu_sys_class v = { .flags2 = PMU_SYS_C2_FORK };
		__u32 k = (__u32)nr;

		if (nr < 0 || nr >= PMU_SYS_NR_MAX || s->by_nr[nr])
			continue;
		if (bpf_map__update_elem(s->skel->maps.calls, &k, sizeof(k), &v, sizeof(v), BPF_ANY)) {
			err = fail_open(s, errno, "cannot fill the syscalls class map");
			goto out;
		}
	}
	s->t_load0 = t0;
	s->t_load1 = t1;
	s->t_load2 = t2;
out:
	libbpf_set_print(old);
	return err;
}

static int sys_open(void *state, pid_t root, uint64_t t)
{
	struct sysc *s = state;
	struct pmu_collector_env *env = s->env;
	struct pmu_out *o = env->out;
	libbpf_print_fn_t old;
	uint64_t t3;
	char ev[300];
	int err;

	pmu_lc_step(env->lc, "opened", t);
	if (!env->followed)
		return pmu_error(PMU_ERR_UNSUPPORTED, "the cohort is not followed (%s): %s",
				 env->follow_reason ? env->follow_reason : "no follower",
				 env->follow_remedy ? env->follow_remedy : "see the cohort collector");
	if (s->load_err)
		return pmu_error(s->load_err, "%s", s->load_why);
	s->root = root;
	old = libbpf_set_print(lb_print);
	lb_last[0] = 0;
	/* the root, held behind the launch barrier: in the cohort from its
	 * exec, any process of its pid (attach mode: a running process, in
	 * from now) */
	{
		__u32 k = (__u32)root;
		__u64 v = env->cfg->attach ? PMU_COHORT_ANY : PMU_COHORT_PRE_EXEC;

		if (bpf_map__update_elem(s->skel->maps.pmu_members, &k, sizeof(k), &v, sizeof(v), BPF_ANY)) {
			err = fail_open(s, errno, "cannot add the root to the syscalls members map");
			goto out;
		}
	}
	read_root_fds(s, root);
	if ((err = syscalls_bpf__attach(s->skel))) {
		err = fail_open(s, -err, "cannot attach to raw_syscalls sys_enter/sys_exit");
		goto out;
	}
	if (!(s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.rb), on_sample, s, NULL))) {
		err = fail_open(s, errno, "cannot map the syscalls ring");
		goto out;
	}
	if ((err = o->open(o, "collectors/syscalls/syscalls.jsonl", "syscalls", &s->ys)))
		goto out;
	write_config(s);
	t3 = pmu_now_mono_ns();
	snprintf(ev, sizeof(ev),
		 "raw_tp sys_enter and sys_exit attached, ring mapped, cohort filter in the kernel (%s); open %.1f ms "
		 "and load %.1f ms (before the command was forked), attach %.1f ms",
		 "members", (s->t_load1 - s->t_load0) / 1e6, (s->t_load2 - s->t_load1) / 1e6, (t3 - t) / 1e6);
	pmu_lc_attached(env->lc, t3, ev);
	err = s->err;
out:
	libbpf_set_print(old);
	return err;
}

static void sys_task(void *state, const struct pmu_task_event *ev)
{
	struct sysc *s = state;
	__u32 k;
	__u64 any = PMU_COHORT_ANY;

	/* attach mode: the running tree's processes join the members */
	if (!s->skel || ev->what != PMU_TASK_JOINED || !(ev->flags & PMU_TASK_PREEXISTING))
		return;
	k = (__u32)ev->pid;
	bpf_map__update_elem(s->skel->maps.pmu_members, &k, sizeof(k), &any, sizeof(any), BPF_NOEXIST);
}

/* Read the per-CPU loss counters. */
static void read_losses(struct sysc *s)
{
	struct pmu_sys_counters *pc = calloc((size_t)s->ncpu, sizeof(*pc));
	__u64 *cf = calloc((size_t)s->ncpu, sizeof(*cf));
	__u32 k = 0;

	if (pc && !bpf_map__lookup_elem(s->skel->maps.counters, &k, sizeof(k), pc, sizeof(*pc) * s->ncpu, 0))
		for (int c = 0; c < s->ncpu; c++) {
			s->lost_cpu[c * LOSS_N + LOSS_RESERVE] = pc[c].reserve_fail;
			s->lost_cpu[c * LOSS_N + LOSS_INFLIGHT] = pc[c].inflight_fail;
			s->lost_cpu[c * LOSS_N + LOSS_STATS] = pc[c].stats_fail;
		}
	/* a process the members map could not take: none of its calls is seen */
	if (cf && !bpf_map__lookup_elem(s->skel->maps.pmu_cohort_fail, &k, sizeof(k), cf, sizeof(*cf) * s->ncpu, 0))
		for (int c = 0; c < s->ncpu; c++)
			s->lost_cpu[c * LOSS_N + LOSS_INFLIGHT] += cf[c];
	for (int c = 0; c < s->ncpu; c++)
		for (int w = 0; w < LOSS_N; w++)
			s->lost[w] += s->lost_cpu[c * LOSS_N + w];
	free(pc);
	free(cf);
}

static void sys_stop(void *state, uint64_t t)
{
	struct sysc *s = state;

	if (!s->skel || s->stopped)
		return;
	s->stopped = true;
	/* detach first: nothing is added after the last read (what the
	 * heap has no room for stays in the ring until emit) */
	syscalls_bpf__detach(s->skel);
	if (s->ring)
		take(s);
	s->seq_end = s->skel->bss->seq_next;
	read_losses(s);
	s->stop_t = pmu_now_mono_ns();
	pmu_lc_step(s->env->lc, "stopped", t);
}

/* ---- emit ------------------------------------------------------------------- */

static int write_stats(struct sysc *s, struct pmu_collector_env *env)
{
	struct pmu_out *o = env->out;
	struct pmu_stream *st = NULL;
	int fd = bpf_map__fd(s->skel->maps.stats);
	struct pmu_sys_stat_key key, next;
	struct pmu_sys_stat v;
	const void *prev = NULL;
	uint64_t nstats = 0, ncalls = 0, unattr = 0, nunent = 0;
	int err;
	json_t *sum;

	if ((err = o->open(o, "collectors/syscalls/syscall-stats.jsonl", "syscall-stats", &st)))
		return err;
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		const struct pmu_incarnation *in;
		json_t *r;
		char b[4096], inc[24];
		const char *name, *path;
		size_t n = 0;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		in = pmu_cohort_find(env->cohort, (pid_t)key.tgid, (pid_t)key.tgid, v.last_ns, v.last_ns);
		if (!in) {
			unattr += v.count;
			continue;
		}
		r = json_object();
		incname(inc, sizeof(inc), in->id);
		json_object_set_new(r, "type", json_string(key.unentered ? "unentered" : "stat"));
		json_object_set_new(r, "inc", json_string(inc));
		json_object_set_new(r, "pid", json_integer(key.tgid));
		name = pmu_syscall_name(key.nr);
		if (!name)
			snprintf(b, sizeof(b), "syscall_%u", key.nr);
		json_object_set_new(r, "syscall", json_string(name ? name : b));
		json_object_set_new(r, "nr", json_integer(key.nr));
		if (key.err) {
			char eb[24];

			json_object_set_new(r, "errno", json_integer(key.err));
			json_object_set_new(r, "error", json_string(errname((int)key.err, eb, sizeof(eb))));
		}
		if (key.dev || key.ino) {
			kdev(b, sizeof(b), key.dev);
			json_object_set_new(r, "dev", json_string(b));
			json_object_set_new(r, "ino", json_integer((json_int_t)key.ino));
			json_object_set_new(r, "ftype", json_string(ftype_of(key.mode)));
			if ((path = path_of(s, key.dev, key.ino)))
				json_object_set_new(r, "path", json_string(path));
		}
		json_object_set_new(r, "count", json_integer((json_int_t)v.count));
		if (key.unentered) {
			/* seen leaving the kernel only: no duration */
			nunent += v.count;
			err = o->put(st, r);
			continue;
		}
		json_object_set_new(r, "total_ns", json_integer((json_int_t)v.total_ns));
		json_object_set_new(r, "min_ns", json_integer((json_int_t)(v.count ? v.min_ns : 0)));
		json_object_set_new(r, "max_ns", json_integer((json_int_t)v.max_ns));
		if (s->by_nr[key.nr < PMU_SYS_NR_MAX ? key.nr : 0] && key.nr < PMU_SYS_NR_MAX &&
		    s->by_nr[key.nr]->flags & PMU_SYS_C_BYTES)
			json_object_set_new(r, "bytes", json_integer((json_int_t)v.bytes));
		b[0] = 0;
		for (int i = 0; i < PMU_SYS_HIST && n < sizeof(b) - 32; i++)
			if (v.hist[i])
				n += (size_t)snprintf(b + n, sizeof(b) - n, "%s%d:%u", n ? " " : "", i, v.hist[i]);
		json_object_set_new(r, "hist", json_string(b));
		nstats++;
		ncalls += v.count;
		err = o->put(st, r);
	}
	sum = json_object();
	json_object_set_new(sum, "type", json_string("summary"));
	json_object_set_new(sum, "stats", json_integer((json_int_t)nstats));
	json_object_set_new(sum, "calls", json_integer((json_int_t)ncalls));
	json_object_set_new(sum, "lost", json_integer((json_int_t)(s->lost[LOSS_STATS] + s->lost[LOSS_INFLIGHT])));
	json_object_set_new(sum, "unattributed", json_integer((json_int_t)unattr));
	json_object_set_new(sum, "unentered", json_integer((json_int_t)nunent));
	if (!err)
		err = o->put(st, sum);
	else
		json_decref(sum);
	{
		int e2 = o->close(st);

		err = err ? err : e2;
	}
	return err;
}

static uint64_t lost_total(const struct sysc *s)
{
	return s->lost[LOSS_RESERVE] + s->lost[LOSS_INFLIGHT] + s->lost[LOSS_STATS];
}

static int sys_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct sysc *s = state;
	uint64_t tl;
	json_t *sum;
	int err;

	if (!s || s->unusable)
		return 0;
	if (!s->ys)
		return s->err;
	/* the rest, through the heap: the ring's records come after it */
	while (s->ring && take(s) && !s->err)
		flush(s, UINT64_MAX, UINT64_MAX, true, HEAP_MAX / 4);
	flush(s, UINT64_MAX, UINT64_MAX, true, SIZE_MAX);
	write_fds(s);
	/* loss, read at stop, after every call record */
	tl = s->stop_t > s->last_written ? s->stop_t : s->last_written;
	if (tl > win->end_ns)
		tl = win->end_ns > s->last_written ? win->end_ns : s->last_written;
	for (int c = 0; c < s->ncpu; c++)
		for (int w = 0; w < LOSS_N; w++)
			if (s->lost_cpu[c * LOSS_N + w]) {
				json_t *l = json_object();

				json_object_set_new(l, "type", json_string("loss"));
				json_object_set_new(l, "t_ns", json_integer((json_int_t)tl));
				json_object_set_new(l, "cpu", json_integer(c));
				json_object_set_new(l, "lost", json_integer((json_int_t)s->lost_cpu[c * LOSS_N + w]));
				json_object_set_new(l, "what", json_string(loss_what[w]));
				put(s, l);
			}
	sum = json_object();
	json_object_set_new(sum, "type", json_string("summary"));
	json_object_set_new(sum, "calls", json_integer((json_int_t)s->calls));
	json_object_set_new(sum, "fd_records", json_integer((json_int_t)s->fd_records));
	json_object_set_new(sum, "seq_end", json_integer((json_int_t)s->seq_end));
	json_object_set_new(sum, "unattributed", json_integer((json_int_t)s->unattributed));
	json_object_set_new(sum, "truncated", json_integer((json_int_t)s->truncated));
	json_object_set_new(sum, "lost", json_integer((json_int_t)lost_total(s)));
	json_object_set_new(sum, "malformed", json_integer((json_int_t)s->malformed));
	put(s, sum);
	err = s->err;
	{
		int e2 = env->out->close(s->ys);

		s->ys = NULL;
		err = err ? err : e2;
	}
	if (!err)
		err = write_stats(s, env);
	if (lost_total(s)) {
		char why[300];

		snprintf(why, sizeof(why),
			 "%" PRIu64 " calls lost: %" PRIu64 " records found the ring full, %" PRIu64
			 " calls had no in-flight entry, %" PRIu64 " found the statistics map full",
			 lost_total(s), s->lost[LOSS_RESERVE], s->lost[LOSS_INFLIGHT], s->lost[LOSS_STATS]);
		pmu_lc_lost(env->lc, "drop", win->end_ns, lost_total(s), why);
	}
	if (s->malformed)
		pmu_lc_lost(env->lc, "malformed", win->end_ns, s->malformed, s->malformed_first);
	pmu_lc_step(env->lc, "detached", win->end_ns);
	return err;
}

static bool sys_failed(void *state, char *why, size_t n)
{
	struct sysc *s = state;
	const struct pmu_sampling_opts *so = s->env->cfg->sampling;

	if (s->unusable || !lost_total(s) || (so && so->allow_loss))
		return false;
	snprintf(why, n, "%" PRIu64 " system calls lost (--allow-loss accepts a bundle with loss)", lost_total(s));
	return true;
}

static void sys_release(void *state)
{
	struct sysc *s = state;

	if (!s)
		return;
	while (s->heap.n)
		free(heap_pop(s).r);
	pmu_heap_free(&s->heap);
	if (s->ys)
		s->env->out->close(s->ys);
	ring_buffer__free(s->ring);
	syscalls_bpf__destroy(s->skel);
	json_decref(s->fds);
	for (size_t i = 0; s->paths && i < PATHS_MAX; i++)
		free(s->paths[i].path);
	free(s->paths);
	free(s->lost_cpu);
	free(s);
}

const struct pmu_collector_ops pmu_syscalls_collector = {
	.name = "syscalls",
	.modes = 4,
	.probe = sys_probe,
	.usable = sys_usable,
	.open = sys_open,
	.task = sys_task,
	.fds = sys_fds,
	.drain = sys_drain,
	.stop = sys_stop,
	.emit = sys_emit,
	.failed = sys_failed,
	.release = sys_release,
};

#else /* !PMU_BPF_BUILT */

#ifndef PMU_BPF_UNBUILT
#define PMU_BPF_UNBUILT "no eBPF toolchain at build time"
#endif

static int sys_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	(void)caps;
	*state = NULL;
	pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), "the syscalls collector was built without eBPF: " PMU_BPF_UNBUILT,
			      "install clang, bpftool and libbpf-dev (and a kernel with BTF), then rebuild pmu");
	return 0;
}

static int sys_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	(void)state;
	(void)env;
	(void)win;
	return 0;
}

static void sys_release(void *state)
{
	(void)state;
}

const struct pmu_collector_ops pmu_syscalls_collector = {
	.name = "syscalls", .modes = 4, .probe = sys_probe, .emit = sys_emit, .release = sys_release,
};
#endif
