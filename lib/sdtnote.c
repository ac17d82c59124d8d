/*
 * USDT probe notes and the objects a program loads (sdtnote.h).
 *
 * The notes are SystemTap's version 3 (<sys/sdt.h>, "Generalizing the
 * probe's location", https://sourceware.org/systemtap/wiki/UserSpaceProbeImplementation):
 * in the section .note.stapsdt, owner "stapsdt", type 3, a descriptor of
 * three addresses of the file's class and byte order (the probe's pc, the
 * link-time address of .stapsdt.base, the semaphore's address or 0) and
 * three NUL-terminated strings (provider, name, argument layout).  A
 * prelinked file was moved after linking: .stapsdt.base's address in the
 * section headers against the one in the note gives the distance, which
 * corrects the pc and the semaphore (libbpf's usdt.c does the same for the
 * pc).  libelf reads the headers; every note and every descriptor is
 * checked against its section before a byte of it is used.
 *
 * The closure follows glibc's ld.so (elf/dl-load.c _dl_map_object, ld.so(8)):
 * breadth first from the program; a name with a slash is a path; otherwise
 * DT_RPATH of the loading object and then of its loaders up to the program
 * (an object's DT_RPATH counts only when it has no DT_RUNPATH, and none is
 * searched when the loading object has DT_RUNPATH), LD_LIBRARY_PATH, the
 * loading object's DT_RUNPATH, the directories of /etc/ld.so.conf (the
 * cache ld.so reads is built from them), the default directories; a
 * candidate of another ELF class or machine is passed over as ld.so does; a
 * name already loaded (as a needed name or a DT_SONAME) is not loaded again.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "sdtnote.h"

#define NT_STAPSDT 3
/* bounds on what the closure walks, whatever the files say */
#define CLOSURE_MAX_OBJECTS 4096
#define CONF_MAX_DEPTH 8
#define CONF_MAX_DIRS 512

/* ---- .note.stapsdt ----------------------------------------------------------- */

static uint64_t get_addr(const unsigned char *p, size_t n, bool msb)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? n - 1 - i : i] << (8 * i);
	return v;
}

/* One string of the descriptor at *at: NUL-terminated inside it and
 * shorter than cap; *at moves past its NUL. */
static int desc_string(const unsigned char *d, size_t n, size_t *at, char *dst, size_t cap, const char *what,
		       const char *file, size_t note_off)
{
	const unsigned char *end = *at < n ? memchr(d + *at, 0, n - *at) : NULL;
	size_t len;

	if (!end)
		return pmu_error(PMU_ERR_CORRUPT, "'%s': the probe note at offset %zu of .note.stapsdt has no %s",
				 file, note_off, what);
	len = (size_t)(end - (d + *at));
	if (len >= cap)
		return pmu_error(PMU_ERR_CORRUPT, "'%s': the probe note at offset %zu of .note.stapsdt has a %s of %zu bytes (at most %zu)",
				 file, note_off, what, len, cap - 1);
	memcpy(dst, d + *at, len);
	dst[len] = 0;
	*at += len + 1;
	return 0;
}

static int count_args(const char *s)
{
	int n = 0;

	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		n++;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
	return n;
}

static int walk_elf(Elf *elf, uint64_t size, const char *file, int (*fn)(void *, const struct pmu_sdt_probe *),
		    void *ctx)
{
	GElf_Ehdr eh;
	size_t shstrndx, asz, shnum = 0;
	Elf_Scn *scn = NULL;
	uint64_t base = 0, mask;
	bool have_base = false, msb;

	if (elf_kind(elf) != ELF_K_ELF)
		return pmu_error(PMU_ERR_CORRUPT, "'%s' is not an ELF file", file);
	if (!gelf_getehdr(elf, &eh))
		return pmu_error(PMU_ERR_CORRUPT, "'%s': cannot read the ELF header: %s", file, elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS32 && eh.e_ident[EI_CLASS] != ELFCLASS64)
		return pmu_error(PMU_ERR_CORRUPT, "'%s': unknown ELF class %u", file, eh.e_ident[EI_CLASS]);
	asz = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	mask = asz == 8 ? UINT64_MAX : UINT32_MAX;
	msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	/* libelf drops a section header table that lies past the end of the
	 * file without a word (no sections): a file cut short is corrupt */
	if (eh.e_shoff) {
		size_t want = asz == 8 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);

		if (eh.e_shentsize != want)
			return pmu_error(PMU_ERR_CORRUPT, "'%s': section headers of %u bytes (%zu expected)", file,
					 (unsigned)eh.e_shentsize, want);
		if (eh.e_shoff > size || size - eh.e_shoff < want || elf_getshdrnum(elf, &shnum) || !shnum ||
		    shnum > (size - eh.e_shoff) / want)
			return pmu_error(PMU_ERR_CORRUPT, "'%s': the section header table at offset %llu lies outside the file's %llu bytes",
					 file, (unsigned long long)eh.e_shoff, (unsigned long long)size);
	}
	if (elf_getshdrstrndx(elf, &shstrndx))
		return pmu_error(PMU_ERR_CORRUPT, "'%s': no section name table: %s", file, elf_errmsg(-1));

	/* .stapsdt.base first: the notes come before it in most files */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh))
			return pmu_error(PMU_ERR_CORRUPT, "'%s': cannot read a section header: %s", file, elf_errmsg(-1));
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm && !strcmp(nm, ".stapsdt.base")) {
			base = sh.sh_addr;
			have_base = true;
		}
	}

	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *nm;
		size_t off = 0, next, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh))
			return pmu_error(PMU_ERR_CORRUPT, "'%s': cannot read a section header: %s", file, elf_errmsg(-1));
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type != SHT_NOTE || !nm || strcmp(nm, ".note.stapsdt"))
			continue;
		if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			return pmu_error(PMU_ERR_CORRUPT, "'%s': .note.stapsdt at offset %llu (%llu bytes) lies outside the file's %llu bytes",
					 file, (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size,
					 (unsigned long long)size);
		data = elf_getdata(scn, NULL);
		if (!data)
			return pmu_error(PMU_ERR_CORRUPT, "'%s': cannot read .note.stapsdt: %s", file, elf_errmsg(-1));
		if (!data->d_buf || !data->d_size)
			continue;
		/* gelf_getnote() checks the note's header, name and descriptor
		 * against the section's data: 0 is a note that does not fit */
		while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *d = (const unsigned char *)data->d_buf + desc_off;
			struct pmu_sdt_probe p;
			size_t at = 3 * asz, note_off = off;
			uint64_t nbase;
			int r;

			if (next <= off)
				break; /* cannot happen with a sane libelf; never loop */
			off = next;
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8))
				continue;
			if (desc_off > data->d_size || nh.n_descsz > data->d_size - desc_off)
				return pmu_error(PMU_ERR_CORRUPT, "'%s': the probe note at offset %zu overruns .note.stapsdt",
						 file, note_off);
			if (nh.n_descsz < 3 * asz + 3)
				return pmu_error(PMU_ERR_CORRUPT, "'%s': the probe note at offset %zu of .note.stapsdt is %u bytes, too short",
						 file, note_off, (unsigned)nh.n_descsz);
			memset(&p, 0, sizeof(p));
			p.pc = get_addr(d, asz, msb);
			nbase = get_addr(d + asz, asz, msb);
			p.semaphore = get_addr(d + 2 * asz, asz, msb);
			if ((r = desc_string(d, nh.n_descsz, &at, p.provider, sizeof(p.provider), "provider", file, note_off)) ||
			    (r = desc_string(d, nh.n_descsz, &at, p.name, sizeof(p.name), "name", file, note_off)) ||
			    (r = desc_string(d, nh.n_descsz, &at, p.args, sizeof(p.args), "argument layout", file, note_off)))
				return r;
			if (!p.provider[0] || !p.name[0])
				return pmu_error(PMU_ERR_CORRUPT, "'%s': the probe note at offset %zu of .note.stapsdt has an empty %s",
						 file, note_off, p.provider[0] ? "name" : "provider");
			/* prelink moved the file by base - nbase (0 when it did not) */
			if (have_base && nbase) {
				p.pc = (p.pc + base - nbase) & mask;
				if (p.semaphore)
					p.semaphore = (p.semaphore + base - nbase) & mask;
			}
			p.nargs = count_args(p.args);
			if ((r = fn(ctx, &p)))
				return r;
		}
		/* a note that did not fit ends the walk: a malformed section
		 * (padding after the last note is fewer than a header's bytes) */
		if (off < data->d_size && data->d_size - off >= 12)
			return pmu_error(PMU_ERR_CORRUPT, "'%s': the note at offset %zu overruns .note.stapsdt (%zu bytes)", file,
					 off, (size_t)data->d_size);
	}
	return 0;
}

int pmu_sdt_read(const char *path, int (*fn)(void *ctx, const struct pmu_sdt_probe *p), void *ctx)
{
	struct stat st;
	Elf *elf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return pmu_error(PMU_ERR_CORRUPT, "'%s' is not an ELF file (not a regular file)", path);
	}
	elf_version(EV_CURRENT);
	/* ELF_C_READ, not a mapping: a file cut short while we read it is an
	 * error from libelf, not SIGBUS */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		err = pmu_error(PMU_ERR_CORRUPT, "'%s' is not an ELF file: %s", path, elf_errmsg(-1));
	} else {
		err = walk_elf(elf, (uint64_t)st.st_size, path, fn, ctx);
		elf_end(elf);
	}
	close(fd);
	return err;
}

int pmu_sdt_read_mem(const void *buf, size_t len, int (*fn)(void *ctx, const struct pmu_sdt_probe *p), void *ctx)
{
	char *copy;
	Elf *elf;
	int err;

	/* elf_memory() takes a writable image: give it a copy (it is also
	 * aligned, as libelf wants for the headers it reads in place) */
	copy = malloc(len ? len : 1);
	if (!copy)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (len)
		memcpy(copy, buf, len);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, len);
	if (!elf) {
		err = pmu_error(PMU_ERR_CORRUPT, "'<memory>' is not an ELF file: %s", elf_errmsg(-1));
	} else {
		err = walk_elf(elf, len, "<memory>", fn, ctx);
		elf_end(elf);
	}
	free(copy);
	return err;
}

/* ---- the closure ------------------------------------------------------------- */

/* what ld.so reads of one object */
struct dso {
	char *real;            /* realpath: reported, and what identity is */
	char *origin;          /* $ORIGIN: the directory of the path it was found at */
	char *soname;          /* DT_SONAME or NULL */
	char *loaded_as;       /* the needed name that found it, or NULL */
	char *rpath, *runpath; /* NULL: none */
	char **needed;
	size_t nneeded;
	char *interp;          /* PT_INTERP (the program only) */
	int loader;            /* index of the object that needed it; -1 the program */
};

struct closure {
	struct dso *v;
	size_t n, cap;
	int cls, machine;
	char **conf;
	size_t nconf;
	const char *ldlp;
	int (*fn)(void *, const char *);
	void (*miss)(void *, const char *needed, const char *by);
	void *ctx;
};

static void dso_free(struct dso *d)
{
	free(d->real);
	free(d->origin);
	free(d->soname);
	free(d->loaded_as);
	free(d->rpath);
	free(d->runpath);
	for (size_t i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
	free(d->needed);
	free(d->interp);
}

/* The dynamic section and PT_INTERP of the ELF file at path, when it is of
 * class cls and machine (0: any; the program sets them).  1: read;
 * 0: not a usable object (missing, not ELF, another class or machine);
 * PMU_ERR_NOMEM. */
static int dso_read(const char *path, int *cls, int *machine, struct dso *d)
{
	GElf_Ehdr eh;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t nph;
	int fd, ok = 0;

	memset(d, 0, sizeof(*d));
	d->loader = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		goto out;
	if ((*cls && eh.e_ident[EI_CLASS] != *cls) || (*machine && eh.e_machine != *machine))
		goto out;
	*cls = eh.e_ident[EI_CLASS];
	*machine = eh.e_machine;
	ok = 1;
	if (!elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph && i < 4096; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP || d->interp)
				continue;
			/* the interpreter's path, NUL-terminated inside the segment */
			char buf[PATH_MAX];

			if (ph.p_filesz > 1 && ph.p_filesz <= sizeof(buf) && ph.p_offset <= (GElf_Off)INT64_MAX &&
			    pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz &&
			    memchr(buf, 0, ph.p_filesz)) {
				if (!(d->interp = strdup(buf)))
					ok = PMU_ERR_NOMEM;
			}
		}
	}
	while (ok == 1 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		for (size_t i = 0; ok == 1 && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;
			char **slot = NULL;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH &&
			    dyn.d_tag != DT_SONAME)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED) {
				char **nv = realloc(d->needed, (d->nneeded + 1) * sizeof(*nv));

				if (!nv) {
					ok = PMU_ERR_NOMEM;
					break;
				}
				d->needed = nv;
				slot = &d->needed[d->nneeded];
				*slot = NULL;
				d->nneeded++;
			} else {
				slot = dyn.d_tag == DT_RPATH ? &d->rpath : dyn.d_tag == DT_RUNPATH ? &d->runpath : &d->soname;
				if (*slot)
					continue;
			}
			if (!(*slot = strdup(s)))
				ok = PMU_ERR_NOMEM;
		}
		break; /* one dynamic section */
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (ok != 1)
		dso_free(d);
	return ok;
}

static bool str_ends(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* The directory part of path ("." for a bare name), newly allocated. */
static char *dir_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		return strdup(".");
	if (sl == path)
		return strdup("/");
	return strndup(path, (size_t)(sl - path));
}

/* The default directories for the program's class and machine: the
 * multiarch ones first (Debian's ld.so is built with them), then the
 * traditional ones.  A candidate of the wrong class is passed over anyway. */
static const char *triplet(int cls, int machine)
{
	switch (machine) {
	case EM_X86_64: return cls == ELFCLASS64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
	case EM_386: return "i386-linux-gnu";
	case EM_AARCH64: return "aarch64-linux-gnu";
	case EM_ARM: return "arm-linux-gnueabihf";
	case EM_RISCV: return "riscv64-linux-gnu";
	case EM_PPC64: return "powerpc64le-linux-gnu";
	case EM_S390: return "s390x-linux-gnu";
	case EM_LOONGARCH: return "loongarch64-linux-gnu";
	default: return NULL;
	}
}

/* The file at dir/name if it is a usable object for the closure: its dso
 * is read into *d (1); 0 not there or not usable. */
static int try_dir(struct closure *c, const char *dir, size_t dlen, const char *name, struct dso *d)
{
	char path[PATH_MAX];
	int n, r;

	if (dlen == 0) { /* an empty entry is the current directory */
		dir = ".";
		dlen = 1;
	}
	n = snprintf(path, sizeof(path), "%.*s/%s", (int)dlen, dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	r = dso_read(path, &c->cls, &c->machine, d);
	if (r != 1)
		return r;
	d->origin = dir_of(path);
	d->real = realpath(path, NULL);
	if (!d->origin || !d->real) {
		/* realpath() fails on a file gone since: not usable */
		r = d->origin ? 0 : PMU_ERR_NOMEM;
		dso_free(d);
		return r;
	}
	return 1;
}

/* A search path (':' or ';' separated) with $ORIGIN, $LIB and $PLATFORM
 * replaced as ld.so does (an entry with another token is skipped). */
static int try_path(struct closure *c, const char *list, const char *origin, const char *name, struct dso *d)
{
	const char *p = list;

	while (p) {
		const char *e = p + strcspn(p, ":;");
		char dir[PATH_MAX], lib[64];
		size_t o = 0;
		bool bad = false;
		int r;

		for (const char *q = p; q < e && !bad;) {
			const char *sub = NULL;
			size_t skip = 1;

			if (*q == '$') {
				static const struct { const char *tok, *brace; } toks[] = {
					{ "$ORIGIN", "${ORIGIN}" }, { "$LIB", "${LIB}" }, { "$PLATFORM", "${PLATFORM}" } };
				for (size_t t = 0; t < 3 && !sub; t++) {
					size_t tl = strlen(toks[t].tok), bl = strlen(toks[t].brace);
					bool plain = (size_t)(e - q) >= tl && !strncmp(q, toks[t].tok, tl) &&
						     (q + tl == e || !(q[tl] == '_' || (q[tl] >= 'A' && q[tl] <= 'Z')));

					if (plain || ((size_t)(e - q) >= bl && !strncmp(q, toks[t].brace, bl))) {
						skip = plain ? tl : bl;
						if (t == 0) {
							sub = origin;
						} else if (t == 1) {
							/* Debian's ld.so: $LIB is lib/<triplet> */
							const char *tr = triplet(c->cls, c->machine);

							snprintf(lib, sizeof(lib), "lib/%s", tr ? tr : "");
							sub = tr ? lib : "lib";
						} else {
							sub = c->machine == EM_X86_64 ? "x86_64" : NULL;
						}
					}
				}
				if (!sub) {
					bad = true;
					break;
				}
			}
			if (sub) {
				size_t sl = strlen(sub);

				if (o + sl >= sizeof(dir)) {
					bad = true;
					break;
				}
				memcpy(dir + o, sub, sl);
				o += sl;
			} else {
				if (o + 1 >= sizeof(dir)) {
					bad = true;
					break;
				}
				dir[o++] = *q;
			}
			q += skip;
		}
		if (!bad) {
			dir[o] = 0;
			r = try_dir(c, dir, o, name, d);
			if (r)
				return r;
		}
		p = *e ? e + 1 : NULL;
	}
	return 0;
}

/* Resolve a needed name for the object at index by as ld.so would. */
static int resolve(struct closure *c, int by, const char *name, struct dso *d)
{
	const struct dso *ld = &c->v[by];
	int r;

	if (strchr(name, '/')) {
		char *dir = dir_of(name);

		if (!dir)
			return PMU_ERR_NOMEM;
		r = try_dir(c, dir, strlen(dir), strrchr(name, '/') + 1, d);
		free(dir);
		return r;
	}
	if (!ld->runpath) {
		for (int l = by; l >= 0; l = c->v[l].loader)
			if (c->v[l].rpath && !c->v[l].runpath && (r = try_path(c, c->v[l].rpath, c->v[l].origin, name, d)))
				return r;
	}
	if (c->ldlp && (r = try_path(c, c->ldlp, c->v[0].origin, name, d)))
		return r;
	if (ld->runpath && (r = try_path(c, ld->runpath, ld->origin, name, d)))
		return r;
	for (size_t i = 0; i < c->nconf; i++)
		if ((r = try_dir(c, c->conf[i], strlen(c->conf[i]), name, d)))
			return r;
	{
		const char *tr = triplet(c->cls, c->machine);
		const char *l64 = c->cls == ELFCLASS64 ? "64" : "";
		char buf[4][64];
		int nd = 0;

		if (tr) {
			snprintf(buf[nd++], sizeof(buf[0]), "/lib/%s", tr);
			snprintf(buf[nd++], sizeof(buf[0]), "/usr/lib/%s", tr);
		}
		snprintf(buf[nd++], sizeof(buf[0]), "/lib%s", l64);
		snprintf(buf[nd++], sizeof(buf[0]), "/usr/lib%s", l64);
		for (int i = 0; i < nd; i++)
			if ((r = try_dir(c, buf[i], strlen(buf[i]), name, d)))
				return r;
		if (*l64) {
			if ((r = try_dir(c, "/lib", 4, name, d)) || (r = try_dir(c, "/usr/lib", 8, name, d)))
				return r;
		}
	}
	return 0;
}

/* /etc/ld.so.conf's directories, in order, following "include GLOB" (a
 * relative glob is relative to the including file's directory); "hwcap"
 * lines and comments are skipped.  Bounded in depth and count. */
static int conf_read(struct closure *c, const char *file, int depth)
{
	FILE *f;
	char line[PATH_MAX + 16];
	int err = 0;

	if (depth > CONF_MAX_DEPTH)
		return 0;
	f = fopen(file, "re");
	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f)) {
		char *s = line, *e;

		if ((e = strchr(s, '#')))
			*e = 0;
		s += strspn(s, " \t\r\n");
		e = s + strlen(s);
		while (e > s && strchr(" \t\r\n", e[-1]))
			*--e = 0;
		if (!*s || !strncmp(s, "hwcap", 5))
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			char pat[PATH_MAX];
			glob_t g;

			s += 8;
			s += strspn(s, " \t");
			if (*s == '/') {
				snprintf(pat, sizeof(pat), "%s", s);
			} else {
				char *dir = dir_of(file);

				if (!dir) {
					err = PMU_ERR_NOMEM;
					break;
				}
				snprintf(pat, sizeof(pat), "%s/%s", dir, s);
				free(dir);
			}
			if (!glob(pat, 0, NULL, &g)) {
				for (size_t i = 0; !err && i < g.gl_pathc; i++)
					err = conf_read(c, g.gl_pathv[i], depth + 1);
				globfree(&g);
			}
			continue;
		}
		if (c->nconf >= CONF_MAX_DIRS)
			continue;
		{
			char **nv = realloc(c->conf, (c->nconf + 1) * sizeof(*nv));

			if (!nv || !(nv[c->nconf] = strdup(s))) {
				if (nv)
					c->conf = nv;
				err = PMU_ERR_NOMEM;
				break;
			}
			c->conf = nv;
			c->nconf++;
		}
	}
	fclose(f);
	return err ? pmu_error(PMU_ERR_NOMEM, "out of memory") : 0;
}

/* already loaded: as this needed name, under this soname, or the same file */
static bool loaded(const struct closure *c, const char *name, const char *real)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct dso *d = &c->v[i];

		if (name && ((d->loaded_as && !strcmp(d->loaded_as, name)) || (d->soname && !strcmp(d->soname, name))))
			return true;
		if (real && !strcmp(d->real, real))
			return true;
	}
	return false;
}

/* Append d (taken over) unless its file is in already; calls fn. */
static int add(struct closure *c, struct dso *d, int loader, const char *as)
{
	if (loaded(c, NULL, d->real)) {
		dso_free(d);
		return 0;
	}
	if (c->n >= CLOSURE_MAX_OBJECTS) {
		dso_free(d);
		return pmu_error(PMU_ERR_LIMIT, "more than %d objects in the closure", CLOSURE_MAX_OBJECTS);
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;
		struct dso *nv = realloc(c->v, cap * sizeof(*nv));

		if (!nv) {
			dso_free(d);
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		}
		c->v = nv;
		c->cap = cap;
	}
	d->loader = loader;
	if (as && !(d->loaded_as = strdup(as))) {
		dso_free(d);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	c->v[c->n++] = *d;
	return c->fn ? c->fn(c->ctx, d->real) : 0;
}

/*
 * The Java launcher rule (sdtnote.h): libjli.so in the closure means a JDK
 * launcher, which dlopen()s the JVM it picks, by default the server VM:
 * <JAVA_HOME>/lib/server/libjvm.so (JDK 9 and later: libjli.so is
 * <JAVA_HOME>/lib/libjli.so), or <dir of libjli.so>/../server/libjvm.so
 * (JDK 8: jre/lib/<arch>/jli/libjli.so).
 */
static int java_rule(struct closure *c, size_t at)
{
	const char *real = c->v[at].real;
	char *dir;
	static const char *const tails[] = { "/server/libjvm.so", "/../server/libjvm.so" };
	int r = 0;

	if (!str_ends(real, "/libjli.so"))
		return 0;
	dir = dir_of(real);
	if (!dir)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < 2; i++) {
		char path[PATH_MAX];
		struct dso d;

		if (i == 0 && !str_ends(dir, "/lib"))
			continue;
		if (snprintf(path, sizeof(path), "%s%s", dir, tails[i]) >= (int)sizeof(path))
			continue;
		{
			char *pd = dir_of(path);

			if (!pd) {
				r = PMU_ERR_NOMEM;
				break;
			}
			r = try_dir(c, pd, strlen(pd), "libjvm.so", &d);
			free(pd);
		}
		if (r == 1) {
			r = add(c, &d, (int)at, "libjvm.so");
			break;
		}
		if (r < 0)
			break;
	}
	free(dir);
	return r < 0 && r == PMU_ERR_NOMEM ? pmu_error(r, "out of memory") : r;
}

static int closure_walk(const char *path, int (*fn)(void *, const char *), void (*miss)(void *, const char *, const char *),
			void *ctx)
{
	struct closure c = { .fn = fn, .miss = miss, .ctx = ctx };
	struct dso d;
	int r, fd;

	/* the program itself must open and be ELF: say which it is not */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	close(fd);
	r = dso_read(path, &c.cls, &c.machine, &d);
	if (r < 0)
		return pmu_error(r, "out of memory");
	if (r == 0)
		return pmu_error(PMU_ERR_CORRUPT, "'%s' is not an ELF file", path);
	d.real = realpath(path, NULL);
	d.origin = d.real ? dir_of(d.real) : NULL; /* the kernel execs the resolved file */
	if (!d.real || !d.origin) {
		dso_free(&d);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	c.ldlp = getenv("LD_LIBRARY_PATH");
	if (c.ldlp && !*c.ldlp)
		c.ldlp = NULL;
	if ((r = add(&c, &d, -1, NULL)))
		goto out;
	if ((r = conf_read(&c, "/etc/ld.so.conf", 0)))
		goto out;
	/* the interpreter (ld.so) is loaded too: by its path */
	if (c.v[0].interp) {
		struct dso id;
		char *idir = dir_of(c.v[0].interp);

		if (!idir) {
			r = pmu_error(PMU_ERR_NOMEM, "out of memory");
			goto out;
		}
		r = try_dir(&c, idir, strlen(idir), strrchr(c.v[0].interp, '/') ? strrchr(c.v[0].interp, '/') + 1
										 : c.v[0].interp, &id);
		free(idir);
		if (r == 1)
			r = add(&c, &id, 0, NULL);
		else if (r == 0 && miss)
			miss(ctx, c.v[0].interp, c.v[0].real);
		if (r < 0)
			goto out;
		r = 0;
	}
	/* breadth first: c.v grows while it is walked */
	for (size_t i = 0; i < c.n; i++) {
		for (size_t k = 0; k < c.v[i].nneeded; k++) {
			const char *name = c.v[i].needed[k];
			struct dso nd;

			if (loaded(&c, name, NULL))
				continue;
			r = resolve(&c, (int)i, name, &nd);
			if (r < 0) {
				r = pmu_error(r, "out of memory");
				goto out;
			}
			if (r == 0) {
				if (miss)
					miss(ctx, name, c.v[i].real);
				continue;
			}
			if ((r = add(&c, &nd, (int)i, name)))
				goto out;
		}
		if ((r = java_rule(&c, i)))
			goto out;
	}
out:
	for (size_t i = 0; i < c.n; i++)
		dso_free(&c.v[i]);
	free(c.v);
	for (size_t i = 0; i < c.nconf; i++)
		free(c.conf[i]);
	free(c.conf);
	return r;
}

int pmu_sdt_closure(const char *path, int (*fn)(void *ctx, const char *obj), void *ctx)
{
	return closure_walk(path, fn, NULL, ctx);
}

/* ---- pmurec --list-probes ---------------------------------------------------- */

struct listed_probe {
	struct pmu_sdt_probe p;
	size_t obj;
};

struct listing {
	char **objs;
	char **obj_err; /* NULL: read */
	size_t *obj_probes;
	size_t nobjs;
	char **miss;    /* "NAME (needed by OBJ)" */
	size_t nmiss;
	struct listed_probe *probes;
	size_t nprobes, cap;
	size_t cur;
	bool nomem;
};

static int list_obj(void *ctx, const char *obj)
{
	struct listing *l = ctx;
	char **nv = realloc(l->objs, (l->nobjs + 1) * sizeof(*nv));

	if (!nv)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	l->objs = nv;
	if (!(nv[l->nobjs] = strdup(obj)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	l->nobjs++;
	return 0;
}

static void list_miss(void *ctx, const char *needed, const char *by)
{
	struct listing *l = ctx;
	char **nv = realloc(l->miss, (l->nmiss + 1) * sizeof(*nv));

	if (!nv) {
		l->nomem = true;
		return;
	}
	l->miss = nv;
	if (asprintf(&nv[l->nmiss], "%s (needed by %s)", needed, by) < 0) {
		l->nomem = true;
		return;
	}
	l->nmiss++;
}

static int list_probe(void *ctx, const struct pmu_sdt_probe *p)
{
	struct listing *l = ctx;

	if (l->nprobes == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct listed_probe *nv = realloc(l->probes, cap * sizeof(*nv));

		if (!nv)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		l->probes = nv;
		l->cap = cap;
	}
	l->probes[l->nprobes].p = *p;
	l->probes[l->nprobes].obj = l->cur;
	l->nprobes++;
	return 0;
}

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->nobjs; i++) {
		free(l->objs[i]);
		if (l->obj_err)
			free(l->obj_err[i]);
	}
	free(l->objs);
	free(l->obj_err);
	free(l->obj_probes);
	for (size_t i = 0; i < l->nmiss; i++)
		free(l->miss[i]);
	free(l->miss);
	free(l->probes);
}

/* BINARY as execvp(3) would find it: with a slash as is, otherwise the
 * first regular executable file of that name along PATH. */
static char *find_exe(const char *bin)
{
	const char *path = getenv("PATH"), *p;

	if (strchr(bin, '/'))
		return strdup(bin);
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; p;) {
		const char *e = strchrnul(p, ':');
		char *cand;
		struct stat st;

		if (asprintf(&cand, "%.*s/%s", e == p ? 1 : (int)(e - p), e == p ? "." : p, bin) < 0)
			return NULL;
		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK))
			return cand;
		free(cand);
		p = *e ? e + 1 : NULL;
	}
	return strdup(bin); /* not found: the open below says so */
}

static void print_hex(char *buf, size_t n, uint64_t v)
{
	snprintf(buf, n, "0x%llx", (unsigned long long)v);
}

static int list_json(FILE *out, const char *binary, const char *exe, const struct listing *l, bool can,
		     const char *why, const char *remedy)
{
	json_t *o = json_object(), *objs = json_array(), *probes = json_array(), *miss = json_array(), *att = json_object();
	char hex[32];
	int r;

	if (!o || !objs || !probes || !miss || !att)
		goto nomem;
	json_object_set_new(o, "binary", json_string(binary));
	json_object_set_new(o, "path", json_string(exe));
	for (size_t i = 0; i < l->nobjs; i++) {
		json_t *ob = json_object();

		json_object_set_new(ob, "object", json_string(l->objs[i]));
		json_object_set_new(ob, "probes", json_integer((json_int_t)l->obj_probes[i]));
		json_object_set_new(ob, "error", l->obj_err[i] ? json_string(l->obj_err[i]) : json_null());
		json_array_append_new(objs, ob);
	}
	for (size_t i = 0; i < l->nprobes; i++) {
		const struct pmu_sdt_probe *p = &l->probes[i].p;
		json_t *pb = json_object();

		json_object_set_new(pb, "object", json_string(l->objs[l->probes[i].obj]));
		json_object_set_new(pb, "provider", json_string(p->provider));
		json_object_set_new(pb, "name", json_string(p->name));
		json_object_set_new(pb, "args", json_string(p->args));
		json_object_set_new(pb, "nargs", json_integer(p->nargs));
		print_hex(hex, sizeof(hex), p->pc);
		json_object_set_new(pb, "pc", json_string(hex));
		json_object_set_new(pb, "semaphore", json_boolean(p->semaphore != 0));
		print_hex(hex, sizeof(hex), p->semaphore);
		json_object_set_new(pb, "semaphore_addr", p->semaphore ? json_string(hex) : json_null());
		json_array_append_new(probes, pb);
	}
	for (size_t i = 0; i < l->nmiss; i++)
		json_array_append_new(miss, json_string(l->miss[i]));
	json_object_set_new(att, "possible", json_boolean(can));
	json_object_set_new(att, "reason", json_string(why));
	json_object_set_new(att, "remedy", remedy ? json_string(remedy) : json_null());
	json_object_set_new(o, "objects", objs);
	json_object_set_new(o, "probes", probes);
	json_object_set_new(o, "not_found", miss);
	json_object_set_new(o, "attach", att);
	r = json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(o);
	return r ? 2 : 0;
nomem:
	json_decref(o);
	json_decref(objs);
	json_decref(probes);
	json_decref(miss);
	json_decref(att);
	return 2;
}

static void list_text(FILE *out, const char *exe, const struct listing *l, bool can, const char *why, const char *remedy)
{
	size_t with = 0, wprov = 8, wname = 4, wargs = 4;

	for (size_t i = 0; i < l->nobjs; i++)
		with += l->obj_probes[i] > 0;
	for (size_t i = 0; i < l->nprobes; i++) {
		const struct pmu_sdt_probe *p = &l->probes[i].p;

		if (strlen(p->provider) > wprov)
			wprov = strlen(p->provider);
		if (strlen(p->name) > wname)
			wname = strlen(p->name);
		if (strlen(p->args) > wargs)
			wargs = strlen(p->args);
	}
	if (wargs > 48)
		wargs = 48;
	if (!l->nprobes) {
		fprintf(out, "%s and the %zu object%s it would load carry no USDT probes\n", exe, l->nobjs - 1,
			l->nobjs - 1 == 1 ? "" : "s");
	} else {
		fprintf(out, "%s: %zu USDT probe%s in %zu of the %zu object%s it would load (itself included)\n", exe,
			l->nprobes, l->nprobes == 1 ? "" : "s", with, l->nobjs, l->nobjs == 1 ? "" : "s");
	}
	for (size_t i = 0; i < l->nobjs; i++) {
		if (!l->obj_probes[i])
			continue;
		fprintf(out, "\n%s: %zu probe%s\n", l->objs[i], l->obj_probes[i], l->obj_probes[i] == 1 ? "" : "s");
		fprintf(out, "  %-*s  %-*s  %-9s  %-*s  %s\n", (int)wprov, "PROVIDER", (int)wname, "NAME", "SEMAPHORE",
			(int)wargs, "ARGS", "NARGS");
		for (size_t k = 0; k < l->nprobes; k++) {
			const struct pmu_sdt_probe *p = &l->probes[k].p;

			if (l->probes[k].obj != i)
				continue;
			fprintf(out, "  %-*s  %-*s  %-9s  %-*s  %d\n", (int)wprov, p->provider, (int)wname, p->name,
				p->semaphore ? "yes" : "no", (int)wargs, p->args[0] ? p->args : "-", p->nargs);
		}
	}
	if (l->nprobes && with < l->nobjs) {
		fprintf(out, "\nwithout probes:");
		for (size_t i = 0; i < l->nobjs; i++)
			if (!l->obj_probes[i] && !l->obj_err[i])
				fprintf(out, " %s", l->objs[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < l->nobjs; i++)
		if (l->obj_err[i])
			fprintf(out, "unreadable: %s\n", l->obj_err[i]);
	for (size_t i = 0; i < l->nmiss; i++)
		fprintf(out, "not found: %s\n", l->miss[i]);
	if (can)
		fprintf(out, "\ncan attach: %s\n", why);
	else
		fprintf(out, "\ncannot attach: %s; remedy: %s\n", why, remedy);
}

int pmu_sdt_list_main(const char *binary, bool json, FILE *out, FILE *err,
		      bool (*attach_check)(char *why, size_t n, const char **remedy))
{
	struct listing l = { 0 };
	char *exe = find_exe(binary), why[256];
	const char *remedy = NULL;
	unsigned char magic[4];
	int fd, r, code = 0;
	ssize_t n;
	bool can;

	if (!exe) {
		fprintf(err, "pmurec: --list-probes: out of memory\n");
		return 2;
	}
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && !strchr(binary, '/'))
			fprintf(err, "pmurec: --list-probes: '%s': not found in PATH\n", binary);
		else
			fprintf(err, "pmurec: --list-probes: cannot open '%s': %s\n", exe, strerror(errno));
		free(exe);
		return 2;
	}
	n = read(fd, magic, sizeof(magic));
	if (n >= 2 && magic[0] == '#' && magic[1] == '!') {
		char line[256];
		FILE *f = lseek(fd, 0, SEEK_SET) == 0 ? fdopen(fd, "r") : NULL;

		line[0] = 0;
		if (f && fgets(line, sizeof(line), f) && line[0] == '#' && line[1] == '!') {
			char *s = line + 2 + strspn(line + 2, " \t");

			s[strcspn(s, " \t\r\n")] = 0;
			fprintf(err, "pmurec: --list-probes: '%s' is not an ELF file but a script for '%s' (list the interpreter: pmurec --list-probes %s)\n",
				exe, s, s);
		} else {
			fprintf(err, "pmurec: --list-probes: '%s' is not an ELF file but a script\n", exe);
		}
		if (f)
			fclose(f);
		else
			close(fd);
		free(exe);
		return 2;
	}
	close(fd);
	if (n != 4 || memcmp(magic, ELFMAG, SELFMAG)) {
		struct stat st;

		if (!stat(exe, &st) && S_ISDIR(st.st_mode))
			fprintf(err, "pmurec: --list-probes: '%s' is a directory, not an ELF file\n", exe);
		else
			fprintf(err, "pmurec: --list-probes: '%s' is not an ELF file\n", exe);
		free(exe);
		return 2;
	}

	r = closure_walk(exe, list_obj, list_miss, &l);
	if (!r && l.nomem)
		r = pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (r) {
		fprintf(err, "pmurec: --list-probes: %s\n", pmu_error_detail());
		code = 2;
		goto out;
	}
	l.obj_err = calloc(l.nobjs, sizeof(*l.obj_err));
	l.obj_probes = calloc(l.nobjs, sizeof(*l.obj_probes));
	if (!l.obj_err || !l.obj_probes) {
		fprintf(err, "pmurec: --list-probes: out of memory\n");
		code = 2;
		goto out;
	}
	for (size_t i = 0; i < l.nobjs; i++) {
		size_t before = l.nprobes;

		l.cur = i;
		r = pmu_sdt_read(l.objs[i], list_probe, &l);
		if (r == PMU_ERR_NOMEM) {
			fprintf(err, "pmurec: --list-probes: out of memory\n");
			code = 2;
			goto out;
		}
		if (r) {
			/* the program's own notes must read; a library's bad
			 * notes are reported and the others listed */
			if (i == 0) {
				fprintf(err, "pmurec: --list-probes: %s\n", pmu_error_detail());
				code = 2;
				goto out;
			}
			l.nprobes = before;
			l.obj_err[i] = strdup(pmu_error_detail());
		}
		l.obj_probes[i] = l.nprobes - before;
	}
	can = attach_check(why, sizeof(why), &remedy);
	if (json)
		code = list_json(out, binary, exe, &l, can, why, remedy);
	else
		list_text(out, exe, &l, can, why, remedy);
	if (code)
		fprintf(err, "pmurec: --list-probes: out of memory\n");
out:
	listing_free(&l);
	free(exe);
	return code;
}
