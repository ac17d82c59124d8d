/*
 * The progress line of a long recording (progress.h).  The estimate of
 * the rest is the mean time of the runs so far times the runs left, and
 * says it is one; before the first run ends there is none.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

#define ERASE "\r\033[K"

void pmurec_progress_init(struct pmurec_progress *p, int total)
{
	memset(p, 0, sizeof(*p));
	p->total = total;
	p->on = total > 1 && isatty(STDERR_FILENO);
	p->start_ns = pmu_now_mono_ns();
}

static void put(const char *s, size_t n)
{
	while (n) {
		ssize_t k = write(STDERR_FILENO, s, n);

		if (k <= 0)
			return; /* a terminal that cannot take it: nothing to report */
		s += k;
		n -= (size_t)k;
	}
}

/* "12.3 s", "4 min 05 s", "1 h 02 min" */
static void span(char *buf, size_t n, double s)
{
	if (s < 60)
		snprintf(buf, n, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, n, "%d min %02d s", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, n, "%d h %02d min", (int)(s / 3600), ((int)s % 3600) / 60);
}

void pmurec_progress_show(struct pmurec_progress *p, int done, const char *what)
{
	char line[512], el[32], left[32], rest[64];
	double elapsed = (double)(pmu_now_mono_ns() - p->start_ns) / 1e9;
	struct winsize ws;
	size_t len, width = 0;

	if (!p->on)
		return;
	span(el, sizeof(el), elapsed);
	if (done > 0) {
		span(left, sizeof(left), elapsed / done * (p->total - done));
		snprintf(rest, sizeof(rest), "about %s left (estimate)", left);
	} else {
		snprintf(rest, sizeof(rest), "the rest is estimated after the first run");
	}
	snprintf(line, sizeof(line), ERASE "pmurec: run %d of %d (%s), %s elapsed, %s", done + 1, p->total, what, el,
		 rest);
	/* one row: a line that wraps could not be erased by "\r" */
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8)
		width = ws.ws_col - 1;
	len = strlen(line);
	if (width && len > width + strlen(ERASE))
		len = width + strlen(ERASE);
	put(line, len);
	p->shown = true;
}

void pmurec_progress_clear(struct pmurec_progress *p)
{
	if (!p->shown)
		return;
	put(ERASE, strlen(ERASE));
	p->shown = false;
}
