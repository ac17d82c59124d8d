/*
 * The host's CPU time (backend.h, pmu_host_cpu_read): the aggregate "cpu"
 * line of /proc/stat, read at both ends of a repetition, so that run.json
 * can say how busy the whole host was and how much time the hypervisor
 * stole meanwhile (spec 1.4, host_load).  These are system numbers: they
 * include the cohort's own CPU time and never stand for it.
 *
 * proc(5): the line is "cpu  user nice system idle iowait irq softirq
 * steal guest guest_nice" in USER_HZ ticks (sysconf(_SC_CLK_TCK)), summed
 * over every CPU.  guest and guest_nice are already inside user and nice
 * (kernel/sched/cputime.c, account_guest_time()), so busy leaves them out.
 * steal appeared in 2.6.11; a line without it is refused rather than read
 * as no steal.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "error.h"
#include "util.h"
#include "linux/hostload.h"

#define PROC_STAT "/proc/stat"
/* The cpu lines come first; 1 MiB holds them for about 10,000 CPUs.  The
 * rest of the file (intr, one number per interrupt) is not needed. */
#define PROC_STAT_PREFIX (1u << 20)

/* The unsigned decimal at *p (after blanks), within end; false when absent
 * or out of range. */
static bool next_u64(const char **p, const char *end, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;

	while (q < end && *q == ' ')
		q++;
	if (q == end || *q < '0' || *q > '9')
		return false;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	*p = q;
	*out = v;
	return true;
}

/* The parser's refusal: the detail goes to s->reason, not to
 * pmu_error_detail(), which holds the recorder's own error (the host is
 * read after a follow that may have failed, and must not hide why). */
__attribute__((format(printf, 2, 3)))
static int corrupt(struct pmu_host_cpu *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	return PMU_ERR_CORRUPT;
}

/* ticks to ns, refusing what would not fit in the spec's integers (2^63) */
static bool ticks_ns(uint64_t ticks, long hz, uint64_t *ns)
{
	unsigned __int128 v = (unsigned __int128)ticks * 1000000000u / (unsigned long)hz;

	if (v > (unsigned __int128)INT64_MAX)
		return false;
	*ns = (uint64_t)v;
	return true;
}

int pmu_procstat_parse(const char *text, size_t len, long ticks_per_s, struct pmu_host_cpu *s)
{
	const char *p = text, *end = text + len, *nl;
	uint64_t f[10];
	int n = 0;
	unsigned cpus = 0;

	if (ticks_per_s <= 0 || ticks_per_s > 1000000000)
		return corrupt(s, "clock tick rate %ld is not usable", ticks_per_s);
	nl = memchr(p, '\n', len);
	if (!nl || len < 4 || memcmp(p, "cpu ", 4))
		return corrupt(s, "%s does not begin with a whole aggregate 'cpu' line", PROC_STAT);
	p += 4;
	while (n < 10 && next_u64(&p, nl, &f[n]))
		n++;
	while (p < nl && *p == ' ')
		p++;
	if (n < 8 || p != nl)
		return corrupt(s, "%s: the 'cpu' line has %d%s fields; steal needs at least 8",
				 PROC_STAT, n, p != nl ? " well-formed" : "");
	/* busy = user + nice + system + irq + softirq; each < 2^64 / 5 */
	for (int i = 0; i < 8; i++)
		if (f[i] > UINT64_MAX / 8)
			return corrupt(s, "%s: a tick count of the 'cpu' line is out of range", PROC_STAT);
	if (!ticks_ns(f[0] + f[1] + f[2] + f[5] + f[6], ticks_per_s, &s->busy_ns) ||
	    !ticks_ns(f[3], ticks_per_s, &s->idle_ns) || !ticks_ns(f[4], ticks_per_s, &s->iowait_ns) ||
	    !ticks_ns(f[7], ticks_per_s, &s->steal_ns))
		return corrupt(s, "%s: a time of the 'cpu' line is out of range", PROC_STAT);
	/* the per-CPU lines follow: count them.  The text may be cut short
	 * (the reader keeps a prefix): a last line without its newline that
	 * could be a cpuN line leaves the count unknown */
	for (p = nl + 1; p < end; p = nl + 1) {
		size_t ln;
		bool cpu;

		nl = memchr(p, '\n', (size_t)(end - p));
		ln = nl ? (size_t)(nl - p) : (size_t)(end - p);
		cpu = !memcmp(p, "cpu", ln < 3 ? ln : 3) && (ln < 4 || (p[3] >= '0' && p[3] <= '9'));
		if (cpu && !nl)
			return corrupt(s, "%s ends inside the per-CPU lines", PROC_STAT);
		if (!cpu || ln < 4)
			break;
		cpus++;
	}
	if (!cpus)
		return corrupt(s, "%s has no per-CPU 'cpuN' line", PROC_STAT);
	s->cpus = cpus;
	s->resolution_ns = (uint64_t)(1000000000 + ticks_per_s - 1) / (uint64_t)ticks_per_s;
	return 0;
}

int pmu_host_cpu_read(struct pmu_host_cpu *s)
{
	char *buf;
	size_t len = 0;
	int fd, err;

	memset(s, 0, sizeof(*s));
	s->source = PROC_STAT;
	fd = open(PROC_STAT, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(s->reason, sizeof(s->reason), "cannot open '%s': %s", PROC_STAT, strerror(errno));
		s->remedy = "mount procfs at /proc (mount -t proc proc /proc)";
		return PMU_ERR_IO;
	}
	if (!(buf = malloc(PROC_STAT_PREFIX))) {
		close(fd);
		snprintf(s->reason, sizeof(s->reason), "out of memory reading '%s'", PROC_STAT);
		s->remedy = "none: pmurec ran out of memory";
		return PMU_ERR_NOMEM;
	}
	while (len < PROC_STAT_PREFIX) {
		ssize_t n = read(fd, buf + len, PROC_STAT_PREFIX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(s->reason, sizeof(s->reason), "cannot read '%s': %s", PROC_STAT, strerror(errno));
			s->remedy = "none: the kernel refused the read; the next repetition may have it";
			free(buf);
			close(fd);
			return PMU_ERR_IO;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	s->t_ns = pmu_now_mono_ns();
	err = pmu_procstat_parse(buf, len, sysconf(_SC_CLK_TCK), s);
	free(buf);
	if (err) {
		s->remedy = "none: this kernel's /proc/stat is not in the form proc(5) gives";
		return err;
	}
	s->ok = true;
	return 0;
}
