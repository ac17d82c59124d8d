#ifndef PMU_LINUX_RETAIN_H
#define PMU_LINUX_RETAIN_H

/*
 * Retained binaries (pmurec --retain-binaries, bundle-spec section 22):
 * the objects a run sampled, and their separate debug files, copied into
 * the bundle under the layout debuggers and debuginfod use, so the bundle
 * symbolizes on another machine:
 *
 *   data/build-id/<first 2 hex>/<rest>         the object
 *   data/build-id/<first 2 hex>/<rest>.debug   its debug file, found by
 *       /usr/lib/debug/.build-id/xx/yyyy.debug, then .gnu_debuglink (next
 *       to the object, its .debug/ directory, /usr/lib/debug/<dir>) with
 *       the CRC checked; a dwz alt file (.gnu_debugaltlink) is kept by its
 *       own build-id as kind debug-alt
 *   data/collectors/<name>/perf-PID.map        a JIT map (/tmp/perf-PID.map)
 *
 * Shared by every repetition (blob_open shared): an object is copied once
 * per bundle.  The build-id is read again from the file at copy time; a
 * file whose build-id is not the one the run saw is not copied (unretained,
 * with the reason), nor is a file over 2 GiB or a debug file without a
 * build-id note.  Files are streamed: memory stays flat.  /usr/lib/debug
 * is $PMU_DEBUG_ROOT when that is set to an absolute path (tests).
 *
 * Each call writes its evidence as records of the maps stream (spec 1.6):
 * "retained" for each file copied, "unretained" with the reason for an
 * object that could not be.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pmu_out;
struct pmu_stream;
struct pmu_retain;

struct pmu_retain *pmu_retain_new(struct pmu_out *out);
void pmu_retain_free(struct pmu_retain *r);

/* Retain the object path (as mapped in pid; pid 0: read it by path alone)
 * whose build-id the run saw as build_id (lowercase hex, NULL: none seen)
 * and its debug files; records to maps.  "[vdso]" is read from memory (the
 * recorder's own vDSO is the same kernel's: its build-id is checked).  A
 * build-id already retained in this bundle is not copied again (no
 * record).  0, or a negative pmu_err when the bundle could not be written
 * (a file that cannot be read is an unretained record, not an error). */
int pmu_retain_object(struct pmu_retain *r, struct pmu_stream *maps, pid_t pid, const char *path,
		      const char *build_id);

/* /tmp/perf-PID.map when it exists, as collectors/<collector>/perf-PID.map. */
int pmu_retain_jit_map(struct pmu_retain *r, struct pmu_stream *maps, const char *collector, pid_t pid);

/* The GNU build-id of the ELF file at path as lowercase hex into hex
 * (>= 2 * 64 + 1 bytes): 0, or -1 with why. */
int pmu_elf_file_build_id(const char *path, char *hex, size_t n, char *why, size_t whylen);

#endif
