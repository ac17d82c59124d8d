/*
 * The GNU build-id note of an ELF file, from untrusted bytes (elfnote.h).
 * The layout is the System V gABI's (ELF header, section and program
 * headers, "Note Section"): every field is read at its offset for the
 * file's class and byte order, and every offset is checked against the
 * file's size before it is followed.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elfnote.h"
#include "error.h"

#define NT_GNU_BUILD_ID 3
#define SHT_NOTE 7
#define PT_NOTE 4

struct elf {
	long (*rd)(void *, void *, size_t, uint64_t);
	void *ctx;
	uint64_t size;
	bool is64, msb;
};

static uint64_t get(const struct elf *e, const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[e->msb ? n - 1 - i : i] << (8 * i);
	return v;
}

/* n bytes at off, all inside the file, or an error */
static int rd_at(const struct elf *e, void *buf, size_t n, uint64_t off, const char *what)
{
	long r;

	if (off > e->size || n > e->size - off)
		return pmu_error(PMU_ERR_CORRUPT, "%s at offset %llu (%zu bytes) lies outside the file's %llu bytes",
				 what, (unsigned long long)off, n, (unsigned long long)e->size);
	r = e->rd(e->ctx, buf, n, off);
	if (r < 0)
		return pmu_error(PMU_ERR_IO, "cannot read the %s at offset %llu", what, (unsigned long long)off);
	if ((size_t)r != n)
		return pmu_error(PMU_ERR_CORRUPT, "the %s at offset %llu is cut short", what, (unsigned long long)off);
	return 0;
}

/* The build-id note among the notes of [off, off + n), aligned to align
 * (4, or 8 for notes in a section or segment aligned to 8). */
static int scan_notes(const struct elf *e, uint64_t off, uint64_t n, uint64_t align, unsigned char *bid, size_t *len)
{
	unsigned char *buf;
	size_t at = 0;
	int err;

	if (n == 0 || n > PMU_ELF_NOTES_MAX)
		return PMU_ERR_NOTFOUND; /* larger areas are not notes we read */
	buf = malloc((size_t)n);
	if (!buf)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	err = rd_at(e, buf, (size_t)n, off, "note area");
	if (err) {
		free(buf);
		return err;
	}
	if (align != 8)
		align = 4;
	/* each note: namesz, descsz, type (4 bytes each), the name and the
	 * descriptor, each padded to align */
	while (n - at >= 12) {
		uint64_t namesz = get(e, buf + at, 4), descsz = get(e, buf + at + 4, 4), type = get(e, buf + at + 8, 4);
		uint64_t name_at = at + 12, desc_at = name_at + ((namesz + align - 1) & ~(align - 1));
		uint64_t next = desc_at + ((descsz + align - 1) & ~(align - 1));

		if (namesz > n || descsz > n || desc_at > n || desc_at + descsz > n)
			break; /* a note that overruns its area ends the scan */
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name_at, "GNU", 4) && descsz >= 1 &&
		    descsz <= PMU_ELF_BID_MAX) {
			memcpy(bid, buf + desc_at, (size_t)descsz);
			*len = (size_t)descsz;
			free(buf);
			return 0;
		}
		if (next > n)
			break;
		at = (size_t)next;
	}
	free(buf);
	return PMU_ERR_NOTFOUND;
}

int pmu_elf_build_id(long (*rd)(void *ctx, void *buf, size_t n, uint64_t off), void *ctx, uint64_t size,
		     unsigned char bid[PMU_ELF_BID_MAX], size_t *len)
{
	struct elf e = { rd, ctx, size, false, false };
	unsigned char h[64], sh[64];
	uint64_t shoff, phoff, shnum, phnum, shentsize, phentsize;
	int err;

	*len = 0;
	if (size < 52)
		return pmu_error(PMU_ERR_CORRUPT, "not an ELF file: %llu bytes, shorter than an ELF header",
				 (unsigned long long)size);
	err = rd_at(&e, h, 52, 0, "ELF header");
	if (err)
		return err;
	if (memcmp(h, "\177ELF", 4))
		return pmu_error(PMU_ERR_CORRUPT, "not an ELF file: no ELF magic");
	if ((h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2))
		return pmu_error(PMU_ERR_CORRUPT, "ELF class %u or data encoding %u is not one the gABI defines", h[4], h[5]);
	e.is64 = h[4] == 2;
	e.msb = h[5] == 2;
	if (e.is64) {
		if (size < 64)
			return pmu_error(PMU_ERR_CORRUPT, "an ELF64 file of %llu bytes is shorter than its header",
					 (unsigned long long)size);
		err = rd_at(&e, h, 64, 0, "ELF header");
		if (err)
			return err;
		phoff = get(&e, h + 32, 8);
		shoff = get(&e, h + 40, 8);
		phentsize = get(&e, h + 54, 2);
		phnum = get(&e, h + 56, 2);
		shentsize = get(&e, h + 58, 2);
		shnum = get(&e, h + 60, 2);
	} else {
		phoff = get(&e, h + 28, 4);
		shoff = get(&e, h + 32, 4);
		phentsize = get(&e, h + 42, 2);
		phnum = get(&e, h + 44, 2);
		shentsize = get(&e, h + 46, 2);
		shnum = get(&e, h + 48, 2);
	}

	/* the section headers; e_shnum 0 with a table: the count is sh[0].sh_size */
	if (shoff) {
		size_t need = e.is64 ? 64 : 40;

		if (shentsize < need)
			return pmu_error(PMU_ERR_CORRUPT, "section header size %llu is below the %zu bytes of one",
					 (unsigned long long)shentsize, need);
		if (shnum == 0) {
			err = rd_at(&e, sh, need, shoff, "section header 0");
			if (err)
				return err;
			shnum = get(&e, sh + (e.is64 ? 32 : 20), e.is64 ? 8 : 4);
		}
		for (uint64_t i = 0; i < shnum && i < PMU_ELF_SCAN_MAX; i++) {
			uint64_t at = shoff + i * shentsize, off, n, align;

			if (at < shoff)
				break;
			err = rd_at(&e, sh, need, at, "section header");
			if (err)
				return err;
			if (get(&e, sh + 4, 4) != SHT_NOTE)
				continue;
			off = get(&e, sh + (e.is64 ? 24 : 16), e.is64 ? 8 : 4);
			n = get(&e, sh + (e.is64 ? 32 : 20), e.is64 ? 8 : 4);
			align = get(&e, sh + (e.is64 ? 48 : 32), e.is64 ? 8 : 4);
			err = scan_notes(&e, off, n, align, bid, len);
			if (err != PMU_ERR_NOTFOUND)
				return err;
		}
	}
	if (phoff) {
		size_t need = e.is64 ? 56 : 32;

		if (phentsize < need)
			return pmu_error(PMU_ERR_CORRUPT, "program header size %llu is below the %zu bytes of one",
					 (unsigned long long)phentsize, need);
		for (uint64_t i = 0; i < phnum && i < PMU_ELF_SCAN_MAX; i++) {
			uint64_t at = phoff + i * phentsize, off, n, align;

			if (at < phoff)
				break;
			err = rd_at(&e, sh, need, at, "program header");
			if (err)
				return err;
			if (get(&e, sh, 4) != PT_NOTE)
				continue;
			off = get(&e, sh + (e.is64 ? 8 : 4), e.is64 ? 8 : 4);
			n = get(&e, sh + (e.is64 ? 32 : 16), e.is64 ? 8 : 4);
			align = get(&e, sh + (e.is64 ? 48 : 28), e.is64 ? 8 : 4);
			err = scan_notes(&e, off, n, align, bid, len);
			if (err != PMU_ERR_NOTFOUND)
				return err;
		}
	}
	return pmu_error(PMU_ERR_NOTFOUND, "the ELF file has no GNU build-id note");
}
