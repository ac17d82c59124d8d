/*
 * pmu/mark.h: marks and spans for a program recorded by pmurec.
 *
 * Header-only, no dependency.  When the program runs under pmurec (light
 * or full mode), PMUREC_CTL_FD names a socket; each call sends one
 * message, stamped with the calling thread's id and CLOCK_MONOTONIC, and
 * pmurec records it in the bundle's spans stream, attributed to the
 * calling process.  Without PMUREC_CTL_FD every call does nothing.
 *
 *   pmu_mark("warmup-end");
 *   pmu_span_begin("req-42", "handle-request", NULL);
 *   pmu_span_begin("parse-42", "parse", "req-42");   // parent: a span of this process
 *   pmu_span_end("parse-42");
 *   pmu_span_end("req-42");
 *
 * Names and ids are words: no white space, at most 200 bytes.
 */
#ifndef PMU_MARK_H
#define PMU_MARK_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline int pmu_ctl_fd(void)
{
	static int fd = -2;

	if (fd == -2) {
		const char *s = getenv("PMUREC_CTL_FD");

		fd = s && *s ? atoi(s) : -1;
	}
	return fd;
}

static inline void pmu__send(const char *verb, const char *a, const char *b, const char *c)
{
	char buf[768];
	struct timespec ts;
	int fd = pmu_ctl_fd(), n;

	if (fd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(buf, sizeof(buf), "%s%s%s%s%s%s%s tid=%ld t=%llu", verb, a ? " " : "", a ? a : "", b ? " " : "",
		     b ? b : "", c ? " parent=" : "", c ? c : "", (long)syscall(SYS_gettid),
		     (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	if (n > 0 && n < (int)sizeof(buf))
		(void)send(fd, buf, (size_t)n, MSG_NOSIGNAL);
}

static inline void pmu_mark(const char *name)
{
	pmu__send("mark", name, NULL, NULL);
}

static inline void pmu_span_begin(const char *id, const char *name, const char *parent)
{
	pmu__send("span-begin", id, name, parent);
}

static inline void pmu_span_end(const char *id)
{
	pmu__send("span-end", id, NULL, NULL);
}

#endif
