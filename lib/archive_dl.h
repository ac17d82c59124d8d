#ifndef PMU_ARCHIVE_DL_H
#define PMU_ARCHIVE_DL_H
/*
 * libarchive, loaded when it is first needed rather than at every start.
 * Linked, it costs each pmurec and pmuvalidate run 2.5-3 ms of dynamic
 * loading before main (Debian's libarchive brings libxml2, which brings
 * ICU and libstdc++: docs/fixed-cost.md), though a directory bundle never
 * touches it: only archives (packing, extracting) and --force over an
 * archive file do.  So the few functions used are reached through a table
 * filled by dlopen(3) on first use.  Include this instead of <archive.h>
 * and <archive_entry.h>; call pmu_archive_load() before the first
 * archive_*() call of an entry point.  The names below stay libarchive's
 * own, so the code reads as if it were linked.
 */
#include <archive.h>
#include <archive_entry.h>

/* Every libarchive function pmu calls: one row each. */
#define PMU_ARCHIVE_FUNCTIONS(X) \
	X(archive_entry_clear) \
	X(archive_entry_filetype) \
	X(archive_entry_free) \
	X(archive_entry_hardlink) \
	X(archive_entry_new) \
	X(archive_entry_pathname) \
	X(archive_entry_set_filetype) \
	X(archive_entry_set_gid) \
	X(archive_entry_set_mtime) \
	X(archive_entry_set_pathname) \
	X(archive_entry_set_perm) \
	X(archive_entry_set_size) \
	X(archive_entry_set_uid) \
	X(archive_entry_size) \
	X(archive_error_string) \
	X(archive_filter_bytes) \
	X(archive_read_data) \
	X(archive_read_free) \
	X(archive_read_new) \
	X(archive_read_next_header) \
	X(archive_read_open_fd) \
	X(archive_read_open_filename) \
	X(archive_read_support_filter_gzip) \
	X(archive_read_support_filter_none) \
	X(archive_read_support_filter_zstd) \
	X(archive_read_support_format_tar) \
	X(archive_write_add_filter_gzip) \
	X(archive_write_add_filter_zstd) \
	X(archive_write_close) \
	X(archive_write_data) \
	X(archive_write_free) \
	X(archive_write_header) \
	X(archive_write_new) \
	X(archive_write_open_fd) \
	X(archive_write_set_bytes_in_last_block) \
	X(archive_write_set_filter_option) \
	X(archive_write_set_format_pax_restricted) \

struct pmu_archive_fns {
#define PMU_ARCHIVE_FN_(f) __typeof__(f) *f;
	PMU_ARCHIVE_FUNCTIONS(PMU_ARCHIVE_FN_)
#undef PMU_ARCHIVE_FN_
};

extern struct pmu_archive_fns pmu_archive_fns_;

/* Load libarchive (once, thread-safe): 0, or PMU_ERR_UNSUPPORTED with the
 * reason (dlerror) when it or one of its functions cannot be had. */
int pmu_archive_load(void);

/* archive_dl.c fills the table, and needs the plain names */
#ifndef PMU_ARCHIVE_DL_IMPL
#define archive_entry_clear (*pmu_archive_fns_.archive_entry_clear)
#define archive_entry_filetype (*pmu_archive_fns_.archive_entry_filetype)
#define archive_entry_free (*pmu_archive_fns_.archive_entry_free)
#define archive_entry_hardlink (*pmu_archive_fns_.archive_entry_hardlink)
#define archive_entry_new (*pmu_archive_fns_.archive_entry_new)
#define archive_entry_pathname (*pmu_archive_fns_.archive_entry_pathname)
#define archive_entry_set_filetype (*pmu_archive_fns_.archive_entry_set_filetype)
#define archive_entry_set_gid (*pmu_archive_fns_.archive_entry_set_gid)
#define archive_entry_set_mtime (*pmu_archive_fns_.archive_entry_set_mtime)
#define archive_entry_set_pathname (*pmu_archive_fns_.archive_entry_set_pathname)
#define archive_entry_set_perm (*pmu_archive_fns_.archive_entry_set_perm)
#define archive_entry_set_size (*pmu_archive_fns_.archive_entry_set_size)
#define archive_entry_set_uid (*pmu_archive_fns_.archive_entry_set_uid)
#define archive_entry_size (*pmu_archive_fns_.archive_entry_size)
#define archive_error_string (*pmu_archive_fns_.archive_error_string)
#define archive_filter_bytes (*pmu_archive_fns_.archive_filter_bytes)
#define archive_read_data (*pmu_archive_fns_.archive_read_data)
#define archive_read_free (*pmu_archive_fns_.archive_read_free)
#define archive_read_new (*pmu_archive_fns_.archive_read_new)
#define archive_read_next_header (*pmu_archive_fns_.archive_read_next_header)
#define archive_read_open_fd (*pmu_archive_fns_.archive_read_open_fd)
#define archive_read_open_filename (*pmu_archive_fns_.archive_read_open_filename)
#define archive_read_support_filter_gzip (*pmu_archive_fns_.archive_read_support_filter_gzip)
#define archive_read_support_filter_none (*pmu_archive_fns_.archive_read_support_filter_none)
#define archive_read_support_filter_zstd (*pmu_archive_fns_.archive_read_support_filter_zstd)
#define archive_read_support_format_tar (*pmu_archive_fns_.archive_read_support_format_tar)
#define archive_write_add_filter_gzip (*pmu_archive_fns_.archive_write_add_filter_gzip)
#define archive_write_add_filter_zstd (*pmu_archive_fns_.archive_write_add_filter_zstd)
#define archive_write_close (*pmu_archive_fns_.archive_write_close)
#define archive_write_data (*pmu_archive_fns_.archive_write_data)
#define archive_write_free (*pmu_archive_fns_.archive_write_free)
#define archive_write_header (*pmu_archive_fns_.archive_write_header)
#define archive_write_new (*pmu_archive_fns_.archive_write_new)
#define archive_write_open_fd (*pmu_archive_fns_.archive_write_open_fd)
#define archive_write_set_bytes_in_last_block (*pmu_archive_fns_.archive_write_set_bytes_in_last_block)
#define archive_write_set_filter_option (*pmu_archive_fns_.archive_write_set_filter_option)
#define archive_write_set_format_pax_restricted (*pmu_archive_fns_.archive_write_set_format_pax_restricted)
#endif

#endif
