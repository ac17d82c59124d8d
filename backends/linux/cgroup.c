/*
 * The cohort's cgroup v2 leaf: create, enter, snapshot, destroy.  The
 * placement and controller rules are in cgroup.h; the file formats are
 * parsed by lib/cgstat.c.  Interface: Documentation/admin-guide/cgroup-v2.rst.
 *
 * Every cgroup file is written with one write(2): the kernel parses each
 * write as a whole ("+io", a pid, "1"), and its errno is the answer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup.h"
#include "error.h"
#include "util.h"

#define CG_FILE_LIMIT (1u << 20)
#define CG_WAIT_MS 2000
#define CG_MAX_DEPTH 32

static const char REMEDY_NOV2[] =
	"mount a cgroup2 hierarchy (mount -t cgroup2 none /sys/fs/cgroup) or boot with "
	"systemd.unified_cgroup_hierarchy=1";
static const char REMEDY_PERM[] =
	"run as root, or under a delegated cgroup: systemd-run --user --scope -p Delegate=yes pmurec ...";
static const char REMEDY_THREADED[] = "run pmurec from a domain cgroup, not a threaded one";
static const char REMEDY_V1[] =
	"boot with systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1=all) so that the controller is on cgroup v2";
static const char REMEDY_DELEGATE[] =
	"run pmurec as the only process of a cgroup that has the controller, e.g. "
	"systemd-run --scope -p Delegate=yes pmurec ...";
static const char REMEDY_KERNEL[] = "a newer kernel (Documentation/admin-guide/cgroup-v2.rst lists the file)";
static const char REMEDY_PSI[] = "a kernel with CONFIG_PSI=y, booted without psi=0 (or with psi=1)";

void pmu_cg_init(struct pmu_cg *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->dirfd = -1;
	cg->parentfd = -1;
}

static bool perm_errno(int e)
{
	return e == EACCES || e == EPERM || e == EROFS;
}

/* Append to cg->notes, "; "-separated, marking a cut with "...". */
__attribute__((format(printf, 2, 3)))
static void note(struct pmu_cg *cg, const char *fmt, ...)
{
	size_t n = strlen(cg->notes), cap = sizeof(cg->notes);
	va_list ap;
	int w;

	if (n + 4 >= cap)
		return;
	if (n)
		n += (size_t)snprintf(cg->notes + n, cap - n, "; ");
	va_start(ap, fmt);
	w = vsnprintf(cg->notes + n, cap - n, fmt, ap);
	va_end(ap);
	if (w > 0 && (size_t)w >= cap - n)
		memcpy(cg->notes + cap - 4, "...", 4);
}

/* Read dirfd/name whole into a NUL-terminated buffer the caller frees;
 * -1 with *eno set on failure. */
static int cg_read(int dirfd, const char *name, char **out, size_t *len, int *eno)
{
	struct pmu_buf b;
	char chunk[8192];
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		*eno = errno;
		return -1;
	}
	pmu_buf_init(&b);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && (b.len + (size_t)n > CG_FILE_LIMIT || pmu_buf_add(&b, chunk, (size_t)n)))) {
			*eno = n < 0 ? errno : EFBIG;
			close(fd);
			pmu_buf_release(&b);
			return -1;
		}
		if (n == 0)
			break;
	}
	close(fd);
	*len = b.len;
	*out = pmu_buf_detach(&b);
	return 0;
}

/* Write s to dirfd/name in one write(2): 0 or the errno. */
static int cg_write(int dirfd, const char *name, const char *s)
{
	int fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), e = 0;
	size_t n = strlen(s);

	if (fd < 0)
		return errno;
	errno = 0;
	if (write(fd, s, n) != (ssize_t)n)
		e = errno ? errno : EIO;
	close(fd);
	return e;
}

/* Read a small cgroup file into buf, trailing newline dropped; "" on error. */
static void cg_read_small(int dirfd, const char *name, char *buf, size_t size)
{
	char *s = NULL;
	size_t n = 0;
	int eno;

	buf[0] = '\0';
	if (cg_read(dirfd, name, &s, &n, &eno))
		return;
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	snprintf(buf, size, "%s", s);
	free(s);
}

/* Is the cgroup at dirfd/name (or dirfd itself, name ".") populated?
 * Unreadable counts as populated. */
static bool populated(int dirfd, const char *name)
{
	char path[300], *s = NULL;
	size_t n = 0;
	struct pmu_cgstat st;
	const uint64_t *v;
	bool pop = true;
	int eno;

	snprintf(path, sizeof(path), "%s/cgroup.events", name);
	if (cg_read(dirfd, path, &s, &n, &eno))
		return true;
	pmu_cgstat_init(&st);
	if (!pmu_cgstat_parse_flat(s, n, &st) && (v = pmu_cgstat_get(&st, "populated")))
		pop = *v != 0;
	pmu_cgstat_release(&st);
	free(s);
	return pop;
}

/* Remove dirfd/name and the cgroups below it, deepest first: 0 or errno. */
static int rmdir_tree(int dirfd, const char *name, int depth)
{
	int fd, e = 0;
	DIR *d;
	struct dirent *de;

	if (depth > CG_MAX_DEPTH)
		return ELOOP;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : errno;
	d = fdopendir(fd);
	if (!d) {
		e = errno;
		close(fd);
		return e;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		if ((e = rmdir_tree(fd, de->d_name, depth + 1)))
			break;
	}
	closedir(d);
	if (e)
		return e;
	return unlinkat(dirfd, name, AT_REMOVEDIR) && errno != ENOENT ? errno : 0;
}

/* "pmurec.<pid>.<8 hex>" or, with *rec, "pmurec.<pid>.<8 hex>.rec". */
static bool leaf_name(const char *s, pid_t *pid, bool *rec)
{
	long v = 0;
	int i = 7;

	if (strncmp(s, "pmurec.", 7) || s[i] < '1' || s[i] > '9')
		return false;
	for (; s[i] >= '0' && s[i] <= '9'; i++)
		if ((v = v * 10 + (s[i] - '0')) > 1L << 30)
			return false;
	if (s[i++] != '.')
		return false;
	for (int k = 0; k < 8; k++, i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	*rec = !strcmp(s + i, ".rec");
	*pid = (pid_t)v;
	return s[i] == '\0' || *rec;
}

static bool alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/*
 * Remove the leaves of recorders that are gone: same name pattern, pid not
 * alive, empty.  A populated one (a cohort that outlived a recorder that
 * was not following it) is left alone: killing it is not ours to decide.
 * A pid that was reused keeps its stale leaf until that process ends.
 */
static void clean_stale(struct pmu_cg *cg)
{
	int fd = dup(cg->parentfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		pid_t pid;
		bool rec;
		int e;

		if (!leaf_name(de->d_name, &pid, &rec) || pid == getpid() || alive(pid))
			continue;
		if (populated(cg->parentfd, de->d_name)) {
			note(cg, "left stale leaf '%s' of dead recorder %d: it still has processes", de->d_name,
			     (int)pid);
			continue;
		}
		if ((e = rmdir_tree(cg->parentfd, de->d_name, 0)))
			note(cg, "cannot remove stale leaf '%s': %s", de->d_name, strerror(e));
		else
			note(cg, "removed stale leaf '%s' of dead recorder %d", de->d_name, (int)pid);
	}
	closedir(d);
}

/* How many processes the parent holds, or -1 when unreadable. */
static int procs_count(const struct pmu_cg *cg)
{
	char *s = NULL, *p, *end;
	size_t n = 0;
	int eno, count = 0;

	if (cg_read(cg->parentfd, "cgroup.procs", &s, &n, &eno))
		return -1;
	for (p = s; *p; p = end) {
		strtol(p, &end, 10);
		if (end == p)
			break;
		count++;
		while (*end == '\n')
			end++;
	}
	free(s);
	return count;
}

/* Is the recorder the only process of its cgroup (the parent)? */
static bool only_self(const struct pmu_cg *cg)
{
	char *s = NULL, *p, *end;
	size_t n = 0;
	int eno, count = 0;
	bool self = false;

	if (cg_read(cg->parentfd, "cgroup.procs", &s, &n, &eno))
		return false;
	for (p = s; *p; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		count++;
		self |= v == (long)getpid();
		while (*end == '\n')
			end++;
	}
	free(s);
	return count == 1 && self;
}

static void rec_name(const struct pmu_cg *cg, char *buf, size_t size)
{
	snprintf(buf, size, "%s.rec", cg->name);
}

/* Move the recorder into <parent>/<name>.rec, so that the parent has no
 * member process and domain controllers can be enabled in it. */
static int move_self(struct pmu_cg *cg)
{
	char rec[80], pid[24];
	int fd, e;

	rec_name(cg, rec, sizeof(rec));
	if (mkdirat(cg->parentfd, rec, 0755))
		return errno;
	fd = openat(cg->parentfd, rec, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		unlinkat(cg->parentfd, rec, AT_REMOVEDIR);
		return e;
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	e = cg_write(fd, "cgroup.procs", pid);
	close(fd);
	if (e) {
		unlinkat(cg->parentfd, rec, AT_REMOVEDIR);
		return e;
	}
	cg->moved_self = true;
	return 0;
}

/* Undo move_self: disable what was enabled, move back, remove .rec.  The
 * disabling only when the parent has no other child cgroup it would touch. */
static void restore_self(struct pmu_cg *cg)
{
	char rec[80], pid[24], buf[80];
	int fd = dup(cg->parentfd), e;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	const char *others = NULL;

	rec_name(cg, rec, sizeof(rec));
	if (!d) {
		if (fd >= 0)
			close(fd);
		note(cg, "the recorder stays in '%s': cannot list '%s'", rec, cg->parent);
		return;
	}
	while (!others && (de = readdir(d))) {
		struct stat st;

		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, rec) &&
		    !fstatat(cg->parentfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
			others = de->d_name;
	}
	/* with nothing enabled, moving back changes nothing for the others */
	if (others && cg->enabled[0]) {
		note(cg, "the recorder stays in '%s' and '%s' stays enabled: '%s' shares the parent", rec,
		     cg->enabled, others);
		closedir(d);
		return;
	}
	closedir(d);
	for (char *w = cg->enabled; *w;) {
		size_t n = strcspn(w, " ");

		snprintf(buf, sizeof(buf), "-%.*s", (int)n, w);
		if ((e = cg_write(cg->parentfd, "cgroup.subtree_control", buf))) {
			note(cg, "cannot disable %.*s again in '%s': %s; the recorder stays in '%s'", (int)n, w,
			     cg->parent, strerror(e), rec);
			return;
		}
		w += n;
		w += strspn(w, " ");
	}
	cg->enabled[0] = '\0';
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if ((e = cg_write(cg->parentfd, "cgroup.procs", pid))) {
		note(cg, "cannot move the recorder back to '%s': %s", cg->parent, strerror(e));
		return;
	}
	if (unlinkat(cg->parentfd, rec, AT_REMOVEDIR) && errno != ENOENT) {
		/* a collector started after the move is still in it: it will be stale once we are gone */
		note(cg, "cannot remove '%s': %s", rec, strerror(errno));
	}
	cg->moved_self = false;
}

/* The wanted controller w is bound to a cgroup v1 hierarchy (a v1 line of
 * /proc/self/cgroup names it; io is v1's blkio)? */
static bool v1_bound(const char *w)
{
	char *s = NULL, *line, *save = NULL;
	size_t n = 0;
	bool bound = false;
	const char *v1 = !strcmp(w, "io") ? "blkio" : w;

	if (pmu_read_file(AT_FDCWD, "/proc/self/cgroup", 65536, &s, &n))
		return false;
	for (line = strtok_r(s, "\n", &save); line && !bound; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *tok, *save2 = NULL;

		if (!c2 || c2 == c1 + 1)
			continue;
		*c2 = '\0';
		for (tok = strtok_r(c1 + 1, ",", &save2); tok; tok = strtok_r(NULL, ",", &save2))
			bound |= !strcmp(tok, v1);
	}
	free(s);
	return bound;
}

static void lack(struct pmu_cg *cg, const char *ctrl, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record that the leaf lacks controller ctrl, why, and a note saying so. */
static void lack(struct pmu_cg *cg, const char *ctrl, const char *remedy, const char *fmt, ...)
{
	va_list ap;
	int i = cg->noff;

	if (i >= (int)PMU_ARRAY_SIZE(cg->off))
		return;
	snprintf(cg->off[i].name, sizeof(cg->off[i].name), "%s", ctrl);
	va_start(ap, fmt);
	vsnprintf(cg->off[i].why, sizeof(cg->off[i].why), fmt, ap);
	va_end(ap);
	cg->off[i].remedy = remedy;
	cg->noff++;
	note(cg, "%s: %s", cg->off[i].name, cg->off[i].why);
}

/* Enable the wanted controllers in the parent where that can be done
 * without moving other processes (cgroup.h); note the rest. */
static void enable_controllers(struct pmu_cg *cg)
{
	const char *want = cg->want ? cg->want : "io memory pids";
	char avail[256], on[256];

	cg_read_small(cg->parentfd, "cgroup.controllers", avail, sizeof(avail));
	cg_read_small(cg->parentfd, "cgroup.subtree_control", on, sizeof(on));
	for (const char *w = want + strspn(want, " "); *w; w += strspn(w, " ")) {
		size_t wl = strcspn(w, " ");
		char word[16], cmd[24];
		bool alone = false;
		int e;

		snprintf(word, sizeof(word), "%.*s", (int)(wl < 15 ? wl : 15), w);
		w += wl;
		if (pmu_cgstat_has_word(on, strlen(on), word))
			continue;
		if (!pmu_cgstat_has_word(avail, strlen(avail), word)) {
			if (v1_bound(word))
				lack(cg, word, REMEDY_V1, "not available in '%s': it is bound to a cgroup v1 hierarchy",
				     cg->parent);
			else
				lack(cg, word, REMEDY_DELEGATE,
				     "not available in '%s' (cgroup.controllers '%s'): not delegated to it", cg->parent,
				     avail);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "+%s", word);
		/*
		 * Never enable a controller in a non-root parent that has member
		 * processes other than the recorder: a domain controller is
		 * refused there anyway (EBUSY), and a threaded one (pids) is
		 * accepted but turns the parent into a thread root, where no
		 * domain child may take processes: the user's cgroup would be
		 * left changed.  Alone, the recorder steps aside first.
		 */
		if (!cg->moved_self && strcmp(cg->parent, cg->mount) && !(alone = only_self(cg)) &&
		    procs_count(cg) > 0) {
			lack(cg, word, REMEDY_DELEGATE,
			     "not enabled in '%s': it has member processes besides the recorder (cgroup v2 "
			     "no-internal-process rule)", cg->parent);
			continue;
		}
		if (alone && !cg->moved_self) {
			int m = move_self(cg);

			if (m) {
				note(cg, "cannot move the recorder out of '%s': %s", cg->parent, strerror(m));
				lack(cg, word, REMEDY_DELEGATE, "not enabled in '%s': the recorder could not step aside",
				     cg->parent);
				continue;
			}
		}
		e = cg_write(cg->parentfd, "cgroup.subtree_control", cmd);
		if (e == EBUSY && !cg->moved_self && (alone = only_self(cg))) {
			int m = move_self(cg);

			if (m)
				note(cg, "cannot move the recorder out of '%s': %s", cg->parent, strerror(m));
			else
				e = cg_write(cg->parentfd, "cgroup.subtree_control", cmd);
		}
		if (e == EBUSY && !cg->moved_self)
			lack(cg, word, REMEDY_DELEGATE,
			     "cannot be enabled in '%s': it has member processes%s (cgroup v2 no-internal-process rule)",
			     cg->parent, alone ? " (the recorder could not step aside)" : " besides the recorder");
		else if (e)
			lack(cg, word, perm_errno(e) ? REMEDY_PERM : REMEDY_DELEGATE, "cannot be enabled in '%s': %s",
			     cg->parent, strerror(e));
		else {
			size_t n = strlen(cg->enabled);

			snprintf(cg->enabled + n, sizeof(cg->enabled) - n, "%s%s", n ? " " : "", word);
		}
	}
	if (cg->enabled[0])
		note(cg, "enabled '%s' in '%s/cgroup.subtree_control'%s", cg->enabled, cg->parent,
		     cg->moved_self ? ", moving the recorder into a sibling leaf until the end" : " (left enabled)");
	if (cg->moved_self && !cg->enabled[0])
		restore_self(cg);
}

__attribute__((format(printf, 5, 6)))
static int unsupported(char *why, size_t whylen, const char **remedy, const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	*remedy = hint;
	return pmu_error(PMU_ERR_UNSUPPORTED, "%s", why);
}

/* Find the recorder's cgroup directory and open it. */
static int locate(struct pmu_cg *cg, char *why, size_t whylen, const char **remedy)
{
	char cgpath[512], type[64], *s = NULL;
	size_t n = 0;
	int err;

	if ((err = pmu_read_file(AT_FDCWD, "/proc/self/cgroup", 65536, &s, &n)))
		return unsupported(why, whylen, remedy, REMEDY_NOV2, "%s", pmu_error_detail());
	err = pmu_cgstat_v2_path(s, n, cgpath, sizeof(cgpath));
	free(s);
	if (err == PMU_ERR_NOTFOUND)
		return unsupported(why, whylen, remedy, REMEDY_NOV2,
				   "no cgroup v2 hierarchy: /proc/self/cgroup has no '0::' line");
	if (err)
		return unsupported(why, whylen, remedy, REMEDY_NOV2, "/proc/self/cgroup: %s", pmu_error_detail());
	if ((err = pmu_read_file(AT_FDCWD, "/proc/self/mountinfo", 4u << 20, &s, &n)))
		return unsupported(why, whylen, remedy, REMEDY_NOV2, "%s", pmu_error_detail());
	err = pmu_cgstat_v2_dir(s, n, cgpath, cg->mount, sizeof(cg->mount), cg->parent, sizeof(cg->parent));
	free(s);
	if (err == PMU_ERR_NOTFOUND)
		return unsupported(why, whylen, remedy, REMEDY_NOV2,
				   "no cgroup2 mount reaches the recorder's cgroup '%s' (/proc/self/mountinfo)", cgpath);
	if (err)
		return unsupported(why, whylen, remedy, REMEDY_NOV2, "/proc/self/mountinfo: %s", pmu_error_detail());
	cg->parentfd = open(cg->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->parentfd < 0)
		return unsupported(why, whylen, remedy, perm_errno(errno) ? REMEDY_PERM : REMEDY_NOV2,
				   "cannot open the recorder's cgroup '%s': %s", cg->parent, strerror(errno));
	/* A process can join a threaded cgroup only as a whole threaded
	 * domain; the root has no cgroup.type. */
	cg_read_small(cg->parentfd, "cgroup.type", type, sizeof(type));
	if (!strcmp(type, "threaded") || !strcmp(type, "domain invalid"))
		return unsupported(why, whylen, remedy, REMEDY_THREADED,
				   "the recorder's cgroup '%s' is of type '%s': no process can move below it",
				   cg->parent, type);
	return 0;
}

static uint32_t random32(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	return (uint32_t)(pmu_now_mono_ns() ^ ((uint64_t)getpid() << 16));
}

static int make_leaf(struct pmu_cg *cg, char *why, size_t whylen, const char **remedy)
{
	struct stat st;
	int e = 0;

	for (int tries = 0; tries < 8; tries++) {
		snprintf(cg->name, sizeof(cg->name), "pmurec.%d.%08x", (int)getpid(), random32());
		if (!mkdirat(cg->parentfd, cg->name, 0755))
			break;
		e = errno;
		if (e != EEXIST)
			break;
	}
	if (e && perm_errno(e)) {
		if (fstat(cg->parentfd, &st))
			memset(&st, 0, sizeof(st));
		return unsupported(why, whylen, remedy, REMEDY_PERM,
				   "no permission to create a cgroup in '%s' (owner uid %u, mode %03o): %s",
				   cg->parent, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777), strerror(e));
	}
	if (e) {
		snprintf(why, whylen, "cannot create cgroup '%s/%s': %s%s", cg->parent, cg->name, strerror(e),
			 e == EAGAIN || e == ENOSPC ? " (cgroup.max.descendants or cgroup.max.depth reached)" : "");
		*remedy = REMEDY_DELEGATE;
		return pmu_error(PMU_ERR_IO, "%s", why);
	}
	cg->created = true;
	snprintf(cg->path, sizeof(cg->path), "%s/%s", cg->parent, cg->name);
	cg->dirfd = openat(cg->parentfd, cg->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dirfd < 0) {
		snprintf(why, whylen, "cannot open cgroup '%s': %s", cg->path, strerror(errno));
		*remedy = REMEDY_PERM;
		return pmu_error(PMU_ERR_IO, "%s", why);
	}
	/*
	 * Moving the command in needs write access to cgroup.procs of both the
	 * leaf and the common ancestor (the parent).  Ask now, so that a
	 * recorder that could not use the leaf says so before it forks.
	 */
	if (faccessat(cg->parentfd, "cgroup.procs", W_OK, AT_EACCESS) ||
	    faccessat(cg->dirfd, "cgroup.procs", W_OK, AT_EACCESS))
		return unsupported(why, whylen, remedy, REMEDY_PERM,
				   "no permission to move processes into '%s' (cgroup.procs of it and of '%s'): %s",
				   cg->path, cg->parent, strerror(errno));
	return 0;
}

int pmu_cg_create(struct pmu_cg *cg, char *why, size_t whylen, const char **remedy)
{
	const char *want = cg->want;
	const char *dummy;
	int err;

	if (!remedy)
		remedy = &dummy;
	*remedy = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (cg->created || cg->parentfd >= 0)
		return pmu_error(PMU_ERR_INVAL, "cgroup leaf already created");
	pmu_cg_init(cg);
	cg->want = want;
	if (!why || !whylen)
		return pmu_error(PMU_ERR_INVAL, "no room for the reason");
	err = locate(cg, why, whylen, remedy);
	if (!err)
		err = make_leaf(cg, why, whylen, remedy);
	if (err) {
		pmu_cg_destroy(cg);
		pmu_cg_init(cg);
		cg->want = want;
		return pmu_error(err, "%s", why);
	}
	clean_stale(cg);
	enable_controllers(cg);
	cg_read_small(cg->dirfd, "cgroup.controllers", cg->controllers, sizeof(cg->controllers));
	return 0;
}

/* True when the leaf's cgroup.procs lists pid: a command created in the
 * leaf (clone3 CLONE_INTO_CGROUP, run.c) needs no move. */
static bool holds(const struct pmu_cg *cg, pid_t pid)
{
	char *s = NULL;
	size_t n = 0;
	bool in = false;

	if (pmu_read_file(cg->dirfd, "cgroup.procs", 1u << 20, &s, &n))
		return false;
	for (char *p = s; p && *p && !in; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		in = strtol(p, NULL, 10) == (long)pid;
	free(s);
	return in;
}

int pmu_cg_enter(const struct pmu_cg *cg, pid_t pid)
{
	char buf[24];
	int e;

	if (cg->dirfd < 0)
		return pmu_error(PMU_ERR_INVAL, "no cgroup leaf to enter");
	/* A write to cgroup.procs takes the cgroup threadgroup rwsem for
	 * writing, an RCU grace period (7-15 ms on a small VM) even when pid
	 * is already there: look first. */
	if (holds(cg, pid))
		return 0;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	e = cg_write(cg->dirfd, "cgroup.procs", buf);
	if (!e)
		return 0;
	if (e == ESRCH)
		return pmu_error(PMU_ERR_NOTFOUND, "cannot move process %d into '%s': no such process", (int)pid,
				 cg->path);
	return pmu_error(perm_errno(e) || e == ENOENT ? PMU_ERR_UNSUPPORTED : PMU_ERR_IO,
			 "cannot move process %d into '%s': %s", (int)pid, cg->path, strerror(e));
}

/* Why file i does not exist in the leaf. */
static void explain_missing(const struct pmu_cg *cg, int i, struct pmu_cgstat *st)
{
	const char *ctrl = pmu_cgfiles[i].controller, *name = pmu_cgfiles[i].name;

	if (pmu_cgfiles[i].fmt == PMU_CGFMT_PRESSURE) {
		pmu_cgstat_set(st, PMU_CGS_UNAVAILABLE, REMEDY_PSI,
			       "'%s' does not exist: the kernel has no pressure stall information (CONFIG_PSI)", name);
		return;
	}
	if (ctrl && !pmu_cgstat_has_word(cg->controllers, strlen(cg->controllers), ctrl)) {
		for (int k = 0; k < cg->noff; k++)
			if (!strcmp(cg->off[k].name, ctrl)) {
				pmu_cgstat_set(st, PMU_CGS_UNAVAILABLE, cg->off[k].remedy,
					       "the %s controller is not enabled for the cohort's cgroup: %s", ctrl,
					       cg->off[k].why);
				return;
			}
		pmu_cgstat_set(st, PMU_CGS_UNAVAILABLE, REMEDY_DELEGATE,
			       "the %s controller is not enabled for the cohort's cgroup", ctrl);
		return;
	}
	pmu_cgstat_set(st, PMU_CGS_UNAVAILABLE, REMEDY_KERNEL, "'%s' does not exist in this kernel", name);
}

/* Read and parse dirfd/name as file i into st.  0 or PMU_ERR_NOMEM. */
static int read_stat(int dirfd, const char *name, int i, struct pmu_cgstat *st, const struct pmu_cg *cg)
{
	char *s = NULL;
	size_t n = 0;
	int eno, err;

	if (cg_read(dirfd, name, &s, &n, &eno)) {
		if (eno == ENOENT && cg)
			explain_missing(cg, i, st);
		else if (eno == ENOENT)
			pmu_cgstat_set(st, PMU_CGS_UNAVAILABLE, REMEDY_PSI,
				       "'%s' does not exist: the kernel has no pressure stall information (CONFIG_PSI)",
				       name);
		else if (eno == EOPNOTSUPP && pmu_cgfiles[i].fmt == PMU_CGFMT_PRESSURE)
			pmu_cgstat_set(st, PMU_CGS_UNAVAILABLE, REMEDY_PSI,
				       "pressure stall information is disabled (psi=0, or cgroup.pressure is 0)");
		else if (eno == ENOMEM)
			return pmu_error(PMU_ERR_NOMEM, "cannot read '%s'", name);
		else
			pmu_cgstat_set(st, PMU_CGS_FAILED, NULL, "cannot read '%s': %s", name, strerror(eno));
		return 0;
	}
	err = pmu_cgstat_parse((enum pmu_cgfile)i, s, n, st);
	free(s);
	/* CORRUPT leaves st FAILED with the reason: the snapshot goes on */
	return err == PMU_ERR_NOMEM ? err : 0;
}

int pmu_cg_snapshot(const struct pmu_cg *cg, struct pmu_cgsnap *s)
{
	int err;

	pmu_cgsnap_release(s);
	if (cg->dirfd < 0)
		return pmu_error(PMU_ERR_INVAL, "no cgroup leaf to read");
	for (int i = 0; i < PMU_CGF_COUNT_; i++)
		if ((err = read_stat(cg->dirfd, pmu_cgfiles[i].name, i, &s->f[i], cg)))
			return err;
	s->t_ns = pmu_now_mono_ns();
	return 0;
}

int pmu_sys_pressure(struct pmu_cgsnap *s)
{
	static const struct {
		enum pmu_cgfile f;
		const char *path;
	} files[] = {
		{ PMU_CGF_CPU_PRESSURE, "/proc/pressure/cpu" },
		{ PMU_CGF_IO_PRESSURE, "/proc/pressure/io" },
		{ PMU_CGF_MEMORY_PRESSURE, "/proc/pressure/memory" },
	};
	int err;

	pmu_cgsnap_release(s);
	for (size_t i = 0; i < PMU_ARRAY_SIZE(files); i++)
		if ((err = read_stat(AT_FDCWD, files[i].path, (int)files[i].f, &s->f[files[i].f], NULL)))
			return err;
	s->t_ns = pmu_now_mono_ns();
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* SIGKILL every process of the cgroup at dirfd and below: how many. */
static int kill_procs(int dirfd, int depth)
{
	char *s = NULL, *p, *end;
	size_t n = 0;
	int eno, count = 0;
	DIR *d;
	struct dirent *de;
	int fd;

	if (depth > CG_MAX_DEPTH)
		return 0;
	if (!cg_read(dirfd, "cgroup.procs", &s, &n, &eno)) {
		for (p = s; *p; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			if (v > 0 && !kill((pid_t)v, SIGKILL))
				count++;
			while (*end == '\n')
				end++;
		}
		free(s);
	}
	fd = dup(dirfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return count;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub >= 0) {
			count += kill_procs(sub, depth + 1);
			close(sub);
		}
	}
	closedir(d);
	return count;
}

int pmu_cg_destroy(struct pmu_cg *cg)
{
	uint64_t deadline = pmu_now_mono_ns() + (uint64_t)CG_WAIT_MS * 1000000u;
	int err = 0, e = 0;

	if (cg->created) {
		/*
		 * cgroup.kill (Linux 5.14) kills the whole subtree and races
		 * with nothing: a fork in flight is killed too.  Without it,
		 * SIGKILL what cgroup.procs lists until it lists nothing.
		 */
		if (cg->dirfd >= 0 && cg_write(cg->dirfd, "cgroup.kill", "1"))
			while (kill_procs(cg->dirfd, 0) && pmu_now_mono_ns() < deadline)
				sleep_ms(10);
		while (populated(cg->parentfd, cg->name) && pmu_now_mono_ns() < deadline)
			sleep_ms(10);
		/* rmdir answers EBUSY for a moment after the last task left */
		while ((e = rmdir_tree(cg->parentfd, cg->name, 0)) == EBUSY && pmu_now_mono_ns() < deadline)
			sleep_ms(10);
		if (e) {
			err = pmu_error(PMU_ERR_IO, "cannot remove cgroup '%s': %s%s", cg->path, strerror(e),
					populated(cg->parentfd, cg->name) ? " (still populated after 2 s)" : "");
		} else {
			cg->created = false;
		}
	}
	if (!cg->created && cg->dirfd >= 0) {
		close(cg->dirfd);
		cg->dirfd = -1;
	}
	if (!cg->created && cg->moved_self)
		restore_self(cg);
	if (!cg->created && !cg->moved_self && cg->parentfd >= 0) {
		close(cg->parentfd);
		cg->parentfd = -1;
	}
	return err;
}

/* ---- the cohort's cgroup (backend.h) ----------------------------------- */

int pmu_cohort_cgroup_new(struct pmu_cohort_cgroup **out, char *why, size_t n, const char **remedy)
{
	struct pmu_cohort_cgroup *g = calloc(1, sizeof(*g));
	int err;

	*out = NULL;
	if (!g)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	pmu_cg_init(&g->cg);
	if ((err = pmu_cg_create(&g->cg, why, n, remedy))) {
		pmu_cg_destroy(&g->cg);
		free(g);
		return err;
	}
	*out = g;
	return 0;
}

int pmu_cohort_cgroup_enter(struct pmu_cohort_cgroup *g, pid_t pid, char *why, size_t n)
{
	int err = pmu_cg_enter(&g->cg, pid);

	if (err)
		snprintf(why, n, "cannot move the command into %.200s: %.160s", g->cg.path, pmu_error_detail());
	return err;
}

const char *pmu_cohort_cgroup_path(const struct pmu_cohort_cgroup *g)
{
	return g ? g->cg.path : NULL;
}

uint64_t pmu_cohort_cgroup_id(const struct pmu_cohort_cgroup *g)
{
	struct stat st;

	return g && g->cg.dirfd >= 0 && fstat(g->cg.dirfd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

int pmu_cohort_cgroup_end(struct pmu_cohort_cgroup *g)
{
	int err;

	if (!g)
		return 0;
	err = pmu_cg_destroy(&g->cg);
	free(g);
	return err;
}
