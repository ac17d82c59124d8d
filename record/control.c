/* The control channel: see control.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bounds.h"
#include "collector.h"
#include "error.h"
#include "lifecycle.h"
#include "control.h"
#include "spec_json.h"
#include "util.h"

struct ctl_span {
	char *id, *name, *parent;
	int seq, parent_seq;   /* instances of a reused id: id, id#2, id#3... */
	pid_t pid, tid;
	uint64_t begin, end;
	bool closed, orphaned;
};

struct ctl_mark {
	char *name;
	pid_t pid, tid;
	uint64_t t;
};

struct pmu_ctl {
	int fd[2];
	bool running;
	struct ctl_span *spans;
	size_t nspans;
	struct ctl_mark *marks;
	size_t nmarks;
	uint64_t messages, malformed, dropped, first_t;
	char first_bad[200];
};

struct pmu_ctl *pmu_ctl_new(void)
{
	struct pmu_ctl *c = calloc(1, sizeof(*c));
	int one = 1;
	char buf[16];

	if (!c)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, c->fd) < 0 ||
	    setsockopt(c->fd[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    fcntl(c->fd[0], F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "pmurec: cannot create the control channel: %s\n", strerror(errno));
		free(c);
		return NULL;
	}
	snprintf(buf, sizeof(buf), "%d", c->fd[1]);
	setenv("PMUREC_CTL_FD", buf, 1);
	return c;
}

__attribute__((format(printf, 2, 3)))
static void bad(struct pmu_ctl *c, const char *fmt, ...)
{
	va_list ap;

	c->malformed++;
	if (c->first_bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(c->first_bad, sizeof(c->first_bad), fmt, ap);
	va_end(ap);
}

static bool word_ok(const char *w)
{
	if (!w || !*w || strlen(w) > 200)
		return false;
	for (; *w; w++)
		if ((unsigned char)*w <= ' ' || *w == 0x7f)
			return false;
	return true;
}

static struct ctl_span *open_span(struct pmu_ctl *c, pid_t pid, const char *id)
{
	for (size_t i = c->nspans; i-- > 0;)
		if (!c->spans[i].closed && c->spans[i].pid == pid && !strcmp(c->spans[i].id, id))
			return &c->spans[i];
	return NULL;
}

static void on_message(struct pmu_ctl *c, char *msg, pid_t pid, uint64_t now)
{
	char *tok[8], *save = NULL, *w;
	int n = 0;
	pid_t tid = pid;
	uint64_t t = now;

	for (w = strtok_r(msg, " \n", &save); w && n < 8; w = strtok_r(NULL, " \n", &save)) {
		if (!strncmp(w, "tid=", 4))
			tid = (pid_t)atol(w + 4);
		else if (!strncmp(w, "t=", 2))
			t = strtoull(w + 2, NULL, 10);
		else
			tok[n++] = w;
	}
	c->messages++;
	if (!c->first_t)
		c->first_t = now;
	if (n == 0) {
		bad(c, "an empty message");
		return;
	}
	if (!strcmp(tok[0], "mark") && n == 2 && word_ok(tok[1])) {
		pmu_ctl_add_mark(c, t, pid, tok[1]);
		c->marks[c->nmarks - 1].tid = tid;
	} else if ((!strcmp(tok[0], "enable") || !strcmp(tok[0], "disable")) && n == 1) {
		char name[32];

		snprintf(name, sizeof(name), "pmurec:%s", tok[0]);
		pmu_ctl_add_mark(c, t, pid, name);
		c->marks[c->nmarks - 1].tid = tid;
	} else if (!strcmp(tok[0], "span-begin") && (n == 3 || n == 4) && word_ok(tok[1]) && word_ok(tok[2])) {
		const char *parent = n == 4 && !strncmp(tok[3], "parent=", 7) ? tok[3] + 7 : NULL;
		struct ctl_span *s;

		if (n == 4 && !parent) {
			bad(c, "span-begin with an unknown argument '%s'", tok[3]);
			return;
		}
		if (open_span(c, pid, tok[1])) {
			bad(c, "span '%s' begun twice", tok[1]);
			return;
		}
		struct ctl_span *ps = parent ? open_span(c, pid, parent) : NULL;
		int seq = 0, parent_seq = ps ? ps->seq : 0;

		if (parent && !ps) {
			bad(c, "span-begin names parent '%s', which is not an open span of the process", parent);
			return;
		}
		/* an id used again after its span ended is a new instance */
		for (size_t i = 0; i < c->nspans; i++)
			if (c->spans[i].pid == pid && !strcmp(c->spans[i].id, tok[1]))
				seq++;
		s = realloc(c->spans, (c->nspans + 1) * sizeof(*s));
		if (!s)
			return;
		c->spans = s;
		s = &c->spans[c->nspans++];
		memset(s, 0, sizeof(*s));
		s->id = strdup(tok[1]);
		s->name = strdup(tok[2]);
		s->parent = parent ? strdup(parent) : NULL;
		s->seq = seq;
		s->parent_seq = parent_seq;
		s->pid = pid;
		s->tid = tid;
		s->begin = t;
	} else if (!strcmp(tok[0], "span-end") && n == 2) {
		struct ctl_span *s = open_span(c, pid, tok[1]);

		if (!s) {
			bad(c, "span-end of '%s', which is not open", tok[1]);
			return;
		}
		s->end = t;
		s->closed = true;
		/* a parent that ends before its children cannot contain them */
		for (size_t i = 0; i < c->nspans; i++) {
			struct ctl_span *ch = &c->spans[i];

			if (!ch->closed && ch->pid == pid && ch->parent && !strcmp(ch->parent, s->id) &&
			    ch->parent_seq == s->seq && !ch->orphaned) {
				bad(c, "span '%s' ended before its child '%s'", s->id, ch->id);
				ch->orphaned = true;
			}
		}
	} else {
		bad(c, "unknown or malformed message '%s'", tok[0]);
	}
}

/* Every message waiting on the socket, without blocking: the recorder's
 * loop polls the socket and calls this when it is readable (and on every
 * tick), so a message's time of receipt is the loop's, within a tick. */
static void read_ready(struct pmu_ctl *c)
{
	char buf[1024], cbuf[CMSG_SPACE(sizeof(struct ucred))];

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr mh = { 0 };
		struct cmsghdr *cm;
		pid_t pid = 0;
		ssize_t n;

		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		n = recvmsg(c->fd[0], &mh, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf[n] = '\0';
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;

				memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
				pid = uc.pid;
			}
		if (mh.msg_flags & MSG_TRUNC)
			bad(c, "a message longer than 1023 bytes");
		else if (strlen(buf) != (size_t)n)
			bad(c, "a message with a NUL byte");
		else if (!pmurec_bound_take((size_t)n))
			c->dropped++; /* past --max-output-bytes: the run is truncated */
		else
			on_message(c, buf, pid, pmu_now_mono_ns());
	}
}

void pmu_ctl_start(struct pmu_ctl *c)
{
	close(c->fd[1]);
	c->fd[1] = -1;
	unsetenv("PMUREC_CTL_FD");
	c->running = true;
}

int pmu_ctl_fd(const struct pmu_ctl *c)
{
	return c && c->running ? c->fd[0] : -1;
}

void pmu_ctl_drain(struct pmu_ctl *c)
{
	if (c && c->running)
		read_ready(c);
}

void pmu_ctl_stop(struct pmu_ctl *c)
{
	if (!c->running)
		return;
	/* what was sent before the cohort ended; anything a descendant
	 * still holds is cut off here */
	read_ready(c);
	shutdown(c->fd[0], SHUT_RDWR);
	c->running = false;
}

void pmu_ctl_free(struct pmu_ctl *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nspans; i++) {
		free(c->spans[i].id);
		free(c->spans[i].name);
		free(c->spans[i].parent);
	}
	free(c->spans);
	for (size_t i = 0; i < c->nmarks; i++)
		free(c->marks[i].name);
	free(c->marks);
	close(c->fd[0]);
	if (c->fd[1] >= 0)
		close(c->fd[1]);
	free(c);
}

void pmu_ctl_add_mark(struct pmu_ctl *c, uint64_t t, pid_t pid, const char *name)
{
	struct ctl_mark *m = realloc(c->marks, (c->nmarks + 1) * sizeof(*m));

	if (!m)
		return;
	c->marks = m;
	m[c->nmarks].name = strdup(name);
	m[c->nmarks].pid = pid;
	m[c->nmarks].tid = pid;
	m[c->nmarks].t = t;
	c->nmarks++;
}


struct out {
	uint64_t key;
	json_t *rec;
};

static int cmp_out(const void *a, const void *b)
{
	uint64_t x = ((const struct out *)a)->key, y = ((const struct out *)b)->key;

	return (x > y) - (x < y);
}

json_t *pmu_ctl_records(struct pmu_ctl *c, const struct pmu_cohort *co, uint64_t t0, uint64_t t1)
{
	struct out *o = calloc(c->nspans + c->nmarks + 1, sizeof(*o));
	json_t *arr = json_array();
	size_t n = 0;

	for (size_t i = 0; o && i < c->nmarks; i++) {
		const struct ctl_mark *m = &c->marks[i];
		const struct pmu_incarnation *in = pmu_cohort_find(co, m->pid, m->tid, m->t, m->t);
		char id[32];

		if (!in || m->t < t0 || m->t > t1) {
			c->dropped++;
			continue;
		}
		snprintf(id, sizeof(id), "i%d", in->id);
		o[n].key = m->t;
		o[n++].rec = json_pack("{s:s,s:I,s:s,s:i,s:o}", "type", "mark", "t_ns", (json_int_t)m->t, "inc", id,
				       "tid", (int)m->tid, "name", pmu_json_text(m->name));
	}
	for (size_t i = 0; o && i < c->nspans; i++) {
		const struct ctl_span *s = &c->spans[i];
		const struct pmu_incarnation *in;
		char id[32], sid[256], pid_[256];

		if (!s->closed) {
			c->malformed++;
			if (!c->first_bad[0])
				snprintf(c->first_bad, sizeof(c->first_bad), "span '%.150s' begun and never ended", s->id);
			continue;
		}
		in = pmu_cohort_find(co, s->pid, s->tid, s->begin, s->end);
		if (!in || s->begin < t0 || s->end > t1 || s->end < s->begin) {
			c->dropped++;
			continue;
		}
		/* span ids are the program's, made unique per incarnation */
		snprintf(id, sizeof(id), "i%d", in->id);
		if (s->seq)
			snprintf(sid, sizeof(sid), "i%d:%s#%d", in->id, s->id, s->seq + 1);
		else
			snprintf(sid, sizeof(sid), "i%d:%s", in->id, s->id);
		o[n].key = s->end;
		o[n].rec = json_pack("{s:s,s:o}", "type", "span", "id", pmu_json_text(sid));
		if (s->parent && !s->orphaned) {
			if (s->parent_seq)
				snprintf(pid_, sizeof(pid_), "i%d:%s#%d", in->id, s->parent, s->parent_seq + 1);
			else
				snprintf(pid_, sizeof(pid_), "i%d:%s", in->id, s->parent);
			json_object_set_new(o[n].rec, "parent", pmu_json_text(pid_));
		}
		json_object_set_new(o[n].rec, "inc", json_string(id));
		json_object_set_new(o[n].rec, "tid", json_integer(s->tid));
		json_object_set_new(o[n].rec, "name", pmu_json_text(s->name));
		json_object_set_new(o[n].rec, "begin_ns", json_integer((json_int_t)s->begin));
		json_object_set_new(o[n].rec, "end_ns", json_integer((json_int_t)s->end));
		json_object_set_new(o[n].rec, "via", json_string("ctl"));
		n++;
	}
	if (o) {
		qsort(o, n, sizeof(*o), cmp_out);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, o[i].rec);
	}
	free(o);
	return arr;
}

json_t *pmu_ctl_lifecycle(struct pmu_ctl *c, uint64_t t0, uint64_t t1)
{
	json_t *l = json_array(), *r;
	char ev[200];

	snprintf(ev, sizeof(ev), "PMUREC_CTL_FD given to the command; %llu message(s) received",
		 (unsigned long long)c->messages);
	pmu_lc_started(l, t0, ev);
	if (c->dropped) {
		r = pmu_lc_rec(t1, "drop");
		json_object_set_new(r, "count", json_integer((json_int_t)c->dropped));
		json_array_append_new(l, r);
	}
	if (c->malformed) {
		r = pmu_lc_rec(t1, "malformed");
		json_object_set_new(r, "count", json_integer((json_int_t)c->malformed));
		json_object_set_new(r, "reason", json_string(c->first_bad));
		json_array_append_new(l, r);
	}
	pmu_lc_ended(l, t1, c->messages ? "ok" : "no-events");
	return l;
}

void pmu_ctl_counts(const struct pmu_ctl *c, uint64_t *malformed, uint64_t *dropped, const char **first_bad)
{
	*malformed = c->malformed;
	*dropped = c->dropped;
	*first_bad = c->first_bad;
}

/* ---- the control collector on the contract (collector.h) -------------- */

struct control_coll {
	struct pmu_collector_env *env;
	struct pmu_ctl *c;
};

static int control_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct control_coll *cc = calloc(1, sizeof(*cc));
	uint64_t t = pmu_now_mono_ns();

	(void)caps;
	if (!cc)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	cc->env = env;
	*state = cc;
	if (env->cfg->attach) {
		pmu_lc_unavailable_at(env->lc, t, "attached to a running process: it cannot be given PMUREC_CTL_FD",
				      "launch the command under pmurec");
		return 0;
	}
	/* PMUREC_CTL_FD is exported now, so that the command inherits it */
	if (!(cc->c = pmu_ctl_new())) {
		pmu_lc_unavailable_at(env->lc, t, "the control socket could not be created",
				      "check the file-descriptor limit (ulimit -n)");
		return 0;
	}
	pmu_lc_probed_ok(env->lc, t);
	return 0;
}

static bool control_usable(void *state)
{
	struct control_coll *cc = state;

	return cc->c != NULL;
}

static int control_open(void *state, pid_t root, uint64_t t)
{
	struct control_coll *cc = state;

	(void)root;
	/* first of the collectors: the others must not inherit the command's end */
	pmu_ctl_start(cc->c);
	pmu_lc_step(cc->env->lc, "opened", t);
	pmu_lc_attached(cc->env->lc, t, "PMUREC_CTL_FD given to the command before its exec");
	return 0;
}

static int control_fds(void *state, int *fds, int max)
{
	struct control_coll *cc = state;

	if (max < 1 || pmu_ctl_fd(cc->c) < 0)
		return 0;
	fds[0] = pmu_ctl_fd(cc->c);
	return 1;
}

static int control_drain(void *state, uint64_t now)
{
	struct control_coll *cc = state;

	(void)now;
	pmu_ctl_drain(cc->c);
	return 0;
}

static void control_stop(void *state, uint64_t t)
{
	struct control_coll *cc = state;

	pmu_ctl_stop(cc->c);
	pmu_lc_step(cc->env->lc, "stopped", t);
	pmu_lc_step(cc->env->lc, "detached", t);
}

/* spans.jsonl is written in every run: empty when there is no channel */
static int control_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct control_coll *cc = state;
	struct pmu_out *o = env->out;
	json_t *recs;
	int err;

	if (!cc || !cc->c) /* not requested (mode none) or unavailable: a stream with no spans */
		return pmu_out_stream(o, "spans.jsonl", "spans", json_array());
	if (env->cfg->delay_ms && env->cohort->n &&
	    win->launch_ns + (uint64_t)env->cfg->delay_ms * 1000000u <= env->cohort->incs[0].end_ns)
		pmu_ctl_add_mark(cc->c, win->launch_ns + (uint64_t)env->cfg->delay_ms * 1000000u,
				 env->cohort->incs[0].pid, "pmurec:delay-end");
	recs = pmu_ctl_records(cc->c, env->cohort, win->start_ns, win->end_ns);
	err = pmu_out_stream(o, "spans.jsonl", "spans", recs);
	{
		uint64_t bad, lost;
		const char *why;

		pmu_ctl_counts(cc->c, &bad, &lost, &why);
		pmu_lc_lost(env->lc, "drop", win->end_ns, lost, NULL);
		pmu_lc_lost(env->lc, "malformed", win->end_ns, bad, why);
		/* say now what pmuvalidate will refuse, rather than exit quietly */
		if (bad)
			fprintf(stderr, "pmurec: %llu malformed control message(s), the first: %s; the bundle will not "
				"validate (MALFORMED)\n", (unsigned long long)bad, why);
		if (lost)
			fprintf(stderr, "pmurec: %llu mark(s) or span(s) not attributable to the cohort were left out; the "
				"bundle will not validate (LOSS)\n", (unsigned long long)lost);
	}
	pmu_lc_final(env->lc, win->end_ns, cc->c->messages ? "ok" : "no-events", NULL);
	return err;
}

static void control_release(void *state)
{
	struct control_coll *cc = state;

	if (!cc)
		return;
	pmu_ctl_free(cc->c);
	free(cc);
}

const struct pmu_collector_ops pmu_control_collector = {
	.name = "control",
	.modes = 2 | 4,
	.probe = control_probe,
	.usable = control_usable,
	.open = control_open,
	.fds = control_fds,
	.drain = control_drain,
	.stop = control_stop,
	.emit = control_emit,
	.release = control_release,
};
