#ifndef PMU_ELFNOTE_H
#define PMU_ELFNOTE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The GNU build-id of an ELF file: the descriptor of its NT_GNU_BUILD_ID
 * note (owner "GNU", type 3), as `readelf -n` and debuggers read it.  For
 * the validator's RETAINED check (bundle-spec section 22): a retained copy
 * is the object whose build-id the maps stream names.  Platform-free (no
 * <elf.h>, no libelf): ELFCLASS32 and ELFCLASS64, either byte order.
 *
 * The bytes are untrusted.  rd(ctx, buf, n, off) reads n bytes at offset
 * off and returns how many it read (fewer at the end of the file) or -1;
 * size is the file's size.  The notes are sought in the SHT_NOTE sections
 * (a separate debug file keeps them there), then in the PT_NOTE segments
 * (a file without section headers).  Bounded whatever the file: at most
 * PMU_ELF_SCAN_MAX headers of each kind are looked at, and a note area is
 * read in one buffer of at most PMU_ELF_NOTES_MAX bytes (larger ones are
 * skipped).  Every offset and size is checked against size before use.
 *
 * Returns 0 with bid[0..*len) the build-id (1 .. PMU_ELF_BID_MAX bytes),
 * PMU_ERR_NOTFOUND when the file is a well-formed ELF without a build-id
 * note, PMU_ERR_CORRUPT when it is not ELF or a header lies outside it,
 * PMU_ERR_IO when rd fails, PMU_ERR_NOMEM; pmu_error_detail() says why.
 */
#define PMU_ELF_BID_MAX 64
#define PMU_ELF_SCAN_MAX 4096
#define PMU_ELF_NOTES_MAX (64u << 10)

int pmu_elf_build_id(long (*rd)(void *ctx, void *buf, size_t n, uint64_t off), void *ctx, uint64_t size,
		     unsigned char bid[PMU_ELF_BID_MAX], size_t *len);

#endif
