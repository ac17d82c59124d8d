/* Retained binaries (backends/linux/retain.c): real programs built here with
 * cc -g and split with objcopy (--only-keep-debug, --strip-debug,
 * --add-gnu-debuglink), a debug root laid out as /usr/lib/debug is, the
 * recorder's own vDSO, live, deleted and chrooted processes, and a JIT map.
 * Each copy is compared with its original by SHA-256 and each build-id with
 * what binutils' readelf reads; every record is checked against the spec's
 * maps stream tables (lib/spec.c).  The bundle is a tiny pmu_out writing
 * into a temp dir: shared files under bundle/, a repetition's under
 * bundle/rep<k>/. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "../tap.h"
#include "collector.h"
#include "error.h"
#include "sha256.h"
#include "spec.h"
#include "linux/retain.h"

static char tmp[256];

/* ---- a bundle in a temp dir ------------------------------------------------- */

struct pmu_stream {
	int fd;             /* a blob's, else -1 */
	json_t *recs;       /* a stream's records go to the out's array */
};

struct tout {
	struct pmu_out o;
	char rep[32];
	json_t *recs;       /* every record put, in order */
	struct pmu_stream *maps;
};

static int t_open(struct pmu_out *o, const char *rel, const char *kind, struct pmu_stream **sp)
{
	struct tout *t = (struct tout *)o;

	(void)rel;
	(void)kind;
	*sp = calloc(1, sizeof(**sp));
	(*sp)->fd = -1;
	(*sp)->recs = t->recs;
	return 0;
}

static int t_put(struct pmu_stream *s, json_t *rec)
{
	return json_array_append_new(s->recs, rec) ? PMU_ERR_NOMEM : 0;
}

static int t_close(struct pmu_stream *s)
{
	int err = s->fd >= 0 && close(s->fd) ? PMU_ERR_IO : 0;

	free(s);
	return err;
}

static void mkdirs(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
}

static int t_blob_open(struct pmu_out *o, const char *rel, bool shared, struct pmu_stream **sp)
{
	struct tout *t = (struct tout *)o;
	char p[PATH_MAX];

	*sp = calloc(1, sizeof(**sp));
	snprintf(p, sizeof(p), "%s/bundle/%s%s%s", tmp, shared ? "" : t->rep, shared ? "" : "/", rel);
	mkdirs(p);
	(*sp)->fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if ((*sp)->fd < 0)
		return pmu_error(errno == EEXIST ? PMU_ERR_EXISTS : PMU_ERR_IO, "cannot create '%s': %s", p,
				 strerror(errno));
	return 0;
}

static int t_blob_write(struct pmu_stream *s, const void *p, size_t n)
{
	return write(s->fd, p, n) == (ssize_t)n ? 0 : PMU_ERR_IO;
}

static void tout_init(struct tout *t, int rep)
{
	memset(t, 0, sizeof(*t));
	t->o = (struct pmu_out){ t_open, t_put, t_close, t, t_blob_open, t_blob_write };
	snprintf(t->rep, sizeof(t->rep), "rep%d", rep);
	t->recs = json_array();
	t_open(&t->o, "collectors/sampling/maps.jsonl", "maps", &t->maps);
}

static void tout_release(struct tout *t)
{
	t_close(t->maps);
	json_decref(t->recs);
}

/* ---- helpers -------------------------------------------------------------------- */

__attribute__((format(printf, 1, 2)))
static int sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st)
		printf("# '%s' exited %d\n", cmd, st);
	return st;
}

static bool have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* The build-id readelf -n (binutils) prints for path, or "" */
static void readelf_bid(const char *path, char *hex, size_t n)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	if (!(p = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (b && !hex[0] && n > 128)
			sscanf(b + 10, "%128s", hex);
	}
	pclose(p);
}

static void sha_of(const char *path, char hex[PMU_SHA256_HEX])
{
	uint64_t size;

	if (pmu_sha256_file(AT_FDCWD, path, hex, &size))
		snprintf(hex, PMU_SHA256_HEX, "unreadable");
}

/* Whether the file in the bundle (rel under bundle/) equals src byte for byte. */
static bool same_file(const char *rel, const char *src)
{
	char a[PMU_SHA256_HEX], b[PMU_SHA256_HEX], p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/bundle/%s", tmp, rel);
	sha_of(p, a);
	sha_of(src, b);
	if (strcmp(a, b))
		printf("#   %s: %s, %s: %s\n", p, a, src, b);
	return !strcmp(a, b);
}

static const char *sget(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The records of t from index from on, of type, kind (NULL: any). */
static json_t *find(const struct tout *t, size_t from, const char *type, const char *kind)
{
	for (size_t i = from; i < json_array_size(t->recs); i++) {
		json_t *r = json_array_get(t->recs, i);

		if (!strcmp(sget(r, "type"), type) && (!kind || (sget(r, "kind") && !strcmp(sget(r, "kind"), kind))))
			return r;
	}
	return NULL;
}

/* Every record t holds is one the spec's maps stream allows: its type, no
 * key the table lacks, every required one, kind from its enum; and each
 * retained copy has the build-id note (readelf) its record names. */
static bool spec_ok(const struct tout *t)
{
	const struct pmu_streamdef *sd = NULL;
	size_t i;
	json_t *r;

	for (size_t k = 0; k < pmu_nstreams; k++)
		if (!strcmp(pmu_streams[k].kind, "maps"))
			sd = &pmu_streams[k];
	if (!sd)
		return false;
	json_array_foreach(t->recs, i, r) {
		const char *type = sget(r, "type"), *key;
		const struct pmu_recdef *rd = type ? pmu_streamdef_rec(sd, type, strlen(type)) : NULL;
		json_t *v;

		if (!rd || (strcmp(type, "retained") && strcmp(type, "unretained")))
			return printf("#   record %zu: type %s\n", i, type), false;
		json_object_foreach(r, key, v) {
			const struct pmu_field *f = pmu_objdef_field(rd->obj, key, strlen(key));

			if (!f)
				return printf("#   record %zu: key %s\n", i, key), false;
			if (f->type == PMU_FT_ENUM &&
			    !pmu_enum_has(f->enumv, json_string_value(v), strlen(json_string_value(v))))
				return printf("#   record %zu: %s %s\n", i, key, json_string_value(v)), false;
			if ((f->type == PMU_FT_STR || f->type == PMU_FT_ENUM) && (!json_is_string(v) || !*json_string_value(v)))
				return printf("#   record %zu: %s empty\n", i, key), false;
		}
		for (size_t k = 0; k < rd->obj->nfields; k++)
			if (rd->obj->fields[k].required && !json_object_get(r, rd->obj->fields[k].key))
				return printf("#   record %zu: no %s\n", i, rd->obj->fields[k].key), false;
		/* the copy is what the record says (the validator's RETAINED) */
		if (!strcmp(type, "retained") && sget(r, "build_id")) {
			char p[PATH_MAX], hex[129];

			snprintf(p, sizeof(p), "%s/bundle/%s", tmp, sget(r, "file"));
			readelf_bid(p, hex, sizeof(hex));
			if (strcmp(hex, sget(r, "build_id")))
				return printf("#   record %zu: %s has build-id '%s'\n", i, p, hex), false;
		}
	}
	return true;
}

static void expected_rel(char *rel, size_t n, const char *bid, const char *suffix)
{
	snprintf(rel, n, "build-id/%.2s/%s%s", bid, bid + 2, suffix);
}

static const char prog_c[] =
	"#include <string.h>\n"
	"#include <unistd.h>\n"
	"int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * VARIANT; return s; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tif (argc > 1 && !strcmp(argv[1], \"wait\"))\n"
	"\t\tfor (;;) pause();\n"
	"\treturn work(argc) & 1;\n"
	"}\n";

/* tmp/<name>, cc -g with VARIANT v: its path in p and build-id in bid. */
static bool build(const char *name, int v, char *p, size_t n, char *bid)
{
	char why[512];

	snprintf(p, n, "%s/%s", tmp, name);
	if (sh("cc -g -O0 -Wl,--build-id -DVARIANT=%d -o '%s' '%s/prog.c'", v, p, tmp))
		return false;
	if (pmu_elf_file_build_id(p, bid, 129, why, sizeof(why))) {
		printf("# %s\n", why);
		return false;
	}
	return true;
}

/* A process of prog waiting in pause(), once it has exec'd prog. */
static pid_t spawn_wait(const char *prog)
{
	char exe[64], got[PATH_MAX];
	pid_t pid = fork();

	if (pid == 0) {
		execl(prog, prog, "wait", (char *)NULL);
		_exit(127);
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 5000; i++) {
		ssize_t n = readlink(exe, got, sizeof(got) - 1);

		if (n > 0 && (got[n] = '\0', !strncmp(got, prog, strlen(prog))))
			return pid;
		usleep(1000);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	char prog[PATH_MAX], bid[129], root[PATH_MAX + 16], rel[300], p[PATH_MAX + 300], why[512], hex[129];
	struct pmu_retain *r;
	struct tout t, t2;
	size_t n0;
	json_t *rec;

	snprintf(tmp, sizeof(tmp), "%s/t-retain.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		ok(0, "a temp dir: %s", strerror(errno));
		return done_testing();
	}
	/* the debug root is ours: the host's /usr/lib/debug stays out */
	snprintf(root, sizeof(root), "%s/debugroot", tmp);
	mkdir(root, 0755);
	setenv("PMU_DEBUG_ROOT", root, 1);

	/* files that need no compiler */
	tout_init(&t, 1);
	r = pmu_retain_new(&t.o);
	ok(r != NULL, "a retainer for a bundle");
	is_int(pmu_retain_object(r, t.maps, 0, "/no/such/file", NULL), 0, "an object without a build-id: 0");
	n0 = json_array_size(t.recs);
	rec = json_array_get(t.recs, n0 - 1);
	ok(rec && !strcmp(sget(rec, "type"), "unretained") && strstr(sget(rec, "reason"), "no build-id"),
	   "an object the run saw no build-id for is unretained: %s", rec ? sget(rec, "reason") : "(none)");
	pmu_retain_object(r, t.maps, 0, "/no/such/file", "0123456789abcdef0123456789abcdef01234567");
	rec = json_array_get(t.recs, json_array_size(t.recs) - 1);
	ok(rec && !strcmp(sget(rec, "type"), "unretained") && strstr(sget(rec, "reason"), "cannot open '/no/such/file'") &&
	   !strcmp(sget(rec, "build_id"), "0123456789abcdef0123456789abcdef01234567"),
	   "a missing file is unretained with its build-id and why: %s", rec ? sget(rec, "reason") : "(none)");
	pmu_retain_object(r, t.maps, 0, "//anon", "0123456789abcdef0123456789abcdef01234567");
	rec = json_array_get(t.recs, json_array_size(t.recs) - 1);
	ok(rec && strstr(sget(rec, "reason"), "not a file"), "a path that is no file is unretained: %s",
	   rec ? sget(rec, "reason") : "(none)");
	snprintf(p, sizeof(p), "%s/text", tmp);
	sh("echo 'not an ELF file' > '%s'", p);
	pmu_retain_object(r, t.maps, 0, p, "0123456789abcdef0123456789abcdef01234567");
	rec = json_array_get(t.recs, json_array_size(t.recs) - 1);
	ok(rec && strstr(sget(rec, "reason"), "not an ELF file"), "a text file is unretained: %s",
	   rec ? sget(rec, "reason") : "(none)");
	{
		/* sparse: no disk spent */
		int fd;

		snprintf(p, sizeof(p), "%s/huge", tmp);
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ok(fd >= 0 && ftruncate(fd, (2ll << 30) + 1) == 0, "a sparse file of 2 GiB + 1 byte");
		if (fd >= 0)
			close(fd);
		pmu_retain_object(r, t.maps, 0, p, "0123456789abcdef0123456789abcdef01234567");
		rec = json_array_get(t.recs, json_array_size(t.recs) - 1);
		ok(rec && strstr(sget(rec, "reason"), "over the 2 GiB limit"), "a file over the limit is unretained: %s",
		   rec ? sget(rec, "reason") : "(none)");
		unlink(p);
	}
	ok(spec_ok(&t), "every record so far is a maps record the spec allows");
	tout_release(&t);
	pmu_retain_free(r);

	/* the vDSO: the run saw the build-id readelf reads from a copy of
	 * this process's [vdso] mapping */
	if (!have("readelf")) {
		skip("readelf (binutils) not found: the vDSO's build-id cannot be read independently");
	} else {
		unsigned long long lo = 0, hi = 0;
		char line[256];
		FILE *f = fopen("/proc/self/maps", "r");

		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "[vdso]"))
				sscanf(line, "%llx-%llx", &lo, &hi);
		if (f)
			fclose(f);
		if (!lo) {
			skip("this process has no [vdso] mapping");
		} else {
			int fd;

			snprintf(p, sizeof(p), "%s/vdso.img", tmp);
			fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			ok(fd >= 0 && write(fd, (void *)(uintptr_t)lo, hi - lo) == (ssize_t)(hi - lo), "the [vdso] mapping copied");
			close(fd);
			readelf_bid(p, bid, sizeof(bid));
			ok(bid[0] != '\0', "readelf reads the vDSO's build-id: %s", bid);
			tout_init(&t, 1);
			r = pmu_retain_new(&t.o);
			is_int(pmu_retain_object(r, t.maps, 0, "[vdso]", bid), 0, "[vdso] retained");
			rec = find(&t, 0, "retained", "vdso");
			expected_rel(rel, sizeof(rel), bid, "");
			ok(rec && !strcmp(sget(rec, "file"), rel) && !strcmp(sget(rec, "build_id"), bid) &&
			   !strcmp(sget(rec, "path"), "[vdso]"),
			   "as kind vdso, file %s", rel);
			snprintf(p, sizeof(p), "%s/bundle/%s", tmp, rel);
			readelf_bid(p, hex, sizeof(hex));
			is_str(hex, bid, "the copy's build-id (readelf) is the one the run saw");
			{
				/* the copy is the image's first size_bytes */
				FILE *c = fopen(p, "r");
				long long sz = rec ? json_integer_value(json_object_get(rec, "size_bytes")) : 0;
				unsigned char *b = malloc(sz > 0 ? (size_t)sz : 1);

				ok(c && sz > 0 && sz <= (long long)(hi - lo) && fread(b, 1, (size_t)sz, c) == (size_t)sz &&
				   !memcmp(b, (void *)(uintptr_t)lo, (size_t)sz),
				   "the copy is the vDSO's bytes (%lld of its %llu byte mapping)", sz, hi - lo);
				free(b);
				if (c)
					fclose(c);
			}
			n0 = json_array_size(t.recs);
			pmu_retain_object(r, t.maps, 0, "[vdso]", bid);
			is_int((long long)json_array_size(t.recs), (long long)n0, "a second [vdso] writes nothing");
			ok(spec_ok(&t), "the vDSO's records are ones the spec allows");
			tout_release(&t);
			pmu_retain_free(r);

			tout_init(&t, 2);
			r = pmu_retain_new(&t.o);
			pmu_retain_object(r, t.maps, 0, "[vdso]", "00112233445566778899aabbccddeeff00112233");
			rec = find(&t, 0, "unretained", NULL);
			ok(rec && strstr(sget(rec, "reason"), "not the one the run saw") && !find(&t, 0, "retained", NULL),
			   "a vDSO with another build-id is unretained: %s", rec ? sget(rec, "reason") : "(none)");
			tout_release(&t);
			pmu_retain_free(r);
		}
	}

	if (!have("cc") || !have("objcopy") || !have("readelf")) {
		skip("cc, objcopy or readelf not found: no programs to retain are built");
		sh("rm -rf '%s'", tmp);
		return done_testing();
	}
	snprintf(p, sizeof(p), "%s/prog.c", tmp);
	{
		FILE *f = fopen(p, "w");

		fputs(prog_c, f);
		fclose(f);
	}

	/* an unstripped program: the object alone */
	if (!ok(build("prog", 1, prog, sizeof(prog), bid), "cc -g builds a program with a build-id")) {
		sh("rm -rf '%s'", tmp);
		return done_testing();
	}
	readelf_bid(prog, hex, sizeof(hex));
	is_str(bid, hex, "pmu_elf_file_build_id reads what readelf -n reads");
	tout_init(&t, 1);
	r = pmu_retain_new(&t.o);
	is_int(pmu_retain_object(r, t.maps, 0, prog, bid), 0, "the program is retained");
	rec = find(&t, 0, "retained", "binary");
	expected_rel(rel, sizeof(rel), bid, "");
	ok(rec && !strcmp(sget(rec, "file"), rel) && !strcmp(sget(rec, "path"), prog) && !strcmp(sget(rec, "build_id"), bid),
	   "as kind binary, file %s, its path and build-id", rel);
	{
		struct stat st;

		stat(prog, &st);
		is_int(rec ? json_integer_value(json_object_get(rec, "size_bytes")) : -1, st.st_size, "size_bytes is its size");
	}
	ok(same_file(rel, prog), "the copy's SHA-256 is the original's");
	is_int((long long)json_array_size(t.recs), 1, "no debug file is recorded for a program that has its own");
	is_int(pmu_retain_object(r, t.maps, 0, prog, bid), 0, "the same build-id again");
	is_int((long long)json_array_size(t.recs), 1, "records nothing");
	tout_init(&t2, 2);
	{
		struct pmu_retain *r2 = pmu_retain_new(&t2.o);

		is_int(pmu_retain_object(r2, t2.maps, 0, prog, bid), 0, "another repetition's retainer, the same build-id");
		is_int((long long)json_array_size(t2.recs), 0, "finds it in the bundle (blob_open: exists) and records nothing");
		pmu_retain_free(r2);
		tout_release(&t2);
	}

	/* a rebuilt program at the same path: another build-id */
	{
		char nbid[129];

		snprintf(hex, sizeof(hex), "%s", bid);
		if (ok(build("prog", 9, prog, sizeof(prog), nbid) && strcmp(nbid, hex), "prog rebuilt: build-id %s", nbid)) {
			tout_init(&t2, 2);
			struct pmu_retain *r2 = pmu_retain_new(&t2.o);

			snprintf(why, sizeof(why), "build-id changed since the run: %s now %s", hex, nbid);
			is_int(pmu_retain_object(r2, t2.maps, 0, prog, hex), 0, "retaining it by the build-id the run saw");
			rec = find(&t2, 0, "unretained", NULL);
			ok(rec && !strcmp(sget(rec, "reason"), why) && !strcmp(sget(rec, "build_id"), hex) &&
			   !find(&t2, 0, "retained", NULL),
			   "is refused: %s", rec ? sget(rec, "reason") : "(none)");
			expected_rel(rel, sizeof(rel), hex, "");
			snprintf(p, sizeof(p), "%s/bundle/%s", tmp, rel);
			readelf_bid(p, nbid, sizeof(nbid));
			is_str(nbid, hex, "and the copy retained before it is left as it was");
			pmu_retain_free(r2);
			tout_release(&t2);
		}
	}

	/* split debug files: next to the object, in .debug/, by build-id
	 * under the debug root, under the debug root by directory */
	{
		static const char *const where[] = { "next", "dotdebug", "buildid", "rootdir", "badcrc", "nonote" };
		char obj[PATH_MAX], dbg[PATH_MAX + 16], d2[2 * PATH_MAX];

		for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
			char name[32];
			bool bybid = !strcmp(where[w], "buildid");

			snprintf(name, sizeof(name), "split-%s", where[w]);
			if (!build(name, 10 + (int)w, obj, sizeof(obj), bid)) {
				ok(0, "cc builds %s", name);
				continue;
			}
			snprintf(dbg, sizeof(dbg), "%s.debug", obj);
			ok(!sh("objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug %s%s%s '%s'", obj, dbg,
			       bybid ? "" : "--add-gnu-debuglink='", bybid ? "" : dbg, bybid ? "" : "'", obj),
			   "%s: objcopy splits its debug file%s", name, bybid ? "" : " and links it");
			if (!strcmp(where[w], "dotdebug"))
				snprintf(d2, sizeof(d2), "%s/.debug/%s.debug", tmp, name);
			else if (bybid)
				snprintf(d2, sizeof(d2), "%s/.build-id/%.2s/%s.debug", root, bid, bid + 2);
			else if (!strcmp(where[w], "rootdir"))
				snprintf(d2, sizeof(d2), "%s%s/%s.debug", root, tmp, name);
			else
				snprintf(d2, sizeof(d2), "%s", dbg);
			if (strcmp(d2, dbg)) {
				mkdirs(d2);
				rename(dbg, d2);
			}
			if (!strcmp(where[w], "badcrc"))
				sh("printf x >> '%s'", d2); /* the same build-id note, another CRC */
			/* a debug file without a build-id note, its CRC right */
			if (!strcmp(where[w], "nonote"))
				ok(!sh("objcopy --remove-section .note.gnu.build-id '%s' && objcopy --remove-section .gnu_debuglink --add-gnu-debuglink='%s' '%s'",
				       d2, d2, obj),
				   "%s: its debug file has no build-id note, the debuglink's CRC is its own", name);
			n0 = json_array_size(t.recs);
			is_int(pmu_retain_object(r, t.maps, 0, obj, bid), 0, name);
			ok(find(&t, n0, "retained", "binary") != NULL, "%s: the object is retained", name);
			rec = find(&t, n0, "retained", "debug");
			expected_rel(rel, sizeof(rel), bid, ".debug");
			if (!strcmp(where[w], "badcrc") || !strcmp(where[w], "nonote")) {
				ok(!rec, "%s: the debug file is not retained (%s)", name,
				   where[w][0] == 'b' ? "its CRC-32 is not the debuglink's" : "no build-id to file and check it by");
				continue;
			}
			ok(rec && !strcmp(sget(rec, "file"), rel) && !strcmp(sget(rec, "path"), d2) &&
			   !strcmp(sget(rec, "build_id"), bid),
			   "%s: its debug file %s is retained as %s", name, d2, rel);
			ok(same_file(rel, d2), "%s: the copy's SHA-256 is the debug file's", name);
		}
	}

	/* dwz: a debug file naming an alt file by .gnu_debugaltlink */
	{
		char obj[PATH_MAX], alt[PATH_MAX], altbid[129], blob[PATH_MAX + 16];
		FILE *f;

		if (build("alt", 30, alt, sizeof(alt), altbid) && build("dwz", 31, obj, sizeof(obj), bid)) {
			snprintf(blob, sizeof(blob), "%s/altlink", tmp);
			f = fopen(blob, "w");
			fprintf(f, "%s%c", alt, 0);
			for (size_t i = 0; altbid[2 * i]; i++) {
				unsigned b;

				sscanf(altbid + 2 * i, "%2x", &b);
				fputc((int)b, f);
			}
			fclose(f);
			ok(!sh("objcopy --only-keep-debug '%s' '%s.debug' && objcopy --add-section .gnu_debugaltlink='%s' '%s.debug'"
			       " && objcopy --strip-debug --add-gnu-debuglink='%s.debug' '%s'",
			       obj, obj, blob, obj, obj, obj),
			   "a debug file with a .gnu_debugaltlink to %s", alt);
			n0 = json_array_size(t.recs);
			is_int(pmu_retain_object(r, t.maps, 0, obj, bid), 0, "its object retained");
			ok(find(&t, n0, "retained", "debug") != NULL, "with its debug file");
			rec = find(&t, n0, "retained", "debug-alt");
			expected_rel(rel, sizeof(rel), altbid, ".debug");
			ok(rec && !strcmp(sget(rec, "file"), rel) && !strcmp(sget(rec, "build_id"), altbid) &&
			   !strcmp(sget(rec, "path"), alt),
			   "and the alt file as kind debug-alt under its own build-id, %s", rel);
			ok(same_file(rel, alt), "the alt file's copy is the original");
		} else {
			ok(0, "cc builds the dwz test's programs");
		}
	}
	ok(spec_ok(&t), "every record of the programs is one the spec allows");
	tout_release(&t);
	pmu_retain_free(r);

	/* a live process: read through /proc/PID/root; deleted: map_files */
	{
		char obj[PATH_MAX], del[PATH_MAX + 16];
		pid_t pid;

		tout_init(&t, 3);
		r = pmu_retain_new(&t.o);
		if (build("live", 40, obj, sizeof(obj), bid)) {
			pid = spawn_wait(obj);
			is_int(pmu_retain_object(r, t.maps, pid, obj, bid), 0, "a live process's program");
			rec = find(&t, 0, "retained", "binary");
			expected_rel(rel, sizeof(rel), bid, "");
			ok(rec && !strcmp(sget(rec, "path"), obj) && same_file(rel, obj),
			   "is retained through its root, the same bytes");
			reap(pid);
		}
		if (build("gone", 41, obj, sizeof(obj), bid)) {
			snprintf(del, sizeof(del), "%s (deleted)", obj);
			pid = spawn_wait(obj);
			snprintf(p, sizeof(p), "%s.orig", obj);
			sh("cp '%s' '%s'", obj, p);
			unlink(obj);
			n0 = json_array_size(t.recs);
			pmu_retain_object(r, t.maps, pid, del, bid);
			rec = json_array_get(t.recs, n0);
			expected_rel(rel, sizeof(rel), bid, "");
			if (geteuid() == 0) {
				ok(rec && !strcmp(sget(rec, "type"), "retained") && !strcmp(sget(rec, "path"), del) &&
				   same_file(rel, p),
				   "a deleted program of a live process is retained through /proc/PID/map_files");
			} else {
				ok(rec && !strcmp(sget(rec, "type"), "unretained") && strstr(sget(rec, "reason"), "map_files"),
				   "a deleted program, not root: unretained, map_files named: %s",
				   rec ? sget(rec, "reason") : "(none)");
			}
			reap(pid);
			tout_init(&t2, 4);
			{
				struct pmu_retain *r2 = pmu_retain_new(&t2.o);

				pmu_retain_object(r2, t2.maps, pid, del, bid);
				rec = json_array_get(t2.recs, 0);
				ok(rec && !strcmp(sget(rec, "type"), "unretained") && strstr(sget(rec, "reason"), "is gone"),
				   "once its process is gone it is unretained: %s", rec ? sget(rec, "reason") : "(none)");
				pmu_retain_free(r2);
				tout_release(&t2);
			}
		}
		ok(spec_ok(&t), "the live processes' records are ones the spec allows");
		tout_release(&t);
		pmu_retain_free(r);
	}

	/* a process in a chroot: an absolute symlink in its tree is resolved
	 * in its tree, never in the recorder's */
	if (geteuid() != 0) {
		skip("chroot needs root");
	} else {
		char jail[PATH_MAX + 16], link[2 * PATH_MAX];
		int pfd[2];
		bool jailed;
		pid_t pid;

		snprintf(jail, sizeof(jail), "%s/jail", tmp);
		mkdir(jail, 0755);
		snprintf(link, sizeof(link), "%s/obj", jail);
		ok(symlink(prog, link) == 0, "in the jail, /obj -> %s (a path that exists only outside)", prog);
		pmu_elf_file_build_id(prog, bid, sizeof(bid), why, sizeof(why));
		if (pipe(pfd))
			return 1;
		pid = fork();
		if (pid == 0) {
			char c = chroot(jail) == 0 && chdir("/") == 0 ? 'y' : 'n';

			if (write(pfd[1], &c, 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		{
			char c = 'n';

			jailed = read(pfd[0], &c, 1) == 1 && c == 'y';
			if (!jailed)
				printf("# the child could not chroot\n");
		}
		tout_init(&t, 5);
		r = pmu_retain_new(&t.o);
		pmu_retain_object(r, t.maps, pid, "/obj", bid);
		rec = json_array_get(t.recs, 0);
		ok(jailed && rec && !strcmp(sget(rec, "type"), "unretained") && !find(&t, 0, "retained", NULL),
		   "the jailed process's /obj is not read through the recorder's root: %s",
		   rec ? sget(rec, "reason") : "(none)");
		/* and a symlink inside the jail to a file inside it is followed there */
		snprintf(link, sizeof(link), "%s/real", jail);
		sh("cp '%s' '%s'", prog, link);
		snprintf(link, sizeof(link), "%s/obj2", jail);
		ok(symlink("/real", link) == 0, "in the jail, /obj2 -> /real, a copy of the program");
		pmu_retain_object(r, t.maps, pid, "/obj2", bid);
		rec = find(&t, 0, "retained", "binary");
		expected_rel(rel, sizeof(rel), bid, "");
		ok(jailed && rec && !strcmp(sget(rec, "path"), "/obj2") && same_file(rel, prog),
		   "is retained, resolved inside the jail, the same bytes");
		reap(pid);
		close(pfd[0]);
		close(pfd[1]);
		tout_release(&t);
		pmu_retain_free(r);
	}

	/* JIT maps */
	{
		char map[64], planted[PATH_MAX + 16];
		pid_t me = getpid();

		tout_init(&t, 6);
		r = pmu_retain_new(&t.o);
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)me);
		if (access(map, F_OK) == 0) {
			skip("%s exists already: not ours to replace", map);
		} else {
			sh("printf '7f0000001000 40 jitted_one\\n7f0000001040 20 jitted_two\\n' > '%s'", map);
			is_int(pmu_retain_jit_map(r, t.maps, "sampling", me), 0, "a JIT map");
			rec = find(&t, 0, "retained", "jit-map");
			snprintf(rel, sizeof(rel), "rep6/collectors/sampling/perf-%d.map", (int)me);
			ok(rec && !strcmp(sget(rec, "path"), map) && !strcmp(sget(rec, "file"), rel + 5) &&
			   !json_object_get(rec, "build_id") && same_file(rel, map),
			   "is retained as kind jit-map, %s, the same bytes", rel + 5);
			unlink(map);
			snprintf(planted, sizeof(planted), "%s/elsewhere.map", tmp);
			sh("cp '%s/bundle/%s' '%s'", tmp, rel, planted);
			if (symlink(planted, map) == 0) {
				n0 = json_array_size(t.recs);
				tout_init(&t2, 7);
				struct pmu_retain *r2 = pmu_retain_new(&t2.o);

				pmu_retain_jit_map(r2, t2.maps, "sampling", me);
				rec = json_array_get(t2.recs, 0);
				ok(rec && !strcmp(sget(rec, "type"), "unretained"), "a symlink under that name is not followed: %s",
				   rec ? sget(rec, "reason") : "(none)");
				unlink(map);
				pmu_retain_free(r2);
				tout_release(&t2);
			}
			n0 = json_array_size(t.recs);
			is_int(pmu_retain_jit_map(r, t.maps, "sampling", me), 0, "no JIT map");
			is_int((long long)json_array_size(t.recs), (long long)n0, "records nothing");
		}
		ok(spec_ok(&t), "the JIT map's records are ones the spec allows");
		tout_release(&t);
		pmu_retain_free(r);
	}

	if (!tap_failed)
		sh("rm -rf '%s'", tmp);
	else
		printf("# kept %s\n", tmp);
	return done_testing();
}
