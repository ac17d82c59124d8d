#ifndef PMU_AN_SYMBOLIZE_H
#define PMU_AN_SYMBOLIZE_H

/*
 * Symbolization from the bundle alone (bundle-spec section 22), with
 * elfutils libdwfl offline: an address of an incarnation at a time becomes
 * frames (function, file:line, the inline chain innermost first), found
 * through the object's build-id and never by path alone:
 *
 *   1. the bundle's retained files, data/build-id/xx/yyyy[.debug];
 *   2. the host by build-id: /usr/lib/debug/.build-id/xx/yyyy.debug (the
 *      directory is $PMU_DEBUG_ROOT when that is an absolute path), and
 *      the file at the recorded path only when its build-id is the same;
 *   3. otherwise the frame is unresolved with the reason: "stale binary
 *      (build-id mismatch)" when a file was found with another build-id,
 *      "binary not found" when none, "no build-id recorded".
 *
 * An address in no file map is named from the incarnation's retained JIT
 * map (perf-PID.map) when there is one.
 *
 * Return addresses (every chain entry but the first) are looked up at
 * pc - 1.  C++ and Rust names are demangled.  Kernel addresses are named
 * from the ksym records when the bundle has them, else "[kernel]".
 * Everything is cached per object and per address: memory grows with the
 * distinct addresses sampled, never with the number of samples.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmu_bundle;
struct pmu_jrec;

enum pmu_frame_status {
	PMU_FRAME_OK,          /* func known (file/line may still be absent) */
	PMU_FRAME_NOSYM,       /* object known, no symbol at that address */
	PMU_FRAME_STALE,       /* a file with another build-id: never used */
	PMU_FRAME_NOTFOUND,    /* no file with that build-id */
	PMU_FRAME_UNMAPPED,    /* the address is in no recorded map */
	PMU_FRAME_KERNEL,      /* a kernel address (func when ksym named it) */
};

struct pmu_frame {
	enum pmu_frame_status status;
	const char *func;      /* demangled; NULL unless OK or named KERNEL */
	const char *file;      /* source file, or NULL */
	int line;              /* 0: unknown */
	const char *object;    /* the mapped object's path as recorded, or NULL */
	const char *build_id;  /* its build-id (hex), or NULL */
	const char *why;       /* for a status other than OK: the reason, e.g.
				* "stale binary (build-id mismatch)" */
	uint64_t addr;         /* the address sampled */
	uint64_t rel;          /* its offset in the object (its ELF address) */
	bool inlined;          /* inlined into the next frame of the chain */
};

struct pmu_sym;

/* A symbolizer for repetition rep of the open bundle b: reads its maps
 * stream (the maps are few; the samples are streamed by the caller) and
 * ksym records.  0 or a negative pmu_err. */
int pmu_sym_new(struct pmu_sym **s, const struct pmu_bundle *b, int rep);
void pmu_sym_free(struct pmu_sym *s);

/* The ksym records of the samples stream, as the caller meets them. */
int pmu_sym_ksym(struct pmu_sym *s, uint64_t addr, const char *name);

/*
 * The frames of address addr of incarnation inc at time t: the inline
 * chain, innermost first, into out[0..max).  return_addr: look up addr - 1.
 * kernel: a kernel address.  Returns the number of frames (>= 1); the
 * strings live as long as s.
 */
size_t pmu_sym_frames(struct pmu_sym *s, const char *inc, uint64_t t, uint64_t addr, bool return_addr,
		      bool kernel, struct pmu_frame *out, size_t max);

/*
 * call_graph dwarf: unwind the user stack of one sample with libdwfl from
 * its registers and stack copy (the sample record's regs, stack and
 * user_abi; config's arch and regs_mask), into pcs[0..max) innermost first
 * (pcs[0] the sample's ip).  Returns the number of pcs, or 0 with why when
 * this architecture or sample cannot be unwound.
 */
size_t pmu_sym_unwind(struct pmu_sym *s, const char *inc, uint64_t t, const char *arch, uint64_t regs_mask,
		      const char *regs, const char *stack_b64, uint64_t *pcs, size_t max, char *why, size_t whylen);

#endif
