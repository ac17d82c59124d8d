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

/* Call fn for each probe note of the ELF file at path, in the order of the
 * notes (one call per probe site: a probe the compiler placed twice comes
 * twice); fn returning nonzero stops the walk and is returned.  0, or a
 * negative pmu_err (PMU_ERR_IO: cannot open; PMU_ERR_CORRUPT: not an ELF
 * file, or a malformed .note.stapsdt: a note overrunning its section, a
 * descriptor too short, a string not NUL-terminated in it, or longer than
 * the field above; PMU_ERR_NOMEM).  pmu_error_detail() says which.  An ELF
 * file without .note.stapsdt is 0 with no call. */
int pmu_sdt_read(const char *path, int (*fn)(void *ctx, const struct pmu_sdt_probe *p), void *ctx);
/* The same on an ELF image in memory (the fuzz harness); buf is copied,
 * never written. */
int pmu_sdt_read_mem(const void *buf, size_t len, int (*fn)(void *ctx, const struct pmu_sdt_probe *p), void *ctx);

/* The objects the program at path would load, path itself first: its
 * DT_NEEDED closure resolved as glibc's ld.so does, breadth first (its
 * PT_INTERP; DT_RPATH of the loading object and its loaders unless the
 * loading object has DT_RUNPATH, LD_LIBRARY_PATH from this process's
 * environment, the loading object's DT_RUNPATH, with $ORIGIN, $LIB and
 * $PLATFORM; /etc/ld.so.conf's directories with its includes, standing for
 * ld.so.cache; the default directories: /lib/<multiarch triplet>,
 * /usr/lib/<triplet>, /lib64 and /usr/lib64 for 64-bit, /lib, /usr/lib;
 * a candidate of another ELF class or machine is passed over; a name
 * already loaded, as a needed name or a DT_SONAME, is not loaded again),
 * and the runtimes' known dlopen'ed objects.  Not followed: LD_PRELOAD,
 * glibc-hwcaps subdirectories, dlopen() in general.
 *
 * The Java launcher rule: every JDK launcher (java, javac, jshell, ...)
 * links libjli.so, which dlopen()s the JVM; when the closure holds a
 * libjli.so, the default (server) JVM is added with its own closure:
 * <JAVA_HOME>/lib/server/libjvm.so where libjli.so is <JAVA_HOME>/lib/
 * libjli.so (JDK 9 and later), else <libjli.so's directory>/../server/
 * libjvm.so (JDK 8's jre/lib/<arch>/jli/).  A VM picked otherwise
 * (-client, jvm.cfg, -XX:Flags) is not followed.
 *
 * fn gets each object's real path once (returning nonzero stops the walk
 * and is returned); a needed name that resolves nowhere is left out, as
 * pmurec --list-probes reports.  0, or PMU_ERR_IO (path cannot be opened),
 * PMU_ERR_CORRUPT (path is not an ELF file), PMU_ERR_LIMIT (more than 4096
 * objects), PMU_ERR_NOMEM; pmu_error_detail() says which. */
int pmu_sdt_closure(const char *path, int (*fn)(void *ctx, const char *obj), void *ctx);

/* pmurec --list-probes BINARY [--json]: BINARY found as execvp(3) would,
 * then the probes of it and of its closure (provider, name, argument
 * layout, semaphore, object), the needed names found nowhere, and whether
 * this process could attach, as attach_check says (the backend's
 * pmu_backend_usdt_attach), with the reason and remedy when not.  The exit status:
 * 0 listed (none found too: a line says so), 2 BINARY missing, not ELF, or
 * its own notes malformed (the error on err). */
int pmu_sdt_list_main(const char *binary, bool json, FILE *out, FILE *err,
		      bool (*attach_check)(char *why, size_t n, const char **remedy));

#endif
