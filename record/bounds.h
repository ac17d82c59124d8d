#ifndef PMUREC_BOUNDS_H
#define PMUREC_BOUNDS_H

/*
 * --max-output-bytes: the bytes of collected records (external collectors'
 * events, control-channel marks and spans) that a recording may keep.
 * Readers take from the budget before keeping a record; once it is spent
 * they keep nothing more and the run ends as truncated.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void pmurec_bound_set(uint64_t limit);           /* 0: no bound */
bool pmurec_bound_take(size_t n);                /* false: over the bound */
bool pmurec_bound_exceeded(void);
uint64_t pmurec_bound_limit(void);

#endif
