#ifndef PMUREC_PROGRESS_H
#define PMUREC_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Which run of a long recording is in progress (a campaign, or --repeat
 * N > 1), on one line of stderr rewritten in place ("\r" and erase to the
 * end of the line) and erased at the end.  Only when stderr is a terminal:
 * a log or a pipe gets nothing of it.  The recorder draws it between
 * runs, never while it writes anything else, and the command's own output
 * is left alone (it follows the line, which the next draw replaces).
 */
struct pmurec_progress {
	bool on;                /* stderr is a terminal and there is more than one run */
	bool shown;             /* a line is on the screen */
	int total;
	uint64_t start_ns;      /* CLOCK_MONOTONIC at init */
};

/* total runs to come; on only when total > 1 and isatty(2). */
void pmurec_progress_init(struct pmurec_progress *p, int total);

/* done runs have finished: show run done + 1 of total, what it is (its
 * mode or variant and repetition), the time elapsed and, from the runs so
 * far, an estimate of the rest. */
void pmurec_progress_show(struct pmurec_progress *p, int done, const char *what);

/* Erase the line, if one is shown. */
void pmurec_progress_clear(struct pmurec_progress *p);

#endif
