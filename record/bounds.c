#include <stdatomic.h>

#include "bounds.h"

static _Atomic uint64_t used;
static uint64_t limit;
static atomic_bool exceeded;

void pmurec_bound_set(uint64_t l)
{
	limit = l;
}

uint64_t pmurec_bound_limit(void)
{
	return limit;
}

bool pmurec_bound_take(size_t n)
{
	if (!limit)
		return true;
	if (atomic_fetch_add(&used, n) + n > limit) {
		atomic_store(&exceeded, true);
		return false;
	}
	return true;
}

bool pmurec_bound_exceeded(void)
{
	return atomic_load(&exceeded);
}
