/* The stub backend's host CPU time (backend.h, pmu_host_cpu_read): not
 * measured, said so with the reason and a remedy, never zeros that read as
 * an idle host. */
#include <string.h>

#include "../tap.h"
#include "backend.h"
#include "error.h"

int main(void)
{
	struct pmu_host_cpu s;

	memset(&s, 0xff, sizeof(s));
	pmu_error(PMU_ERR_IO, "the recorder's own error");
	is_int(pmu_host_cpu_read(&s), PMU_ERR_UNSUPPORTED, "the stub cannot read the host's CPU time");
	ok(!s.ok, "it is not ok");
	ok(strstr(s.reason, "no backend for this platform") != NULL, "the reason says why: %s", s.reason);
	ok(s.remedy && *s.remedy, "a remedy is given: %s", s.remedy ? s.remedy : "(none)");
	is_str(pmu_error_detail(), "the recorder's own error", "pmu_error_detail() is left alone");
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
