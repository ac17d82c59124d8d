/*
 * pmurec: run a command and record its cohort into a bundle.
 *
 * The spine: probe the host, fork the command behind a barrier, follow
 * its process tree (backends/), and write run.json, capabilities.json,
 * provenance.json, cohort.jsonl (while following), spans.jsonl and one
 * lifecycle per known collector through the bag writer, which finalizes
 * atomically.  The
 * collectors that later versions add (counting, sampling, syscalls,
 * scheduling) are recorded as unavailable, with that reason, when the
 * mode asks for them.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "backend.h"
#include "bag.h"
#include "bagw.h"
#include "cli.h"
#include "error.h"
#include "sha256.h"
#include "spec.h"
#include "spec_json.h"
#include "util.h"
#include "linux/provenance.h"
#include "linux/sampling.h"
#include "external.h"
#include "control.h"
#include "bounds.h"
#include "collectors.h"
#include "loop.h"
#include "events.h"
#include "hostload.h"
#include "progress.h"
#include "sdtnote.h"
#include <sys/resource.h>

/* Exit codes of the recorder itself (pmurec(1)); otherwise the command's. */
enum { EXIT_RECORDER = 125, EXIT_NOEXEC = 126, EXIT_NOTFOUND = 127 };

static const char usage[] =
	"usage: pmurec [options] -o BUNDLE -- COMMAND [ARG...]\n"
	"       pmurec [options] -o BUNDLE --pid PID\n"
	"       pmurec [options] -o DIR --variants NAME,NAME[,...] -- COMMAND [ARG...] ::: COMMAND [ARG...] [::: ...]\n"
	"       pmurec --probe [--json]\n"
	"\n"
	"Run COMMAND and record its processes (its cohort) into BUNDLE, a bundle of\n"
	"spec " PMU_SPEC_VERSION ": a directory, or a .tar, .tar.gz or .tar.zst archive.\n"
	"\n"
	"  -o, --output BUNDLE     where to write the bundle (required)\n"
	"  -f, --force             replace an existing bundle; anything at BUNDLE that is\n"
	"                          not a pmu bundle is refused (exit 2) and left as it is\n"
	"      --file-mode OCTAL   mode of the bundle's files, 0600 (default: private,\n"
	"                          whatever the umask) to 0666; its directories get the\n"
	"                          matching x bits (0644: directories 0755)\n"
	"  -m, --mode MODE         none, light (default) or full\n"
	"      --repeat N          record N repetitions of the command, each kept on its own in\n"
	"                          the bundle (data/repeats/<k>/ for k >= 2)\n"
	"      --warmup N          run the command N times first, unrecorded\n"
	"      --ab MODES          an A/B campaign: the modes (e.g. none,light,full) run\n"
	"                          interleaved, --repeat times each; -o names a directory\n"
	"                          that gets one bundle per mode, MODE.bundle; a mode given\n"
	"                          again (light,light: an A/A campaign, the noise floor)\n"
	"                          writes MODE-2.bundle\n"
	"      --variants NAMES    a variant campaign: two or more commands, separated by\n"
	"                          ':::' after '--', one per name, run interleaved (A B A B\n"
	"                          ...) in one mode, --repeat times each; -o names a\n"
	"                          directory that gets NAME.bundle for each (names: letters,\n"
	"                          digits, '.', '_' and '-', distinct); not with --ab\n"
	"  -p, --pid PID           attach to the running process PID and its descendants\n"
	"                          (light or full); a signal or a bound detaches, leaving\n"
	"                          them running\n"
	"      --max-duration MS   stop the cohort after MS milliseconds (SIGTERM, then SIGKILL);\n"
	"                          the bundle is then marked truncated\n"
	"      --env-allow NAME[,NAME...]  record these environment variables (repeatable;\n"
	"                          values of names that look like secrets are always redacted)\n"
	"      --seed N            record N and export it to the command as PMUREC_SEED\n"
	"      --max-output-bytes N  keep at most N bytes of collected records; then stop the\n"
	"                          cohort as for --max-duration and mark the bundle truncated\n"
	"      --delay MS          mark MS milliseconds after the start as pmurec:delay-end,\n"
	"                          splitting start-up from steady state (light, full)\n"
	"      --collector exec:PATH[,ARG...]\n"
	"                          run an external collector (repeatable; see pmurec(1))\n"
	"      --collector-timeout MS  how long a collector may take to say hello and to\n"
	"                          finish after the cohort ends (default 5000)\n"
	"  -e, --events LIST       count these events (comma separated): perf names such as\n"
	"                          task-clock or cycles, raw r<hex>, pmu/term=value,.../,\n"
	"                          pfm:NAME (libpfm4); modifiers :u, :k, :h. Default: six\n"
	"                          software and eight hardware events (those the host\n"
	"                          cannot count are recorded unavailable, with the reason)\n"
	"      --scaled            accept multiplexed counts as labelled estimates (default:\n"
	"                          exact or dropped, with the reason)\n"
	"      --cohort SCOPE      auto (default), cgroup or inherit: with cgroup, the command\n"
	"                          runs in its own leaf cgroup, also counted on every CPU\n"
	"      --follower HOW      how the cohort is followed: auto (default: eBPF where it\n"
	"                          can be loaded, else ptrace), ebpf or ptrace; the bundle\n"
	"                          says which ran and why\n"
	"  -F, --freq HZ           sample HZ times a second per thread (default: light 99,\n"
	"                          full 999); the sampling collector (light and full)\n"
	"      --period N          sample every N events instead of by frequency\n"
	"      --call-graph HOW    none, fp (frame pointers) or dwarf[,STACK_BYTES] (user\n"
	"                          registers and STACK_BYTES of user stack, default 8192, for\n"
	"                          code built without frame pointers); default: light none,\n"
	"                          full fp\n"
	"      --sample-event NAME cycles, instructions, cpu-clock or task-clock (default:\n"
	"                          cycles where the core PMU samples it and -e counts no\n"
	"                          hardware event, else cpu-clock; the bundle says why)\n"
	"      --sample-ring-kb KB each CPU's ring buffer (default: from\n"
	"                          kernel.perf_event_mlock_kb); rounded down to a power of two\n"
	"                          of pages\n"
	"      --syscall-ring-kb KB  the syscalls collector's BPF ring (full mode; default\n"
	"                          8192); a power of two from 4\n"
	"      --allow-loss        a bundle with lost samples, throttling or lost system\n"
	"                          calls still validates (run.json tolerate_loss; the loss\n"
	"                          is reported as a warning)\n"
	"      --retain-binaries[=sampled|all]\n"
	"                          copy the objects with samples (all: every mapped object),\n"
	"                          their debug files and JIT maps into the bundle by build-id\n"
	"      --probe PROVIDER:NAME  also record this USDT probe's hits raw, with their\n"
	"                          arguments (repeatable; full mode, root: the probes\n"
	"                          collector)\n"
	"      --alloc             sample the cohort's native allocations (malloc, calloc,\n"
	"                          realloc, free) every 512 KiB allocated on average\n"
	"      --alloc-sample BYTES  the same, every BYTES on average (suffix k or m)\n"
	"      --alloc-via HOW     auto (default: preload), preload (pmurec's LD_PRELOAD\n"
	"                          interposer, confined to the cohort; dynamically linked\n"
	"                          commands) or uprobe (eBPF uprobes on the C library: root;\n"
	"                          every process on the host that calls malloc traps)\n"
	"      --list-events       print the perf event names pmurec knows; run nothing\n"
	"      --list-probes BINARY  print the USDT probes BINARY and the shared objects it\n"
	"                          would load carry, and whether this host can attach to\n"
	"                          them; run nothing\n"
	"      --probe             print what this host can measure, and why not; run nothing\n"
	"      --json              with --probe or --list-probes: print JSON\n"
	"  -h, --help              show this help\n"
	"  -V, --version           show the version\n"
	"\n"
	"Modes: none runs the command with fork/exec/wait4 only (the no-observer\n"
	"baseline; the cohort is the command alone, with wait4 totals). light follows\n"
	"every process of the tree (fork, exec, exit: eBPF as root, else ptrace) and\n"
	"records each one's totals at exit; it also asks for counting and sampling, and full adds\n"
	"call-chain sampling, system calls, scheduling and the USDT probes of the pmu,\n"
	"python and hotspot providers (include/pmu/probe.h); --alloc adds allocation\n"
	"sampling in light and full. Collectors this version does\n"
	"not have are recorded as unavailable, with that reason.\n"
	"\n"
	"On a terminal, a campaign or a run of --repeat N > 1 shows on stderr which run\n"
	"is in progress, the time elapsed and an estimate of the rest, on one line\n"
	"cleared at the end; nothing when stderr is not a terminal.\n"
	"\n"
	"Exit status: the command's (128+N when killed by signal N); 125 when pmurec\n"
	"itself failed; 126 or 127 when the command could not be run (no bundle is\n"
	"written). An interrupted or truncated run still writes its bundle.\n";

static const char *const secret_words[] = { "*TOKEN*", "*SECRET*", "*PASSW*", "*KEY*", "*AUTH*",
					    "*CREDENTIAL*", "*COOKIE*", "*SESSION*", "*PRIVATE*", NULL };

/* the most commands of one variant campaign, and bytes of a variant's name */
#define PMUREC_MAX_VARIANTS 16
#define PMUREC_VARIANT_NAME_MAX 64
/* bundles of one recording: the runs of one round of a campaign */
#define PMUREC_MAX_OUT PMUREC_MAX_VARIANTS

struct opts {
	const char *out;
	bool force, probe, json;
	unsigned file_mode;     /* --file-mode, 0: the writer's private default */
	int mode;               /* 0 none, 1 light, 2 full */
	int max_duration_ms;
	char **env;             /* --env-allow names, each malloc'd (env_free()) */
	size_t nenv;
	bool have_seed;
	unsigned long long seed;
	int collector_timeout_ms;
	int delay_ms;
	unsigned long long max_output;
	unsigned syscall_ring_kb;     /* --syscall-ring-kb, 0: the collector's default */
	const char *probes[64];       /* --probe PROVIDER:NAME, as given */
	size_t nprobes;
	const char *list_probes;      /* --list-probes BINARY */
	unsigned long long alloc_sample; /* --alloc / --alloc-sample, 0: not asked */
	enum pmu_alloc_via alloc_via;
	pid_t attach;
	const char **ext_specs;
	size_t next_specs;
	int repeat, warmup;
	int ab_modes[4];
	int nab;
	const char *variants;   /* --variants, as given */
	char *vbuf;             /* its copy, split into vnames (malloc'd, env_free()) */
	const char *vnames[PMUREC_MAX_VARIANTS];
	int nvar;
	const char *events;
	struct pmu_evspec *ev;
	size_t nev;
	bool scaled, list_events;
	enum pmu_cohort_scope cohort;
	enum pmu_follower_kind follower; /* --follower (mode none: none) */
	struct pmu_sampling_opts sampling; /* -F, --period, --call-graph, ... */
};

static const char *const mode_names[] = { "none", "light", "full" };

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	(void)si;
	if (pmu_backend_stop_signal && sig == SIGINT)
		pmu_backend_abort = 1;      /* a second ^C: abort, leave no bundle */
	if (!pmu_backend_stop_signal)
		pmu_backend_stop_signal = sig;
}

static json_t *exit_json(int kind, int value)
{
	if (kind == 1)
		return json_pack("{s:s,s:i}", "kind", "exited", "code", value);
	if (kind == 2)
		return json_pack("{s:s,s:i}", "kind", "signaled", "signal", value);
	return json_pack("{s:s}", "kind", "unknown");
}

/* ---- the images of provenance.json ---------------------------------------
 *
 * Every distinct exec path and executable mapping is noted as it is seen;
 * provenance.json describes (and hashes) them at the end of each
 * repetition.  The list is bounded in number and in bytes, so that the
 * document stays far below the size a validator reads (1.3: 4 MiB): the
 * images left out are counted, said in images_note, and on stderr.  Distinctness is kept as 64-bit hashes of the paths, a few bytes
 * per path however long.
 */
#define IMAGES_MAX 1024
#define IMAGES_BYTES (2u << 20)

struct images {
	json_t *list;           /* the described images */
	size_t bytes;           /* their serialized size */
	char **pending;         /* noted, to describe at the repetition's end */
	const char **pending_role;
	size_t npending;
	size_t omitted;
	uint64_t *seen;         /* open addressing, 0 empty */
	size_t seen_cap, nseen;
};

static uint64_t path_hash(const char *p)
{
	uint64_t h = 1469598103934665603ull;

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h ? h : 1;
}

/* True when p was not seen before (it is now). */
static bool images_first(struct images *im, const char *p)
{
	uint64_t h = path_hash(p);
	size_t i;

	if (2 * (im->nseen + 1) > im->seen_cap) {
		size_t cap = im->seen_cap ? 2 * im->seen_cap : 1024;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return false; /* out of memory: count it as seen */
		for (size_t k = 0; k < im->seen_cap; k++)
			if (im->seen[k]) {
				for (i = im->seen[k] & (cap - 1); v[i]; i = (i + 1) & (cap - 1))
					;
				v[i] = im->seen[k];
			}
		free(im->seen);
		im->seen = v;
		im->seen_cap = cap;
	}
	for (i = h & (im->seen_cap - 1); im->seen[i]; i = (i + 1) & (im->seen_cap - 1))
		if (im->seen[i] == h)
			return false;
	im->seen[i] = h;
	im->nseen++;
	return true;
}

static void images_note(struct images *im, const char *path, const char *role)
{
	char **v;
	const char **r;

	if (!images_first(im, path))
		return;
	if (json_array_size(im->list) + im->npending >= IMAGES_MAX) {
		im->omitted++;
		return;
	}
	v = realloc(im->pending, (im->npending + 1) * sizeof(*v));
	if (v)
		im->pending = v;
	r = v ? realloc(im->pending_role, (im->npending + 1) * sizeof(*r)) : NULL;
	if (r)
		im->pending_role = r;
	if (!v || !r || !(v[im->npending] = strdup(path))) {
		im->omitted++;
		return;
	}
	r[im->npending++] = role;
}

/* Describe what was noted, within the byte bound. */
static void images_describe(struct images *im)
{
	for (size_t i = 0; i < im->npending; i++) {
		json_t *d = pmu_image_describe(im->pending[i], im->pending_role[i]);
		size_t n = d ? json_dumpb(d, NULL, 0, JSON_COMPACT) : 0;

		if (!d || im->bytes + n > IMAGES_BYTES) {
			json_decref(d);
			im->omitted++;
		} else {
			im->bytes += n;
			json_array_append_new(im->list, d);
		}
		free(im->pending[i]);
	}
	im->npending = 0;
}

static void images_release(struct images *im)
{
	for (size_t i = 0; i < im->npending; i++)
		free(im->pending[i]);
	free(im->pending);
	free(im->pending_role);
	free(im->seen);
	json_decref(im->list);
	memset(im, 0, sizeof(*im));
}

/* ---- the cohort stream (spec 1.3: data/cohort.jsonl) ---------------------
 *
 * The follower hands each incarnation over as it joins, execs and ends
 * (backend.h, pmu_cohort_sink); its records go to the stream at once, in
 * the follower's order, so a parent's record precedes its children's and
 * every record of an incarnation precedes its end.  Nothing of a finished
 * incarnation stays here.
 */
struct cohort_out {
	struct pmu_bagw_stream s;
	struct images *images;
	char root_comm[32];     /* the root's last comm, for run.json of an attached tree */
};

/*
 * The records are built in place (lib/bagw.h), not as jansson objects:
 * 2,000 incarnations write 26,000 records, and a tree of allocations per
 * record cost 3x the budget (issue 13: 30 ms for 2,000).  Members in the
 * order of the spec's tables, the bytes jansson would write
 * (tests/unit/t-bagw.c).
 */
static void inc_id(char id[24], int n)
{
	snprintf(id, 24, "i%d", n);
}

static int cohort_joined(void *ctx, const struct pmu_incarnation *in)
{
	struct cohort_out *w = ctx;
	char id[24];

	inc_id(id, in->id);
	pmu_bagw_rec(&w->s);
	pmu_bagw_str(&w->s, "type", "incarnation");
	pmu_bagw_str(&w->s, "id", id);
	pmu_bagw_int(&w->s, "pid", in->pid);
	pmu_bagw_int(&w->s, "start_ns", (int64_t)in->start_ns);
	pmu_bagw_bool(&w->s, "preexisting", in->preexisting);
	if (in->parent) {
		inc_id(id, in->parent);
		pmu_bagw_str(&w->s, "parent", id);
	}
	if (in->id == 1)
		snprintf(w->root_comm, sizeof(w->root_comm), "%s", in->d->comm);
	return pmu_bagw_rec_end(&w->s);
}

static int cohort_thread(void *ctx, const struct pmu_incarnation *in, pid_t tid)
{
	struct cohort_out *w = ctx;
	char id[24];

	inc_id(id, in->id);
	pmu_bagw_rec(&w->s);
	pmu_bagw_str(&w->s, "type", "thread");
	pmu_bagw_str(&w->s, "inc", id);
	pmu_bagw_int(&w->s, "tid", tid);
	return pmu_bagw_rec_end(&w->s);
}

static int cohort_exec(void *ctx, const struct pmu_incarnation *in, uint64_t t, const char *path,
		       const struct pmu_exec_argv *argv)
{
	struct cohort_out *w = ctx;
	char id[24];

	inc_id(id, in->id);
	if (w->images && strcmp(path, "?"))
		images_note(w->images, path, "exec");
	pmu_bagw_rec(&w->s);
	pmu_bagw_str(&w->s, "type", "exec");
	pmu_bagw_str(&w->s, "inc", id);
	pmu_bagw_int(&w->s, "t_ns", (int64_t)t);
	pmu_bagw_str(&w->s, "path", path);
	/* spec 1.4: the argv as the follower read it, bounded, or why not;
	 * secrets in it are recorded as the user gave them (pmurec(1)) */
	if (argv && argv->blob)
		pmu_bagw_argv(&w->s, argv->blob, argv->len, argv->truncated);
	else
		pmu_bagw_str(&w->s, "argv_reason",
			     argv && argv->reason && argv->reason[0] ? argv->reason : "the follower did not read it");
	return pmu_bagw_rec_end(&w->s);
}

static int cohort_object(void *ctx, const char *path)
{
	struct cohort_out *w = ctx;

	if (w->images)
		images_note(w->images, path, "object");
	return 0;
}

static int cohort_ended(void *ctx, const struct pmu_incarnation *in)
{
	struct cohort_out *w = ctx;
	const struct pmu_inc_detail *d = in->d;
	char id[24];
	int err = 0;

	inc_id(id, in->id);
	pmu_bagw_batch(&w->s);
	for (int k = 0; !err && k < PMU_RES_COUNT_; k++) {
		const struct pmu_resource *x = d->res ? &d->res[k] : NULL;

		pmu_bagw_rec(&w->s);
		pmu_bagw_str(&w->s, "type", "resource");
		pmu_bagw_str(&w->s, "inc", id);
		pmu_bagw_str(&w->s, "field", pmu_res_names[k]);
		pmu_bagw_str(&w->s, "status", x && x->ok ? "ok" : "unavailable");
		if (x && x->source)
			pmu_bagw_str(&w->s, "source", x->source);
		if (x && x->ok) {
			pmu_bagw_int(&w->s, pmu_res_names[k], (int64_t)x->value);
		} else {
			pmu_bagw_str(&w->s, "reason", x ? x->reason : "the incarnation's end was not observed");
			pmu_bagw_str(&w->s, "remedy", x && x->remedy ? x->remedy
						      : in->ended ? "none: the process ended before it could be read"
								  : "none: it was still running when the recording ended");
		}
		err = pmu_bagw_rec_end(&w->s);
	}
	if (in->id == 1)
		snprintf(w->root_comm, sizeof(w->root_comm), "%s", d->comm);
	if (!err) {
		pmu_bagw_rec(&w->s);
		pmu_bagw_str(&w->s, "type", "end");
		pmu_bagw_str(&w->s, "inc", id);
		if (in->ended)
			pmu_bagw_int(&w->s, "end_ns", (int64_t)in->end_ns);
		pmu_bagw_str(&w->s, "comm", d->comm[0] ? d->comm : "?");
		pmu_bagw_str(&w->s, "exit", d->exit_kind == 1 ? "exited" : d->exit_kind == 2 ? "signaled" : "unknown");
		if (d->exit_kind == 1)
			pmu_bagw_int(&w->s, "code", d->exit_value);
		else if (d->exit_kind == 2)
			pmu_bagw_int(&w->s, "signal", d->exit_value);
		err = pmu_bagw_rec_end(&w->s);
	}
	pmu_bagw_batch_end(&w->s);
	return err;
}

static const struct pmu_cohort_sink cohort_sink_ops = {
	cohort_joined, cohort_thread, cohort_exec, cohort_object, cohort_ended, NULL,
};

static bool looks_secret(const char *name)
{
	char up[256];
	size_t i;

	for (i = 0; name[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i]);
	up[i] = '\0';
	for (const char *const *w = secret_words; *w; w++)
		if (!fnmatch(*w, up, 0))
			return true;
	return false;
}

static json_t *environment_json(const struct opts *o)
{
	json_t *env = json_object();

	for (size_t i = 0; i < o->nenv; i++) {
		const char *v = getenv(o->env[i]);

		if (!v)
			continue;
		json_object_set_new(env, o->env[i], looks_secret(o->env[i]) ? json_string("<redacted>") : pmu_json_text(v));
	}
	return env;
}

static int config_hash(const struct opts *o, char hex[PMU_SHA256_HEX])
{
	json_t *cfg = json_pack("{s:s,s:i,s:[]}", "mode", mode_names[o->mode], "max_duration_ms",
				o->max_duration_ms, "env_allow");
	char *s;
	int err;

	for (size_t i = 0; i < o->nenv; i++)
		json_array_append_new(json_object_get(cfg, "env_allow"), json_string(o->env[i]));
	json_object_set_new(cfg, "events", json_array());
	for (size_t i = 0; i < o->nev; i++)
		json_array_append_new(json_object_get(cfg, "events"), json_string(o->ev[i].name));
	json_object_set_new(cfg, "scaled", json_boolean(o->scaled));
	json_object_set_new(cfg, "cohort", json_integer(o->cohort));
	s = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(cfg);
	err = pmu_sha256_buf(s, strlen(s), hex);
	free(s);
	return err;
}

static int probe(bool json)
{
	json_t *host = json_object(), *caps = json_array(), *x;
	size_t i;

	pmu_backend_probe(host, caps);
	if (json) {
		json_t *o = json_pack("{s:o,s:o}", "host", host, "capabilities", caps);

		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(o);
		return 0;
	}
	printf("host: %s %s %s%s%s\n\n", json_string_value(json_object_get(host, "os")),
	       json_string_value(json_object_get(host, "kernel")), json_string_value(json_object_get(host, "arch")),
	       json_object_get(host, "cpu") ? ", " : "",
	       json_object_get(host, "cpu") ? json_string_value(json_object_get(host, "cpu")) : "");
	json_array_foreach(caps, i, x) {
		const char *st = json_string_value(json_object_get(x, "status"));

		printf("%-28s %-12s %s\n", json_string_value(json_object_get(x, "name")), st,
		       json_object_get(x, "value") ? json_string_value(json_object_get(x, "value")) : "");
		if (json_object_get(x, "reason"))
			printf("%-28s %-12s why: %s\n", "", "", json_string_value(json_object_get(x, "reason")));
		if (json_object_get(x, "remedy"))
			printf("%-28s %-12s remedy: %s\n", "", "", json_string_value(json_object_get(x, "remedy")));
	}
	json_decref(host);
	json_decref(caps);
	return 0;
}

/* The bundle as collectors write it (collector.h): streams of this repetition. */
struct pmu_stream {
	struct pmu_bagw_stream s;
};

static int out_open(struct pmu_out *o, const char *rel, const char *kind, struct pmu_stream **sp)
{
	struct pmu_stream *s = calloc(1, sizeof(*s));

	*sp = s;
	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	return pmu_bagw_open(o->ctx, &s->s, rel, kind);
}

static int out_put(struct pmu_stream *s, json_t *rec)
{
	return pmu_bagw_put(&s->s, rec);
}

static int out_blob_open(struct pmu_out *o, const char *rel, bool shared, struct pmu_stream **sp)
{
	struct pmu_stream *s = calloc(1, sizeof(*s));
	struct pmu_bagw w = *(struct pmu_bagw *)o->ctx;

	*sp = s;
	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (shared)
		w.scope[0] = '\0';
	return pmu_bagw_open(&w, &s->s, rel, NULL);
}

static int out_blob_write(struct pmu_stream *s, const void *p, size_t n)
{
	return pmu_bagw_write(&s->s, p, n);
}

static int out_close(struct pmu_stream *s)
{
	int err = pmu_bagw_close(&s->s);

	free(s);
	return err;
}

/* What the follower and the recorder's loop call back. */
struct rep_ctx {
	struct pmurec_colls *colls;
	struct pmu_launch_result *lr;
	struct pmu_follow *f;
	struct pmu_cohort_cgroup *cg;   /* the cohort's, or NULL and why */
	bool cg_out;                    /* the command could not be moved in */
	char cg_why[400];
	const char *cg_remedy;
};

/* The follower is attached and the root held: the collectors open. */
static void before_release(void *ctx, pid_t root)
{
	struct rep_ctx *r = ctx;

	pmurec_colls_followed(r->colls, r->lr, r->lr->follower && !strcmp(r->lr->follower, "ptrace") && r->lr->follow_ok);
	/* the command into the cohort's cgroup before its exec */
	if (r->cg && pmu_cohort_cgroup_enter(r->cg, root, r->cg_why, sizeof(r->cg_why))) {
		/* the leaf stays until the end (the follower holds it): the
		 * collectors are told there is none */
		r->cg_remedy = "run as root, or under a delegated cgroup (systemd-run --user --scope -p Delegate=yes)";
		r->cg_out = true;
		if (r->lr->follower && !strcmp(r->lr->follower, "ebpf"))
			fprintf(stderr, "pmurec: the command is not in the cohort's cgroup (%s): were pmurec killed by "
				"SIGKILL, the cohort could outlive it\n", r->cg_why);
	}
	pmurec_colls_cgroup(r->colls, r->cg_out ? NULL : r->cg, r->cg_why, r->cg_remedy);
	/* one that cannot open has failed (its lifecycle says why), the
	 * others open all the same */
	pmurec_colls_open(r->colls, root, pmu_now_mono_ns());
}

static void other_exited(void *ctx, pid_t pid, int status)
{
	struct rep_ctx *r = ctx;

	pmurec_colls_reaped(r->colls, pid, status);
}

static bool over_bound(void *ctx, char *why, size_t n)
{
	(void)ctx;
	if (!pmurec_bound_exceeded())
		return false;
	snprintf(why, n, "--max-output-bytes %llu reached: the cohort was sent SIGTERM",
		 (unsigned long long)pmurec_bound_limit());
	return true;
}

/* A decimal option value in [min, max]; -1 with a message otherwise. */
/* PROVIDER:NAME, each a C identifier of at most 100 bytes */
static bool probe_spec_ok(const char *s)
{
	const char *colon = strchr(s, ':');

	if (!colon || colon == s || !colon[1] || strchr(colon + 1, ':') || strlen(s) > 201)
		return false;
	for (const char *p = s; *p; p++)
		if (p != colon && !(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	return !isdigit((unsigned char)s[0]) && !isdigit((unsigned char)colon[1]);
}

static int num_opt(const char *arg, const char *opt, long long min, long long max, long long *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || n < min || n > max) {
		fprintf(stderr, "pmurec: %s needs a number from %lld to %lld, not '%s'\n", opt, min, max, arg);
		return -1;
	}
	*out = n;
	return 0;
}

/*
 * --env-allow A,B,C: each name is recorded.  A name that no environment can
 * hold (the portable rule, [A-Za-z_][A-Za-z0-9_]*) is refused rather than
 * silently recording nothing; the length bound keeps looks_secret() seeing
 * the whole name.
 */
static int env_allow(struct opts *o, const char *arg)
{
	const char *p = arg;

	for (;;) {
		size_t n = strcspn(p, ","), i;
		char **v;

		for (i = 0; i < n && (p[i] == '_' || ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'z') ||
				      (i && p[i] >= '0' && p[i] <= '9')); i++)
			;
		if (n == 0 || i < n || n > 255) {
			fprintf(stderr, "pmurec: --env-allow '%s': '%.*s' is not an environment variable name "
				"(letters, digits and '_', not starting with a digit, at most 255)\n", arg, (int)n, p);
			return -1;
		}
		for (i = 0; i < o->nenv && (strlen(o->env[i]) != n || strncmp(o->env[i], p, n)); i++)
			;
		if (i == o->nenv) {
			if (!(v = realloc(o->env, (o->nenv + 1) * sizeof(*v))))
				return -1;
			o->env = v;
			if (!(o->env[o->nenv] = strndup(p, n)))
				return -1;
			o->nenv++;
		}
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static void env_free(struct opts *o)
{
	free(o->vbuf);
	for (size_t i = 0; i < o->nenv; i++)
		free(o->env[i]);
	free(o->env);
}

static bool variant_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-';
}

/*
 * --variants A,B,...: the names, and the commands after '--' split at each
 * ':::' (which is then an argument like any other without --variants).
 * cmd is the NULL-terminated rest of argv; each ':::' in it becomes the
 * NULL that ends the command before it, and cmds[i] points at command i.
 * Every name makes a file name (NAME.bundle), so it is refused rather
 * than escaped.  Returns 0, or -1 after saying what is wrong (a usage
 * error).
 */
static int parse_variants(struct opts *o, char **cmd, char **cmds[PMUREC_MAX_VARIANTS])
{
	char *p;
	int ncmd = 0;

	if (!(o->vbuf = strdup(o->variants)))
		return -1;
	for (p = o->vbuf;;) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < n && variant_char(p[i]); i++)
			;
		if (n == 0 || i < n || n > PMUREC_VARIANT_NAME_MAX) {
			fprintf(stderr, "pmurec: --variants '%s': '%.*s' is not a variant name (letters, digits, '.', "
				"'_' and '-', 1 to %d of them)\n", o->variants, (int)n, p, PMUREC_VARIANT_NAME_MAX);
			return -1;
		}
		for (int k = 0; k < o->nvar; k++)
			if (strlen(o->vnames[k]) == n && !strncmp(o->vnames[k], p, n)) {
				fprintf(stderr, "pmurec: --variants '%s': the name '%.*s' is given twice; each variant "
					"needs its own (its bundle is NAME.bundle)\n", o->variants, (int)n, p);
				return -1;
			}
		if (o->nvar == PMUREC_MAX_VARIANTS) {
			fprintf(stderr, "pmurec: --variants '%s': at most %d variants\n", o->variants,
				PMUREC_MAX_VARIANTS);
			return -1;
		}
		o->vnames[o->nvar++] = p;
		if (!p[n])
			break;
		p[n] = '\0';
		p += n + 1;
	}
	if (o->nvar < 2) {
		fprintf(stderr, "pmurec: --variants needs at least two names, like a,b, one per command\n");
		return -1;
	}
	for (char **a = cmd;; a++) {
		bool sep = *a && !strcmp(*a, ":::");

		if (*a && !sep)
			continue;
		if (a == cmd) {
			fprintf(stderr, "pmurec: --variants: command %d is empty (write '-- CMD_A ARGS... ::: CMD_B "
				"ARGS...')\n", ncmd + 1);
			return -1;
		}
		if (ncmd < PMUREC_MAX_VARIANTS)
			cmds[ncmd] = cmd;
		ncmd++;
		if (!sep)
			break;
		*a = NULL;
		cmd = a + 1;
	}
	if (ncmd != o->nvar) {
		fprintf(stderr, "pmurec: --variants names %d variant%s but %d command%s given; separate the commands "
			"with ':::', one per name\n", o->nvar, o->nvar == 1 ? "" : "s", ncmd, ncmd == 1 ? " was" : "s were");
		return -1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },      { "force", no_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },        { "max-duration", required_argument, NULL, 'D' },
		{ "env-allow", required_argument, NULL, 'E' },   { "seed", required_argument, NULL, 'S' },
		{ "probe", optional_argument, NULL, 'P' },             { "json", no_argument, NULL, 'j' },
		{ "collector", required_argument, NULL, 'C' },   { "collector-timeout", required_argument, NULL, 'T' },
		{ "delay", required_argument, NULL, 'd' },    { "max-output-bytes", required_argument, NULL, 'B' },
		{ "pid", required_argument, NULL, 'p' },         { "file-mode", required_argument, NULL, 'M' },
		{ "repeat", required_argument, NULL, 'R' },      { "warmup", required_argument, NULL, 'W' },
		{ "ab", required_argument, NULL, 'A' },          { "follower", required_argument, NULL, 1001 },
		{ "events", required_argument, NULL, 'e' },      { "scaled", no_argument, NULL, 's' },
		{ "cohort", required_argument, NULL, 'c' },      { "list-events", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },              { "version", no_argument, NULL, 'V' },
		{ "variants", required_argument, NULL, 'N' },
		{ "freq", required_argument, NULL, 'F' },        { "period", required_argument, NULL, 1002 },
		{ "call-graph", required_argument, NULL, 1003 }, { "sample-event", required_argument, NULL, 1004 },
		{ "sample-ring-kb", required_argument, NULL, 1005 }, { "allow-loss", no_argument, NULL, 1006 },
		{ "retain-binaries", optional_argument, NULL, 1007 },
		{ "syscall-ring-kb", required_argument, NULL, 1008 },
		{ "list-probes", required_argument, NULL, 1009 }, { "alloc", no_argument, NULL, 1010 },
		{ "alloc-sample", required_argument, NULL, 1011 }, { "alloc-via", required_argument, NULL, 1012 },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	long long n;

	o->mode = 1;
	o->follower = PMU_FOLLOW_AUTO;
	o->sampling.call_graph = PMU_CG_DEFAULT;
	while ((c = getopt_long(argc, argv, "+o:fm:p:e:F:hV", lo, NULL)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'f': o->force = true; break;
		case 'm':
			for (o->mode = 0; o->mode < 3 && strcmp(optarg, mode_names[o->mode]); o->mode++)
				;
			if (o->mode == 3) {
				fprintf(stderr, "pmurec: unknown mode '%s' (none, light or full)\n", optarg);
				return -1;
			}
			break;
		case 'D':
			if (num_opt(optarg, "--max-duration (ms)", 1, INT32_MAX, &n))
				return -1;
			o->max_duration_ms = (int)n;
			break;
		case 'E':
			if (env_allow(o, optarg))
				return -1;
			break;
		case 'M': {
			char *end;
			unsigned long m;

			errno = 0;
			m = strtoul(optarg, &end, 8);
			if (errno || end == optarg || *end || m > 0777 || !pmu_bag_file_mode_ok((unsigned)m)) {
				fprintf(stderr, "pmurec: --file-mode '%s': give octal read and write bits that "
					"include 0600, such as 0600, 0640 or 0644\n", optarg);
				return -1;
			}
			o->file_mode = (unsigned)m;
			break;
		}
		case 'S':
			if (num_opt(optarg, "--seed", 0, 1ll << 62, &n))
				return -1;
			o->seed = (unsigned long long)n;
			o->have_seed = true;
			break;
		case 'C': {
			const char **v = realloc(o->ext_specs, (o->next_specs + 1) * sizeof(*v));
			struct pmu_ext *probe_ = pmu_ext_new(optarg, 5000); /* syntax check */

			if (!v || !probe_) {
				free(v == o->ext_specs ? NULL : v);
				return -1;
			}
			pmu_ext_free(probe_);
			o->ext_specs = v;
			o->ext_specs[o->next_specs++] = optarg;
			break;
		}
		case 'R':
			if (num_opt(optarg, "--repeat", 1, 10000, &n))
				return -1;
			o->repeat = (int)n;
			break;
		case 'W':
			if (num_opt(optarg, "--warmup", 0, 10000, &n))
				return -1;
			o->warmup = (int)n;
			break;
		case 'A': {
			char *list = strdup(optarg), *w, *sv = NULL;

			for (w = strtok_r(list, ",", &sv); w; w = strtok_r(NULL, ",", &sv)) {
				int m;

				for (m = 0; m < 3 && strcmp(w, mode_names[m]); m++)
					;
				if (m >= 3 || o->nab == 4) {
					fprintf(stderr, "pmurec: --ab '%s': %s\n", optarg,
						m >= 3 ? "a mode is none, light or full" : "at most four runs per round");
					free(list);
					return -1;
				}
				o->ab_modes[o->nab++] = m;
			}
			free(list);
			if (o->nab < 2) {
				fprintf(stderr, "pmurec: --ab needs at least two modes, like none,light (or light,light: "
					"an A/A campaign)\n");
				return -1;
			}
			break;
		}
		case 'N':
			if (o->variants) {
				fprintf(stderr, "pmurec: --variants is given once, with every name\n");
				return -1;
			}
			o->variants = optarg;
			break;
		case 'T':
			if (num_opt(optarg, "--collector-timeout (ms)", 1, INT32_MAX, &n))
				return -1;
			o->collector_timeout_ms = (int)n;
			break;
		case 'p':
			if (num_opt(optarg, "--pid", 1, INT32_MAX, &n))
				return -1;
			o->attach = (pid_t)n;
			break;
		case 'B':
			if (num_opt(optarg, "--max-output-bytes", 1, INT64_MAX, &n))
				return -1;
			o->max_output = (unsigned long long)n;
			break;
		case 'd':
			if (num_opt(optarg, "--delay (ms)", 1, INT32_MAX, &n))
				return -1;
			o->delay_ms = (int)n;
			break;
		case 'e': o->events = optarg; break;
		case 'F':
			if (num_opt(optarg, "-F (samples per second)", 1, 1000000, &n))
				return -1;
			if (o->sampling.period) {
				fprintf(stderr, "pmurec: -F and --period exclude each other: sample by frequency or by period\n");
				return -1;
			}
			o->sampling.freq_hz = (unsigned)n;
			break;
		case 1002:
			if (num_opt(optarg, "--period (events per sample)", 1, INT64_MAX, &n))
				return -1;
			if (o->sampling.freq_hz) {
				fprintf(stderr, "pmurec: -F and --period exclude each other: sample by frequency or by period\n");
				return -1;
			}
			o->sampling.period = (uint64_t)n;
			break;
		case 1003: {
			const char *comma = strchr(optarg, ',');
			size_t k = comma ? (size_t)(comma - optarg) : strlen(optarg);

			if (k == 4 && !strncmp(optarg, "none", 4) && !comma)
				o->sampling.call_graph = PMU_CG_NONE;
			else if (k == 2 && !strncmp(optarg, "fp", 2) && !comma)
				o->sampling.call_graph = PMU_CG_FP;
			else if (k == 5 && !strncmp(optarg, "dwarf", 5)) {
				o->sampling.call_graph = PMU_CG_DWARF;
				if (comma) {
					if (num_opt(comma + 1, "--call-graph dwarf,STACK_BYTES", 8, 65528, &n))
						return -1;
					if (n % 8) {
						fprintf(stderr, "pmurec: --call-graph dwarf,%lld: the stack size is a multiple of 8\n", n);
						return -1;
					}
					o->sampling.stack_bytes = (unsigned)n;
				}
			} else {
				fprintf(stderr, "pmurec: --call-graph '%s': none, fp or dwarf[,STACK_BYTES]\n", optarg);
				return -1;
			}
			break;
		}
		case 1004: o->sampling.event = optarg; break;
		case 1005:
			if (num_opt(optarg, "--sample-ring-kb", 4, 1 << 21, &n))
				return -1;
			o->sampling.ring_kb = (unsigned)n;
			break;
		case 1006: o->sampling.allow_loss = true; break;
		case 1008:
			if (num_opt(optarg, "--syscall-ring-kb", 4, 1 << 20, &n))
				return -1;
			if (n & (n - 1)) {
				fprintf(stderr, "pmurec: --syscall-ring-kb needs a power of two, not '%s'\n", optarg);
				return -1;
			}
			o->syscall_ring_kb = (unsigned)n;
			break;
		case 1007:
			if (!optarg || !strcmp(optarg, "sampled"))
				o->sampling.retain = PMU_RETAIN_SAMPLED;
			else if (!strcmp(optarg, "all"))
				o->sampling.retain = PMU_RETAIN_ALL;
			else {
				fprintf(stderr, "pmurec: --retain-binaries='%s': sampled (the default) or all\n", optarg);
				return -1;
			}
			break;
		case 1001:
			if (!strcmp(optarg, "auto"))
				o->follower = PMU_FOLLOW_AUTO;
			else if (!strcmp(optarg, "ebpf"))
				o->follower = PMU_FOLLOW_EBPF;
			else if (!strcmp(optarg, "ptrace"))
				o->follower = PMU_FOLLOW_PTRACE;
			else {
				fprintf(stderr, "pmurec: --follower: '%s' is not auto, ebpf or ptrace\n", optarg);
				return -1;
			}
			break;
		case 's': o->scaled = true; break;
		case 'L': o->list_events = true; break;
		case 'c':
			if (!strcmp(optarg, "auto"))
				o->cohort = PMU_SCOPE_AUTO;
			else if (!strcmp(optarg, "cgroup"))
				o->cohort = PMU_SCOPE_CGROUP;
			else if (!strcmp(optarg, "inherit"))
				o->cohort = PMU_SCOPE_INHERIT;
			else {
				fprintf(stderr, "pmurec: unknown cohort scope '%s' (auto, cgroup or inherit)\n", optarg);
				return -1;
			}
			break;
		case 'P': {
			/* --probe alone: the host's capabilities; --probe PROVIDER:NAME
			 * (or --probe=PROVIDER:NAME): a USDT probe to record */
			const char *spec = optarg;

			if (!spec && optind < argc && probe_spec_ok(argv[optind]))
				spec = argv[optind++];
			if (!spec) {
				o->probe = true;
				break;
			}
			if (!probe_spec_ok(spec)) {
				fprintf(stderr, "pmurec: --probe '%s': PROVIDER:NAME, each a C identifier (e.g. python:function__entry)\n", spec);
				return -1;
			}
			if (o->nprobes == PMU_ARRAY_SIZE(o->probes)) {
				fprintf(stderr, "pmurec: --probe: at most %zu probes\n", PMU_ARRAY_SIZE(o->probes));
				return -1;
			}
			o->probes[o->nprobes++] = spec;
			break;
		}
		case 1009: o->list_probes = optarg; break;
		case 1010:
			if (!o->alloc_sample)
				o->alloc_sample = PMU_ALLOC_SAMPLE_DEFAULT;
			break;
		case 1011: {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (!errno && end != optarg && (*end == 'k' || *end == 'K') && !end[1])
				v <<= 10, end++;
			else if (!errno && end != optarg && (*end == 'm' || *end == 'M') && !end[1])
				v <<= 20, end++;
			if (errno || end == optarg || *end || v < 1 || v > (1ull << 40) || optarg[0] == '-') {
				fprintf(stderr, "pmurec: --alloc-sample needs a byte count from 1 to 1T (suffix k or m), not '%s'\n", optarg);
				return -1;
			}
			o->alloc_sample = v;
			break;
		}
		case 1012:
			if (!strcmp(optarg, "auto"))
				o->alloc_via = PMU_ALLOC_AUTO;
			else if (!strcmp(optarg, "uprobe"))
				o->alloc_via = PMU_ALLOC_UPROBE;
			else if (!strcmp(optarg, "preload"))
				o->alloc_via = PMU_ALLOC_PRELOAD;
			else {
				fprintf(stderr, "pmurec: --alloc-via: '%s' is not auto, uprobe or preload\n", optarg);
				return -1;
			}
			break;
		case 'j': o->json = true; break;
		case 'h':
			fputs(usage, stdout);
			exit(pmu_cli_finish("pmurec", 0));
		case 'V':
			printf("pmurec %s (spec %s, revision %s)\n", PMU_VERSION, PMU_SPEC_VERSION, PMU_REVISION);
			exit(pmu_cli_finish("pmurec", 0));
		default:
			return -1;
		}
	}
	return 0;
}


/* Walk pmurec's own parents: attaching to one of them would deadlock. */
static bool is_self_or_ancestor(pid_t target)
{
	pid_t p = getpid();

	for (int depth = 0; p > 1 && depth < 4096; depth++) {
		char path[64], *s = NULL, *q;

		if (p == target)
			return true;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)p);
		if (pmu_read_file(AT_FDCWD, path, 1 << 16, &s, NULL))
			return false;
		q = strstr(s, "\nPPid:");
		p = q ? (pid_t)atoi(q + 7) : 0;
		free(s);
	}
	return target == 1;
}

/* One bundle being written: a plain recording, one mode of --ab or one
 * variant of --variants. */
struct bundle_out {
	char path[4200];
	struct pmu_bag *bag;
	int mode;
	char *const *argv;      /* its command (NULL-terminated) */
	const char *label;      /* its mode or variant in a campaign, else NULL */
	json_t *campaign;       /* run.json's campaign less its position, or NULL */
	json_t *runs;           /* each repetition's run.json, written at the end */
	struct images images;
	int reps, code;
	bool failed;
};

static unsigned long long g_nofile; /* the soft open-file limit pmurec was given */
/* the eBPF follower's ring (bytes, 0: its default); PMUREC_TEST_RING_BYTES
 * makes it tiny so that tests can see loss counted */
static size_t g_ring_bytes;
static uint64_t g_rt, g_mono;

static void random_hex(char *out, size_t bytes)
{
	unsigned char rnd[32];
	FILE *f = fopen("/dev/urandom", "r");

	if (bytes > sizeof(rnd))
		bytes = sizeof(rnd);
	if (!f || fread(rnd, 1, bytes, f) != bytes)
		memset(rnd, 0, sizeof(rnd));
	if (f)
		fclose(f);
	for (size_t i = 0; i < bytes; i++)
		snprintf(out + 2 * i, 3, "%02x", rnd[i]);
}

static json_t *argv_json(const struct opts *o, char *const *argv, const char *root_comm, char *cwd, size_t cwdsz)
{
	json_t *argvj = json_array();

	for (char *const *a = argv; !o->attach && *a; a++)
		json_array_append_new(argvj, pmu_json_text(*a));
	if (o->attach) {
		/* the attached process's own command line and directory */
		char path[64], *cl = NULL;
		size_t n = 0;
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)o->attach);
		if (pmu_read_file(AT_FDCWD, path, 1 << 20, &cl, &n) == 0)
			for (size_t i = 0; i < n; i += strlen(cl + i) + 1)
				if (cl[i])
					json_array_append_new(argvj, pmu_json_text(cl + i));
		free(cl);
		if (!json_array_size(argvj))
			json_array_append_new(argvj, pmu_json_text(root_comm[0] ? root_comm : "?"));
		snprintf(path, sizeof(path), "/proc/%d/cwd", (int)o->attach);
		k = readlink(path, cwd, cwdsz - 1);
		if (k > 0)
			cwd[k] = '\0';
		else
			snprintf(cwd, cwdsz, "?");
	} else if (!getcwd(cwd, cwdsz)) {
		snprintf(cwd, cwdsz, "?");
	}
	return argvj;
}

enum { REP_OK = 0, REP_ABORT = -1 };

/* The file execvp(3) would run for name, or NULL. */
static char *resolve_command(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *out = NULL;

	if (strchr(name, '/'))
		return realpath(name, NULL);
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); copy && dir && !out; dir = strtok_r(NULL, ":", &save)) {
		char buf[4096];

		snprintf(buf, sizeof(buf), "%s/%s", *dir ? dir : ".", name);
		if (access(buf, X_OK) == 0)
			out = realpath(buf, NULL);
	}
	free(copy);
	return out;
}

/*
 * Record one repetition into b at repetition k: launch (or attach),
 * follow, stop the collectors, and write everything of the repetition
 * but its run.json, which is kept in b->runs.  Returns REP_OK, or
 * REP_ABORT (with *exit_code) when nothing is to be written at all.
 */
/* The recorder's own CPU time so far (every thread of it): host_load's
 * recorder_cpu_ns, so that a reader can tell the recorder's part of the
 * host's busy time from other load. */
static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static int record_repetition(struct opts *o, struct bundle_out *b, int k, int position, int *exit_code)
{
	struct pmu_launch l = { 0 };
	struct pmu_launch_result lr;
	struct pmu_cohort cohort = { 0 };
	struct pmu_bagw w;
	struct pmu_out out = { out_open, out_put, out_close, &w, out_blob_open, out_blob_write };
	struct cohort_out cw = { .images = &b->images };
	struct pmu_cohort_sink sink = cohort_sink_ops;
	struct pmu_run_config cfg = { 0 };
	struct pmurec_colls *colls = NULL;
	struct pmu_ext **ext = NULL;
	size_t next = 0;
	struct rep_ctx rc = { NULL, &lr, NULL, NULL, false, "", NULL };
	struct pmurec_loop loop = { 0 };
	struct pmu_run_window win;
	struct pmu_host_cpu hl0, hl1;
	uint64_t self0, self1;
	json_t *run, *list;
	char cwd[4096], runid[33], reason[300] = "", note[160];
	const char *result = "complete";
	uint64_t mono;
	int saved_mode = o->mode, err, code;
	bool failed;
	const char *lim = getenv("PMUREC_TEST_MAX_INCARNATIONS");

	memset(&lr, 0, sizeof(lr));
	/* the host's CPU time at the start of the run window: host_load is
	 * the difference over exactly that window */
	pmu_host_cpu_read(&hl0);
	self0 = self_cpu_ns();
	mono = hl0.ok ? hl0.t_ns : pmu_now_mono_ns();
	pmu_bagw_init(&w, b->bag, k, PMU_SPEC_VERSION, PMU_SPEC_MINOR);
	sink.ctx = &cw;
	/* tests reach the cohort's bound with a lower one; it is never raised */
	if (lim && strtoull(lim, NULL, 10) > 0 && strtoull(lim, NULL, 10) < PMU_COHORT_MAX_INCARNATIONS)
		cohort.max_incs = (size_t)strtoull(lim, NULL, 10);
	o->mode = b->mode;
	ext = calloc(o->next_specs + 1, sizeof(*ext));
	for (size_t i = 0; ext && i < o->next_specs; i++) {
		ext[next] = pmu_ext_new(o->ext_specs[i], o->collector_timeout_ms ? o->collector_timeout_ms : 5000);
		if (ext[next])
			next++;
	}
	cfg = (struct pmu_run_config){ o->mode, o->attach, o->ev, o->nev, o->scaled, o->cohort,
				       o->collector_timeout_ms, o->delay_ms, &o->sampling, o->max_output,
				       o->syscall_ring_kb, o->attach ? NULL : b->argv, o->probes, o->nprobes,
				       o->alloc_sample, o->alloc_via };
	err = pmurec_colls_new(NULL, &cfg, &cohort, &out, (void **)ext, next, NULL, &colls);
	if (err) {
		fprintf(stderr, "pmurec: %s\n", pmu_error_detail());
		*exit_code = EXIT_RECORDER;
		code = REP_ABORT;
		goto out;
	}
	rc.colls = colls;
	/*
	 * The cohort's cgroup is made now, before the command is forked: the
	 * recorder is then still alone in its own cgroup, and may step aside
	 * to enable controllers (cgroup.c).  The command enters it before its
	 * exec (before_release).
	 */
	if (o->mode > 0 && o->cohort != PMU_SCOPE_INHERIT) {
		if (o->attach) {
			snprintf(rc.cg_why, sizeof(rc.cg_why),
				 "attached to a running tree: its processes are not moved into a cgroup");
			rc.cg_remedy = "launch the command under pmurec to scope it by cgroup";
		} else if (pmu_cohort_cgroup_new(&rc.cg, rc.cg_why, sizeof(rc.cg_why), &rc.cg_remedy)) {
			if (!rc.cg_remedy)
				rc.cg_remedy = "run as root, or under a delegated cgroup "
					       "(systemd-run --user --scope -p Delegate=yes pmurec ...)";
		}
	}
	err = pmu_bagw_open(&w, &cw.s, "cohort.jsonl", "cohort");
	if (err) {
		fprintf(stderr, "pmurec: cannot write '%s': %s\n", b->path, pmu_error_detail());
		*exit_code = EXIT_RECORDER;
		code = REP_ABORT;
		goto out;
	}
	l.sink = &sink;
	l.listener = pmurec_colls_listener(colls);
	l.argv = b->argv;
	l.child_nofile = g_nofile;
	l.attach_pid = o->attach;
	l.follower = o->mode > 0 ? o->follower : PMU_FOLLOW_NONE;
	l.ring_bytes = g_ring_bytes;
	l.ev = o->mode > 0 ? o->ev : NULL;
	l.nev = o->mode > 0 ? o->nev : 0;
	l.cgroup = rc.cg;
	l.before_release = before_release;
	l.on_other_exit = other_exited;
	l.ctx = &rc;
	err = pmu_follow_start(&l, &cohort, &lr, &rc.f);
	if (!err) {
		loop = (struct pmurec_loop){ rc.f, &cohort, &lr, o->attach != 0, o->max_duration_ms, 2000, over_bound,
					     pmurec_colls_fds, pmurec_colls_drain, colls };
		err = pmurec_loop_run(&loop);
	}
	if (rc.f)
		err = pmu_follow_end(rc.f, err);
	{
		/* every incarnation has its end now: the stream is whole */
		int e2 = pmu_bagw_close(&cw.s);

		err = err ? err : e2;
	}
	pmurec_colls_stop(colls);
	/* last: the cohort cgroup goes when nothing of the run is left */
	pmu_cohort_cgroup_end(rc.cg);
	rc.cg = NULL;
	if (o->cohort == PMU_SCOPE_CGROUP && rc.cg_why[0])
		fprintf(stderr, "pmurec: --cohort cgroup: %s; the bundle records it, and counts per process\n", rc.cg_why);
	/* the window holds the collectors' ends too; it ends with the host's
	 * second reading */
	pmu_host_cpu_read(&hl1);
	self1 = self_cpu_ns();
	lr.end_ns = hl1.ok ? hl1.t_ns : pmu_now_mono_ns();
	if (err || pmu_backend_abort || lr.exec_failed) {
		if (lr.exec_failed)
			fprintf(stderr, "pmurec: cannot run '%s': %s\n", b->argv[0], strerror(lr.exec_errno));
		else if (pmu_backend_abort)
			fprintf(stderr, "pmurec: aborted by a second interrupt; no bundle written\n");
		else
			fprintf(stderr, "pmurec: %s\n", pmu_error_detail());
		*exit_code = lr.exec_failed ? (lr.exec_errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC)
			     : pmu_backend_abort ? 128 + SIGINT : EXIT_RECORDER;
		code = REP_ABORT;
		goto out;
	}
	pmurec_colls_follow_losses(colls, lr.lost, lr.lost_why, lr.malformed, lr.malformed_first);
	if (o->mode > 0 && !lr.follow_ok)
		fprintf(stderr, "pmurec: the cohort was not followed: %s; the bundle records it\n", lr.follow_reason);
	if (lr.lost)
		fprintf(stderr, "pmurec: the eBPF follower lost %llu record(s) (%s); the bundle will not validate (LOSS)\n",
			(unsigned long long)lr.lost, lr.lost_why);
	random_hex(runid, 16);
	list = json_array();
	win = (struct pmu_run_window){ lr.start_ns < mono ? lr.start_ns : mono, lr.end_ns, lr.start_ns };
	/* what the cohort stream took: bench/record reads it */
	snprintf(note, sizeof(note), "; cohort.jsonl: %llu records, %llu bytes, written in %.1f ms",
		 (unsigned long long)cw.s.records, (unsigned long long)cw.s.bytes, (double)cw.s.ns / 1e6);
	err = pmurec_colls_emit(colls, &win, note, list, &failed, reason, sizeof(reason));
	if (failed)
		result = "invalid";
	if (lr.truncated) {
		result = "truncated";
		snprintf(reason, sizeof(reason), "%s", lr.truncation);
	} else if (lr.interrupted) {
		result = "interrupted";
		snprintf(reason, sizeof(reason), "pmurec received signal %d (%s); forwarded to the cohort", lr.signal,
			 sigabbrev_np(lr.signal) ? sigabbrev_np(lr.signal) : "?");
	}
	run = pmu_bagw_doc(&w, "run", NULL);
	json_object_set_new(run, "run_id", json_string(runid));
	json_object_set_new(run, "tool", json_pack("{s:s,s:s}", "name", "pmurec", "version", PMU_VERSION));
	json_object_set_new(run, "mode", json_string(mode_names[o->mode]));
	json_object_set_new(run, "argv", argv_json(o, b->argv, cw.root_comm, cwd, sizeof(cwd)));
	json_object_set_new(run, "cwd", pmu_json_text(cwd));
	json_object_set_new(run, "start_ns", json_integer((json_int_t)(lr.start_ns < mono ? lr.start_ns : mono)));
	json_object_set_new(run, "end_ns", json_integer((json_int_t)lr.end_ns));
	json_object_set_new(run, "realtime_anchor_ns", json_integer((json_int_t)g_rt));
	json_object_set_new(run, "monotonic_anchor_ns", json_integer((json_int_t)g_mono));
	if (o->attach && !(cohort.n && cohort.incs[0].ended))
		json_object_set_new(run, "exit", exit_json(0, 0)); /* still running when detached */
	else
		json_object_set_new(run, "exit",
				    exit_json(WIFEXITED(lr.wait_status) ? 1 : WIFSIGNALED(lr.wait_status) ? 2 : 0,
					      WIFEXITED(lr.wait_status) ? WEXITSTATUS(lr.wait_status)
									: WTERMSIG(lr.wait_status)));
	json_object_set_new(run, "result", json_string(result));
	if (reason[0])
		json_object_set_new(run, "result_reason", json_string(reason));
	json_object_set_new(run, "tolerate_loss", json_boolean(o->sampling.allow_loss));
	json_object_set_new(run, "collectors", list);
	if (o->have_seed)
		json_object_set_new(run, "seed", json_integer((json_int_t)o->seed));
	if (o->repeat > 1 || b->campaign)
		json_object_set_new(run, "repetition", json_integer(k));
	if (b->campaign) {
		json_t *c = json_deep_copy(b->campaign);

		json_object_set_new(c, "position", json_integer(position));
		json_object_set_new(run, "campaign", c);
	}
	if (lr.have_rusage)
		json_object_set_new(run, "command_rusage",
				    json_pack("{s:I,s:I,s:I,s:I,s:I,s:s}", "cpu_user_ns", (json_int_t)lr.ru_user_ns,
					      "cpu_system_ns", (json_int_t)lr.ru_system_ns, "max_rss_bytes",
					      (json_int_t)lr.ru_maxrss_bytes, "minor_faults", (json_int_t)lr.ru_minflt,
					      "major_faults", (json_int_t)lr.ru_majflt, "source",
					      "wait4 rusage of the command (includes the descendants it waited for)"));
	json_object_set_new(run, "host_load", pmurec_host_load(&hl0, &hl1, self1 > self0 ? self1 - self0 : 0));
	json_array_append_new(b->runs, run);

	if (l.follower == PMU_FOLLOW_NONE && !o->attach) {
		/* mode none follows no exec: describe the command that was run */
		char *path = resolve_command(b->argv[0]);

		if (path)
			images_note(&b->images, path, "exec");
		free(path);
	}
	images_describe(&b->images);
	b->reps = k;
	if (lr.detached)
		fprintf(stderr, "pmurec: %s\n", lr.detach_reason);
	if (strcmp(result, "complete"))
		fprintf(stderr, "pmurec: %s%srepetition %d %s: %s\n", b->label ? b->label : "", b->label ? " " : "", k,
			result, reason);
	b->code = WIFEXITED(lr.wait_status) ? WEXITSTATUS(lr.wait_status) : 128 + WTERMSIG(lr.wait_status);
	if (o->attach && !(cohort.n && cohort.incs[0].ended))
		b->code = 0; /* detached: the tree runs on */
	b->failed |= failed;
	if (err) {
		fprintf(stderr, "pmurec: cannot write '%s': %s\n", b->path, pmu_error_detail());
		*exit_code = EXIT_RECORDER;
		code = REP_ABORT;
	} else {
		code = REP_OK;
	}
out:
	/* on the way out after a failure: the bag is aborted, the handles go */
	pmu_bagw_close(&cw.s);
	pmurec_colls_free(colls);
	pmu_cohort_cgroup_end(rc.cg);
	for (size_t i = 0; i < next; i++)
		pmu_ext_free(ext[i]);
	free(ext);
	pmu_cohort_release(&cohort);
	o->mode = saved_mode;
	return code;
}

/* Write the documents of the whole bundle and finalize it. */
static int finish_bundle(struct opts *o, struct bundle_out *b, json_t *host, json_t *caps)
{
	char hex[PMU_SHA256_HEX];
	json_t *prov, *c, *st = json_array();
	size_t i;
	json_t *run;
	int err = 0;
	struct pmu_bagw w;

	json_array_foreach(b->runs, i, run) {
		if (i == 0 && o->repeat > 1)
			json_object_set_new(run, "repeat", json_integer(b->reps));
		if (i == 0 && o->warmup)
			json_object_set_new(run, "warmup", json_integer(o->warmup));
		pmu_bagw_init(&w, b->bag, (int)i + 1, PMU_SPEC_VERSION, PMU_SPEC_MINOR);
		if (!err)
			err = pmu_bagw_put_doc(&w, "run.json", json_incref(run));
	}
	/* the bundle's own documents, at data/ */
	pmu_bagw_init(&w, b->bag, 1, PMU_SPEC_VERSION, PMU_SPEC_MINOR);
	c = pmu_bagw_doc(&w, "capabilities", json_pack("{s:O,s:O}", "host", host, "capabilities", caps));
	if (!err)
		err = pmu_bagw_put_doc(&w, "capabilities.json", c);
	else
		json_decref(c);
	config_hash(o, hex);
	prov = pmu_bagw_doc(&w, "provenance", NULL);
	json_object_set_new(prov, "tool", json_pack("{s:s,s:s,s:s,s:s}", "name", "pmurec", "version", PMU_VERSION,
						    "revision", PMU_REVISION, "build_flags", PMU_BUILD_FLAGS));
	json_object_set_new(prov, "config_hash", json_string(hex));
	json_object_set_new(prov, "images", json_incref(b->images.list));
	if (b->images.omitted) {
		char note[200];

		snprintf(note, sizeof(note), "%zu distinct image(s) seen were not described: the list holds at most %d "
			 "images and %u KiB of descriptions", b->images.omitted, IMAGES_MAX, IMAGES_BYTES >> 10);
		json_object_set_new(prov, "images_note", json_string(note));
		fprintf(stderr, "pmurec: provenance.json: %s\n", note);
	}
	json_object_set_new(prov, "environment", environment_json(o));
	pmu_backend_settings(st);
	json_object_set_new(prov, "settings", st);
	if (!err)
		err = pmu_bagw_put_doc(&w, "provenance.json", prov);
	else
		json_decref(prov);
	if (!err)
		err = pmu_bag_finalize(b->bag);
	else
		pmu_bag_abort(b->bag);
	b->bag = NULL;
	if (err)
		fprintf(stderr, "pmurec: cannot write '%s': %s\n", b->path, pmu_error_detail());
	return err;
}

/* --warmup: plain runs, nothing recorded (bounded like the recorded ones):
 * n rounds of the ncmd commands. */
static int o_max_duration;

static int warm_up(int n, const struct bundle_out *out, int ncmd)
{
	for (int i = 0; i < n * ncmd && !pmu_backend_stop_signal; i++) {
		char *const *argv = out[i % ncmd].argv;
		struct pmu_launch l = { 0 };
		struct pmu_launch_result lr;
		struct pmu_cohort c = { 0 };
		struct pmu_follow *f = NULL;
		int err;

		l.argv = argv;
		l.child_nofile = g_nofile;
		l.follower = PMU_FOLLOW_NONE;
		err = pmu_follow_start(&l, &c, &lr, &f);
		if (!err) {
			struct pmurec_loop lp = { f, &c, &lr, false, o_max_duration, 2000, NULL, NULL, NULL, NULL };

			err = pmurec_loop_run(&lp);
		}
		err = f ? pmu_follow_end(f, err) : err;
		pmu_cohort_release(&c);
		if (err || lr.exec_failed) {
			if (lr.exec_failed)
				fprintf(stderr, "pmurec: cannot run '%s': %s\n", argv[0], strerror(lr.exec_errno));
			return lr.exec_failed ? (lr.exec_errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC) : EXIT_RECORDER;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct pmu_bag_opts bo = { .agent = "pmurec " PMU_VERSION, .spec = PMU_SPEC_VERSION, .date = -1 };
	struct bundle_out out[PMUREC_MAX_OUT];
	char **cmds[PMUREC_MAX_VARIANTS];
	struct sigaction sa = { 0 };
	struct pmurec_progress prog;
	json_t *host, *caps, *proto = NULL;
	char seedbuf[32], campaign[33];
	int nout, err, code = 0, rounds;
	bool aborted = false;

	/*
	 * PMUREC_PROBES=pmu tells <pmu/probe.h> to leave marks and spans to
	 * the probes collector.  Only this pmurec's own probes collector may
	 * say so (it sets it at probe when it will listen): one inherited
	 * from an outer pmurec or a shell would reach our command and
	 * silence the control channel of a run that does not listen.
	 */
	unsetenv("PMUREC_PROBES");
	memset(out, 0, sizeof(out));
	if (parse(argc, argv, &o) < 0) {
		fputs("pmurec: see 'pmurec --help'\n", stderr);
		env_free(&o);
		return PMU_EXIT_USAGE;
	}
	if (o.probe)
		return pmu_cli_finish("pmurec", probe(o.json));
	if (o.list_probes)
		return pmu_cli_finish("pmurec", pmu_sdt_list_main(o.list_probes, o.json, stdout, stderr, pmu_backend_usdt_attach));
	if (o.list_events) {
		for (size_t i = 0; i < pmu_evtable_count(); i++) {
			const struct pmu_evdef *d = pmu_evtable_get(i);

			printf("%-26s %-9s %-6s %s%s%s\n", d->name, pmu_evkind_name(d->kind), d->unit,
			       d->description, d->aliases[0] ? "; also " : "", d->aliases);
		}
		printf("\nAlso: r<hex> (raw), pmu/term=value,.../ (sysfs PMU), pfm:NAME (libpfm4);\n"
		       "modifiers :u (user), :k (kernel), :h (hypervisor).\n");
		return pmu_cli_finish("pmurec", 0);
	}
	if (o.events && o.mode == 0 && !o.nab) {
		fprintf(stderr, "pmurec: -e needs --mode light or full (mode none counts nothing)\n");
		return PMU_EXIT_USAGE;
	}
	{
		/* one descriptor per counter per live thread */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			g_nofile = rl.rlim_cur;
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (o.delay_ms && o.mode == 0) {
		fprintf(stderr, "pmurec: --delay needs --mode light or full (mode none records no marks)\n");
		return PMU_EXIT_USAGE;
	}
	if (o.attach && optind < argc) {
		fprintf(stderr, "pmurec: give either --pid PID or a command, not both\n");
		return PMU_EXIT_USAGE;
	}
	if (o.attach && (o.mode == 0 || o.nab || o.variants || o.repeat > 1 || o.warmup)) {
		fprintf(stderr, "pmurec: --pid needs --mode light or full, and takes no --repeat, --warmup, --ab or "
			"--variants\n");
		return PMU_EXIT_USAGE;
	}
	if (o.nab && o.variants) {
		fprintf(stderr, "pmurec: give either --ab (one command in several modes) or --variants (several "
			"commands in one mode), not both\n");
		return PMU_EXIT_USAGE;
	}
	if (o.attach && kill(o.attach, 0) < 0 && errno == ESRCH) {
		fprintf(stderr, "pmurec: no process %d\n", (int)o.attach);
		return PMU_EXIT_USAGE;
	}
	if (o.attach && is_self_or_ancestor(o.attach)) {
		fprintf(stderr, "pmurec: process %d is pmurec or one of its ancestors; it cannot record itself\n",
			(int)o.attach);
		return PMU_EXIT_USAGE;
	}
	if (!o.out || (optind >= argc && !o.attach)) {
		fprintf(stderr, "pmurec: %s\n", !o.out ? "no output bundle given (-o BUNDLE)" : "no command given");
		fputs(usage, stderr);
		return PMU_EXIT_USAGE;
	}
	if ((o.events ? pmu_evlist_parse(o.events, NULL, &o.ev, &o.nev) : pmu_evlist_defaults(&o.ev, &o.nev))) {
		fprintf(stderr, "pmurec: %s\n", pmu_error_detail());
		return PMU_EXIT_USAGE;
	}
	if (o.variants && parse_variants(&o, argv + optind, cmds)) {
		fputs("pmurec: see 'pmurec --help'\n", stderr);
		env_free(&o);
		free(o.ev);
		return PMU_EXIT_USAGE;
	}
	if (!o.repeat)
		o.repeat = 1;
	bo.force = o.force;
	bo.file_mode = o.file_mode;
	if (o.nab || o.nvar) {
		/* -o names a directory: one bundle per mode or variant; one made
		 * here is as private as the bundles (0700, or --file-mode's
		 * directory mode) */
		mode_t dm = pmu_bag_dir_mode(o.file_mode);

		if (mkdir(o.out, dm) == 0)
			chmod(o.out, dm);
		else if (errno != EEXIST) {
			fprintf(stderr, "pmurec: cannot create directory '%s': %s\n", o.out, strerror(errno));
			free(o.ev);
			return EXIT_RECORDER;
		}
		/* what every run.json of the campaign says of it, less its
		 * position: modes is the mode of each run of a round, in order */
		json_t *modes = json_array(), *names = json_array();

		random_hex(campaign, 16);
		for (int i = 0; i < (o.nab ? o.nab : o.nvar); i++)
			json_array_append_new(modes, json_string(mode_names[o.nab ? o.ab_modes[i] : o.mode]));
		for (int i = 0; i < o.nvar; i++)
			json_array_append_new(names, json_string(o.vnames[i]));
		proto = json_pack("{s:s,s:s,s:o}", "id", campaign, "kind", o.nab ? "modes" : "variants", "modes",
				  modes);
		if (o.nvar)
			json_object_set_new(proto, "variants", names);
		else
			json_decref(names);
	}
	nout = o.nab ? o.nab : o.nvar ? o.nvar : 1;
	for (int i = 0; i < nout; i++) {
		out[i].mode = o.nab ? o.ab_modes[i] : o.mode;
		out[i].argv = o.nvar ? cmds[i] : argv + optind;
		if (proto) {
			out[i].campaign = json_deep_copy(proto);
			out[i].label = o.nvar ? o.vnames[i] : mode_names[out[i].mode];
		}
		if (o.nvar) {
			json_object_set_new(out[i].campaign, "variant", json_string(o.vnames[i]));
			snprintf(out[i].path, sizeof(out[i].path), "%s/%s.bundle", o.out, o.vnames[i]);
		} else if (o.nab) {
			/* a mode given again (an A/A campaign) gets MODE-2.bundle, ... */
			int nth = 1;

			for (int k = 0; k < i; k++)
				nth += out[k].mode == out[i].mode;
			if (nth == 1)
				snprintf(out[i].path, sizeof(out[i].path), "%s/%s.bundle", o.out, mode_names[out[i].mode]);
			else
				snprintf(out[i].path, sizeof(out[i].path), "%s/%s-%d.bundle", o.out, mode_names[out[i].mode],
					 nth);
		}
		else
			snprintf(out[i].path, sizeof(out[i].path), "%s", o.out);
		out[i].runs = json_array();
		out[i].images.list = json_array();
		err = pmu_bag_open(&out[i].bag, out[i].path, &bo);
		if (err) {
			/* a path that cannot or may not be a bundle is a usage error */
			int refused = err == PMU_ERR_INVAL ? PMU_EXIT_USAGE : EXIT_RECORDER;

			fprintf(stderr, "pmurec: %s\n", pmu_error_detail());
			for (int k = 0; k <= i; k++) {
				if (k < i)
					pmu_bag_abort(out[k].bag);
				json_decref(out[k].runs);
				json_decref(out[k].campaign);
				images_release(&out[k].images);
			}
			json_decref(proto);
			env_free(&o);
			free(o.ext_specs);
			free(o.ev);
			return refused;
		}
	}
	host = json_object();
	caps = json_array();
	pmu_backend_probe(host, caps);
	if (o.have_seed) {
		snprintf(seedbuf, sizeof(seedbuf), "%llu", o.seed);
		setenv("PMUREC_SEED", seedbuf, 1);
	}
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the wait loop wakes up */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pmurec_bound_set(o.max_output);
	g_rt = pmu_now_real_ns();
	g_mono = pmu_now_mono_ns();

	o_max_duration = o.max_duration_ms;
	if (getenv("PMUREC_TEST_RING_BYTES"))
		g_ring_bytes = (size_t)strtoull(getenv("PMUREC_TEST_RING_BYTES"), NULL, 10);
	/* --ab runs one command in each mode; --variants each command */
	err = warm_up(o.warmup, out, o.nvar ? nout : 1);
	if (err) {
		code = err;
		aborted = true;
	} else if (pmu_backend_stop_signal) {
		fprintf(stderr, "pmurec: interrupted during the warm-up; no bundle written\n");
		code = 128 + pmu_backend_stop_signal;
		aborted = true;
	}
	/* Interleaved: round 1 of every mode or variant, then round 2, ...;
	 * a signal ends the campaign after the repetition it interrupted. */
	rounds = o.repeat;
	pmurec_progress_init(&prog, rounds * nout);
	for (int r = 1; !aborted && r <= rounds; r++)
		for (int i = 0; !aborted && i < nout; i++) {
			char what[160];

			if (pmu_backend_stop_signal)
				break;
			snprintf(what, sizeof(what), "%s%s%s, repetition %d of %d", out[i].label && o.nvar ? "variant " : "",
				 out[i].label ? out[i].label : mode_names[out[i].mode], out[i].label && o.nab ? " mode" : "", r,
				 rounds);
			pmurec_progress_show(&prog, (r - 1) * nout + i, what);
			if (record_repetition(&o, &out[i], r, (r - 1) * nout + i, &code) == REP_ABORT)
				aborted = true;
		}
	pmurec_progress_clear(&prog);
	/* A signal between repetitions ends the recording early: the last
	 * repetition made says so, and the exit status tells. */
	for (int i = 0; !aborted && pmu_backend_stop_signal && i < nout; i++) {
		json_t *last = json_array_get(out[i].runs, json_array_size(out[i].runs) - 1);
		char why[200];

		if (!last || out[i].reps >= o.repeat || strcmp(json_string_value(json_object_get(last, "result")), "complete"))
			continue;
		snprintf(why, sizeof(why), "pmurec received signal %d after this repetition: %d of %d repetitions recorded",
			 pmu_backend_stop_signal, out[i].reps, o.repeat);
		json_object_set_new(last, "result", json_string("interrupted"));
		json_object_set_new(last, "result_reason", json_string(why));
		out[i].code = 128 + pmu_backend_stop_signal;
		fprintf(stderr, "pmurec: %s\n", why);
	}
	for (int i = 0; i < nout; i++) {
		if (aborted || !out[i].reps) {
			pmu_bag_abort(out[i].bag);
		} else if (finish_bundle(&o, &out[i], host, caps)) {
			code = EXIT_RECORDER;
			aborted = true;
		} else if (!aborted) {
			code = out[i].code;
			if (out[i].failed)
				code = EXIT_RECORDER;
		}
		json_decref(out[i].runs);
		json_decref(out[i].campaign);
		images_release(&out[i].images);
	}
	for (int i = 0; !aborted && i < nout; i++)
		if (out[i].failed)
			code = EXIT_RECORDER;
	json_decref(host);
	json_decref(caps);
	json_decref(proto);
	env_free(&o);
	free(o.ext_specs);
	free(o.ev);
	return pmu_cli_finish("pmurec", code);
}
