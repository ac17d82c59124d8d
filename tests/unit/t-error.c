/* Error table: every code has a distinct name and message; details travel. */
#include <string.h>

#include "error.h"
#include "tap.h"

int main(void)
{
	int codes[] = {
#define PMU_ERR(name, msg) PMU_ERR_##name,
#include "error.def"
#undef PMU_ERR
	};
	size_t n = sizeof(codes) / sizeof(codes[0]);

	for (size_t i = 0; i < n; i++) {
		ok(codes[i] < 0, "%s is negative", pmu_errname(codes[i]));
		ok(strcmp(pmu_strerror(codes[i]), "unknown error") != 0, "%s has a message", pmu_errname(codes[i]));
		for (size_t k = i + 1; k < n; k++)
			if (!strcmp(pmu_errname(codes[i]), pmu_errname(codes[k])))
				ok(0, "names of %zu and %zu differ", i, k);
	}
	is_str(pmu_errname(0), "OK", "0 is OK");
	is_str(pmu_strerror(12345), "unknown error", "unknown codes say so");
	is_int(pmu_error(PMU_ERR_IO, "cannot open '%s': %s", "x", "No such file"), PMU_ERR_IO,
	       "pmu_error returns its code");
	is_str(pmu_error_detail(), "cannot open 'x': No such file", "detail is kept");
	return done_testing();
}
