/* The check table: IDs unique and well formed, every row described. */
#include <ctype.h>
#include <string.h>

#include "checks.h"
#include "tap.h"

int main(void)
{
	for (int i = 0; i < PMU_CHECK_COUNT_; i++) {
		const char *id = pmu_checks[i].id;
		int good = id && id[0] && strlen(pmu_checks[i].description) > 10;

		for (const char *c = id; good && *c; c++)
			good = isupper((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-';
		ok(good, "check %d '%s' is well formed and described", i, id ? id : "?");
		for (int k = i + 1; k < PMU_CHECK_COUNT_; k++)
			if (!strcmp(id, pmu_checks[k].id))
				ok(0, "'%s' occurs twice", id);
		is_int(pmu_check_lookup(id), i, "lookup finds it");
	}
	is_int(pmu_check_lookup("NO-SUCH-CHECK"), -1, "unknown ID is not found");
	return done_testing();
}
