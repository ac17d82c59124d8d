#ifndef PMUREC_CONTROL_H
#define PMUREC_CONTROL_H

/*
 * The control channel (PMUREC_CTL_FD; see include/pmu/mark.h): a
 * SOCK_SEQPACKET socket pair with SO_PASSCRED, so each message arrives
 * whole and carries the sender's pid from the kernel.  Messages:
 *   mark NAME [tid=N] [t=NS]
 *   span-begin ID NAME [parent=ID] [tid=N] [t=NS]
 *   span-end ID [tid=N] [t=NS]
 *   enable | disable            (recorded as marks pmurec:enable/disable)
 * Without t= the time of receipt is used; without tid= the sender's pid.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "backend.h"

struct pmu_ctl;

/* Create the socket pair and export PMUREC_CTL_FD; NULL on failure (reason on stderr). */
struct pmu_ctl *pmu_ctl_new(void);
/* In the recorder once the command is forked: drop the command's end, start reading. */
void pmu_ctl_start(struct pmu_ctl *c);
/* The socket to poll (-1 when not started), and read what is waiting. */
int pmu_ctl_fd(const struct pmu_ctl *c);
void pmu_ctl_drain(struct pmu_ctl *c);
/* After the cohort has ended: read what is left, stop reading. */
void pmu_ctl_stop(struct pmu_ctl *c);
void pmu_ctl_free(struct pmu_ctl *c);
/* Add a recorder mark (for --delay), attributed to the root. */
void pmu_ctl_add_mark(struct pmu_ctl *c, uint64_t t, pid_t pid, const char *name);

/* The spans stream's records, attributed (caller owns), and the lifecycle. */
json_t *pmu_ctl_records(struct pmu_ctl *c, const struct pmu_cohort *co, uint64_t t0, uint64_t t1);
json_t *pmu_ctl_lifecycle(struct pmu_ctl *c, uint64_t t0, uint64_t t1);

/* After pmu_ctl_records(): messages that were malformed or not kept. */
void pmu_ctl_counts(const struct pmu_ctl *c, uint64_t *malformed, uint64_t *dropped, const char **first_bad);

#endif
