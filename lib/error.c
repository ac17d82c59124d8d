#include <stdarg.h>
#include <stdio.h>

#include "error.h"

static _Thread_local char detail[1024];

/* No default: a new row in error.def without a message fails -Werror. */
const char *pmu_strerror(int err)
{
	switch ((enum pmu_err)err) {
	case PMU_OK:
		return "success";
	case PMU_ERR_BASE_:
		break;
#define PMU_ERR(name, msg) case PMU_ERR_##name: return msg;
#include "error.def"
#undef PMU_ERR
	}
	return "unknown error";
}

const char *pmu_errname(int err)
{
	switch ((enum pmu_err)err) {
	case PMU_OK:
		return "OK";
	case PMU_ERR_BASE_:
		break;
#define PMU_ERR(name, msg) case PMU_ERR_##name: return #name;
#include "error.def"
#undef PMU_ERR
	}
	return "UNKNOWN";
}

int pmu_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return err;
}

const char *pmu_error_detail(void)
{
	return detail[0] ? detail : "no detail";
}
