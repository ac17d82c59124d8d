#ifndef PMU_PROVENANCE_H
#define PMU_PROVENANCE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A provenance image object (caller owns it, json_decref): path, role,
 * status, and when readable size_bytes, sha256, build_id, comment. */
json_t *pmu_image_describe(const char *path, const char *role);

/* The GNU build-id note of the ELF e (libelf's Elf) as lowercase hex
 * into hex (>= 2 * 64 + 1 bytes), and *off (may be NULL): the file offset
 * of its bytes.  0, or -1 when e has none (or is not ELF).  Shared by
 * provenance and the retained binaries (retain.c). */
struct Elf;
int pmu_elf_gnu_build_id(struct Elf *e, char *hex, size_t n, uint64_t *off);

#endif
