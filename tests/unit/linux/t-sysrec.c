/* The syscalls collector's ring record decoder (backends/linux/sysrec.h):
 * well-formed call and path records accepted, and every lie a writer of
 * the ring could tell refused as PMU_ERR_CORRUPT: sizes, kinds, seq 0,
 * pid 0, unknown flags, path flags without paths, strings without their
 * NUL, two path sources, a resolved path that is not absolute; every
 * prefix of a record refused. */
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "error.h"
#include "linux/sysrec.h"

static struct pmu_sys_call_path good(unsigned kind)
{
	struct pmu_sys_call_path p;

	memset(&p, 0, sizeof(p));
	p.c.h.seq = 7;
	p.c.h.time_ns = 1000000000000ull;
	p.c.h.kind = (__u16)kind;
	p.c.h.size = kind == PMU_SYS_REC_CALL ? sizeof(struct pmu_sys_call) : sizeof(p);
	p.c.dur_ns = 1500;
	p.c.tgid = 100;
	p.c.tid = 101;
	p.c.nr = 257;
	p.c.ret = 3;
	p.c.flags = PMU_SYS_F_FILE;
	p.c.dev = 254u << 20;
	p.c.ino = 733;
	p.c.fd1 = p.c.fd2 = -1;
	if (kind == PMU_SYS_REC_CALL_PATH) {
		p.c.flags |= PMU_SYS_F_PATH_DENTRY;
		strcpy(p.path, "/etc/hostname");
	}
	return p;
}

/* decode an exact-size heap copy: a read past it is ASan's to see */
static int dec(const void *r, size_t len)
{
	void *copy = malloc(len ? len : 1);
	union pmu_sysrec out;
	int err;

	memcpy(copy, r, len);
	err = pmu_sysrec_decode(copy, len, &out);
	free(copy);
	return err;
}

int main(void)
{
	struct pmu_sys_call_path p = good(PMU_SYS_REC_CALL), q;
	size_t cs = sizeof(struct pmu_sys_call), ps = sizeof(p);
	int bad = 0;

	is_int(dec(&p, cs), 0, "a call record is accepted");
	q = good(PMU_SYS_REC_CALL_PATH);
	is_int(dec(&q, ps), 0, "a record with its dentry path is accepted");
	is_int(dec(&p, ps), PMU_ERR_CORRUPT, "a call record of a path record's length is refused");
	q = p, q.c.h.kind = 9;
	is_int(dec(&q, cs), PMU_ERR_CORRUPT, "an unknown kind is refused");
	q = p, q.c.h.seq = 0;
	is_int(dec(&q, cs), PMU_ERR_CORRUPT, "seq 0 is refused");
	ok(!strncmp(pmu_error_detail(), "syscall record", 14), "the detail names a syscall record: %s", pmu_error_detail());
	q = p, q.c.tid = 0;
	is_int(dec(&q, cs), PMU_ERR_CORRUPT, "tid 0 is refused");
	q = p, q.c.flags |= 0x10000;
	is_int(dec(&q, cs), PMU_ERR_CORRUPT, "an unknown flag is refused");
	q = p, q.c.flags |= PMU_SYS_F_PATH_ARG;
	is_int(dec(&q, cs), PMU_ERR_CORRUPT, "a path flag on a record without paths is refused");
	q = p, q.c.nr = PMU_SYS_NR_MAX;
	is_int(dec(&q, cs), PMU_ERR_CORRUPT, "a number outside the classified range is refused");
	q = p, q.c.dur_ns = q.c.h.time_ns + 1;
	is_int(dec(&q, cs), PMU_ERR_CORRUPT, "a call that began before boot is refused");
	q = good(PMU_SYS_REC_CALL_PATH), memset(q.path, 'a', sizeof(q.path));
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "a path without its NUL is refused");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags |= PMU_SYS_F_PATH_ARG;
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "two path sources are refused");
	q = good(PMU_SYS_REC_CALL_PATH), q.path[0] = 'e';
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "a resolved path that is not absolute is refused");
	q = good(PMU_SYS_REC_CALL_PATH), strcpy(q.path2, "b");
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "a second path without its flag is refused");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags |= PMU_SYS_F_PATH2, strcpy(q.path2, "b");
	is_int(dec(&q, ps), 0, "a second path with its flag is accepted");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags |= PMU_SYS_F_PATH_HEAD | PMU_SYS_F_PATH_TRUNC;
	is_int(dec(&q, ps), 0, "a dentry path cut at both ends is accepted");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags ^= PMU_SYS_F_PATH_DENTRY | PMU_SYS_F_PATH_ARG | PMU_SYS_F_PATH_HEAD;
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "an argument without its head (only a walk loses it) is refused");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags ^= PMU_SYS_F_PATH_DENTRY | PMU_SYS_F_PATH_REL, strcpy(q.path, "f");
	is_int(dec(&q, ps), 0, "a relative argument labelled relative is accepted");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags ^= PMU_SYS_F_PATH_DENTRY | PMU_SYS_F_PATH_DIRFD, strcpy(q.path, "f");
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "a path joined to its dirfd that is not absolute is refused");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags |= PMU_SYS_F_P2_CWD;
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "a second path's source without the second path is refused");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags |= PMU_SYS_F_PATH2 | PMU_SYS_F_P2_CWD | PMU_SYS_F_P2_DIRFD;
	strcpy(q.path2, "/b");
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "two second path sources are refused");
	q = good(PMU_SYS_REC_CALL_PATH), q.c.flags |= PMU_SYS_F_PATH2 | PMU_SYS_F_P2_CWD, strcpy(q.path2, "b");
	is_int(dec(&q, ps), PMU_ERR_CORRUPT, "a resolved second path that is not absolute is refused");
	q = good(PMU_SYS_REC_CALL_PATH);
	for (size_t n = 0; n < ps; n++)
		bad += dec(&q, n) != PMU_ERR_CORRUPT;
	is_int(bad, 0, "every prefix of a path record is refused");
	return done_testing();
}
