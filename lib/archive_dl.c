#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define PMU_ARCHIVE_DL_IMPL
#include "archive_dl.h"
#include "error.h"

/* The soname pmu was built against (the Makefile passes it; Debian 12's
 * is libarchive.so.13). */
#ifndef PMU_LIBARCHIVE_SONAME
#define PMU_LIBARCHIVE_SONAME "libarchive.so.13"
#endif

struct pmu_archive_fns pmu_archive_fns_;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512]; /* empty once loaded */

static void load(void)
{
	void *h = dlopen(PMU_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *missing = NULL;

	if (!h) {
		snprintf(why, sizeof(why), "cannot load %s: %s", PMU_LIBARCHIVE_SONAME, dlerror());
		return;
	}
#define PMU_ARCHIVE_SYM_(f)                                                            \
	if (!missing && !(pmu_archive_fns_.f = (__typeof__(pmu_archive_fns_.f))dlsym(h, #f))) \
		missing = #f;
	PMU_ARCHIVE_FUNCTIONS(PMU_ARCHIVE_SYM_)
#undef PMU_ARCHIVE_SYM_
	if (missing)
		snprintf(why, sizeof(why), "%s has no '%s'", PMU_LIBARCHIVE_SONAME, missing);
}

int pmu_archive_load(void)
{
	pthread_once(&once, load);
	if (why[0])
		return pmu_error(PMU_ERR_UNSUPPORTED, "%s (install libarchive13)", why);
	return 0;
}
