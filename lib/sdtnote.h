#ifndef PMU_SDTNOTE_H
#define PMU_SDTNOTE_H

/*
 * The USDT probes an ELF file carries (SystemTap's .note.stapsdt, the
 * format <sys/sdt.h> writes), and the objects a program would load.
 * Untrusted input: every note is bounds-checked (tests/fuzz/fuzz-sdtnote.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct pmu_sdt_probe {
	char provider[128], name[128];
	uint64_t pc;          /* the probe's address as the note gives it, corrected for prelink
	                         by .stapsdt.base (the link-time address libbpf attaches at) */
	uint64_t semaphore;   /* the semaphore's address (corrected likewise); 0: none */
	char args[512];       /* the argument layout ("-4@%eax 8@%rdx"); "" : none */
	int nargs;
};

/* Call fn for each probe note of the ELF file at path (fn returning
 * nonzero stops the walk and is returned).  0, or a negative pmu_err
 * (PMU_ERR_IO: cannot open, PMU_ERR_FORMAT: not ELF or a malformed note
 * section; pmu_error_detail() says which). */
int pmu_sdt_read(const char *path, int (*fn)(void *ctx, const struct pmu_sdt_probe *p), void *ctx);
/* The same on an ELF image in memory (the fuzz harness). */
int pmu_sdt_read_mem(const void *buf, size_t len, int (*fn)(void *ctx, const struct pmu_sdt_probe *p), void *ctx);

/* The objects the program at path would load, path itself first: its
 * DT_NEEDED closure resolved as ld.so does (DT_RPATH/DT_RUNPATH with
 * $ORIGIN, LD_LIBRARY_PATH, /etc/ld.so.conf's directories, the default
 * directories), and the runtimes' known dlopen'ed objects (a Java launcher's
 * lib/server/libjvm.so).  fn gets each resolved real path once. */
int pmu_sdt_closure(const char *path, int (*fn)(void *ctx, const char *obj), void *ctx);

/* pmurec --list-probes BINARY [--json]: the exit status */
int pmu_sdt_list_main(const char *binary, bool json, FILE *out, FILE *err);

#endif
