/*
 * Provenance of the images a run executed and loaded: size, SHA-256,
 * GNU build-id and the compilers named in .comment, read with elfutils'
 * libelf (the same library the symbolizer will use, rather than a
 * hand-written ELF parser).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "provenance.h"
#include "sha256.h"

static void elf_facts(int fd, json_t *o)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	char comment[512] = "";

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
		if (sh.sh_type == SHT_NOTE && (d = elf_getdata(scn, NULL))) {
			size_t off = 0, noff, doff;
			GElf_Nhdr nh;

			while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz <= 64) {
					char hex[129];

					for (size_t i = 0; i < nh.n_descsz; i++)
						snprintf(hex + 2 * i, 3, "%02x", ((unsigned char *)d->d_buf)[doff + i]);
					if (nh.n_descsz)
						json_object_set_new(o, "build_id", json_string(hex));
				}
			}
		} else if (name && !strcmp(name, ".comment") && (d = elf_getdata(scn, NULL))) {
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
	if (comment[0])
		json_object_set_new(o, "comment", json_string(comment));
	elf_end(e);
}

json_t *pmu_image_describe(const char *path, const char *role)
{
	json_t *o = json_pack("{s:s,s:s}", "path", path, "role", role);
	char hex[PMU_SHA256_HEX];
	struct stat st;
	uint64_t size;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		char why[512];

		snprintf(why, sizeof(why), "cannot open '%s': %s", path, strerror(errno));
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", json_string(why));
		json_object_set_new(o, "remedy", json_string(errno == EACCES ? "record as a user who can read the image"
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
	} else {
		json_object_set_new(o, "status", json_string("failed"));
		json_object_set_new(o, "reason", json_string(pmu_error_detail()));
	}
	close(fd);
	return o;
}
