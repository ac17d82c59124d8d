/*
 * The collector contract (backends/collector.h, record/collectors.c): a
 * collector that exists only in this file, added to the recorder's table
 * by one row, is driven through a real run of a real command — probed,
 * opened before the root's exec, told of every task, polled on its own fd,
 * drained, stopped and emitted — with a lifecycle stamped live, in order,
 * without the driver or the follower knowing anything of it.  A collector
 * not requested in the mode gets only its emit and a final not-requested.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "backend.h"
#include "error.h"
#include "collectors.h"
#include "lifecycle.h"
#include "loop.h"
#include "tap.h"
#include "util.h"

/* ---- the test's collector: its own code, nothing else knows it -------- */

struct probe_test {
	struct pmu_collector_env *env;
	int pipe[2];                 /* the command writes, the collector polls */
	char got[64];
	size_t ngot;
	pid_t root;
	bool opened_before_exec;     /* /proc/root/exe was still the recorder's at open */
	int joined, exec, ended, inc_ended, drains;
	uint64_t t_open, t_first_task;
};

static int pt_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct probe_test *p = calloc(1, sizeof(*p));
	char fd[16];

	(void)caps;
	p->env = env;
	if (pipe(p->pipe) < 0)
		return -1;
	fcntl(p->pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(p->pipe[0], F_SETFL, O_NONBLOCK);
	snprintf(fd, sizeof(fd), "%d", p->pipe[1]);
	setenv("PROBE_TEST_FD", fd, 1);
	pmu_lc_probed_ok(env->lc, pmu_now_mono_ns());
	*state = p;
	return 0;
}

static int pt_open(void *state, pid_t root, uint64_t t)
{
	struct probe_test *p = state;
	char link[64], self[4096] = "", exe[4096] = "";

	p->root = root;
	p->t_open = t;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)root);
	if (readlink(link, exe, sizeof(exe) - 1) > 0 && readlink("/proc/self/exe", self, sizeof(self) - 1) > 0)
		p->opened_before_exec = !strcmp(exe, self);
	close(p->pipe[1]);
	p->pipe[1] = -1;
	pmu_lc_step(p->env->lc, "opened", t);
	pmu_lc_attached(p->env->lc, t, "a pipe given to the command before its exec");
	return 0;
}

static void pt_task(void *state, const struct pmu_task_event *ev)
{
	struct probe_test *p = state;

	if (!p->t_first_task)
		p->t_first_task = ev->t;
	p->joined += ev->what == PMU_TASK_JOINED;
	p->exec += ev->what == PMU_TASK_EXEC;
	p->ended += ev->what == PMU_TASK_ENDED;
	p->inc_ended += ev->what == PMU_TASK_INC_ENDED;
}

static int pt_fds(void *state, int *fds, int max)
{
	struct probe_test *p = state;

	if (max < 1 || p->pipe[0] < 0)
		return 0;
	fds[0] = p->pipe[0];
	return 1;
}

static int pt_drain(void *state, uint64_t now)
{
	struct probe_test *p = state;
	ssize_t n;

	(void)now;
	p->drains++;
	while (p->pipe[0] >= 0 && p->ngot < sizeof(p->got) - 1 &&
	       (n = read(p->pipe[0], p->got + p->ngot, sizeof(p->got) - 1 - p->ngot)) > 0)
		p->ngot += (size_t)n;
	return 0;
}

static void pt_stop(void *state, uint64_t t)
{
	struct probe_test *p = state;

	pt_drain(p, t);
	pmu_lc_step(p->env->lc, "stopped", t);
	pmu_lc_step(p->env->lc, "detached", t);
}

static int pt_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct probe_test *p = state;
	struct pmu_stream *s;
	int err;

	if (!p)
		return 0;
	if ((err = env->out->open(env->out, "collectors/probe-test/events.jsonl", "events", &s)))
		return err;
	err = env->out->put(s, json_pack("{s:s,s:s%}", "type", "event", "text", p->got, p->ngot));
	err = err ? err : env->out->close(s);
	pmu_lc_final(env->lc, win->end_ns, "ok", NULL);
	return err;
}

static struct probe_test pt_seen;

static void pt_release(void *state)
{
	struct probe_test *p = state;

	if (!p)
		return;
	pt_seen = *p;
	close(p->pipe[0]);
	if (p->pipe[1] >= 0)
		close(p->pipe[1]);
	free(p);
}

static const struct pmu_collector_ops probe_test_collector = {
	.name = "probe-test", .modes = 2 | 4, .probe = pt_probe, .open = pt_open, .task = pt_task,
	.fds = pt_fds, .drain = pt_drain, .stop = pt_stop, .emit = pt_emit, .release = pt_release,
};

/* requested in mode full only: in light it gets emit (NULL state) and a final */
static int emits_unrequested;
static int fo_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	(void)env;
	(void)caps;
	*state = NULL;
	return -1; /* never called in light mode */
}

static int fo_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	(void)env;
	(void)win;
	emits_unrequested += state == NULL;
	return 0;
}

static const struct pmu_collector_ops full_only = {
	.name = "full-only", .modes = 4, .probe = fo_probe, .emit = fo_emit,
};

/* ---- an in-memory bundle: every stream's records by path ---------------- */

struct pmu_stream {
	json_t *recs;
};

static json_t *streams;

static int mem_open(struct pmu_out *o, const char *rel, const char *kind, struct pmu_stream **sp)
{
	(void)o;
	(void)kind;
	*sp = calloc(1, sizeof(**sp));
	(*sp)->recs = json_array();
	json_object_set_new(streams, rel, (*sp)->recs);
	return 0;
}

static int mem_put(struct pmu_stream *s, json_t *rec)
{
	return json_array_append_new(s->recs, rec);
}

static int mem_close(struct pmu_stream *s)
{
	free(s);
	return 0;
}

extern const struct pmu_collector_ops pmu_cohort_collector;

/* the recorder's part (pmurec does the same): the follower has the root
 * held; the collectors open before it is released */
static struct pmurec_colls *g_cs;
static struct pmu_launch_result *g_lr;

static void before_release(void *ctx, pid_t root)
{
	(void)ctx;
	pmurec_colls_followed(g_cs, g_lr, g_lr->follow_ok);
	pmurec_colls_open(g_cs, root, pmu_now_mono_ns());
}

static const char *event_of(json_t *recs, size_t i)
{
	return json_string_value(json_object_get(json_array_get(recs, i), "event"));
}

int main(void)
{
	static const struct pmu_collector_ops *const table[] = { &pmu_cohort_collector, &probe_test_collector,
								  &full_only, NULL };
	char *argv[] = { "sh", "-c", "/bin/true; echo hello >&$PROBE_TEST_FD; /bin/true", NULL };
	struct pmu_run_config cfg = { .mode = 1 };
	struct pmu_cohort c = { 0 };
	struct pmu_out out = { mem_open, mem_put, mem_close, NULL };
	struct pmurec_colls *cs;
	struct pmu_launch l = { 0 };
	struct pmu_launch_result lr;
	struct pmu_follow *f = NULL;
	struct pmu_run_window win;
	json_t *list = json_array(), *lc;
	bool failed;
	char why[200];
	int err;

	streams = json_object();
	ok(pmurec_colls_new(table, &cfg, &c, &out, NULL, 0, NULL, &cs) == 0, "the table with the test's row is probed");
	l.argv = argv;
	l.follower = PMU_FOLLOW_PTRACE;
	l.listener = pmurec_colls_listener(cs);
	g_cs = cs;
	g_lr = &lr;
	l.before_release = before_release;
	err = pmu_follow_start(&l, &c, &lr, &f);
	if (err == PMU_ERR_UNSUPPORTED) {
		/* a backend that runs nothing (BACKEND=stub) */
		skip("no command can be run on this backend: %s", lr.follow_reason);
		pmurec_colls_free(cs);
		return done_testing();
	}
	ok(err == 0 && f, "the command is launched behind the barrier");
	if (err || !f)
		return done_testing();
	{
		struct pmurec_loop lp = { f, &c, &lr, false, 10000, 2000, NULL, pmurec_colls_fds, pmurec_colls_drain, cs };

		err = pmurec_loop_run(&lp);
	}
	err = pmu_follow_end(f, err);
	ok(err == 0, "followed to the end");
	pmurec_colls_stop(cs);
	win = (struct pmu_run_window){ lr.start_ns, pmu_now_mono_ns(), lr.start_ns };
	ok(pmurec_colls_emit(cs, &win, "", list, &failed, why, sizeof(why)) == 0 && !failed, "emitted");

	lc = json_object_get(streams, "collectors/probe-test/lifecycle.jsonl");
	is_int((long long)json_array_size(lc), 7, "the test collector's lifecycle has its seven steps");
	{
		static const char *const want[] = { "requested", "probed", "opened", "attached", "stopped", "detached", "final" };
		uint64_t prev = 0;
		bool order = true;

		for (size_t i = 0; i < 7 && i < json_array_size(lc); i++) {
			uint64_t t = (uint64_t)json_integer_value(json_object_get(json_array_get(lc, i), "t_ns"));

			order &= !strcmp(event_of(lc, i) ? event_of(lc, i) : "", want[i]) && t >= prev;
			prev = t;
		}
		ok(order, "in the spec's order, each at a time no earlier than the one before");
	}
	lc = json_object_get(streams, "collectors/full-only/lifecycle.jsonl");
	ok(json_array_size(lc) == 1 && !strcmp(event_of(lc, 0), "final") &&
		   !strcmp(json_string_value(json_object_get(json_array_get(lc, 0), "status")), "not-requested"),
	   "a collector not requested in this mode: one final not-requested");
	is_int(emits_unrequested, 1, "and its emit is called with no state");
	is_int((long long)json_array_size(list), 3, "run.json's collector list has every row");
	{
		json_t *ev = json_object_get(streams, "collectors/probe-test/events.jsonl");
		const char *text = json_string_value(json_object_get(json_array_get(ev, 0), "text"));

		is_str(text, "hello\n", "its own fd was polled and drained by the recorder's loop");
	}
	pmurec_colls_free(cs);
	cs = NULL;
	is_int(pt_seen.opened_before_exec, 1, "opened while the root was still held before its exec");
	ok(pt_seen.joined >= 3, "told of every task joining (%d: sh and two true)", pt_seen.joined);
	is_int(pt_seen.inc_ended, (long long)c.n, "told of every incarnation's end");
	ok(pt_seen.drains > 1, "drained on input and ticks (%d)", pt_seen.drains);
	lc = json_object_get(streams, "collectors/cohort/lifecycle.jsonl");
	ok(json_array_size(lc) == 7, "the cohort collector beside it is whole");
	pmu_cohort_release(&c);
	json_decref(list);
	json_decref(streams);
	return done_testing();
}
