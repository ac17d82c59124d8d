/*
 * Provenance of the images a run executed and loaded: size, SHA-256,
 * GNU build-id and the compilers named in .comment, read with elfutils'
 * libelf, and DW_AT_producer with libdw where debug info exists (the
 * libraries the symbolizer will use, rather than a hand-written ELF or
 * DWARF reader).
 */
#include <errno.h>
#include <fcntl.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "spec_json.h"
#include "provenance.h"
#include "sha256.h"

/*
 * The GNU build-id note of e (NT_GNU_BUILD_ID, owner "GNU"): from its
 * SHT_NOTE sections, else (no section headers) its PT_NOTE segments.  A
 * separate debug file (objcopy --only-keep-debug) keeps the note with its
 * bytes, while its segments point at NOBITS, so sections come first.
 */
static int note_scan(Elf_Data *d, uint64_t base, char *hex, size_t n, uint64_t *off)
{
	size_t pos = 0, noff, doff;
	GElf_Nhdr nh;

	while ((pos = gelf_getnote(d, pos, &nh, &noff, &doff)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || memcmp((char *)d->d_buf + noff, "GNU", 4) ||
		    !nh.n_descsz || nh.n_descsz > 64 || 2 * (size_t)nh.n_descsz + 1 > n)
			continue;
		for (size_t i = 0; i < nh.n_descsz; i++)
			snprintf(hex + 2 * i, 3, "%02x", ((unsigned char *)d->d_buf)[doff + i]);
		if (off)
			*off = base + doff;
		return 0;
	}
	return -1;
}

int pmu_elf_gnu_build_id(Elf *e, char *hex, size_t n, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	size_t nph;

	if (elf_kind(e) != ELF_K_ELF)
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && (d = elf_getdata(scn, NULL)) &&
		    !note_scan(d, sh.sh_offset, hex, n, off))
			return 0;
	}
	if (elf_getphdrnum(e, &nph) != 0)
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_NOTE && ph.p_filesz &&
		    (d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
					      ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR)) &&
		    !note_scan(d, ph.p_offset, hex, n, off))
			return 0;
	}
	return -1;
}

static void elf_facts(int fd, json_t *o)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	char comment[512] = "", hex[129];

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return;
	if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0) {
		elf_end(e);
		return;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".comment") && (d = elf_getdata(scn, NULL))) {
			/* NUL-separated strings, joined with "; " */
			const char *p = d->d_buf, *end = p + d->d_size;

			while (p < end) {
				size_t n = strnlen(p, (size_t)(end - p));

				if (n && !strstr(comment, p) && strlen(comment) + n + 3 < sizeof(comment))
					snprintf(comment + strlen(comment), sizeof(comment) - strlen(comment), "%s%.*s",
						 comment[0] ? "; " : "", (int)n, p);
				p += n + 1;
			}
		}
	}
	if (!pmu_elf_gnu_build_id(e, hex, sizeof(hex), NULL))
		json_object_set_new(o, "build_id", json_string(hex));
	if (comment[0])
		json_object_set_new(o, "comment", json_string(comment));
	elf_end(e);
}

/* DW_AT_producer of the first compile unit that names one: the compiler
 * and flags of the image, where debug info exists (elfutils libdw). */
static void dwarf_producer(int fd, json_t *o)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dw)
		return;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Attribute at;
		const char *p;

		if (dwarf_offdie(dw, off + hsize, &die) && dwarf_attr(&die, DW_AT_producer, &at) &&
		    (p = dwarf_formstring(&at)) && *p) {
			json_object_set_new(o, "producer", json_string(p));
			break;
		}
		off = next;
	}
	dwarf_end(dw);
}

json_t *pmu_image_describe(const char *path, const char *role)
{
	json_t *o = json_pack("{s:o,s:s}", "path", pmu_json_text(path), "role", role);
	char hex[PMU_SHA256_HEX];
	struct stat st;
	uint64_t size;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		char why[512];
		int e = errno;

		/* the path may not be UTF-8 (or hold a newline, escaped in maps) */
		snprintf(why, sizeof(why), "cannot open '%s': %s", path, strerror(e));
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", pmu_json_text(why));
		json_object_set_new(o, "remedy", json_string(e == EACCES ? "record as a user who can read the image"
								     : "the image was removed or replaced during the run"));
		if (fd >= 0)
			close(fd);
		return o;
	}
	if (pmu_sha256_file(AT_FDCWD, path, hex, &size) == 0) {
		json_object_set_new(o, "status", json_string("ok"));
		json_object_set_new(o, "size_bytes", json_integer((json_int_t)size));
		json_object_set_new(o, "sha256", json_string(hex));
		elf_facts(fd, o);
		dwarf_producer(fd, o);
	} else {
		json_object_set_new(o, "status", json_string("failed"));
		json_object_set_new(o, "reason", pmu_json_text(pmu_error_detail()));
	}
	close(fd);
	return o;
}
