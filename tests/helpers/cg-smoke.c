/*
 * Exercises backends/linux/cgroup.c for real, for tests/cli/t1300-cgroup.bats:
 *   cg-smoke [--want "io memory pids"] MODE
 * run     create a leaf, fork a child that waits on a pipe, move it in,
 *         snapshot, let it exec a shell loop, wait, snapshot, print the
 *         delta, count task-clock with PERF_FLAG_PID_CGROUP on the leaf's
 *         fd, destroy, check that the directory is gone
 * stale   create a leaf and _exit without destroying it (a killed recorder)
 * leave   the cohort leaves "sleep 1307" behind; destroy must kill it
 * create  create, print, destroy (the failure path as nobody)
 * Output is one "word value..." line per fact; exit 0 when every check
 * held, 1 when one failed, 2 when create failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "linux/cgroup.h"

static const char LOOP[] = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done";

static void print_delta(const char *tag, const struct pmu_cgdelta *d)
{
	for (int i = 0; i < PMU_CGF_COUNT_; i++) {
		if (d->files[i].status == PMU_CGS_NOT_READ)
			continue;
		printf("%s-file %s %s", tag, pmu_cgfiles[i].name, pmu_cgstatus_name(d->files[i].status));
		if (d->files[i].status != PMU_CGS_OK)
			printf(" reason: %s%s%s", d->files[i].reason, d->files[i].remedy ? " | remedy: " : "",
			       d->files[i].remedy ? d->files[i].remedy : "");
		printf("\n");
	}
	for (size_t k = 0; k < d->n; k++) {
		const struct pmu_cgrow *r = &d->rows[k];

		if (r->ok)
			printf("%s-row %s %s %llu %s %s\n", tag, pmu_cgfiles[r->file].name, r->key,
			       (unsigned long long)r->value, r->unit, pmu_cgkind_name(r->kind));
		else
			printf("%s-row %s %s failed: %s\n", tag, pmu_cgfiles[r->file].name, r->key, r->reason);
	}
}

static int create(struct pmu_cg *cg, const char *want)
{
	char why[512];
	const char *remedy = NULL;
	int err;

	pmu_cg_init(cg);
	cg->want = want;
	err = pmu_cg_create(cg, why, sizeof(why), &remedy);
	if (err) {
		printf("error %s: %s\n", pmu_errname(err), why);
		printf("remedy %s\n", remedy ? remedy : "(none)");
		return err;
	}
	printf("leaf %s\n", cg->path);
	printf("controllers %s\n", cg->controllers);
	printf("notes %s\n", cg->notes);
	fflush(stdout);
	return 0;
}

/* The child's cgroup v2 path ends with the leaf's name? */
static bool in_leaf(pid_t pid, const struct pmu_cg *cg)
{
	char path[64], buf[4096], want[80];
	FILE *f;
	bool yes = false;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	snprintf(want, sizeof(want), "/%s\n", cg->name);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "0::", 3) && strlen(buf) >= strlen(want) &&
		    !strcmp(buf + strlen(buf) - strlen(want), want))
			yes = true;
	fclose(f);
	return yes;
}

/* Where the helper itself is now: "self-cgroup /path". */
static void print_self(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/cgroup", "r");

	while (f && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "0::", 3))
			printf("self-cgroup %s", buf + 3);
	if (f)
		fclose(f);
}

/* Fork a child that waits for a byte on a pipe and then runs sh -c script. */
static pid_t spawn(const char *script, int *release)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*release = p[1];
	return pid;
}

/* task-clock of the leaf on every online CPU: fds in fds[], how many. */
static int perf_open(const struct pmu_cg *cg, int *fds, int max, char *why, size_t n)
{
	struct perf_event_attr a;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int k = 0;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	for (long cpu = 0; cpu < ncpu && k < max; cpu++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, cg->dirfd, (int)cpu, -1,
				      PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);

		if (fd >= 0)
			fds[k++] = fd;
		else if (errno != ENODEV && errno != EINVAL)   /* offline CPU */
			snprintf(why, n, "perf_event_open(task-clock, cgroup fd, cpu %ld): %s", cpu, strerror(errno));
	}
	if (!k && !why[0])
		snprintf(why, n, "no CPU accepted a cgroup event");
	return k;
}

static int mode_run(const char *want)
{
	struct pmu_cg cg;
	struct pmu_cgsnap a, b, sa, sb;
	struct pmu_cgdelta d, sd;
	int fds[1024], nfd, release, status, bad = 0;
	char why[256] = "";
	unsigned long long tc = 0;
	bool grew = false;
	pid_t pid;
	struct stat st;

	if (create(&cg, want))
		return 2;
	pmu_cgsnap_init(&a), pmu_cgsnap_init(&b), pmu_cgsnap_init(&sa), pmu_cgsnap_init(&sb);
	pmu_cgdelta_init(&d), pmu_cgdelta_init(&sd);
	pid = spawn(LOOP, &release);
	if (pid < 0 || pmu_cg_enter(&cg, pid)) {
		printf("enter failed: %s\n", pmu_error_detail());
		bad = 1;
	}
	printf("entered %s\n", in_leaf(pid, &cg) ? "yes" : "no");
	nfd = perf_open(&cg, fds, 1024, why, sizeof(why));
	if (pmu_cg_snapshot(&cg, &a) || pmu_sys_pressure(&sa))
		printf("snapshot failed: %s\n", pmu_error_detail()), bad = 1;
	if (write(release, "x", 1) != 1)
		bad = 1;
	close(release);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	printf("exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	if (pmu_cg_snapshot(&cg, &b) || pmu_sys_pressure(&sb))
		printf("snapshot failed: %s\n", pmu_error_detail()), bad = 1;
	for (int k = 0; k < nfd; k++) {
		unsigned long long v = 0;

		if (read(fds[k], &v, sizeof(v)) == (ssize_t)sizeof(v))
			tc += v;
		close(fds[k]);
	}
	if (nfd)
		printf("perf-cgroup ok task-clock %llu ns on %d cpus\n", tc, nfd);
	else
		printf("perf-cgroup unavailable: %s\n", why);
	if (pmu_cgstat_delta(&a, &b, &d) || pmu_cgstat_delta(&sa, &sb, &sd))
		printf("delta failed: %s\n", pmu_error_detail()), bad = 1;
	print_delta("cohort", &d);
	print_delta("system", &sd);
	for (size_t k = 0; k < d.n; k++)
		if (d.rows[k].file == PMU_CGF_CPU_STAT && !strcmp(d.rows[k].key, "usage_ns") && d.rows[k].ok) {
			grew = d.rows[k].value > 0;
			printf("usage_grew %s %llu ns\n", grew ? "yes" : "no", (unsigned long long)d.rows[k].value);
		}
	if (!grew)
		bad = 1;
	if (pmu_cg_destroy(&cg))
		printf("destroy failed: %s\n", pmu_error_detail()), bad = 1;
	else
		printf("destroyed yes\n");
	printf("notes-after %s\n", cg.notes);
	printf("gone %s\n", stat(cg.path, &st) && errno == ENOENT ? "yes" : "no");
	print_self();
	if (pmu_cg_destroy(&cg))
		printf("second destroy failed: %s\n", pmu_error_detail()), bad = 1;
	pmu_cgsnap_release(&a), pmu_cgsnap_release(&b), pmu_cgsnap_release(&sa), pmu_cgsnap_release(&sb);
	pmu_cgdelta_release(&d), pmu_cgdelta_release(&sd);
	return bad;
}

/* Is pid gone or a zombie? */
static bool dead(long pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static int mode_leave(const char *want)
{
	struct pmu_cg cg;
	int release, status, bad = 0, eno = 0;
	long left[64];
	int nleft = 0;
	pid_t pid;
	char path[700];
	FILE *f;
	struct stat st;

	if (create(&cg, want))
		return 2;
	pid = spawn("sleep 1307 & exit 0", &release);
	if (pid < 0 || pmu_cg_enter(&cg, pid))
		printf("enter failed: %s\n", pmu_error_detail()), bad = 1;
	if (write(release, "x", 1) != 1)
		bad = 1;
	close(release);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg.path);
	if ((f = fopen(path, "r"))) {
		while (nleft < 64 && fscanf(f, "%ld", &left[nleft]) == 1)
			nleft++;
		fclose(f);
	}
	printf("left-behind %d\n", nleft);
	if (!nleft)
		bad = 1;
	if (pmu_cg_destroy(&cg))
		printf("destroy failed: %s\n", pmu_error_detail()), bad = 1;
	else
		printf("destroyed yes\n");
	/* the orphan's new parent reaps it: give it a moment */
	for (int t = 0; t < 100; t++) {
		bool all = true;

		for (int k = 0; k < nleft; k++)
			all &= dead(left[k]);
		if (all)
			break;
		usleep(10000);
	}
	for (int k = 0; k < nleft; k++) {
		printf("killed %ld %s\n", left[k], dead(left[k]) ? "yes" : "no");
		bad |= !dead(left[k]);
	}
	eno = stat(cg.path, &st) ? errno : 0;
	printf("gone %s\n", eno == ENOENT ? "yes" : "no");
	return bad || eno != ENOENT;
}

int main(int argc, char **argv)
{
	const char *want = NULL, *mode;
	struct pmu_cg cg;

	if (argc > 2 && !strcmp(argv[1], "--want")) {
		want = argv[2];
		argv += 2, argc -= 2;
	}
	mode = argc > 1 ? argv[1] : "run";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "run"))
		return mode_run(want);
	if (!strcmp(mode, "leave"))
		return mode_leave(want);
	if (!strcmp(mode, "stale")) {
		if (create(&cg, want))
			return 2;
		_exit(0);
	}
	if (!strcmp(mode, "create")) {
		if (create(&cg, want))
			return 2;
		if (pmu_cg_destroy(&cg)) {
			printf("destroy failed: %s\n", pmu_error_detail());
			return 1;
		}
		printf("destroyed yes\n");
		printf("notes-after %s\n", cg.notes);
		return 0;
	}
	fprintf(stderr, "usage: cg-smoke [--want CONTROLLERS] run|leave|stale|create\n");
	return 2;
}
