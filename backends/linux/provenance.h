#ifndef PMU_PROVENANCE_H
#define PMU_PROVENANCE_H

#include <jansson.h>

/* A provenance image object (caller owns it, json_decref): path, role,
 * status, and when readable size_bytes, sha256, build_id, comment. */
json_t *pmu_image_describe(const char *path, const char *role);

#endif
