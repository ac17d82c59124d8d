/*
 * Retained binaries (retain.h): the objects a run sampled, their separate
 * debug files, a dwz alt file, the vDSO and JIT maps, copied into the
 * bundle under the build-id layout debuggers and debuginfod use.
 *
 * Every file is opened once, checked on that descriptor (fstat: a regular
 * file under the size limit; libelf: its GNU build-id note equals the one
 * the run saw) and copied from the same descriptor, so what is checked is
 * what is copied (no second lookup by path).  While copying, the bytes at
 * the note's offset are compared with the build-id again: a file rewritten
 * in place between the check and the copy is caught.  Files are streamed
 * through one fixed buffer; nothing is loaded whole but the vDSO (a few
 * pages).
 *
 * Where a file is read:
 *   - pid given and alive: PATH inside the process's root, resolved by
 *     openat2(RESOLVE_IN_ROOT) on /proc/PID/root, so an absolute symlink in
 *     a container's tree stays in that tree instead of escaping to ours;
 *     then /proc/PID/map_files/<range> (the very inode it mapped; root
 *     only), which is also the one way to a "(deleted)" file;
 *   - pid 0 or gone: PATH as it is here (a "(deleted)" file is then lost).
 * Debug files are looked up under the same root: DEBUG_ROOT/.build-id/xx/
 * yyyy.debug, then the object's .gnu_debuglink name (its CRC-32 checked)
 * next to the object, in its .debug/ directory and DEBUG_ROOT/<its dir>/.
 * DEBUG_ROOT is /usr/lib/debug, or $PMU_DEBUG_ROOT (tests).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <linux/openat2.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <jansson.h>

#include "collector.h"
#include "error.h"
#include "spec_json.h"
#include "linux/provenance.h"
#include "linux/retain.h"

/* The largest file retained: a bundle is carried around, and a multi-GiB
 * object (a debug file of a browser) would dwarf every stream in it. */
#define RETAIN_MAX_BYTES (2ull << 30)
#define RETAIN_MAX_TEXT  "2 GiB"
/* The vDSO is a few pages; more than this is not a vDSO. */
#define VDSO_MAX_BYTES   (1u << 20)
#define COPY_BUF         (64u * 1024)
#define DEBUG_ROOT       "/usr/lib/debug"
#define DELETED          " (deleted)"
#define BID_HEX          (2 * 64 + 1)

struct pmu_retain {
	struct pmu_out *out;
	/* the bundle files this retainer wrote or found written (rel paths):
	 * one copy and one record per bundle */
	char **done;
	size_t ndone, cap;
	uint32_t crc_table[256];
	unsigned char buf[COPY_BUF];
};

/* A file opened for retention: the descriptor, what it is called on the
 * recording host (the path in the process's own tree), its size. */
struct src {
	int fd;
	char shown[PATH_MAX + 64];
	uint64_t size;
	dev_t dev;
	ino_t ino;
};

struct pmu_retain *pmu_retain_new(struct pmu_out *out)
{
	struct pmu_retain *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->out = out;
	/* CRC-32 (ISO-HDLC, reflected 0xedb88320), the one .gnu_debuglink
	 * holds (binutils' bfd_calc_gnu_debuglink_crc32) */
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		r->crc_table[i] = c;
	}
	elf_version(EV_CURRENT);
	return r;
}

void pmu_retain_free(struct pmu_retain *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ndone; i++)
		free(r->done[i]);
	free(r->done);
	free(r);
}

static bool is_done(const struct pmu_retain *r, const char *rel)
{
	for (size_t i = 0; i < r->ndone; i++)
		if (!strcmp(r->done[i], rel))
			return true;
	return false;
}

static int mark_done(struct pmu_retain *r, const char *rel)
{
	if (r->ndone == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 32;
		char **p = realloc(r->done, cap * sizeof(*p));

		if (!p)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		r->done = p;
		r->cap = cap;
	}
	if (!(r->done[r->ndone] = strdup(rel)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	r->ndone++;
	return 0;
}

static int put_retained(struct pmu_retain *r, struct pmu_stream *maps, const char *bid, const char *kind,
			const char *path, const char *file, uint64_t size)
{
	json_t *o = json_pack("{s:s}", "type", "retained");

	if (!o)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (bid)
		json_object_set_new(o, "build_id", json_string(bid));
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "path", pmu_json_text(path));
	json_object_set_new(o, "file", json_string(file));
	json_object_set_new(o, "size_bytes", json_integer((json_int_t)size));
	return r->out->put(maps, o);
}

static int put_unretained(struct pmu_retain *r, struct pmu_stream *maps, const char *bid, const char *path,
			  const char *why)
{
	json_t *o = json_pack("{s:s}", "type", "unretained");

	if (!o)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (bid)
		json_object_set_new(o, "build_id", json_string(bid));
	json_object_set_new(o, "path", pmu_json_text(path));
	json_object_set_new(o, "reason", pmu_json_text(why));
	return r->out->put(maps, o);
}

/* "build-id/xx/yyyy" + suffix for the hex build-id bid. */
static void bid_rel(char *rel, size_t n, const char *bid, const char *suffix)
{
	snprintf(rel, n, "build-id/%.2s/%s%s", bid, bid + 2, suffix);
}

static bool valid_bid(const char *bid)
{
	size_t n = bid ? strlen(bid) : 0;

	if (n < 4 || n > 128 || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((bid[i] >= '0' && bid[i] <= '9') || (bid[i] >= 'a' && bid[i] <= 'f')))
			return false;
	return true;
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* ---- finding and opening a file ------------------------------------------ */

/* path resolved inside the tree rootfd is the root of: symlinks (absolute
 * ones included) stay inside it, /proc magic links are refused. */
static int open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(O_RDONLY | O_CLOEXEC | O_NOCTTY | flags),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

/* The root of pid's tree (O_PATH), or -1: pid 0, gone, or not ours to see. */
static int proc_root(pid_t pid)
{
	char p[64];

	if (pid <= 0)
		return -1;
	snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
	return open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Open path (absolute, as the process names it) under rootfd (-1: here).
 * A kernel without openat2 (before 5.6) can still read a process whose
 * root is ours; another root is then refused rather than read through a
 * symlink that may leave it. */
static int open_under(int rootfd, const char *path, char *why, size_t n)
{
	int fd;

	if (rootfd < 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			snprintf(why, n, "cannot open '%s': %s", path, strerror(errno));
		return fd;
	}
	fd = open_in_root(rootfd, path, 0);
	if (fd < 0 && errno == ENOSYS) {
		struct stat a, b;

		if (fstat(rootfd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return open_under(-1, path, why, n);
		snprintf(why, n, "cannot open '%s' in the process's root: openat2 (Linux 5.6) is missing, and its root is not the recorder's", path);
		errno = ENOSYS;
		return -1;
	}
	if (fd < 0)
		snprintf(why, n, "cannot open '%s': %s", path, strerror(errno));
	return fd;
}

/* pid's mapping of path (as /proc/PID/maps writes it, " (deleted)"
 * included) through /proc/PID/map_files: the inode it mapped, whatever
 * became of the name.  Reads maps line by line. */
static int open_map_file(pid_t pid, const char *path, char *why, size_t n)
{
	char p[96], range[64] = "";
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(p, "re"))) {
		snprintf(why, n, "cannot read '%s': %s", p, strerror(errno));
		return -1;
	}
	while (!range[0] && (len = getline(&line, &cap, f)) > 0) {
		unsigned long long lo, hi;
		int at = -1;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &at) == 2 && at > 0 && at <= len &&
		    !strcmp(line + at, path))
			snprintf(range, sizeof(range), "%llx-%llx", lo, hi);
	}
	free(line);
	fclose(f);
	if (!range[0]) {
		snprintf(why, n, "'%s' is no longer mapped by process %d", path, (int)pid);
		errno = ENOENT;
		return -1;
	}
	snprintf(p, sizeof(p), "/proc/%d/map_files/%s", (int)pid, range);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		snprintf(why, n, "cannot open '%s': %s%s", p, strerror(errno),
			 errno == EPERM || errno == EACCES ? " (map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE: record as root)" : "");
	return fd;
}

/* fstat the open fd into s: a regular file under the limit, else -1 with why. */
static int src_stat(struct src *s, char *why, size_t n)
{
	struct stat st;

	if (fstat(s->fd, &st) < 0) {
		snprintf(why, n, "cannot stat '%s': %s", s->shown, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, n, "'%s' is not a regular file", s->shown);
		return -1;
	}
	if ((uint64_t)st.st_size > RETAIN_MAX_BYTES) {
		snprintf(why, n, "'%s' is %llu bytes, over the %s limit on a retained file", s->shown,
			 (unsigned long long)st.st_size, RETAIN_MAX_TEXT);
		return -1;
	}
	s->size = (uint64_t)st.st_size;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return 0;
}

static void src_close(struct src *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* The GNU build-id of the open fd and the offset of its bytes. */
static int fd_build_id(int fd, char *hex, size_t n, uint64_t *off, char *why, size_t whylen, const char *shown)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int rc = -1;

	if (!e)
		snprintf(why, whylen, "cannot read '%s' as ELF: %s", shown, elf_errmsg(-1));
	else if (elf_kind(e) != ELF_K_ELF)
		snprintf(why, whylen, "'%s' is not an ELF file", shown);
	else if (pmu_elf_gnu_build_id(e, hex, n, off))
		snprintf(why, whylen, "'%s' has no GNU build-id note", shown);
	else
		rc = 0;
	if (e)
		elf_end(e);
	return rc;
}

int pmu_elf_file_build_id(const char *path, char *hex, size_t n, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), rc;

	elf_version(EV_CURRENT);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	rc = fd_build_id(fd, hex, n, NULL, why, whylen, path);
	close(fd);
	return rc;
}

/* Open an object of pid (0: here) as retain.h says, and check it: a
 * regular file under the limit whose build-id is bid.  0 with s open and
 * *note_off where the build-id's bytes lie, or -1 with why: of the ways
 * tried, the most telling reason (a file found but changed or too big says
 * more than one that could not be opened). */
static int open_object(pid_t pid, const char *path, const char *bid, struct src *s, uint64_t *note_off,
		       char *why, size_t n)
{
	size_t plen = strlen(path), dl = strlen(DELETED);
	bool deleted = plen > dl && !strcmp(path + plen - dl, DELETED);
	int rootfd = proc_root(pid), best = 0;
	char w[PATH_MAX + 256];

	snprintf(s->shown, sizeof(s->shown), "%s", path);
	for (int way = 0; way < 2; way++) {
		char hex[BID_HEX];
		int level = 1;

		/* way 0: by name (in pid's root, or here); way 1: map_files */
		if ((way == 0 && deleted) || (way == 1 && rootfd < 0))
			continue;
		s->fd = way == 0 ? open_under(rootfd, path, w, sizeof(w)) : open_map_file(pid, path, w, sizeof(w));
		if (s->fd >= 0) {
			level = 2;
			if (src_stat(s, w, sizeof(w)) == 0 &&
			    fd_build_id(s->fd, hex, sizeof(hex), note_off, w, sizeof(w), path) == 0) {
				if (!strcmp(hex, bid)) {
					if (rootfd >= 0)
						close(rootfd);
					return 0;
				}
				snprintf(w, sizeof(w), "build-id changed since the run: %s now %s", bid, hex);
			}
			src_close(s);
		}
		if (level > best) {
			snprintf(why, n, "%s", w);
			best = level;
		}
	}
	if (rootfd >= 0)
		close(rootfd);
	if (!best)
		snprintf(why, n, "'%s' was deleted and process %d is gone (a deleted file is read through /proc/PID/map_files while its process runs)",
			 path, (int)pid);
	return -1;
}

/* ---- copying ------------------------------------------------------------- */

/*
 * Copy s (from offset 0, s->size bytes) into the bundle as rel.  bid is
 * compared with the bytes at note_off as they stream past (NULL or
 * note_off UINT64_MAX: no build-id to check).
 * *exists: another repetition already wrote rel (nothing written).  A file
 * that changes or fails while it is copied leaves a wrong copy in the bundle
 * behind: that is an error, the bundle is not written.
 */
static int copy_into(struct pmu_retain *r, struct src *s, const char *rel, bool shared, const char *bid,
		     uint64_t note_off, bool *exists)
{
	struct pmu_stream *bs = NULL;
	size_t blen = bid && note_off != UINT64_MAX ? strlen(bid) / 2 : 0;
	uint64_t at = 0;
	int err;

	*exists = false;
	err = r->out->blob_open(r->out, rel, shared, &bs);
	if (err) {
		if (bs)
			r->out->close(bs);
		if (err == PMU_ERR_EXISTS) {
			*exists = true;
			return 0;
		}
		return err;
	}
	while (!err && at < s->size) {
		size_t want = s->size - at < COPY_BUF ? (size_t)(s->size - at) : COPY_BUF;
		ssize_t got = pread(s->fd, r->buf, want, (off_t)at);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = pmu_error(PMU_ERR_IO, "'%s' %s while it was copied into the bundle as '%s'", s->shown,
					got < 0 ? strerror(errno) : "shrank", rel);
			break;
		}
		/* the build-id's bytes, where they pass in this block */
		for (size_t i = 0; i < blen; i++) {
			uint64_t p = note_off + i;

			if (p >= at && p < at + (uint64_t)got &&
			    r->buf[p - at] != (unsigned char)(hexval(bid[2 * i]) << 4 | hexval(bid[2 * i + 1]))) {
				err = pmu_error(PMU_ERR_IO, "'%s' was rewritten while it was copied into the bundle as '%s' (its build-id is no longer %s)",
						s->shown, rel, bid);
				break;
			}
		}
		if (!err)
			err = r->out->blob_write(bs, r->buf, (size_t)got);
		at += (uint64_t)got;
	}
	{
		int e2 = r->out->close(bs);

		err = err ? err : e2;
	}
	return err;
}

/* Copy s as rel and write its retained record (or nothing when another
 * repetition has it). */
static int retain_src(struct pmu_retain *r, struct pmu_stream *maps, struct src *s, const char *rel,
		      const char *bid, uint64_t note_off, const char *kind, bool *exists)
{
	int err = copy_into(r, s, rel, true, bid, note_off, exists);

	if (!err)
		err = mark_done(r, rel);
	if (!err && !*exists)
		err = put_retained(r, maps, bid, kind, s->shown, rel, s->size);
	return err;
}

/* ---- debug files ----------------------------------------------------------- */

static const char *debug_root(void)
{
	const char *e = getenv("PMU_DEBUG_ROOT");

	return e && *e == '/' ? e : DEBUG_ROOT;
}

static uint32_t crc_fd(struct pmu_retain *r, int fd, uint64_t size, bool *ok)
{
	uint32_t c = 0xffffffffu;
	uint64_t at = 0;

	*ok = true;
	while (at < size) {
		size_t want = size - at < COPY_BUF ? (size_t)(size - at) : COPY_BUF;
		ssize_t got = pread(fd, r->buf, want, (off_t)at);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			*ok = false;
			break;
		}
		for (ssize_t i = 0; i < got; i++)
			c = r->crc_table[(c ^ r->buf[i]) & 0xff] ^ (c >> 8);
		at += (uint64_t)got;
	}
	return c ^ 0xffffffffu;
}

/* A candidate debug file at path (in pid's root): opened and checked.
 * want_bid: the build-id its note must have; crc: the debuglink's CRC-32
 * it must have (NULL: none).  A debug file without a build-id note (an old
 * toolchain's) is passed over: the bundle files a copy by its build-id, and
 * the validator (RETAINED) checks the copy's note.  0 with s open and
 * *note_off where its build-id lies. */
static int open_debug(struct pmu_retain *r, int rootfd, const char *path, const char *want_bid,
		      const uint32_t *crc, const struct src *obj, struct src *s, uint64_t *note_off)
{
	char why[PATH_MAX + 256], hex[BID_HEX];
	bool ok;

	s->fd = open_under(rootfd, path, why, sizeof(why));
	snprintf(s->shown, sizeof(s->shown), "%s", path);
	if (s->fd < 0)
		return -1;
	if (src_stat(s, why, sizeof(why)) || (obj && s->dev == obj->dev && s->ino == obj->ino))
		goto no;
	if (fd_build_id(s->fd, hex, sizeof(hex), note_off, why, sizeof(why), path) || strcmp(hex, want_bid))
		goto no;
	if (crc && (crc_fd(r, s->fd, s->size, &ok) != *crc || !ok))
		goto no;
	return 0;
no:
	src_close(s);
	return -1;
}

/* The section called name in e, as raw bytes, or NULL. */
static Elf_Data *section_named(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (nm = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(nm, name))
			return elf_rawdata(scn, NULL);
	}
	return NULL;
}

/* .gnu_debuglink of fd: the file name (NUL-terminated inside the section,
 * no '/') and its CRC-32 in the object's byte order.  0 or -1. */
static int debuglink(int fd, char *name, size_t n, uint32_t *crc)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Data *d = e ? section_named(e, ".gnu_debuglink") : NULL;
	int rc = -1;

	if (d && d->d_buf && d->d_size >= 8) {
		const unsigned char *p = d->d_buf;
		size_t len = strnlen((const char *)p, d->d_size), at = (len + 4) & ~(size_t)3;
		GElf_Ehdr eh;

		if (len && len < n && at + 4 <= d->d_size && !memchr(p, '/', len) && gelf_getehdr(e, &eh)) {
			memcpy(name, p, len);
			name[len] = '\0';
			*crc = eh.e_ident[EI_DATA] == ELFDATA2MSB
				       ? (uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 | (uint32_t)p[at + 2] << 8 | p[at + 3]
				       : (uint32_t)p[at + 3] << 24 | (uint32_t)p[at + 2] << 16 | (uint32_t)p[at + 1] << 8 | p[at];
			rc = 0;
		}
	}
	if (e)
		elf_end(e);
	return rc;
}

/* .gnu_debugaltlink of fd (dwz): the alt file's name and its build-id. */
static int debugaltlink(int fd, char *name, size_t n, char *hex, size_t hn)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Data *d = e ? section_named(e, ".gnu_debugaltlink") : NULL;
	int rc = -1;

	if (d && d->d_buf) {
		const unsigned char *p = d->d_buf;
		size_t len = strnlen((const char *)p, d->d_size), idlen = len < d->d_size ? d->d_size - len - 1 : 0;

		if (len && len < n && idlen >= 2 && idlen <= 64 && 2 * idlen < hn) {
			memcpy(name, p, len);
			name[len] = '\0';
			for (size_t i = 0; i < idlen; i++)
				snprintf(hex + 2 * i, 3, "%02x", p[len + 1 + i]);
			rc = 0;
		}
	}
	if (e)
		elf_end(e);
	return rc;
}

/* The directory part of path ("/usr/bin/x (deleted)" -> "/usr/bin"). */
static void dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	snprintf(dir, n, "%.*s", (int)len, path);
}

/* The dwz alt file named in fd (the debug file, or the object itself),
 * kept by its own build-id as kind debug-alt. */
static int retain_alt(struct pmu_retain *r, struct pmu_stream *maps, int rootfd, const struct src *from)
{
	char name[PATH_MAX], hex[BID_HEX], rel[200], p[2 * PATH_MAX + 64], dir[PATH_MAX];
	struct src s = { .fd = -1 };
	uint64_t off;
	bool exists;
	int err;

	if (debugaltlink(from->fd, name, sizeof(name), hex, sizeof(hex)))
		return 0;
	bid_rel(rel, sizeof(rel), hex, ".debug");
	if (is_done(r, rel))
		return 0;
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", debug_root(), hex, hex + 2);
	if (open_debug(r, rootfd, p, hex, NULL, NULL, &s, &off)) {
		if (name[0] == '/') {
			snprintf(p, sizeof(p), "%s", name);
		} else {
			dir_of(from->shown, dir, sizeof(dir));
			snprintf(p, sizeof(p), "%s/%s", dir, name);
		}
		if (open_debug(r, rootfd, p, hex, NULL, NULL, &s, &off)) {
			char why[3 * PATH_MAX];

			if (snprintf(why, sizeof(why), "the dwz alt file of '%s' (build-id %s) was not found: looked for '%s/.build-id/%.2s/%s.debug' and '%s'",
				     from->shown, hex, debug_root(), hex, hex + 2, p) >= (int)sizeof(why))
				snprintf(why, sizeof(why), "the dwz alt file of '%s' (build-id %s) was not found", from->shown, hex);
			err = mark_done(r, rel);
			return err ? err : put_unretained(r, maps, hex, name, why);
		}
	}
	err = retain_src(r, maps, &s, rel, hex, off, "debug-alt", &exists);
	src_close(&s);
	return err;
}

/* The separate debug file of the object obj (build-id bid), and the dwz
 * alt file it (or the object) names. */
static int retain_debug(struct pmu_retain *r, struct pmu_stream *maps, pid_t pid, const char *path,
			const char *bid, const struct src *obj)
{
	char rel[200], p[2 * PATH_MAX + 64], dir[PATH_MAX], name[NAME_MAX + 1];
	struct src s = { .fd = -1 };
	int rootfd = proc_root(pid), err = 0;
	uint64_t off = UINT64_MAX;
	uint32_t crc;
	bool found = false, exists = false;

	bid_rel(rel, sizeof(rel), bid, ".debug");
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", debug_root(), bid, bid + 2);
	found = !open_debug(r, rootfd, p, bid, NULL, obj, &s, &off);
	if (!found && obj && !debuglink(obj->fd, name, sizeof(name), &crc)) {
		/* next to it, in its .debug/, under the debug root */
		const char *const where[][2] = { { "", "/" }, { "", "/.debug/" }, { debug_root(), "/" } };

		dir_of(path, dir, sizeof(dir));
		for (size_t i = 0; !found && i < sizeof(where) / sizeof(where[0]); i++)
			found = snprintf(p, sizeof(p), "%s%s%s%s", where[i][0], dir, where[i][1], name) < (int)sizeof(p) &&
				!open_debug(r, rootfd, p, bid, &crc, obj, &s, &off);
	}
	if (found && !is_done(r, rel)) {
		err = retain_src(r, maps, &s, rel, bid, off, "debug", &exists);
	}
	/* dwz: the alt file the debug file names, else the object's own */
	if (!err && !exists && (found || obj))
		err = retain_alt(r, maps, rootfd, found ? &s : obj);
	src_close(&s);
	if (rootfd >= 0)
		close(rootfd);
	return err;
}

/* ---- the vDSO ------------------------------------------------------------ */

/* The recorder's own vDSO image: its address and the extent of the ELF
 * file it is (program and section headers), within the [vdso] mapping. */
static const unsigned char *vdso_image(size_t *size, char *why, size_t n)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	unsigned long long lo = 0, hi = 0;
	size_t end, maplen = VDSO_MAX_BYTES;
	char line[256];
	FILE *f;

	if (!base) {
		snprintf(why, n, "the recorder has no vDSO (getauxval(AT_SYSINFO_EHDR) is 0)");
		return NULL;
	}
	/* the mapping bounds every read of the image below */
	if ((f = fopen("/proc/self/maps", "re"))) {
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
				break;
		fclose(f);
	}
	if (lo == (uintptr_t)base && hi > lo && hi - lo < maplen)
		maplen = (size_t)(hi - lo);
	if (maplen < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phoff > maplen || (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) > maplen - eh->e_phoff) {
		snprintf(why, n, "the recorder's vDSO at %p is not an ELF image it can read", (const void *)base);
		return NULL;
	}
	end = eh->e_phoff + (size_t)eh->e_phnum * sizeof(ElfW(Phdr));
	for (int i = 0; i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	if (eh->e_shoff && eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > end)
		end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (end > maplen) {
		snprintf(why, n, "the recorder's vDSO claims %zu bytes, more than its %zu byte mapping", end, maplen);
		return NULL;
	}
	*size = end;
	return base;
}

static int retain_vdso(struct pmu_retain *r, struct pmu_stream *maps, const char *bid)
{
	char why[512], hex[BID_HEX], rel[200];
	const unsigned char *img;
	struct pmu_stream *bs = NULL;
	unsigned char *copy;
	size_t size = 0;
	uint64_t off;
	Elf *e;
	int err, rc;

	bid_rel(rel, sizeof(rel), bid, "");
	if (is_done(r, rel))
		return 0;
	if (!(img = vdso_image(&size, why, sizeof(why))))
		return put_unretained(r, maps, bid, "[vdso]", why);
	/* libelf reads a private copy: the vDSO's pages are not writable */
	if (!(copy = malloc(size)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	memcpy(copy, img, size);
	e = elf_memory((char *)copy, size);
	rc = e ? pmu_elf_gnu_build_id(e, hex, sizeof(hex), &off) : -1;
	if (e)
		elf_end(e);
	if (rc || strcmp(hex, bid)) {
		if (rc)
			snprintf(why, sizeof(why), "the recorder's vDSO has no GNU build-id note");
		else
			snprintf(why, sizeof(why), "the recorder's vDSO is not the one the run saw: build-id %s, the run saw %s (a 32-bit process's vDSO is another image)",
				 hex, bid);
		free(copy);
		return put_unretained(r, maps, bid, "[vdso]", why);
	}
	err = r->out->blob_open(r->out, rel, true, &bs);
	if (!err)
		err = r->out->blob_write(bs, copy, size);
	if (bs) {
		int e2 = r->out->close(bs);

		err = err ? err : e2;
	}
	free(copy);
	if (err == PMU_ERR_EXISTS)
		return mark_done(r, rel);
	if (!err)
		err = mark_done(r, rel);
	if (!err)
		err = put_retained(r, maps, bid, "vdso", "[vdso]", rel, size);
	return err;
}

/* ---- the API --------------------------------------------------------------- */

int pmu_retain_object(struct pmu_retain *r, struct pmu_stream *maps, pid_t pid, const char *path,
		      const char *build_id)
{
	char why[2 * PATH_MAX + 512], rel[200];
	struct src s = { .fd = -1 };
	size_t plen = strlen(path);
	bool exists = false;
	uint64_t off = 0;
	int err;

	if (!build_id)
		return put_unretained(r, maps, NULL, path,
				      "the run recorded no build-id for it: a retained file is named and checked by its build-id");
	if (!valid_bid(build_id)) {
		snprintf(why, sizeof(why), "the build-id the run recorded ('%.140s') is not lowercase hex", build_id);
		return put_unretained(r, maps, NULL, path, why);
	}
	if (!strcmp(path, "[vdso]"))
		return retain_vdso(r, maps, build_id);
	bid_rel(rel, sizeof(rel), build_id, "");
	if (is_done(r, rel))
		return 0;
	/* "[heap]", "//anon" (a huge page), "memfd:x" are no file to open by
	 * name; a deleted one ("memfd:x (deleted)" too) is, by map_files */
	if ((path[0] != '/' || path[1] == '/') &&
	    !(plen > strlen(DELETED) && !strcmp(path + plen - strlen(DELETED), DELETED))) {
		snprintf(why, sizeof(why), "'%s' is not a file", path);
		return put_unretained(r, maps, build_id, path, why);
	}
	if (open_object(pid, path, build_id, &s, &off, why, sizeof(why)))
		return put_unretained(r, maps, build_id, path, why);
	err = retain_src(r, maps, &s, rel, build_id, off, "binary", &exists);
	/* another repetition has it, and its debug files with it */
	if (!err && !exists)
		err = retain_debug(r, maps, pid, path, build_id, &s);
	src_close(&s);
	return err;
}

int pmu_retain_jit_map(struct pmu_retain *r, struct pmu_stream *maps, const char *collector, pid_t pid)
{
	char path[64], rel[256], why[PATH_MAX + 256], proc[64];
	struct src s = { .fd = -1 };
	int rootfd = proc_root(pid), err;
	struct stat ps;
	uid_t owner;
	bool exists;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	snprintf(rel, sizeof(rel), "collectors/%s/perf-%d.map", collector, (int)pid);
	snprintf(s.shown, sizeof(s.shown), "%s", path);
	/* a symlink planted under that name in /tmp is not followed */
	s.fd = rootfd >= 0 ? open_in_root(rootfd, path, O_NOFOLLOW) : -1;
	if (rootfd < 0 || (s.fd < 0 && errno == ENOSYS))
		s.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	/* the process's owner, while it runs; else the recorder's */
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	owner = stat(proc, &ps) == 0 ? ps.st_uid : geteuid();
	if (rootfd >= 0)
		close(rootfd);
	if (s.fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, sizeof(why), "cannot open '%s': %s", path, strerror(errno));
		return put_unretained(r, maps, NULL, path, why);
	}
	if (src_stat(&s, why, sizeof(why)) == 0) {
		struct stat st;

		/* /tmp is everyone's: a map another user left under this
		 * name would put their names on the process's code (perf
		 * refuses it too) */
		if (fstat(s.fd, &st) == 0 && st.st_uid != 0 && st.st_uid != owner)
			snprintf(why, sizeof(why), "'%s' belongs to uid %u, neither the process's (%u) nor root", path,
				 (unsigned)st.st_uid, (unsigned)owner);
		else
			why[0] = '\0';
	}
	if (why[0]) {
		src_close(&s);
		return put_unretained(r, maps, NULL, path, why);
	}
	err = copy_into(r, &s, rel, false, NULL, UINT64_MAX, &exists);
	if (!err && !exists)
		err = put_retained(r, maps, NULL, "jit-map", path, rel, s.size);
	src_close(&s);
	return err;
}
