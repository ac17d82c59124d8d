/*
 * The event list on Linux: lib/perfev.c's grammar, each item resolved to
 * perf_event_attr fields.  Generic names through perfev.def's perf
 * numbers, PMU/TERMS/ items through sysfs (Documentation/ABI/testing/
 * sysfs-bus-event_source-devices-format and -events), pfm: items through
 * libpfm4, loaded at run time so that neither the library nor the tools
 * link it.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's header first: libpfm4's perfmon/perf_event.h then keeps its
 * own copy of the perf_event_attr definitions out. */
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

#include "error.h"
#include "events.h"
#include "perfev-cpu.h"
#include "util.h"

#define SYSFS_DEFAULT  "/sys/bus/event_source/devices"
#define LIBPFM_DEFAULT "libpfm.so.4"
#define SYSFS_FILE_MAX 4096     /* sysfs attributes are at most a page */

/* perfev.def's perf numbers, row for row with lib's pmu_evtable_get(). */
static const struct perfnum {
	uint32_t type;
	uint64_t config;
} perfnums[] = {
#define PMU_EVDEF(name, aliases, type, config, unit, set, desc) { PERF_TYPE_##type, config },
#include "perfev.def"
#undef PMU_EVDEF
};


/* The two clocks count nanoseconds, whichever way they were named. */
static const char *unit_of(uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(perfnums); i++)
		if (perfnums[i].type == type && perfnums[i].config == config)
			return pmu_evtable_get(i)->unit;
	return "count";
}

/* ---- PMU/TERMS/ through sysfs ------------------------------------------ */

/* A format file: "config:0-7", "config1:0-63", "config:0-7,32-35", "config:21". */
struct format {
	int field;              /* 0 config, 1 config1, 2 config2 */
	unsigned n, lo[16], hi[16], width;
};

/* 0 parsed; -1 malformed; -2 a field perf_event_attr has that we do not keep. */
static int parse_format(const char *text, struct format *f)
{
	const char *p = text;
	size_t k = strcspn(p, ":");

	if (p[k] != ':')
		return -1;
	if (k == 6 && !strncmp(p, "config", 6))
		f->field = 0;
	else if (k == 7 && !strncmp(p, "config1", 7))
		f->field = 1;
	else if (k == 7 && !strncmp(p, "config2", 7))
		f->field = 2;
	else if (k > 6 && !strncmp(p, "config", 6))
		return -2;
	else
		return -1;
	p += k + 1;
	f->n = f->width = 0;
	for (;;) {
		char *end;
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*p) || f->n == PMU_ARRAY_SIZE(f->lo))
			return -1;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			hi = strtoul(end + 1, &end, 10);
		}
		if (lo > hi || hi > 63)
			return -1;
		f->lo[f->n] = (unsigned)lo;
		f->hi[f->n++] = (unsigned)hi;
		f->width += (unsigned)(hi - lo + 1);
		p = end;
		if (*p != ',')
			break;
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p || f->width > 64 ? -1 : 0;
}

/* Scatter v's low bits over f's ranges, lowest range first. */
static void place(uint64_t cfg[3], const struct format *f, uint64_t v)
{
	unsigned used = 0;

	for (unsigned i = 0; i < f->n; i++) {
		unsigned w = f->hi[i] - f->lo[i] + 1;
		uint64_t mask = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
		uint64_t bits = used < 64 ? (v >> used) & mask : 0;

		cfg[f->field] = (cfg[f->field] & ~(mask << f->lo[i])) | (bits << f->lo[i]);
		used += w;
	}
}

struct pmuctx {
	struct pmu_evspec *s;
	const char *item, *sysfs, *pmu;
	int pmufd, fmtfd;       /* fmtfd -1: the PMU has no format directory */
	uint64_t cfg[3];
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The format terms the PMU has, for the unknown-term message. */
static void list_formats(const struct pmuctx *c, char *out, size_t size)
{
	int fd = openat(c->pmufd, "format", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char names[PMU_EVTERMS_MAX * 2][64];
	size_t n = 0, len = 0, i;
	struct dirent *e;

	out[0] = '\0';
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) && n < PMU_ARRAY_SIZE(names))
		if (e->d_name[0] != '.' && strlen(e->d_name) < sizeof(names[0]))
			strcpy(names[n++], e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	/* Room is kept for ", ..." when not all fit. */
	for (i = 0; i < n && len + strlen(names[i]) + 2 + 5 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", names[i]);
	if (i < n)
		pmu_setf(out + len, size - len, "%s...", i ? ", " : "");
}

static bool is_config_term(const char *name, int *field)
{
	static const char *const f[] = { "config", "config1", "config2" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(name, f[i])) {
			*field = i;
			return true;
		}
	return false;
}

/*
 * Place one term.  user: it came from the command line, so an unknown term
 * or a value too wide is the user's mistake (PMU_ERR_INVAL); otherwise it came
 * from a sysfs event file and a mismatch is the host's (unavailable).
 * Returns 0 placed, 1 the spec was marked unavailable, or an error.
 */
static int apply_term(struct pmuctx *c, const struct pmu_evterm *t, bool user)
{
	struct format f;
	char *text = NULL, known[200];
	size_t len;
	int err, field;

	if (is_config_term(t->name, &field)) {
		c->cfg[field] = t->value;
		return 0;
	}
	if (c->fmtfd < 0) {
		pmu_evspec_unavailable(c->s, "give the bits with config=, config1= and config2= terms",
			               "PMU '%s' has no format directory in %s/%s to place term '%s'",
			               c->pmu, c->sysfs, c->pmu, t->name);
		return 1;
	}
	err = pmu_read_file(c->fmtfd, t->name, SYSFS_FILE_MAX, &text, &len);
	if (err == PMU_ERR_NOTFOUND) {
		if (!user) {
			pmu_evspec_unavailable(c->s, "give the event's bits with config= terms",
				               "a sysfs event of PMU '%s' uses term '%s', which %s/%s/format lacks",
				               c->pmu, t->name, c->sysfs, c->pmu);
			return 1;
		}
		list_formats(c, known, sizeof(known));
		return pmu_error(PMU_ERR_INVAL, "unknown term '%s' in '%s' (PMU '%s' has %s%s)", t->name, c->item,
				 c->pmu, known[0] ? "format terms " : "no format terms", known);
	}
	if (err) {
		pmu_evspec_unavailable(c->s, "check that sysfs is mounted and readable",
			               "cannot read %s/%s/format/%s: %s", c->sysfs, c->pmu, t->name, pmu_error_detail());
		return 1;
	}
	text[strcspn(text, "\n")] = '\0';
	err = parse_format(text, &f);
	if (err) {
		pmu_evspec_unavailable(c->s, "give the bits with config=, config1= and config2= terms",
			               err == -2 ? "%s/%s/format/%s places bits in a field pmu does not support: %.40s"
				                 : "%s/%s/format/%s is not a format pmu understands: %.40s",
			               c->sysfs, c->pmu, t->name, text);
		free(text);
		return 1;
	}
	if (f.width < 64 && t->value >> f.width) {
		err = pmu_error(PMU_ERR_INVAL, "value 0x%llx of term '%s' in '%s' does not fit its %u bits (%s)",
				(unsigned long long)t->value, t->name, c->item, f.width, text);
		free(text);
		if (!user) {
			pmu_evspec_unavailable(c->s, "give the event's bits with config= terms",
				               "a sysfs event of PMU '%s' gives term '%s' a value wider than its format",
				               c->pmu, t->name);
			return 1;
		}
		return err;
	}
	free(text);
	place(c->cfg, &f, t->value);
	return 0;
}

/* One line of a small sysfs file, "" when absent or unreadable. */
static void read_line(int dirfd, const char *path, char *out, size_t size)
{
	char *text = NULL;
	size_t len;

	out[0] = '\0';
	if (pmu_read_file(dirfd, path, SYSFS_FILE_MAX, &text, &len))
		return;
	text[strcspn(text, "\n")] = '\0';
	pmu_setf(out, size, "%s", text);
	free(text);
}

/* perf scales a sysfs event's count (energy in Joules, say) for display; the
 * recorder keeps raw counts, so say what the scale would have been. */
static void note_scale(struct pmuctx *c, const char *event)
{
	char path[128], unit[32], scale[48];

	pmu_setf(path, sizeof(path), "events/%s.unit", event);
	read_line(c->pmufd, path, unit, sizeof(unit));
	pmu_setf(path, sizeof(path), "events/%s.scale", event);
	read_line(c->pmufd, path, scale, sizeof(scale));
	if (unit[0] || scale[0])
		pmu_setf(c->s->note, sizeof(c->s->note), "sysfs event '%s' has unit '%s' and scale %s; counts are "
		     "recorded unscaled", event, unit[0] ? unit : "-", scale[0] ? scale : "1");
}

/*
 * A bare term that is no format term but a file in PMU/events/ stands for the
 * terms written there (e.g. msr/tsc/ is msr/event=0x00/).  Returns 0 when
 * expanded, 1 unavailable, 2 not an event, or an error.
 */
static int expand_named(struct pmuctx *c, struct pmu_evterm *t)
{
	struct pmu_evterm et[PMU_EVTERMS_MAX];
	char path[128], why[200], *text = NULL;
	size_t len, n;
	int err;

	if (t->has_value || (c->fmtfd >= 0 && !faccessat(c->fmtfd, t->name, F_OK, AT_SYMLINK_NOFOLLOW)))
		return 2;
	pmu_setf(path, sizeof(path), "events/%s", t->name);
	err = pmu_read_file(c->pmufd, path, SYSFS_FILE_MAX, &text, &len);
	if (err == PMU_ERR_NOTFOUND)
		return 2;
	if (err) {
		pmu_evspec_unavailable(c->s, "check that sysfs is mounted and readable",
			               "cannot read %s/%s/%s: %s", c->sysfs, c->pmu, path, pmu_error_detail());
		return 1;
	}
	err = pmu_evterms_split(text, et, &n, why, sizeof(why));
	free(text);
	if (err) {
		/* "?" values (a parameter perf asks for) land here too. */
		pmu_evspec_unavailable(c->s, "give the event's bits with config= terms",
			               "cannot use sysfs event %s/%s/%s: %s", c->sysfs, c->pmu, path, why);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		if ((err = apply_term(c, &et[i], false)))
			return err;
	t->done = true;
	note_scale(c, t->name);
	return 0;
}

static int read_type(struct pmuctx *c)
{
	char *text = NULL, *end;
	size_t len;
	unsigned long v;
	int err = pmu_read_file(c->pmufd, "type", SYSFS_FILE_MAX, &text, &len);

	if (err == PMU_ERR_NOTFOUND) {
		pmu_evspec_unavailable(c->s, "check that sysfs is mounted and readable",
			               "%s/%s has no type file", c->sysfs, c->pmu);
		return 1;
	}
	if (err) {
		pmu_evspec_unavailable(c->s, "check that sysfs is mounted and readable",
			               "cannot read %s/%s/type: %s", c->sysfs, c->pmu, pmu_error_detail());
		return 1;
	}
	text[strcspn(text, "\n")] = '\0';
	errno = 0;
	v = strtoul(text, &end, 10);
	if (!isdigit((unsigned char)text[0]) || *end || errno || v > UINT32_MAX) {
		pmu_evspec_unavailable(c->s, "check that sysfs is mounted and readable",
			               "%s/%s/type is not a perf type number: %.20s", c->sysfs, c->pmu, text);
		free(text);
		return 1;
	}
	free(text);
	c->s->type = (uint32_t)v;
	return 0;
}

/* PMU/TERMS/, its syntax checked by lib/perfev.c: the PMU's type, its named
 * events expanded, each term placed through its format file. */
static int resolve_pmu(struct pmu_evspec *s, const char *sysfs)
{
	const char *pmu = s->pmu;
	char why[200];
	struct pmu_evterm t[PMU_EVTERMS_MAX];
	struct pmuctx c = { .s = s, .item = s->given, .sysfs = sysfs, .pmu = pmu, .pmufd = -1, .fmtfd = -1 };
	size_t nt;
	int rootfd, err;

	if (pmu_evterms_split(s->terms, t, &nt, why, sizeof(why)))
		return pmu_error(PMU_ERR_INVAL, "%s in '%s'", why, s->given);
	rootfd = open(sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd >= 0) {
		c.pmufd = openat(rootfd, pmu, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(rootfd);
	}
	if (c.pmufd < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			pmu_evspec_unavailable(s, "", "no PMU '%s' in %s", pmu, sysfs);
			pmu_setf(s->remedy, sizeof(s->remedy),
			     "see this host's PMUs with 'ls %s' (a VM often has no hardware PMU)", sysfs);
		} else {
			pmu_evspec_unavailable(s, "check that sysfs is mounted and readable", "cannot open %s/%s: %s",
				               sysfs, pmu, strerror(errno));
		}
		return 0;
	}
	c.fmtfd = openat(c.pmufd, "format", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((err = read_type(&c)))
		goto out;
	/* Named events first, so explicit terms can override their bits
	 * (cpu/mem-loads,ldlat=30/). */
	for (size_t i = 0; i < nt; i++) {
		err = expand_named(&c, &t[i]);
		if (err == 2)
			err = 0;
		if (err)
			goto out;
	}
	for (size_t i = 0; i < nt; i++)
		if (!t[i].done && (err = apply_term(&c, &t[i], true)))
			goto out;
	s->config = c.cfg[0];
	s->config1 = c.cfg[1];
	s->config2 = c.cfg[2];
	s->on_pmu = s->type != PERF_TYPE_SOFTWARE;
	s->unit = unit_of(s->type, s->config);
out:
	if (c.fmtfd >= 0)
		close(c.fmtfd);
	close(c.pmufd);
	return err < 0 ? err : 0;
}

/* ---- pfm: through libpfm4 ------------------------------------------------ */

#define PFM_REMEDY_ABSENT "apt-get install libpfm4, or give the event as a raw r<hex> selector"
#define PFM_REMEDY_NAME   "list this CPU's event names with showevtinfo (package libpfm4-tools), " \
			  "or give a raw r<hex> selector"

/*
 * One load of libpfm4 per pmu_evlist_parse() call: loaded at the first pfm:
 * item, terminated and closed at the end.  The function pointers take their
 * types from libpfm4's header, so a prototype change fails the build.
 */
struct pfmlib {
	int state;              /* 0 not loaded yet, 1 usable, -1 not (reason, remedy) */
	void *dl;
	__typeof__(pfm_initialize) *initialize;
	__typeof__(pfm_terminate) *terminate;
	__typeof__(pfm_strerror) *strerr;
	__typeof__(pfm_get_version) *get_version;
	__typeof__(pfm_get_pmu_info) *get_pmu_info;
	__typeof__(pfm_get_os_event_encoding) *encode;
	char version[32];
	char core[64];          /* the core PMU table in use, "" when none */
	char note[256];
	char reason[320];
	char remedy[200];
	char force_remedy[200]; /* no core PMU and no table for this CPU: what to do, "" otherwise */
};

/* The first present core PMU.  Ids past this header's PFM_PMU_MAX are asked
 * too: a newer libpfm4 at run time knows more PMUs (adl_glc). */
static void pfm_find_core(struct pfmlib *p)
{
	p->core[0] = '\0';
	for (int id = PFM_PMU_NONE; id < PFM_PMU_MAX + 512; id++) {
		pfm_pmu_info_t info;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (p->get_pmu_info((pfm_pmu_t)id, &info) == PFM_SUCCESS && info.is_present &&
		    info.type == PFM_PMU_TYPE_CORE && info.name) {
			pmu_setf(p->core, sizeof(p->core), "%s", info.name);
			return;
		}
	}
}

/* The release, from the file the loader found (libpfm.so.4.13.0); the API
 * version libpfm4 reports is only 4.0. */
static void pfm_version(struct pfmlib *p)
{
	Dl_info info;
	char real[PATH_MAX];
	const char *base;
	int v = p->get_version();

	pmu_setf(p->version, sizeof(p->version), "%d.%d", PFM_MAJ_VERSION(v), v & 0xffff);
	if (!dladdr((void *)p->initialize, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
		return;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (!strncmp(base, "libpfm.so.", 10) && isdigit((unsigned char)base[10]))
		pmu_setf(p->version, sizeof(p->version), "%s", base + 10);
}

/*
 * libpfm4 finds the core PMU from the CPU's identity: on x86 CPUID leaf 0xa
 * and the model, which a VM that hides the architectural PMU leaves it
 * without; on Arm /proc/cpuinfo's implementer and part, which it knows for
 * a few parts only (not the Cortex-A72, nor an emulated CPU).  Either way
 * it is left with only the perf:: generic table.  Then the table that
 * perfev-cpu.def (CPUID) or perfev-midr.def (MIDR_EL1) names is forced
 * (LIBPFM_FORCE_PMU, read by pfm_initialize()) so that the CPU's own event
 * names still encode; perf:: names stay available.  A user's own
 * LIBPFM_FORCE_PMU is left alone.  Without a table the note says which CPU
 * this is, and resolve_pfm() gives the LIBPFM_FORCE_PMU remedy.
 */
static void pfm_cpu_fallback(struct pfmlib *p)
{
	char ident[96];
	const char *table, *example;
	int ret;

	if (getenv("LIBPFM_FORCE_PMU") || pmu_cpu_pfm_table(ident, sizeof(ident), &table, &example))
		return;
	if (!table) {
		pmu_setf(p->note, sizeof(p->note), "libpfm4 detected no core PMU, and %s has no libpfm4 table in "
		     "perfev-cpu.def or perfev-midr.def", ident);
		pmu_setf(p->force_remedy, sizeof(p->force_remedy), "name libpfm4's table for this CPU in "
		     "LIBPFM_FORCE_PMU (e.g. LIBPFM_FORCE_PMU=%s; showevtinfo -L lists them), or give a raw r<hex> "
		     "selector", example);
		return;
	}
	p->terminate();
	if (setenv("LIBPFM_FORCE_PMU", table, 1) == 0) {
		ret = p->initialize();
		unsetenv("LIBPFM_FORCE_PMU");
	} else {
		ret = PFM_ERR_NOMEM;
	}
	if (ret != PFM_SUCCESS) {
		p->terminate();
		if ((ret = p->initialize()) != PFM_SUCCESS) {
			p->state = -1;
			pmu_setf(p->reason, sizeof(p->reason), "libpfm4 %s failed to initialize: %s", p->version,
			     p->strerr(ret));
			pmu_setf(p->remedy, sizeof(p->remedy), "%s", PFM_REMEDY_ABSENT);
			return;
		}
	}
	pfm_find_core(p);
	if (!strcmp(p->core, table))
		pmu_setf(p->note, sizeof(p->note), "libpfm4 detected no core PMU; using its '%s' table from %s",
		     table, ident);
	else
		pmu_setf(p->note, sizeof(p->note), "libpfm4 detected no core PMU, and libpfm4 %s has no '%s' table "
		     "for %s", p->version, table, ident);
}

static void pfm_load(struct pfmlib *p, const char *path)
{
	static const char *const syms[] = {
		"pfm_initialize", "pfm_terminate", "pfm_strerror", "pfm_get_version",
		"pfm_get_pmu_info", "pfm_get_os_event_encoding",
	};
	void *fn[PMU_ARRAY_SIZE(syms)];
	int ret;

	p->state = -1;
	pmu_setf(p->remedy, sizeof(p->remedy), "%s", PFM_REMEDY_ABSENT);
	dlerror();
	p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->dl) {
		const char *e = dlerror();

		pmu_setf(p->reason, sizeof(p->reason), "libpfm4 is not installed (dlopen %s: %s)", path,
		     e ? e : "unknown error");
		return;
	}
	for (size_t i = 0; i < PMU_ARRAY_SIZE(syms); i++)
		if (!(fn[i] = dlsym(p->dl, syms[i]))) {
			pmu_setf(p->reason, sizeof(p->reason), "'%s' is not a usable libpfm4: it has no %s", path, syms[i]);
			return;
		}
	p->initialize = (__typeof__(p->initialize))fn[0];
	p->terminate = (__typeof__(p->terminate))fn[1];
	p->strerr = (__typeof__(p->strerr))fn[2];
	p->get_version = (__typeof__(p->get_version))fn[3];
	p->get_pmu_info = (__typeof__(p->get_pmu_info))fn[4];
	p->encode = (__typeof__(p->encode))fn[5];
	pfm_version(p);
	if ((ret = p->initialize()) != PFM_SUCCESS) {
		pmu_setf(p->reason, sizeof(p->reason), "libpfm4 %s failed to initialize: %s", p->version, p->strerr(ret));
		return;
	}
	p->state = 1;
	pfm_find_core(p);
	if (!p->core[0])
		pfm_cpu_fallback(p);
}

static void pfm_unload(struct pfmlib *p)
{
	if (p->state > 0)
		p->terminate();
	if (p->dl)
		dlclose(p->dl);
	memset(p, 0, sizeof(*p));
}

/* Whether a libpfm4 event string sets privilege levels itself: a u, k or h
 * attribute (":u", ":k=0", ...) after the event name. */
static bool pfm_has_modifier(const char *name)
{
	const char *p = strstr(name, "::");

	p = p ? p + 2 : name;
	while ((p = strchr(p, ':'))) {
		p++;
		if (*p && strchr("ukh", *p) && (p[1] == ':' || p[1] == '=' || !p[1]))
			return true;
	}
	return false;
}

static int resolve_pfm(struct pmu_evspec *s, const char *path, struct pfmlib *p)
{
	const char *name = s->given + 4;
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	s->modifier = pfm_has_modifier(name);
	if (!p->state)
		pfm_load(p, path);
	pmu_setf(s->note, sizeof(s->note), "%s", p->note);
	if (p->state < 0)
		return pmu_evspec_unavailable(s, p->remedy, "%s", p->reason);

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	ret = p->encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (ret != PFM_SUCCESS) {
		free(fstr);
		/* With no core table the CPU's own names cannot resolve: say
		 * which CPU libpfm4 did not know, and how to name its table. */
		if (!p->core[0] && p->force_remedy[0])
			return pmu_evspec_unavailable(s, p->force_remedy, "libpfm4 %s (core PMU table 'none detected') "
						      "cannot resolve '%s': %s; %s", p->version, name,
						      p->strerr(ret), p->note);
		return pmu_evspec_unavailable(s, PFM_REMEDY_NAME, "libpfm4 %s (core PMU table '%s') cannot resolve '%s': %s",
				              p->version, p->core[0] ? p->core : "none detected", name, p->strerr(ret));
	}
	s->type = attr.type;
	s->config = attr.config;
	s->config1 = attr.config1;
	s->config2 = attr.config2;
	s->exclude_user = attr.exclude_user;
	s->exclude_kernel = attr.exclude_kernel;
	s->exclude_hv = attr.exclude_hv;
	s->on_pmu = attr.type != PERF_TYPE_SOFTWARE;
	s->unit = unit_of(attr.type, attr.config);
	if (fstr)
		pmu_setf(s->name, sizeof(s->name), "pfm:%s", fstr);
	/* libpfm4 strdup()s fstr with the process's malloc. */
	free(fstr);
	return 0;
}

/* ---- the resolver -------------------------------------------------------- */

/* One pfm: load per list: loaded at the first pfm: item, unloaded after. */
struct resolver {
	const char *sysfs, *libpfm;
	struct pfmlib pfm;
};

static int resolve(void *ctx, struct pmu_evspec *s)
{
	struct resolver *r = ctx;

	switch (s->kind) {
	case PMU_EV_SOFTWARE:
	case PMU_EV_HARDWARE: {
		const struct perfnum *p = &perfnums[s->generic - pmu_evtable_get(0)];

		s->type = p->type;
		s->config = p->config;
		return 0;
	}
	case PMU_EV_RAW:
		/* the grammar put the selector in config */
		s->type = PERF_TYPE_RAW;
		return 0;
	case PMU_EV_PMU:
		return resolve_pmu(s, r->sysfs);
	case PMU_EV_PFM:
		return resolve_pfm(s, r->libpfm, &r->pfm);
	}
	return pmu_error(PMU_ERR_INVAL, "event '%s' is of no kind pmu knows", s->given);
}

int pmu_evlist_parse(const char *list, const struct pmu_evenv *env, struct pmu_evspec **out, size_t *n)
{
	struct resolver r = { env && env->sysfs ? env->sysfs : SYSFS_DEFAULT,
			      env && env->libpfm ? env->libpfm : getenv("PMU_LIBPFM") };
	int err;

	if (!r.libpfm || !*r.libpfm)
		r.libpfm = LIBPFM_DEFAULT;
	err = pmu_evlist_parse_with(list, resolve, &r, out, n);
	pfm_unload(&r.pfm);
	return err;
}

int pmu_evlist_defaults(struct pmu_evspec **out, size_t *n)
{
	struct resolver r = { SYSFS_DEFAULT, LIBPFM_DEFAULT };
	int err = pmu_evlist_defaults_with(resolve, &r, out, n);

	pfm_unload(&r.pfm);
	return err;
}
