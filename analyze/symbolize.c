/*
 * Symbolization from the bundle alone (symbolize.h; bundle-spec section 22).
 *
 * The maps stream of the repetition is read once (maps are few); each
 * mapped object is resolved by its build-id, once, into one offline Dwfl
 * that holds that object alone at its link-time addresses (bias 0), so an
 * address is looked up at its ELF address: its file offset in the map
 * (addr - start + pgoff) turned into a p_vaddr through the PT_LOAD program
 * header that holds that offset.  Resolved addresses are cached by (object,
 * ELF address, return address or not): memory grows with the distinct
 * addresses, never with the samples.
 *
 * Unwinding (call_graph dwarf) keeps one more Dwfl per incarnation, with
 * its objects reported at their run-time bias and attached to our own
 * thread callbacks: registers from the sample, memory from the stack copy
 * and, below or above it, from the mapped files.  The Dwfl is attached
 * once; each sample only changes what the callbacks read (libdwfl builds a
 * fresh thread state on every dwfl_getthread_frames()), so the CFI each
 * module parsed is kept between samples.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "error.h"
#include "jsonl.h"
#include "symbolize.h"

#define WHY_STALE "stale binary (build-id mismatch)"
#define WHY_NOKSYM "[kernel] (kallsyms not recorded)"

struct sym_seg {               /* one PT_LOAD: file offsets to p_vaddr */
	uint64_t off, filesz, vaddr, memsz, align;
	bool x;                    /* PF_X */
};

struct sym_obj {
	const char *build_id;      /* interned, or NULL (then keyed by path) */
	const char *path;          /* as recorded */
	const char *nobid_why;     /* the map's build_id_reason */
	const char *unret_why;     /* an unretained record's reason */
	bool tried;
	enum pmu_frame_status st;  /* OK once a file was found */
	const char *why;
	char *main_path;           /* the ELF file used (bundle or host) */
	char *debug_path;          /* its separate debug file, or NULL */
	Dwfl *dwfl;                /* this object alone, at bias 0 */
	Dwfl_Module *mod;
	struct sym_seg *seg;
	size_t nseg;
	int fd;                    /* main_path open, for the unwinder's reads */
	bool main_is_debug;        /* main_path is a debug file: its bytes are not the code's */
	struct pmu_sym *s;
	uint16_t machine;
};

struct sym_map {
	uint64_t t, start, end, pgoff;
	const char *path;
	struct sym_obj *obj;
	bool procmaps;
};

struct sym_unw;

struct sym_jit {               /* one line of a retained /tmp/perf-PID.map */
	uint64_t start, size;
	const char *name;
};

struct sym_jitmap {
	int pid;
	const char *path;          /* where it was on the recording host */
	struct sym_jit *sym;       /* sorted by start */
	size_t n;
};

struct sym_inc {
	const char *id;            /* interned */
	int pid;
	const struct sym_jitmap *jit;
	struct sym_map *maps;      /* by t_ns, stably (add_map) */
	size_t nmaps, capmaps;
	struct sym_unw *unw;
	uint64_t unw_used;         /* when unw was last used (s->unw_clock) */
	bool unw_failed;
	char unw_why[160];
};

struct sym_ksym {
	uint64_t addr;
	const char *name;
};

struct sym_cent {              /* address cache entry */
	const struct sym_obj *obj; /* NULL: empty slot */
	uint64_t rel;
	bool ra;
	uint32_t first, n;         /* frames[first..first+n) */
};

struct sym_str {               /* interned string */
	struct sym_str *next;
	size_t len;
	/* what the string names, so that looking it up is the interning's
	 * hash: the incarnation (index + 1), the object by build-id or, without
	 * one, by path.  Cohorts have thousands of incarnations. */
	size_t inc;
	struct sym_obj *obj_bid, *obj_path;
	char s[];
};

static struct sym_str *str_node(const char *interned)
{
	return (struct sym_str *)(void *)(interned - offsetof(struct sym_str, s));
}

struct pmu_sym {
	const struct pmu_bundle *b;
	const char *nomaps_why;    /* no maps stream: every user frame unmapped */
	const char *debug_root;    /* PMU_DEBUG_ROOT or /usr/lib/debug */
	struct sym_inc *incs;
	size_t ninc, capinc;
	struct sym_obj **objs;
	size_t nobj, capobj;
	uint64_t kstart, kend;
	bool has_kmap;
	const char *kbuild_id;     /* the kmap's build-id: a kernel function is
				    * that kernel's, never one of that name */
	struct sym_ksym *ksym;
	size_t nksym, capksym;
	bool ksorted;
	struct sym_cent *cache;
	size_t ccap, cused;
	struct pmu_frame *frames;
	size_t nframes, capframes;
	struct sym_str **strs;
	size_t strcap, nstr;
	struct sym_jitmap *jits;
	size_t njit, capjit;
	int rep;
	size_t nunw;               /* live unwinding Dwfls */
	uint64_t unw_clock;
};

/* Unwinding Dwfls kept at most: one per incarnation would make memory
 * grow with the cohort; samples come in time order, so an incarnation's
 * are near each other and the least recently used can go. */
#define SYM_UNW_MAX 64

/* ---- small helpers --------------------------------------------------- */

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return PMU_ERR_NOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* The one copy of s[0..len) that lives as long as the symbolizer. */
static const char *intern_n(struct pmu_sym *s, const char *str, size_t len)
{
	uint64_t h;
	size_t i;
	struct sym_str *e;

	if (!str)
		return NULL;
	if (s->nstr * 2 >= s->strcap) {
		size_t ncap = s->strcap ? s->strcap * 2 : 256;
		struct sym_str **nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (i = 0; i < s->strcap; i++) {
			for (e = s->strs[i]; e;) {
				struct sym_str *nx = e->next;
				size_t j = hash_bytes(e->s, e->len) & (ncap - 1);

				e->next = nt[j];
				nt[j] = e;
				e = nx;
			}
		}
		free(s->strs);
		s->strs = nt;
		s->strcap = ncap;
	}
	h = hash_bytes(str, len);
	i = h & (s->strcap - 1);
	for (e = s->strs[i]; e; e = e->next)
		if (e->len == len && !memcmp(e->s, str, len))
			return e->s;
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	e->len = len;
	memcpy(e->s, str, len);
	e->s[len] = '\0';
	e->next = s->strs[i];
	s->strs[i] = e;
	s->nstr++;
	return e->s;
}

static const char *intern(struct pmu_sym *s, const char *str)
{
	return str ? intern_n(s, str, strlen(str)) : NULL;
}

/* "0x..." lowercase or uppercase hex; false when it is not one */
static bool parse_hex(const char *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n < 3 || n > 18 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return false;
	for (size_t i = 2; i < n; i++) {
		int c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return true;
}

static bool jhex(const struct pmu_jrec *r, const char *key, uint64_t *v)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, key);

	return f && f->type == PMU_JV_STR && parse_hex(f->s, f->slen, v);
}

static const char *jstr(struct pmu_sym *s, const struct pmu_jrec *r, const char *key)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, key);

	return f && f->type == PMU_JV_STR ? intern_n(s, f->s, f->slen) : NULL;
}

/*
 * Open a file the bundle names (a recorded path, a retained file) to read
 * its build-id: only a regular file, and never blocking in open(2), since
 * the bundle is untrusted and a path may name a FIFO or a terminal.
 */
static int open_regular(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The GNU build-id note of an ELF as lowercase hex, into out (>= 2*len+1). */
static bool elf_build_id(Elf *elf, char *out, size_t outlen)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	if (n <= 0 || (size_t)n * 2 + 1 > outlen)
		return false;
	for (ssize_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", ((const unsigned char *)p)[i]);
	return true;
}

/* 1: fd is an ELF with build-id bid; 0: an ELF with another or none; -1: not an ELF */
static int fd_has_build_id(int fd, const char *bid)
{
	char got[256];
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int r;

	if (!elf)
		return -1;
	if (elf_kind(elf) != ELF_K_ELF)
		r = -1;
	else
		r = elf_build_id(elf, got, sizeof(got)) && !strcmp(got, bid);
	elf_end(elf);
	return r;
}

/* ---- the objects: found by build-id, never by path alone -------------- */

static char *bundle_file(struct pmu_sym *s, const char *bid, const char *suffix);
static int host_file(const char *path, const char *bid);

/* The build-id of the dwz alt file that path's .gnu_debugaltlink names
 * (the section: the file's name, NUL, the build-id's bytes). */
static bool altlink_build_id(const char *path, char *name, size_t namelen, char *hex, size_t hexlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	size_t shstr;
	Elf_Scn *scn = NULL;
	bool found = false;

	if (e && elf_getshdrstrndx(e, &shstr) == 0)
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			const char *n;
			const unsigned char *b, *z;
			size_t k;

			if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstr, sh.sh_name)) ||
			    strcmp(n, ".gnu_debugaltlink") || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
				continue;
			b = d->d_buf;
			z = memchr(b, 0, d->d_size);
			if (!z)
				break;
			k = d->d_size - (size_t)(z + 1 - b);
			if (k == 0 || k * 2 + 1 > hexlen || (size_t)(z - b) >= namelen)
				break;
			memcpy(name, b, (size_t)(z - b) + 1);
			for (size_t i = 0; i < k; i++)
				snprintf(hex + 2 * i, 3, "%02x", z[1 + i]);
			found = true;
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

/*
 * libdwfl asks for the separate debug file (debuglink_file: the
 * .gnu_debuglink name), then, when the DWARF it got has a
 * .gnu_debugaltlink (dwz), for the alt file (debuglink_file: the alt's
 * name, file_name: the file that names it).  Both are found by build-id
 * only: libdwfl's standard search would also look by path.
 */
static int find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			     const char *file_name, const char *debuglink, GElf_Word crc, char **debug_name)
{
	struct sym_obj *o = *userdata;
	char hex[256], host[4096], altname[4096], *alt = NULL;
	const char *path;
	int fd;

	(void)mod, (void)modname, (void)base, (void)crc;
	if (!o)
		return -1;
	/* the alt request names the alt file that file_name links to */
	if (!debuglink || !file_name || !altlink_build_id(file_name, altname, sizeof(altname), hex, sizeof(hex)) ||
	    strcmp(debuglink, altname)) {
		if (!o->debug_path)
			return -1;
		path = o->debug_path;
	} else {
		alt = bundle_file(o->s, hex, ".debug");
		if (!alt) {
			snprintf(host, sizeof(host), "%s/.build-id/%.2s/%s.debug", o->s->debug_root, hex, hex + 2);
			if (host_file(host, hex) == 1)
				alt = strdup(host);
			else if (debuglink[0] == '/' && host_file(debuglink, hex) == 1)
				alt = strdup(debuglink);
		}
		if (!alt)
			return -1;
		path = alt;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*debug_name = strdup(path);
	free(alt);
	return fd;
}

static const Dwfl_Callbacks sym_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo_cb,
	.section_address = dwfl_offline_section_address,
};

/* A path in the bundle, under data/, when its file has build-id bid. */
static char *bundle_file(struct pmu_sym *s, const char *bid, const char *suffix)
{
	char rel[512], *abs = NULL;
	int fd, ok;

	snprintf(rel, sizeof(rel), "data/build-id/%.2s/%s%s", bid, bid + 2, suffix);
	fd = open_regular(s->b->rootfd, rel);
	if (fd < 0)
		return NULL;
	ok = fd_has_build_id(fd, bid) == 1;
	close(fd);
	/* libdwfl opens by name: the bag's directory by /proc/self/fd, which
	 * stays valid as long as the bundle is open */
	if (ok && asprintf(&abs, "/proc/self/fd/%d/%s", s->b->rootfd, rel) < 0)
		abs = NULL;
	return abs;
}

/* 1 the host file at path has build-id bid; 0 it has another; -1 none there */
static int host_file(const char *path, const char *bid)
{
	int fd = open_regular(AT_FDCWD, path), r;

	if (fd < 0)
		return -1;
	r = fd_has_build_id(fd, bid);
	close(fd);
	return r < 0 ? 0 : r;
}

static bool load_segments(struct sym_obj *o)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(o->mod, &bias);
	size_t n;
	GElf_Ehdr eh;

	if (!elf || elf_getphdrnum(elf, &n) != 0 || !gelf_getehdr(elf, &eh))
		return false;
	o->machine = eh.e_machine;
	o->seg = calloc(n ? n : 1, sizeof(*o->seg));
	if (!o->seg)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->seg[o->nseg++] = (struct sym_seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz, ph.p_align,
						      (ph.p_flags & PF_X) != 0 };
	}
	return true;
}

static void obj_resolve(struct pmu_sym *s, struct sym_obj *o)
{
	char *dbg = NULL, *bin = NULL, host[4096];
	bool stale = false;
	int r;

	o->tried = true;
	o->fd = -1;
	if (!o->build_id) {
		o->st = PMU_FRAME_NOTFOUND;
		o->why = o->nobid_why ? o->nobid_why : intern(s, "no build-id recorded");
		return;
	}
	/* 1. the bundle's retained files */
	bin = bundle_file(s, o->build_id, "");
	dbg = bundle_file(s, o->build_id, ".debug");
	/* 2. the host by build-id: the debug file, and the recorded path
	 * only when its build-id is the same */
	if (!dbg) {
		snprintf(host, sizeof(host), "%s/.build-id/%.2s/%s.debug", s->debug_root, o->build_id, o->build_id + 2);
		if (host_file(host, o->build_id) == 1)
			dbg = strdup(host);
	}
	if (!bin && o->path && o->path[0] == '/') {
		r = host_file(o->path, o->build_id);
		if (r == 1)
			bin = strdup(o->path);
		else if (r == 0)
			stale = true;
	}
	/* a debug file alone has the symbols, the line table and the program
	 * headers: it stands in for a binary that is gone */
	if (!bin && dbg) {
		bin = dbg;
		dbg = NULL;
		o->main_is_debug = true;
	}
	if (!bin) {
		char why[1024];

		free(dbg);
		if (stale) {
			o->st = PMU_FRAME_STALE;
			o->why = intern(s, WHY_STALE);
		} else if (o->unret_why) {
			snprintf(why, sizeof(why), "binary not found (build-id %s; not retained: %s)", o->build_id,
				 o->unret_why);
			o->st = PMU_FRAME_NOTFOUND;
			o->why = intern(s, why);
		} else {
			snprintf(why, sizeof(why), "binary not found (build-id %s)", o->build_id);
			o->st = PMU_FRAME_NOTFOUND;
			o->why = intern(s, why);
		}
		return;
	}
	o->main_path = bin;
	o->debug_path = dbg;
	o->dwfl = dwfl_begin(&sym_callbacks);
	if (o->dwfl) {
		dwfl_report_begin(o->dwfl);
		o->mod = dwfl_report_elf(o->dwfl, o->path ? o->path : bin, bin, -1, 0, true);
		dwfl_report_end(o->dwfl, NULL, NULL);
	}
	if (!o->mod || !load_segments(o)) {
		char why[1024];

		/* a retained copy by its name in the bundle */
		const char *shown = strncmp(bin, "/proc/self/fd/", 14) ? bin : strstr(bin, "/data/build-id/");

		snprintf(why, sizeof(why), "cannot read '%s': %s", shown ? shown + (shown != bin) : bin, dwfl_errmsg(-1));
		o->st = PMU_FRAME_NOTFOUND;
		o->why = intern(s, why);
		return;
	}
	{
		void **ud;

		dwfl_module_info(o->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = o;
	}
	o->fd = o->main_is_debug ? -1 : open(bin, O_RDONLY | O_CLOEXEC);
	o->st = PMU_FRAME_OK;
}

static struct sym_obj *obj_get(struct pmu_sym *s, const char *bid, const char *path, const char *nobid_why)
{
	struct sym_str *key = str_node(bid ? bid : path);
	struct sym_obj *o = bid ? key->obj_bid : key->obj_path;

	if (o)
		return o;
	if (grow((void **)&s->objs, &s->capobj, s->nobj + 1, sizeof(*s->objs)))
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->build_id = bid;
	o->path = path;
	o->nobid_why = nobid_why;
	o->fd = -1;
	o->s = s;
	s->objs[s->nobj++] = o;
	if (bid)
		key->obj_bid = o;
	else
		key->obj_path = o;
	return o;
}

static void obj_free(struct sym_obj *o)
{
	if (o->dwfl)
		dwfl_end(o->dwfl);
	if (o->fd >= 0)
		close(o->fd);
	free(o->main_path);
	free(o->debug_path);
	free(o->seg);
	free(o);
}

/* The ELF address of file offset off (the PT_LOAD that holds it). */
static uint64_t obj_vaddr(const struct sym_obj *o, uint64_t off)
{
	for (size_t i = 0; i < o->nseg; i++)
		if (off >= o->seg[i].off && off < o->seg[i].off + o->seg[i].filesz)
			return off - o->seg[i].off + o->seg[i].vaddr;
	/* a map's page may begin before its segment's first byte */
	for (size_t i = 0; i < o->nseg; i++)
		if (off < o->seg[i].off && o->seg[i].off - off < 0x10000)
			return off - o->seg[i].off + o->seg[i].vaddr;
	return off;
}

/*
 * The ELF address of addr in map m of o.  A separate debug file standing
 * in for a binary that is gone has the binary's p_vaddr but not its
 * p_offset (objcopy --only-keep-debug rewrites the offsets of the
 * segments it empties), so a file offset cannot be turned into an address
 * through it: there the map is the executable segment as the kernel's ELF
 * loader maps it, at the bias plus p_vaddr rounded down to the page.
 */
static uint64_t map_vaddr(const struct sym_obj *o, const struct sym_map *m, uint64_t addr)
{
	static const uint64_t pages[] = { 4096, 16384, 65536 };

	if (o->main_is_debug)
		for (size_t i = 0; i < o->nseg; i++)
			for (size_t k = 0; o->seg[i].x && k < sizeof(pages) / sizeof(pages[0]); k++) {
				uint64_t base = o->seg[i].vaddr & ~(pages[k] - 1), a = addr - m->start + base;
				uint64_t al = o->seg[i].align > pages[k] ? o->seg[i].align : pages[k];

				if ((m->start - base) % al == 0 && a >= base &&
				    a - o->seg[i].vaddr < o->seg[i].memsz)
					return a;
			}
	return obj_vaddr(o, addr - m->start + m->pgoff);
}

/* ---- the maps stream -------------------------------------------------- */

static struct sym_inc *inc_get(struct pmu_sym *s, const char *id, bool add)
{
	struct sym_str *key;

	if (!id)
		return NULL;
	key = str_node(id);
	if (key->inc)
		return &s->incs[key->inc - 1];
	if (!add || grow((void **)&s->incs, &s->capinc, s->ninc + 1, sizeof(*s->incs)))
		return NULL;
	memset(&s->incs[s->ninc], 0, sizeof(s->incs[0]));
	s->incs[s->ninc].id = id;
	key->inc = ++s->ninc;
	return &s->incs[s->ninc - 1];
}

/* A build-id as the spec writes it: lowercase hex, whole bytes.  It names
 * files (data/build-id/xx/yyyy): anything else could name another. */
static bool bid_ok(const char *b)
{
	size_t n = b ? strlen(b) : 0;

	if (n < 4 || n > 128 || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((b[i] >= '0' && b[i] <= '9') || (b[i] >= 'a' && b[i] <= 'f')))
			return false;
	return true;
}

/* A path relative to data/ that stays inside it. */
static bool rel_ok(const char *f)
{
	if (!f || !*f || f[0] == '/')
		return false;
	for (const char *c = f; *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : c + strlen(c))
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0'))
			return false;
	return true;
}

static int add_map(struct pmu_sym *s, const struct pmu_jrec *r)
{
	const struct pmu_jfield *t = pmu_jrec_get(r, "t_ns"), *org = pmu_jrec_get(r, "origin"), *pid = pmu_jrec_get(r, "pid");
	const char *inc = jstr(s, r, "inc"), *path = jstr(s, r, "path"), *bid = jstr(s, r, "build_id");
	struct sym_map m = { 0 };
	struct sym_inc *ic;

	if (!inc || !path || !t || t->type != PMU_JV_INT || t->i < 0 || !jhex(r, "start", &m.start) ||
	    !jhex(r, "end", &m.end) || !jhex(r, "pgoff", &m.pgoff) || m.end <= m.start)
		return PMU_ERR_CORRUPT;
	m.t = (uint64_t)t->i;
	m.path = path;
	m.procmaps = org && org->type == PMU_JV_STR && org->slen == 9 && !memcmp(org->s, "proc-maps", 9);
	if (bid && !bid_ok(bid)) {
		/* never a file name: the object is one without a build-id */
		m.obj = obj_get(s, NULL, path, "the maps stream's build_id is not lowercase hex");
	} else {
		m.obj = obj_get(s, bid, path, jstr(s, r, "build_id_reason"));
	}
	ic = inc_get(s, inc, true);
	if (ic && pid && pid->type == PMU_JV_INT)
		ic->pid = (int)pid->i;
	if (!m.obj || !ic || grow((void **)&ic->maps, &ic->capmaps, ic->nmaps + 1, sizeof(*ic->maps)))
		return PMU_ERR_NOMEM;
	/* the stream is in the order the recorder learned the maps, not by
	 * t_ns (22.3): kept in t_ns order, stably (a later record of the same
	 * time stays later); nearly in order, so few are moved */
	{
		size_t i = ic->nmaps++;

		for (; i > 0 && ic->maps[i - 1].t > m.t; i--)
			ic->maps[i] = ic->maps[i - 1];
		ic->maps[i] = m;
	}
	return 0;
}

static int jit_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct sym_jit *)a)->start, y = ((const struct sym_jit *)b)->start;

	return x < y ? -1 : x > y;
}

/*
 * A retained JIT map (kind jit-map): the lines "START SIZE NAME" (hex,
 * perf's tools/perf/Documentation/jit-interface.txt) of the copy of
 * /tmp/perf-PID.map, for the addresses of that pid that no file maps.
 */
static int add_jit(struct pmu_sym *s, const struct pmu_jrec *r)
{
	const struct pmu_jfield *kind = pmu_jrec_get(r, "kind");
	const char *file = jstr(s, r, "file"), *path = jstr(s, r, "path"), *base;
	struct sym_jitmap *j;
	char rel[600], *line = NULL;
	size_t cap = 0, capsym = 0;
	int pid, fd = -1;
	FILE *f;

	if (!kind || kind->type != PMU_JV_STR || kind->slen != 7 || memcmp(kind->s, "jit-map", 7) || !rel_ok(file) ||
	    !path)
		return 0;
	base = strrchr(path, '/');
	if (sscanf(base ? base + 1 : path, "perf-%d.map", &pid) != 1)
		return 0;
	if (s->rep >= 2) {
		snprintf(rel, sizeof(rel), "data/repeats/%d/%s", s->rep, file);
		fd = open_regular(s->b->rootfd, rel);
	}
	if (fd < 0) {
		snprintf(rel, sizeof(rel), "data/%s", file);
		fd = open_regular(s->b->rootfd, rel);
	}
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return 0;   /* its frames stay unmapped, with that reason */
	}
	if (grow((void **)&s->jits, &s->capjit, s->njit + 1, sizeof(*s->jits))) {
		fclose(f);
		return PMU_ERR_NOMEM;
	}
	j = &s->jits[s->njit++];
	*j = (struct sym_jitmap){ .pid = pid, .path = path };
	while (getline(&line, &cap, f) > 0) {
		unsigned long long st, sz;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx %llx %n", &st, &sz, &n) < 2 || !n || !line[n])
			continue;
		if (grow((void **)&j->sym, &capsym, j->n + 1, sizeof(*j->sym))) {
			free(line);
			fclose(f);
			return PMU_ERR_NOMEM;
		}
		j->sym[j->n++] = (struct sym_jit){ st, sz, intern(s, line + n) };
	}
	free(line);
	fclose(f);
	qsort(j->sym, j->n, sizeof(*j->sym), jit_cmp);
	return 0;
}

static const struct sym_jit *jit_find(const struct sym_jitmap *j, uint64_t addr)
{
	size_t lo = 0, hi = j->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->sym[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr - j->sym[lo - 1].start < j->sym[lo - 1].size)
		return &j->sym[lo - 1];
	return NULL;
}

/* why an object was not copied: said with its frames when it is not found */
static void unretained(struct pmu_sym *s, const struct pmu_jrec *r)
{
	const char *bid = jstr(s, r, "build_id"), *why = jstr(s, r, "reason");

	struct sym_obj *o = bid && bid_ok(bid) ? str_node(bid)->obj_bid : NULL;

	if (o && why && !o->unret_why)
		o->unret_why = why;
}

static int read_maps(struct pmu_sym *s, int rep)
{
	char rel[128];
	struct pmu_jrec r;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int fd, err = 0;
	FILE *f;

	if (rep >= 2)
		snprintf(rel, sizeof(rel), "data/repeats/%d/collectors/sampling/maps.jsonl", rep);
	else
		snprintf(rel, sizeof(rel), "data/collectors/sampling/maps.jsonl");
	fd = openat(s->b->rootfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			return PMU_ERR_IO;
		s->nomaps_why = "the bundle has no maps stream (collectors/sampling/maps.jsonl)";
		return 0;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return PMU_ERR_NOMEM;
	}
	pmu_jrec_init(&r);
	while (!err && (n = getline(&line, &cap, f)) > 0) {
		const struct pmu_jfield *ty;
		const char *why;
		size_t at;

		if (line[n - 1] == '\n')
			n--;
		if (!n)
			continue;
		err = pmu_jrec_parse(&r, line, (size_t)n, &why, &at);
		if (err)
			break;
		ty = pmu_jrec_get(&r, "type");
		if (!ty || ty->type != PMU_JV_STR)
			continue;
		if (ty->slen == 3 && !memcmp(ty->s, "map", 3))
			err = add_map(s, &r);
		else if (ty->slen == 4 && !memcmp(ty->s, "kmap", 4))
		{
			const char *kb = jstr(s, &r, "build_id");

			s->has_kmap = jhex(&r, "start", &s->kstart) && jhex(&r, "end", &s->kend);
			s->kbuild_id = kb && bid_ok(kb) ? kb : NULL;
		}
		else if (ty->slen == 8 && !memcmp(ty->s, "retained", 8))
			err = add_jit(s, &r);
		else if (ty->slen == 10 && !memcmp(ty->s, "unretained", 10))
			unretained(s, &r);
	}
	pmu_jrec_release(&r);
	free(line);
	if (!err && ferror(f))
		err = PMU_ERR_IO;
	fclose(f);
	return err;
}

int pmu_sym_new(struct pmu_sym **out, const struct pmu_bundle *b, int rep)
{
	struct pmu_sym *s = calloc(1, sizeof(*s));
	const char *root = getenv("PMU_DEBUG_ROOT");
	int err;

	*out = NULL;
	if (!s)
		return PMU_ERR_NOMEM;
	elf_version(EV_CURRENT);
	s->b = b;
	/* an absolute path only, as backends/linux/retain.c reads it */
	s->debug_root = root && root[0] == '/' ? root : "/usr/lib/debug";
	s->rep = rep;
	err = read_maps(s, rep);
	if (err) {
		pmu_sym_free(s);
		return err;
	}
	for (size_t i = 0; i < s->ninc; i++)
		for (size_t k = 0; k < s->njit; k++)
			if (s->incs[i].pid && s->jits[k].pid == s->incs[i].pid)
				s->incs[i].jit = &s->jits[k];
	*out = s;
	return 0;
}

static void unw_free(struct sym_unw *u);

void pmu_sym_free(struct pmu_sym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ninc; i++) {
		unw_free(s->incs[i].unw);
		free(s->incs[i].maps);
	}
	free(s->incs);
	for (size_t i = 0; i < s->nobj; i++)
		obj_free(s->objs[i]);
	free(s->objs);
	for (size_t i = 0; i < s->njit; i++)
		free(s->jits[i].sym);
	free(s->jits);
	free(s->ksym);
	free(s->cache);
	free(s->frames);
	for (size_t i = 0; i < s->strcap; i++)
		for (struct sym_str *e = s->strs[i], *nx; e; e = nx) {
			nx = e->next;
			free(e);
		}
	free(s->strs);
	free(s);
}

/* The map of inc holding addr at time t: the latest seen by then; a
 * proc-maps map (there before it was read) when none was seen by then. */
static const struct sym_map *map_find(const struct sym_inc *ic, uint64_t t, uint64_t addr)
{
	const struct sym_map *early = NULL;

	for (size_t i = ic->nmaps; i-- > 0;) {
		const struct sym_map *m = &ic->maps[i];

		if (addr < m->start || addr >= m->end)
			continue;
		if (m->t <= t)
			return m;
		if (m->procmaps)
			early = m;
	}
	return early;
}

/* Why an address of ic at t is in no map: more than "no map" where the
 * time says it (a sample of the process before its exec, whose maps were
 * recorded from the exec on). */
static const char *unmapped_why(const struct sym_inc *ic, uint64_t t)
{
	if (!ic)
		return "the incarnation has no recorded map";
	if (ic->nmaps && ic->maps[0].t > t)
		return "address in no recorded map: the sample precedes the incarnation's first map (before its exec?)";
	return "address in no recorded map";
}

/* ---- kernel ----------------------------------------------------------- */

int pmu_sym_ksym(struct pmu_sym *s, uint64_t addr, const char *name)
{
	const char *n = intern(s, name);

	if (!n || grow((void **)&s->ksym, &s->capksym, s->nksym + 1, sizeof(*s->ksym)))
		return PMU_ERR_NOMEM;
	s->ksym[s->nksym++] = (struct sym_ksym){ addr, n };
	s->ksorted = false;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct sym_ksym *)a)->addr, y = ((const struct sym_ksym *)b)->addr;

	return x < y ? -1 : x > y;
}

static void kernel_frame(struct pmu_sym *s, uint64_t addr, struct pmu_frame *f)
{
	size_t lo = 0, hi;

	*f = (struct pmu_frame){ .status = PMU_FRAME_KERNEL, .addr = addr, .object = "[kernel]", .build_id = s->kbuild_id };
	if (!s->nksym) {
		f->why = WHY_NOKSYM;
		return;
	}
	if (!s->ksorted) {
		qsort(s->ksym, s->nksym, sizeof(*s->ksym), ksym_cmp);
		s->ksorted = true;
	}
	hi = s->nksym;
	while (lo < hi) {              /* the first ksym above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		const struct sym_ksym *k = &s->ksym[lo - 1];
		bool in = !s->has_kmap || ((addr >= s->kstart && addr < s->kend) == (k->addr >= s->kstart && k->addr < s->kend));

		if (in) {
			f->func = k->name;
			f->rel = addr - k->addr;
			return;
		}
	}
	f->why = "[kernel] (no ksym record at this address)";
}

/* ---- user addresses ---------------------------------------------------- */

static const char *demangle(struct pmu_sym *s, const char *name)
{
	char *d;
	const char *r;

	if (!name)
		return NULL;
	/* a .dynsym name carries its symbol version (memcpy@@GLIBC_2.14):
	 * the function is the same whatever the version */
	if ((r = strchr(name, '@')) && r > name) {
		char *bare = strndup(name, (size_t)(r - name));
		const char *x = bare ? demangle(s, bare) : NULL;

		free(bare);
		return x;
	}
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return intern(s, name);
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	r = intern(s, d ? d : name);
	free(d);
	return r;
}

/* A DIE's function name: its linkage name demangled, else its name,
 * through DW_AT_abstract_origin and DW_AT_specification. */
static const char *die_func(struct pmu_sym *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (n)
		return demangle(s, n);
	n = dwarf_diename(die);
	return n ? intern(s, n) : NULL;
}

static int push_frame(struct pmu_sym *s, const struct pmu_frame *f)
{
	if (grow((void **)&s->frames, &s->capframes, s->nframes + 1, sizeof(*s->frames)))
		return PMU_ERR_NOMEM;
	s->frames[s->nframes++] = *f;
	return 0;
}

/* Append the frames of ELF address a of o (already pc - 1 for a return
 * address) to s->frames: the inline chain innermost first. */
static void resolve(struct pmu_sym *s, struct sym_obj *o, uint64_t a)
{
	struct pmu_frame f = { .status = PMU_FRAME_OK, .build_id = o->build_id };
	GElf_Sym sym;
	GElf_Off off;
	const char *symname = dwfl_module_addrinfo(o->mod, a, &off, &sym, NULL, NULL, NULL);
	Dwfl_Line *ln = dwfl_module_getsrc(o->mod, a);
	const char *file = NULL;
	int line = 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu;
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int nsc, nch;
	size_t before = s->nframes;

	if (ln) {
		file = dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL);
		file = intern(s, file);
	}
	cu = dwfl_module_addrdie(o->mod, a, &bias);
	if (cu && (nsc = dwarf_getscopes(cu, a - bias, &scopes)) > 0 &&
	    (nch = dwarf_getscopes_die(&scopes[0], &chain)) > 0) {
		Dwarf_Files *files = NULL;
		size_t nfiles = 0;

		dwarf_getsrcfiles(cu, &files, &nfiles);
		for (int i = 0; i < nch; i++) {
			int tag = dwarf_tag(&chain[i]);

			if (tag == DW_TAG_inlined_subroutine) {
				Dwarf_Attribute at;
				Dwarf_Word cf = 0, cl = 0;

				f.func = die_func(s, &chain[i]);
				f.file = file;
				f.line = line;
				f.inlined = true;
				if (!f.func)
					f.func = intern(s, "[inlined]");
				push_frame(s, &f);
				/* the caller's line: where this was inlined */
				file = NULL;
				line = 0;
				if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &at), &cf) == 0 && files &&
				    cf < nfiles)
					file = intern(s, dwarf_filesrc(files, cf, NULL, NULL));
				if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &at), &cl) == 0)
					line = (int)cl;
			} else if (tag == DW_TAG_subprogram) {
				/* the symbol table's name is the qualified one
				 * (C++), the DIE's the fallback */
				f.func = symname ? demangle(s, symname) : die_func(s, &chain[i]);
				f.file = file;
				f.line = line;
				f.inlined = false;
				push_frame(s, &f);
				break;
			}
		}
	}
	free(scopes);
	free(chain);
	if (s->nframes > before) {
		/* the outermost frame found is the function itself */
		s->frames[s->nframes - 1].inlined = false;
		return;
	}
	if (symname) {
		f.func = demangle(s, symname);
		f.file = file;
		f.line = line;
	} else {
		f.status = PMU_FRAME_NOSYM;
		f.why = "no symbol at this address";
	}
	push_frame(s, &f);
}

static struct sym_cent *cache_slot(struct pmu_sym *s, const struct sym_obj *o, uint64_t rel, bool ra)
{
	uint64_t k[3] = { (uint64_t)(uintptr_t)o, rel, ra };
	size_t i = hash_bytes(k, sizeof(k)) & (s->ccap - 1);

	while (s->cache[i].obj && !(s->cache[i].obj == o && s->cache[i].rel == rel && s->cache[i].ra == ra))
		i = (i + 1) & (s->ccap - 1);
	return &s->cache[i];
}

static int cache_grow(struct pmu_sym *s)
{
	struct sym_cent *old = s->cache;
	size_t ocap = s->ccap;

	if (s->cused * 2 < s->ccap)
		return 0;
	s->ccap = ocap ? ocap * 2 : 1024;
	s->cache = calloc(s->ccap, sizeof(*s->cache));
	if (!s->cache) {
		s->cache = old;
		s->ccap = ocap;
		return PMU_ERR_NOMEM;
	}
	for (size_t i = 0; i < ocap; i++)
		if (old[i].obj)
			*cache_slot(s, old[i].obj, old[i].rel, old[i].ra) = old[i];
	free(old);
	return 0;
}

static size_t one(struct pmu_frame *out, size_t max, const struct pmu_frame *f)
{
	if (max)
		out[0] = *f;
	return 1;
}

size_t pmu_sym_frames(struct pmu_sym *s, const char *inc, uint64_t t, uint64_t addr, bool return_addr,
		      bool kernel, struct pmu_frame *out, size_t max)
{
	struct pmu_frame f = { .status = PMU_FRAME_UNMAPPED, .addr = addr };
	const struct sym_inc *ic;
	const struct sym_map *m;
	struct sym_obj *o;
	uint64_t off, rel, look;
	struct sym_cent *c;
	size_t n;

	if (kernel) {
		kernel_frame(s, addr, &f);
		return one(out, max, &f);
	}
	ic = inc_get(s, intern(s, inc), false);
	m = ic ? map_find(ic, t, addr) : NULL;
	if (!m) {
		/* a return address is its call's: pc - 1, as for a file's */
		const struct sym_jit *js = ic && ic->jit ? jit_find(ic->jit, return_addr && addr ? addr - 1 : addr) : NULL;

		if (js) {
			f.status = PMU_FRAME_OK;
			f.func = js->name;
			f.object = ic->jit->path;
			f.rel = addr - js->start;
			return one(out, max, &f);
		}
		f.why = s->nomaps_why ? s->nomaps_why : unmapped_why(ic, t);
		return one(out, max, &f);
	}
	o = m->obj;
	if (!o->tried)
		obj_resolve(s, o);
	off = addr - m->start + m->pgoff;
	f.object = m->path;
	f.build_id = o->build_id;
	if (o->st != PMU_FRAME_OK) {
		f.status = o->st;
		f.why = o->why;
		f.rel = off;
		return one(out, max, &f);
	}
	rel = map_vaddr(o, m, addr);
	look = return_addr && rel ? rel - 1 : rel;
	if (cache_grow(s)) {
		f.status = PMU_FRAME_NOSYM;
		f.why = "out of memory";
		return one(out, max, &f);
	}
	c = cache_slot(s, o, rel, return_addr);
	if (!c->obj) {
		size_t first = s->nframes;

		resolve(s, o, look);
		if (s->nframes == first) {  /* out of memory in push_frame */
			f.status = PMU_FRAME_NOSYM;
			f.why = "out of memory";
			return one(out, max, &f);
		}
		*c = (struct sym_cent){ o, rel, return_addr, (uint32_t)first, (uint32_t)(s->nframes - first) };
		s->cused++;
	}
	n = c->n;
	for (size_t i = 0; i < n && i < max; i++) {
		out[i] = s->frames[c->first + i];
		out[i].addr = addr;
		out[i].rel = rel;
		out[i].object = m->path;
	}
	/* too many inlined frames for out: keep the function itself last */
	if (n > max && max > 0)
		out[max - 1] = s->frames[c->first + n - 1], out[max - 1].addr = addr, out[max - 1].rel = rel,
		out[max - 1].object = m->path;
	return n < max ? n : max ? max : 1;
}

/* ---- DWARF unwinding ---------------------------------------------------- */

/*
 * perf's user register numbers (arch/<arch>/include/uapi/asm/perf_regs.h)
 * to DWARF's (the psABIs), one row per register unwinding needs, and
 * which perf register is the pc and the sp.
 */
struct unw_reg {
	int perf, dwarf;
};

static const struct unw_reg x86_64_regs[] = {
	/* AX BX CX DX SI DI BP SP, then R8..R15 (perf 16..23) */
	{ 0, 0 }, { 3, 1 }, { 2, 2 }, { 1, 3 }, { 4, 4 }, { 5, 5 }, { 6, 6 }, { 7, 7 },
	{ 16, 8 }, { 17, 9 }, { 18, 10 }, { 19, 11 }, { 20, 12 }, { 21, 13 }, { 22, 14 }, { 23, 15 },
};
#define X86_64_PERF_IP 8
#define X86_64_PERF_SP 7

/* X0..X30 (perf 0..30, LR is 30), SP (31); PC is perf's 32 */
#define ARM64_PERF_PC 32
#define ARM64_PERF_SP 31

struct sym_unw {
	Dwfl *dwfl;
	struct pmu_sym *s;
	const struct sym_inc *ic;
	uint64_t t;
	/* the current sample */
	uint64_t regs[64];
	uint64_t have;             /* bit per perf register given */
	bool arm64;
	const unsigned char *stack;
	size_t stack_len;
	uint64_t sp;
	pid_t tid;
};

static void unw_free(struct sym_unw *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u);
}

static pid_t unw_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl, (void)arg, (void)thread_arg;
	return 0;
}

static bool unw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	(void)dwfl, (void)tid;
	*thread_arg = arg;
	return true;
}

static bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct sym_unw *u = arg;
	const struct sym_map *m;
	uint64_t w;

	(void)dwfl;
	if (addr >= u->sp && addr - u->sp <= u->stack_len && u->stack_len - (addr - u->sp) >= sizeof(w)) {
		memcpy(&w, u->stack + (addr - u->sp), sizeof(w));
		*result = w;
		return true;
	}
	/* not on the copied stack: the mapped files (read-only data, .got) */
	m = map_find(u->ic, u->t, addr);
	if (m && m->obj->tried && m->obj->fd >= 0 &&
	    pread(m->obj->fd, &w, sizeof(w), (off_t)(addr - m->start + m->pgoff)) == (ssize_t)sizeof(w)) {
		*result = w;
		return true;
	}
	return false;
}

static bool unw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct sym_unw *u = arg;
	Dwarf_Word r[32];

	if (u->arm64) {
		for (int i = 0; i < 32; i++)
			r[i] = u->regs[i];
		if (!dwfl_thread_state_registers(thread, 0, 32, r))
			return false;
		dwfl_thread_state_register_pc(thread, u->regs[ARM64_PERF_PC]);
		return true;
	}
	for (size_t i = 0; i < sizeof(x86_64_regs) / sizeof(x86_64_regs[0]); i++)
		r[x86_64_regs[i].dwarf] = u->regs[x86_64_regs[i].perf];
	r[16] = u->regs[X86_64_PERF_IP];   /* DWARF 16: the return address column */
	return dwfl_thread_state_registers(thread, 0, 17, r);
}

static const Dwfl_Thread_Callbacks unw_callbacks = {
	.next_thread = unw_next_thread,
	.get_thread = unw_get_thread,
	.memory_read = unw_memory_read,
	.set_initial_registers = unw_set_initial_registers,
};

/* Whether a map of ic after map i is of object o. */
static bool obj_seen(const struct sym_inc *ic, size_t i, const struct sym_obj *o)
{
	for (size_t j = i + 1; j < ic->nmaps; j++)
		if (ic->maps[j].obj == o)
			return true;
	return false;
}

/* One Dwfl for the incarnation: every object of its maps at its bias (the
 * latest map of a range wins), attached to our callbacks. */
static struct sym_unw *unw_get(struct pmu_sym *s, struct sym_inc *ic)
{
	struct sym_unw *u;
	size_t reported = 0;

	ic->unw_used = ++s->unw_clock;
	if (ic->unw || ic->unw_failed)
		return ic->unw;
	if (s->nunw >= SYM_UNW_MAX) {
		struct sym_inc *lru = NULL;

		for (size_t i = 0; i < s->ninc; i++)
			if (s->incs[i].unw && (!lru || s->incs[i].unw_used < lru->unw_used))
				lru = &s->incs[i];
		if (lru) {
			unw_free(lru->unw);
			lru->unw = NULL;
			s->nunw--;
		}
	}
	u = calloc(1, sizeof(*u));
	if (!u || !(u->dwfl = dwfl_begin(&sym_callbacks))) {
		free(u);
		ic->unw_failed = true;
		snprintf(ic->unw_why, sizeof(ic->unw_why), "out of memory");
		return NULL;
	}
	u->s = s;
	u->ic = ic;
	dwfl_report_begin(u->dwfl);
	for (size_t i = ic->nmaps; i-- > 0;) {
		struct sym_map *m = &ic->maps[i];
		struct sym_obj *o = m->obj;
		uint64_t bias;
		Dwfl_Module *mod;
		void **ud;

		if (!o->tried)
			obj_resolve(s, o);
		if (o->st != PMU_FRAME_OK)
			continue;
		bias = m->start - map_vaddr(o, m, m->start);
		/* one module per object: the latest map of it decides */
		if (obj_seen(ic, i, o))
			continue;
		mod = dwfl_report_elf(u->dwfl, m->path, o->main_path, -1, bias, true);
		if (!mod)
			continue;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = o;
		reported++;
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (!reported || !dwfl_attach_state(u->dwfl, NULL, 1, &unw_callbacks, u)) {
		snprintf(ic->unw_why, sizeof(ic->unw_why), "%s",
			 reported ? dwfl_errmsg(-1) : "none of the incarnation's objects was found");
		ic->unw_failed = true;
		unw_free(u);
		return NULL;
	}
	ic->unw = u;
	s->nunw++;
	return u;
}

static int b64v(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Base64 (RFC 4648, padded) to bytes; NULL when malformed. */
static unsigned char *b64_decode(const char *in, size_t *outlen)
{
	size_t n = strlen(in), o = 0;
	unsigned char *out = malloc(n / 4 * 3 + 3);
	uint32_t acc = 0;
	int bits = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int v;

		if (in[i] == '=')
			break;
		v = b64v((unsigned char)in[i]);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	*outlen = o;
	return out;
}

struct unw_walk {
	uint64_t *pcs;
	size_t n, max;
};

static int unw_frame(Dwfl_Frame *st, void *arg)
{
	struct unw_walk *w = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(st, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

size_t pmu_sym_unwind(struct pmu_sym *s, const char *inc, uint64_t t, const char *arch, uint64_t regs_mask,
		      const char *regs, const char *stack_b64, uint64_t *pcs, size_t max, char *why, size_t whylen)
{
	bool arm64 = arch && !strcmp(arch, "aarch64");
	struct sym_inc *ic;
	struct sym_unw *u;
	struct unw_walk w = { pcs, 0, max };
	uint64_t vals[64], want;
	size_t nv = 0;
	const char *p = regs;
	unsigned char *stack;
	size_t slen;
	int ip, sp;

	if (!arch || (!arm64 && strcmp(arch, "x86_64"))) {
		snprintf(why, whylen, "DWARF unwinding is not implemented for architecture '%s' (x86_64 and aarch64 are)",
			 arch ? arch : "?");
		return 0;
	}
	if (!max || !regs || !stack_b64) {
		snprintf(why, whylen, "the sample has no user registers or stack copy");
		return 0;
	}
	/* the registers, in regs_mask order */
	while (*p && nv < 64) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (!parse_hex(p, len, &vals[nv++])) {
			snprintf(why, whylen, "malformed regs");
			return 0;
		}
		p += len;
		while (*p == ' ')
			p++;
	}
	if ((size_t)__builtin_popcountll(regs_mask) != nv) {
		snprintf(why, whylen, "regs has %zu values, regs_mask %d", nv, __builtin_popcountll(regs_mask));
		return 0;
	}
	ip = arm64 ? ARM64_PERF_PC : X86_64_PERF_IP;
	sp = arm64 ? ARM64_PERF_SP : X86_64_PERF_SP;
	want = arm64 ? (1ull << 33) - 1 : 0xff01ffull;   /* x86_64: AX..IP, R8..R15 */
	if ((regs_mask & want) != want) {
		snprintf(why, whylen, "regs_mask 0x%llx lacks registers the unwinder needs (0x%llx)",
			 (unsigned long long)regs_mask, (unsigned long long)want);
		return 0;
	}
	ic = inc_get(s, intern(s, inc), false);
	if (!ic) {
		snprintf(why, whylen, "the incarnation has no maps");
		return 0;
	}
	u = unw_get(s, ic);
	if (!u) {
		snprintf(why, whylen, "%s", ic->unw_why);
		return 0;
	}
	stack = b64_decode(stack_b64, &slen);
	if (!stack) {
		snprintf(why, whylen, "malformed stack (not base64)");
		return 0;
	}
	memset(u->regs, 0, sizeof(u->regs));
	for (int bit = 0, k = 0; bit < 64; bit++)
		if (regs_mask >> bit & 1)
			u->regs[bit] = vals[k++];
	{
		/* a 32-bit process (user_abi 32) runs code of another ELF
		 * machine, with other registers */
		const struct sym_map *im = map_find(ic, t, u->regs[ip]);
		unsigned want_m = arm64 ? EM_AARCH64 : EM_X86_64;

		if (im && im->obj->st == PMU_FRAME_OK && im->obj->machine != want_m) {
			snprintf(why, whylen, "the sampled code is ELF machine %u, not %s (a 32-bit process?): its ABI is not unwound",
				 im->obj->machine, arch);
			free(stack);
			return 0;
		}
	}
	u->arm64 = arm64;
	u->t = t;
	u->stack = stack;
	u->stack_len = slen;
	u->sp = u->regs[sp];
	pcs[w.n++] = u->regs[ip];
	if (w.n < max) {
		size_t first;
		/* libdwfl gives the initial frame too: skip it */
		struct unw_walk all = { NULL, 0, max + 1 };

		all.pcs = malloc((max + 1) * sizeof(*all.pcs));
		if (all.pcs) {
			dwfl_getthread_frames(u->dwfl, 1, unw_frame, &all);
			first = all.n && all.pcs[0] == u->regs[ip] ? 1 : 0;
			for (size_t i = first; i < all.n && w.n < max; i++)
				pcs[w.n++] = all.pcs[i];
			free(all.pcs);
		}
	}
	u->stack = NULL;
	free(stack);
	if (w.n == 1 && whylen)
		snprintf(why, whylen, "unwound no caller: %s", dwfl_errmsg(-1));
	return w.n;
}
