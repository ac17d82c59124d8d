/*
 * t-sdtnote: lib/sdtnote.c on real files, held against binutils and ld.so.
 *
 * Probes: build/pmu-example's 10 pmu probe sites and /usr/bin/python3.11's
 * python probes (gc__start with a semaphore) against `readelf -n` (every
 * site's pc, semaphore and argument layout); the prelink correction on a
 * copy whose .stapsdt.base was moved by 0x1000 (every pc and semaphore
 * moves with it); malformed notes (a descriptor overrunning the section, a
 * string without its NUL) and a file cut short answer PMU_ERR_CORRUPT; a
 * file that is not ELF PMU_ERR_CORRUPT, a missing one PMU_ERR_IO; no notes
 * is 0 with no call; fn's nonzero stops the walk.
 *
 * Closure: of python3.11 and of programs built here with RPATH, RUNPATH,
 * $ORIGIN and LD_LIBRARY_PATH against what ld.so itself loads (`ldd`, which
 * runs ld.so); java's holds libjli.so and lib/server/libjvm.so (the launcher
 * rule).  Files this host lacks skip with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "sdtnote.h"
#include "tap.h"

#define PY "/usr/bin/python3.11"
#define JAVA "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"

static char dir[] = "/tmp/t-sdtnote.XXXXXX";

struct probes {
	struct pmu_sdt_probe v[2048];
	int n;
	int stop_at; /* fn answers 7 at this call (1-based); 0 never */
};

static int collect(void *ctx, const struct pmu_sdt_probe *p)
{
	struct probes *ps = ctx;

	if (ps->n < 2048)
		ps->v[ps->n] = *p;
	ps->n++;
	return ps->stop_at && ps->n == ps->stop_at ? 7 : 0;
}

/* readelf -n's notes of path: provider, name, pc, semaphore, args */
struct rnote {
	char provider[128], name[128], args[512];
	unsigned long long pc, sem;
};

static int readelf_notes(const char *path, struct rnote *v, int max)
{
	char cmd[PATH_MAX + 64], line[1024];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "readelf -n --wide '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *s = line + strspn(line, " "), *pv;
		unsigned long long pc, base, sem;

		line[strcspn(line, "\n")] = 0;
		/* "stapsdt  0x..\tNT_STAPSDT (...)\t    Provider: pmu" */
		if ((pv = strstr(line, "Provider: ")) && n + 1 < max) {
			n++;
			memset(&v[n], 0, sizeof(v[n]));
			snprintf(v[n].provider, sizeof(v[n].provider), "%s", pv + 10);
		} else if (n >= 0 && !strncmp(s, "Name: ", 6)) {
			snprintf(v[n].name, sizeof(v[n].name), "%s", s + 6);
		} else if (n >= 0 && sscanf(s, "Location: %llx, Base: %llx, Semaphore: %llx", &pc, &base, &sem) == 3) {
			v[n].pc = pc;
			v[n].sem = sem;
		} else if (n >= 0 && !strncmp(s, "Arguments: ", 11)) {
			snprintf(v[n].args, sizeof(v[n].args), "%s", s + 11);
		}
	}
	pclose(p);
	return n + 1;
}

/* every probe read equals readelf's note at the same index */
static void against_readelf(const char *path, const struct probes *ps)
{
	static struct rnote r[2048];
	int n = readelf_notes(path, r, 2048), bad = 0;

	is_int(ps->n, n, "as many probes as readelf -n shows");
	for (int i = 0; i < n && i < ps->n; i++) {
		const struct pmu_sdt_probe *p = &ps->v[i];

		if (strcmp(p->provider, r[i].provider) || strcmp(p->name, r[i].name) || strcmp(p->args, r[i].args) ||
		    p->pc != r[i].pc || p->semaphore != r[i].sem) {
			if (!bad++)
				printf("#   probe %d: %s:%s pc %llx sem %llx '%s'; readelf %s:%s pc %llx sem %llx '%s'\n", i,
				       p->provider, p->name, (unsigned long long)p->pc,
				       (unsigned long long)p->semaphore, p->args, r[i].provider, r[i].name, r[i].pc,
				       r[i].sem, r[i].args);
		}
	}
	ok(n > 0 && !bad, "every probe's provider, name, pc, semaphore and arguments are readelf's (%d differ)", bad);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The section header of the named section in the 64-bit little-endian
 * image buf: its file offset (of the header) and the section's. */
static int find_section(char *buf, size_t len, const char *want, size_t *hdr_off, size_t *sec_off, size_t *sec_size)
{
	Elf *e;
	Elf_Scn *s = NULL;
	size_t strx, idx;
	GElf_Ehdr eh;
	int found = 0;

	elf_version(EV_CURRENT);
	e = elf_memory(buf, len);
	if (!e || !gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &strx))
		return 0;
	while (!found && (s = elf_nextscn(e, s))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(s, &sh))
			break;
		nm = elf_strptr(e, strx, sh.sh_name);
		if (nm && !strcmp(nm, want)) {
			idx = elf_ndxscn(s);
			*hdr_off = eh.e_shoff + idx * eh.e_shentsize;
			*sec_off = sh.sh_offset;
			*sec_size = sh.sh_size;
			found = 1;
		}
	}
	elf_end(e);
	return found;
}

static void test_example(const char *build)
{
	char path[PATH_MAX];
	struct probes *ps = calloc(1, sizeof(*ps));
	static const char *const names[] = { "runtime", "mark", "span_begin", "span_end", "gc_begin", "gc_end", "alloc" };
	int err, others = 0;

	snprintf(path, sizeof(path), "%s/pmu-example", build);
	if (access(path, R_OK)) {
		skip("%s is not built (make)", path);
		free(ps);
		return;
	}
	err = pmu_sdt_read(path, collect, ps);
	is_int(err, 0, "pmu-example: read");
	is_int(ps->n, 10, "pmu-example: 10 probe sites");
	for (int i = 0; i < ps->n && i < 2048; i++)
		others += strcmp(ps->v[i].provider, "pmu") != 0 || ps->v[i].semaphore != 0;
	is_int(others, 0, "pmu-example: every probe is provider pmu, without a semaphore");
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		int seen = 0, nargs = -1;

		for (int i = 0; i < ps->n && i < 2048; i++)
			if (!strcmp(ps->v[i].name, names[k])) {
				seen++;
				nargs = ps->v[i].nargs;
			}
		/* the argument counts of include/pmu/probe.h's ABI 1 */
		ok(seen > 0 && nargs == (!strcmp(names[k], "span_begin") ? 3 : !strcmp(names[k], "runtime") ? 2 : 1),
		   "pmu-example: pmu:%s present (%d sites), %d args", names[k], seen, nargs);
	}
	against_readelf(path, ps);

	/* fn's answer stops the walk and comes back */
	memset(ps, 0, sizeof(*ps));
	ps->stop_at = 3;
	err = pmu_sdt_read(path, collect, ps);
	ok(err == 7 && ps->n == 3, "fn's nonzero stops the walk at that probe and is returned (%d after %d)", err, ps->n);

	/* malformed notes in a copy */
	{
		size_t len, ho, so, ss;
		char *buf = slurp(path, &len);

		if (!buf || !find_section(buf, len, ".note.stapsdt", &ho, &so, &ss) || ss < 12) {
			ok(0, "pmu-example's .note.stapsdt found in a copy");
		} else {
			uint32_t descsz, namesz;
			char *copy = malloc(len);

			memcpy(&namesz, buf + so, 4);
			memcpy(&descsz, buf + so + 4, 4);

			/* the first descriptor claims past the section */
			memcpy(copy, buf, len);
			*(uint32_t *)(copy + so + 4) = 0x7ffffff0u;
			memset(ps, 0, sizeof(*ps));
			err = pmu_sdt_read_mem(copy, len, collect, ps);
			ok(err == PMU_ERR_CORRUPT && ps->n == 0, "a note overrunning its section: PMU_ERR_CORRUPT (%s: %s)",
			   pmu_errname(err), pmu_error_detail());

			/* the first descriptor's last string loses its NUL */
			memcpy(copy, buf, len);
			copy[so + 12 + ((namesz + 3) & ~3u) + descsz - 1] = 'x';
			memset(ps, 0, sizeof(*ps));
			err = pmu_sdt_read_mem(copy, len, collect, ps);
			ok(err == PMU_ERR_CORRUPT && ps->n == 0, "a probe's argument layout without its NUL: PMU_ERR_CORRUPT (%s: %s)",
			   pmu_errname(err), pmu_error_detail());

			/* a descriptor too short for its three addresses */
			memcpy(copy, buf, len);
			*(uint32_t *)(copy + so + 4) = 20;
			memset(ps, 0, sizeof(*ps));
			err = pmu_sdt_read_mem(copy, len, collect, ps);
			ok(err == PMU_ERR_CORRUPT, "a descriptor too short for its addresses: PMU_ERR_CORRUPT (%s: %s)",
			   pmu_errname(err), pmu_error_detail());

			/* the file cut in the middle of its section headers */
			memset(ps, 0, sizeof(*ps));
			err = pmu_sdt_read_mem(buf, len - 100, collect, ps);
			ok(err == PMU_ERR_CORRUPT, "a file cut short: PMU_ERR_CORRUPT (%s: %s)", pmu_errname(err),
			   pmu_error_detail());

			/* the image as a whole reads as the file does */
			memset(ps, 0, sizeof(*ps));
			err = pmu_sdt_read_mem(buf, len, collect, ps);
			ok(err == 0 && ps->n == 10, "pmu_sdt_read_mem on the file's bytes: the same 10 probes");
			free(copy);
		}
		free(buf);
	}
	free(ps);
}

static void test_python(void)
{
	struct probes *ps = calloc(1, sizeof(*ps)), *moved = calloc(1, sizeof(*moved));
	int err, gc = -1;

	if (access(PY, R_OK)) {
		skip("%s is not installed (scripts/deps installs python3.11)", PY);
		free(ps);
		free(moved);
		return;
	}
	err = pmu_sdt_read(PY, collect, ps);
	is_int(err, 0, "python3.11: read");
	for (int i = 0; i < ps->n && i < 2048; i++)
		if (!strcmp(ps->v[i].provider, "python") && !strcmp(ps->v[i].name, "gc__start"))
			gc = i;
	ok(gc >= 0 && ps->v[gc].semaphore != 0 && ps->v[gc].nargs == 1 && !strncmp(ps->v[gc].args, "-4@", 3),
	   "python3.11: python:gc__start with a semaphore and one 4-byte signed argument ('%s')",
	   gc >= 0 ? ps->v[gc].args : "");
	against_readelf(PY, ps);

	/* prelink moved the file: .stapsdt.base's address in the section
	 * header differs from the one the notes recorded by 0x1000 */
	{
		size_t len, ho, so, ss;
		char *buf = slurp(PY, &len);

		if (!buf || !find_section(buf, len, ".stapsdt.base", &ho, &so, &ss)) {
			ok(0, "python3.11's .stapsdt.base found in a copy");
		} else {
			uint64_t addr;
			int off = 0;

			memcpy(&addr, buf + ho + 16, 8); /* Elf64_Shdr.sh_addr */
			addr += 0x1000;
			memcpy(buf + ho + 16, &addr, 8);
			err = pmu_sdt_read_mem(buf, len, collect, moved);
			is_int(moved->n, ps->n, "prelinked copy: as many probes");
			for (int i = 0; i < ps->n && i < moved->n && i < 2048; i++)
				off += moved->v[i].pc != ps->v[i].pc + 0x1000 ||
				       moved->v[i].semaphore != ps->v[i].semaphore + (ps->v[i].semaphore ? 0x1000 : 0);
			ok(err == 0 && off == 0, "prelinked copy: every pc and semaphore corrected by the 0x1000 it moved (%d not)",
			   off);
		}
		free(buf);
	}
	free(ps);
	free(moved);
}

static void test_errors(void)
{
	struct probes *ps = calloc(1, sizeof(*ps));
	char path[PATH_MAX];
	int err;
	FILE *f;

	err = pmu_sdt_read("/nonexistent/t-sdtnote", collect, ps);
	ok(err == PMU_ERR_IO && strstr(pmu_error_detail(), "cannot open '/nonexistent/t-sdtnote'"),
	   "a missing file: PMU_ERR_IO, the path named (%s)", pmu_error_detail());
	snprintf(path, sizeof(path), "%s/text", dir);
	f = fopen(path, "w");
	fputs("#!/bin/sh\necho not elf\n", f);
	fclose(f);
	err = pmu_sdt_read(path, collect, ps);
	ok(err == PMU_ERR_CORRUPT && strstr(pmu_error_detail(), "not an ELF file"),
	   "a text file: PMU_ERR_CORRUPT, not an ELF file (%s)", pmu_error_detail());
	err = pmu_sdt_read(dir, collect, ps);
	ok(err == PMU_ERR_CORRUPT, "a directory: PMU_ERR_CORRUPT (%s)", pmu_error_detail());
	err = pmu_sdt_read_mem("", 0, collect, ps);
	ok(err == PMU_ERR_CORRUPT, "an empty image: PMU_ERR_CORRUPT");
	memset(ps, 0, sizeof(*ps));
	err = pmu_sdt_read("/bin/true", collect, ps);
	ok(err == 0 && ps->n == 0, "/bin/true: no probes, 0 and no call (%d, %d calls)", err, ps->n);
	free(ps);
}

/* ---- closure ---- */

struct objs {
	char *v[256];
	int n;
};

static int collect_obj(void *ctx, const char *obj)
{
	struct objs *o = ctx;

	if (o->n < 256)
		o->v[o->n++] = strdup(obj);
	return 0;
}

static void objs_free(struct objs *o)
{
	for (int i = 0; i < o->n; i++)
		free(o->v[i]);
	o->n = 0;
}

static int has_obj(const struct objs *o, const char *path)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->v[i], path))
			return 1;
	return 0;
}

static int has_tail(const struct objs *o, const char *tail)
{
	size_t tl = strlen(tail);

	for (int i = 0; i < o->n; i++) {
		size_t l = strlen(o->v[i]);

		if (l >= tl && !strcmp(o->v[i] + l - tl, tail))
			return 1;
	}
	return 0;
}

/* ld.so's own answer (ldd runs it): every object it loads (real paths)
 * is in o, and o holds nothing else; unresolved names fail it. */
static void against_ldd(const char *prog, const struct objs *o, const char *what)
{
	char cmd[PATH_MAX + 32], line[1024];
	int n = 0, missing = 0, notfound = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ldd '%s' 2>&1", prog);
	p = popen(cmd, "r");
	if (!p) {
		ok(0, "%s: ldd runs", what);
		return;
	}
	while (fgets(line, sizeof(line), p)) {
		char *path = NULL, *s, *rp;

		if (strstr(line, "not found"))
			notfound++;
		if ((s = strstr(line, "=> /")))
			path = s + 3;
		else if ((s = strchr(line, '/')) && s == line + strspn(line, " \t"))
			path = s;
		if (!path)
			continue;
		path[strcspn(path, " (\n")] = 0;
		rp = realpath(path, NULL);
		n++;
		if (!rp || !has_obj(o, rp)) {
			if (!missing++)
				printf("#   ld.so loads %s, not in the closure\n", rp ? rp : path);
		}
		free(rp);
	}
	pclose(p);
	/* o also holds the program itself (ldd does not list it) */
	ok(notfound == 0 && missing == 0 && o->n == n + 1,
	   "%s: the closure is what ld.so loads (%d objects by ldd, %d here, %d missing)", what, n, o->n - 1, missing);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void test_closure_real(void)
{
	struct objs o = { 0 };
	char *rp;
	int err;

	if (access(PY, R_OK)) {
		skip("%s is not installed", PY);
	} else {
		err = pmu_sdt_closure(PY, collect_obj, &o);
		rp = realpath(PY, NULL);
		ok(err == 0 && o.n > 1 && rp && !strcmp(o.v[0], rp), "python3.11: the closure starts with the program itself");
		ok(has_tail(&o, "/libc.so.6"), "python3.11: the closure holds libc.so.6");
		against_ldd(PY, &o, "python3.11");
		free(rp);
		objs_free(&o);
	}
	if (access(JAVA, R_OK)) {
		skip("%s is not installed (scripts/deps installs openjdk-17-jdk-headless)", JAVA);
	} else {
		err = pmu_sdt_closure(JAVA, collect_obj, &o);
		ok(err == 0 && has_tail(&o, "/lib/libjli.so") &&
			   has_obj(&o, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
		   "java: the closure holds libjli.so and, by the launcher rule, lib/server/libjvm.so");
		ok(has_tail(&o, "/libstdc++.so.6") || has_tail(&o, "libstdc++.so.6.0.30") || o.n > 5,
		   "java: and libjvm.so's own needed objects (%d objects)", o.n);
		objs_free(&o);
	}
	err = pmu_sdt_closure("/nonexistent/prog", collect_obj, &o);
	ok(err == PMU_ERR_IO && o.n == 0, "closure of a missing program: PMU_ERR_IO, no object");
	err = pmu_sdt_closure("/etc/passwd", collect_obj, &o);
	ok(err == PMU_ERR_CORRUPT && o.n == 0, "closure of a text file: PMU_ERR_CORRUPT, no object");
}

/* Programs built here: each search rule of ld.so held against ld.so. */
static void test_closure_built(void)
{
	struct objs o = { 0 };
	char prog[PATH_MAX], want[PATH_MAX], *old = getenv("LD_LIBRARY_PATH") ? strdup(getenv("LD_LIBRARY_PATH")) : NULL;
	int err;

	if (sh("command -v cc >/dev/null 2>&1")) {
		skip("no cc: the closure's search rules need programs built here");
		return;
	}
	/* libt.so in two directories (r/ and l/), each with a distinct symbol
	 * set so ld.so loads either; libu.so in u/ needed by libt.so; main*
	 * need libt.so */
	if (sh("cd %s && mkdir -p r l u bin && echo 'int u(void){return 1;}' >u.c && "
	       "cc -shared -fPIC -o u/libu.so u.c && "
	       "echo 'int u(void); int t(void){return u();}' >t.c && "
	       "cc -shared -fPIC -o r/libt.so t.c -Lu -lu && cc -shared -fPIC -o l/libt.so t.c -Lu -lu && "
	       "echo 'int t(void); int main(void){return t();}' >m.c && "
	       /* RPATH with $ORIGIN (also covers libu.so: a needed object's
	        * search inherits the program's RPATH) */
	       "cc -o bin/m-rpath m.c -Lr -lt -Wl,-rpath-link,u -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../r:$ORIGIN/../u' && "
	       /* RUNPATH: not inherited, libu.so found through LD_LIBRARY_PATH */
	       "cc -o bin/m-runpath m.c -Lr -lt -Wl,-rpath-link,u -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../r' && "
	       "cc -o bin/m-plain m.c -Lr -lt -Wl,-rpath-link,u",
	       dir)) {
		skip("cc could not build the closure's test programs");
		return;
	}
	unsetenv("LD_LIBRARY_PATH");
	snprintf(prog, sizeof(prog), "%s/bin/m-rpath", dir);
	err = pmu_sdt_closure(prog, collect_obj, &o);
	snprintf(want, sizeof(want), "%s/r/libt.so", dir);
	ok(err == 0 && has_obj(&o, want), "RPATH $ORIGIN/../r: r/libt.so");
	against_ldd(prog, &o, "RPATH, inherited by libt.so for libu.so");
	objs_free(&o);

	/* LD_LIBRARY_PATH comes after RPATH */
	setenv("LD_LIBRARY_PATH", "/nonexistent::", 1);
	{
		char ll[PATH_MAX * 2];

		snprintf(ll, sizeof(ll), "%s/l:%s/u", dir, dir);
		setenv("LD_LIBRARY_PATH", ll, 1);
	}
	err = pmu_sdt_closure(prog, collect_obj, &o);
	ok(err == 0 && has_obj(&o, want), "RPATH before LD_LIBRARY_PATH: still r/libt.so");
	against_ldd(prog, &o, "RPATH with LD_LIBRARY_PATH");
	objs_free(&o);

	/* ... and before RUNPATH */
	snprintf(prog, sizeof(prog), "%s/bin/m-runpath", dir);
	err = pmu_sdt_closure(prog, collect_obj, &o);
	snprintf(want, sizeof(want), "%s/l/libt.so", dir);
	ok(err == 0 && has_obj(&o, want), "LD_LIBRARY_PATH before RUNPATH: l/libt.so");
	against_ldd(prog, &o, "RUNPATH with LD_LIBRARY_PATH");
	objs_free(&o);

	unsetenv("LD_LIBRARY_PATH");
	snprintf(prog, sizeof(prog), "%s/bin/m-plain", dir);
	err = pmu_sdt_closure(prog, collect_obj, &o);
	ok(err == 0 && !has_tail(&o, "/libt.so"), "no search path reaches libt.so: left out, as ld.so cannot load it");
	objs_free(&o);
	{
		char ll[PATH_MAX * 2];

		snprintf(ll, sizeof(ll), "%s/u:%s/r", dir, dir);
		setenv("LD_LIBRARY_PATH", ll, 1);
	}
	err = pmu_sdt_closure(prog, collect_obj, &o);
	against_ldd(prog, &o, "LD_LIBRARY_PATH alone");
	objs_free(&o);

	if (old)
		setenv("LD_LIBRARY_PATH", old, 1);
	else
		unsetenv("LD_LIBRARY_PATH");
	free(old);
}

int main(void)
{
	const char *build = getenv("PMU_BUILD") ? getenv("PMU_BUILD") : "build";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_example(build);
	test_python();
	test_errors();
	test_closure_real();
	test_closure_built();
	sh("rm -rf '%s'", dir);
	return done_testing();
}
