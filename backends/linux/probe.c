/*
 * Capability probe: what this host lets pmu measure, and why not.  Every
 * entry is read or tried, never assumed: perf_event_open(2) is called for
 * the events that matter, sysctls are read from /proc/sys, mounts from
 * statfs(2), privileges from /proc/self/status CapEff.
 */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwfl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend.h"
#include "error.h"
#include "util.h"

#define TRACEFS_MAGIC_ 0x74726163

static void cap(json_t *caps, const char *name, const char *status, const char *value, const char *reason,
		const char *remedy)
{
	json_t *o = json_pack("{s:s,s:s}", "name", name, "status", status);

	if (value && *value)
		json_object_set_new(o, "value", json_string(value));
	if (reason)
		json_object_set_new(o, "reason", json_string(reason));
	if (remedy)
		json_object_set_new(o, "remedy", json_string(remedy));
	json_array_append_new(caps, o);
}

/* First line of a small file, trimmed; NULL when unreadable. */
static char *line_of(const char *path)
{
	char *s = NULL;
	size_t n = 0;

	if (pmu_read_file(AT_FDCWD, path, 1 << 16, &s, &n))
		return NULL;
	s[strcspn(s, "\n")] = '\0';
	return s;
}

static long long num_of(const char *path)
{
	char *s = line_of(path);
	long long v = s ? atoll(s) : -1;

	free(s);
	return v;
}

/* The effective capabilities, read once per probe: they do not change
 * while it runs. */
static unsigned long long cap_eff(void)
{
	char *s = NULL, *p;
	unsigned long long v = 0;

	if (pmu_read_file(AT_FDCWD, "/proc/self/status", 1 << 16, &s, NULL) == 0 && (p = strstr(s, "CapEff:")))
		v = strtoull(p + 7, NULL, 16);
	free(s);
	return v;
}

static bool has_cap(unsigned long long eff, int bit)
{
	return (eff >> bit) & 1;
}

/* Open one event on this process (disabled, close-on-exec); the fd, or -1
 * with errno. */
static int open_event(unsigned type, unsigned long long config, bool user_only)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = user_only;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Try to open one event on this process; returns 0 or errno. */
static int try_event(unsigned type, unsigned long long config, bool user_only)
{
	int fd = open_event(type, config, user_only);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The first value of key in the text of /proc/cpuinfo, s (read once by
 * the caller: each read of it interrupts every CPU for its "cpu MHz"). */
static char *cpuinfo_field(const char *s, const char *key)
{
	const char *p;
	char *out = NULL;
	size_t kl = strlen(key);

	if (!s)
		return NULL;
	for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, kl) && (p[kl] == '\t' || p[kl] == ' ' || p[kl] == ':')) {
			char *c = strchr(p, ':');

			if (c) {
				c += 2;
				out = strndup(c, strcspn(c, "\n"));
			}
			break;
		}
	return out;
}

static void probe_perf(json_t *caps, long long paranoid, bool privileged)
{
	char v[256], why[512];
	int e;
	bool user_only = !privileged && paranoid >= 2;

	e = try_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, user_only);
	if (!e)
		cap(caps, "software-events", "ok", user_only ? "task-clock opened (user space only)" : "task-clock opened",
		    NULL, NULL);
	else {
		snprintf(why, sizeof(why), "perf_event_open(task-clock): %s", strerror(e));
		cap(caps, "software-events", "unavailable", NULL, why,
		    e == EACCES || e == EPERM ? "run as root or set kernel.perf_event_paranoid=2 or lower"
					      : "use a kernel built with CONFIG_PERF_EVENTS");
	}
	e = try_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true);
	if (!e) {
		cap(caps, "hardware-events", "ok", "cycles opened", NULL, NULL);
	} else {
		snprintf(why, sizeof(why), "perf_event_open(cycles): %s: %s", strerror(e),
			 e == ENOENT || e == EOPNOTSUPP || e == ENODEV
				 ? "no hardware PMU is exposed to this system (virtual machine without a virtual PMU?)"
				 : "refused");
		cap(caps, "hardware-events", "unavailable", NULL, why,
		    e == EACCES || e == EPERM ? "run as root or lower kernel.perf_event_paranoid"
					      : "record on bare metal, or enable the hypervisor's virtual PMU (vPMU)");
	}
	/* rdpmc self-monitoring: a hardware counter's mmap page must allow it */
	{
		int fd = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true);

		if (fd < 0) {
			snprintf(why, sizeof(why), "no hardware counter opens (instructions: %s): rdpmc reads hardware "
				 "counters", strerror(errno));
			cap(caps, "rdpmc", "unavailable", NULL, why,
			    "record on hardware with a PMU the kernel exposes (bare metal, or a VM with a virtual PMU)");
		} else {
			struct perf_event_mmap_page *pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
							      fd, 0);

			if (pg == MAP_FAILED) {
				snprintf(why, sizeof(why), "mmap of the counter page: %s", strerror(errno));
				cap(caps, "rdpmc", "unavailable", NULL, why, "see perf_event_open(2)");
			} else {
				if (pg->cap_user_rdpmc)
					cap(caps, "rdpmc", "ok", "cap_user_rdpmc", NULL, NULL);
				else
					cap(caps, "rdpmc", "unavailable", NULL,
					    "cap_user_rdpmc is 0 in the counter's mmap page",
					    "allow it: echo 2 > /sys/bus/event_source/devices/cpu/rdpmc (as root)");
				munmap(pg, (size_t)sysconf(_SC_PAGESIZE));
			}
			close(fd);
		}
	}
	if (privileged || paranoid <= 1) {
		snprintf(v, sizeof(v), "perf_event_paranoid=%lld%s", paranoid, privileged ? ", privileged" : "");
		cap(caps, "kernel-counting", "ok", v, NULL, NULL);
	} else {
		snprintf(why, sizeof(why), "perf_event_paranoid=%lld: kernel-mode events are refused to unprivileged users; "
			 "counting user space only", paranoid);
		cap(caps, "kernel-counting", "unavailable", NULL, why,
		    "run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=1");
	}
	if (privileged || paranoid <= 0) {
		cap(caps, "cpu-wide-events", "ok", NULL, NULL, NULL);
	} else {
		snprintf(why, sizeof(why), "perf_event_paranoid=%lld: CPU-wide (cgroup) events need paranoid<=0 or privilege",
			 paranoid);
		cap(caps, "cpu-wide-events", "unavailable", NULL, why,
		    "run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=0");
	}
}

int pmu_backend_probe(json_t *host, json_t *caps)
{
	struct utsname u;
	struct statfs sf;
	char v[1024], why[1200], *s, *vendor, *family, *model, *stepping, *flags, *cpuinfo = NULL;
	long long paranoid;
	unsigned long long eff = cap_eff();
	bool root = geteuid() == 0, perfmon = has_cap(eff, 38) || has_cap(eff, 21),
	     bpfcap = has_cap(eff, 39) || has_cap(eff, 21);
	DIR *d;

	uname(&u);
	json_object_set_new(host, "os", json_string("linux"));
	json_object_set_new(host, "arch", json_string(u.machine));
	json_object_set_new(host, "kernel", json_string(u.release));
	if (pmu_read_file(AT_FDCWD, "/proc/cpuinfo", 8 << 20, &cpuinfo, NULL))
		cpuinfo = NULL;
	s = cpuinfo_field(cpuinfo, "model name");
	if (s)
		json_object_set_new(host, "cpu", json_string(s));
	free(s);

	vendor = cpuinfo_field(cpuinfo, "vendor_id");
	family = cpuinfo_field(cpuinfo, "cpu family");
	model = cpuinfo_field(cpuinfo, "model");
	stepping = cpuinfo_field(cpuinfo, "stepping");
	if (vendor) {
		snprintf(v, sizeof(v), "%s family %s model %s stepping %s", vendor, family ? family : "?",
			 model ? model : "?", stepping ? stepping : "?");
		cap(caps, "cpu-identity", "ok", v, NULL, NULL);
	} else {
		cap(caps, "cpu-identity", "unavailable", NULL, "/proc/cpuinfo has no vendor_id (not x86?)",
		    "none needed: counting uses the PMUs listed under pmu-devices");
	}
	free(vendor);
	free(family);
	free(model);
	free(stepping);
	flags = cpuinfo_field(cpuinfo, "flags");
	s = line_of("/sys/class/dmi/id/sys_vendor");
	snprintf(v, sizeof(v), "%s%s%s", flags && strstr(flags, " hypervisor") ? "guest of a hypervisor" : "no hypervisor flag",
		 s ? "; DMI vendor " : "", s ? s : "");
	cap(caps, "virtualization", "ok", v, NULL, NULL);
	free(flags);
	free(cpuinfo);
	free(s);

	v[0] = '\0';
	d = opendir("/sys/bus/event_source/devices");
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.' && strlen(v) + strlen(e->d_name) + 2 < sizeof(v))
			snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s%s", v[0] ? " " : "", e->d_name);
	if (d)
		closedir(d);
	cap(caps, "pmu-devices", v[0] ? "ok" : "unavailable", v, v[0] ? NULL : "/sys/bus/event_source/devices is empty or absent",
	    v[0] ? NULL : "use a kernel with perf events");

	paranoid = num_of("/proc/sys/kernel/perf_event_paranoid");
	snprintf(v, sizeof(v), "%lld", paranoid);
	cap(caps, "perf_event_paranoid", paranoid == -1 && access("/proc/sys/kernel/perf_event_paranoid", R_OK) ? "unavailable" : "ok",
	    v, paranoid == -1 && access("/proc/sys/kernel/perf_event_paranoid", R_OK) ? "not readable" : NULL,
	    paranoid == -1 && access("/proc/sys/kernel/perf_event_paranoid", R_OK) ? "mount /proc" : NULL);
	probe_perf(caps, paranoid, root || perfmon);

	static const struct { const char *name, *path; } sysctls[] = {
		{ "kptr_restrict", "/proc/sys/kernel/kptr_restrict" },
		{ "perf_event_max_sample_rate", "/proc/sys/kernel/perf_event_max_sample_rate" },
		{ "perf_event_mlock_kb", "/proc/sys/kernel/perf_event_mlock_kb" },
		{ "nmi_watchdog", "/proc/sys/kernel/nmi_watchdog" },
		{ "ptrace_scope", "/proc/sys/kernel/yama/ptrace_scope" },
		{ "unprivileged_bpf_disabled", "/proc/sys/kernel/unprivileged_bpf_disabled" },
	};
	for (size_t i = 0; i < sizeof(sysctls) / sizeof(*sysctls); i++) {
		s = line_of(sysctls[i].path);
		if (s)
			cap(caps, sysctls[i].name, "ok", s, NULL, NULL);
		else {
			snprintf(why, sizeof(why), "%s: %s", sysctls[i].path, pmu_error_detail());
			cap(caps, sysctls[i].name, "unavailable", NULL, why, "none: the kernel lacks this setting");
		}
		free(s);
	}

	if (statfs("/sys/kernel/tracing", &sf) == 0 && sf.f_type == TRACEFS_MAGIC_) {
		if (access("/sys/kernel/tracing/events", R_OK | X_OK) == 0)
			cap(caps, "tracefs", "ok", "/sys/kernel/tracing", NULL, NULL);
		else
			cap(caps, "tracefs", "unavailable", NULL, "/sys/kernel/tracing is mounted but not readable by this user",
			    "run as root, or grant read access to tracefs");
	} else {
		cap(caps, "tracefs", "unavailable", NULL, "tracefs is not mounted at /sys/kernel/tracing",
		    "mount -t tracefs nodev /sys/kernel/tracing (as root)");
	}

	{
		/* the cgroup v2 mount: /sys/fs/cgroup on unified hosts, elsewhere
		 * on hybrid ones (/sys/fs/cgroup/unified) */
		char mnt[256] = "", *m = NULL, *cg = NULL, path[1024];

		if (pmu_read_file(AT_FDCWD, "/proc/self/mounts", 1 << 20, &m, NULL) == 0) {
			for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
				char dev[64], dir[256], type[32];

				if (sscanf(line, "%63s %255s %31s", dev, dir, type) == 3 && !strcmp(type, "cgroup2")) {
					snprintf(mnt, sizeof(mnt), "%s", dir);
					break;
				}
			}
		}
		free(m);
		if (!mnt[0]) {
			cap(caps, "cgroup-v2", "unavailable", NULL, "no cgroup2 file system is mounted",
			    "boot with systemd.unified_cgroup_hierarchy=1, or mount -t cgroup2 none /sys/fs/cgroup");
			cap(caps, "cgroup-delegation", "unavailable", NULL, "no cgroup v2 hierarchy",
			    "boot with systemd.unified_cgroup_hierarchy=1");
		} else {
			cap(caps, "cgroup-v2", "ok", mnt, NULL, NULL);
			if (pmu_read_file(AT_FDCWD, "/proc/self/cgroup", 4096, &cg, NULL) == 0 && (m = strstr(cg, "0::"))) {
				m[strcspn(m, "\n")] = '\0';
				snprintf(path, sizeof(path), "%s%s/cgroup.procs", mnt, strcmp(m + 3, "/") ? m + 3 : "");
				if (access(path, W_OK) == 0)
					cap(caps, "cgroup-delegation", "ok", path, NULL, NULL);
				else {
					snprintf(why, sizeof(why), "cannot write %s: %s", path, strerror(errno));
					cap(caps, "cgroup-delegation", "unavailable", NULL, why,
					    "run under a delegated cgroup: systemd-run --user --scope -p Delegate=yes pmurec ...");
				}
			} else {
				cap(caps, "cgroup-delegation", "unavailable", NULL, "/proc/self/cgroup names no cgroup v2 path",
				    "run on a cgroup v2 (unified) hierarchy");
			}
			free(cg);
		}
	}

	{
		/* tried: load the smallest socket filter ("r0 = 0; exit") */
		long long ub = num_of("/proc/sys/kernel/unprivileged_bpf_disabled");
		struct bpf_insn prog[2] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
					    { .code = BPF_JMP | BPF_EXIT } };
		union bpf_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		a.insns = (uint64_t)(uintptr_t)prog;
		a.insn_cnt = 2;
		a.license = (uint64_t)(uintptr_t)"GPL";
		fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
		if (fd >= 0) {
			close(fd);
			snprintf(v, sizeof(v), "BPF_PROG_LOAD of a socket filter succeeded (%s)", root ? "root"
												 : bpfcap ? "CAP_BPF" : "unprivileged");
			cap(caps, "bpf", "ok", v, NULL, NULL);
		} else {
			int e = errno;

			snprintf(why, sizeof(why), "BPF_PROG_LOAD: %s (unprivileged_bpf_disabled=%lld%s)", strerror(e), ub,
				 bpfcap ? ", CAP_BPF held" : ", no CAP_BPF");
			cap(caps, "bpf", "unavailable", NULL, why,
			    e == EPERM || e == EACCES ? "run as root or grant CAP_BPF and CAP_PERFMON"
						      : "use a kernel built with CONFIG_BPF_SYSCALL");
		}
	}
	{
		/* presence and version, without linking it: the counting
		 * collector loads it the same way for pfm:NAME events */
		void *h = dlopen("libpfm.so.4", RTLD_LAZY | RTLD_LOCAL);
		int (*ver)(void) = h ? (int (*)(void))dlsym(h, "pfm_get_version") : NULL;

		if (ver) {
			int vv = ver();

			snprintf(v, sizeof(v), "libpfm.so.4 present, API %d.%d; resolves pfm:NAME events", vv >> 16,
				 vv & 0xffff);
			cap(caps, "libpfm4", "ok", v, NULL, NULL);
		} else {
			snprintf(why, sizeof(why), "libpfm.so.4 cannot be loaded: %s", dlerror());
			cap(caps, "libpfm4", "unavailable", NULL, why,
			    "install libpfm4 (Debian: apt-get install libpfm4) for pfm:NAME events; r<hex> and pmu/.../ selectors need none");
		}
		if (h)
			dlclose(h);
	}
	snprintf(v, sizeof(v), "elfutils %s (DW_AT_producer of images; symbolization comes with sampling)",
		 dwfl_version(NULL));
	cap(caps, "libdw", "ok", v, NULL, NULL);
	snprintf(v, sizeof(v), "euid %d%s%s%s", (int)geteuid(), has_cap(eff, 38) ? ", CAP_PERFMON" : "",
		 has_cap(eff, 39) ? ", CAP_BPF" : "", has_cap(eff, 19) ? ", CAP_SYS_PTRACE" : "");
	cap(caps, "privileges", "ok", v, NULL, NULL);
	return 0;
}

int pmu_backend_settings(json_t *st)
{
	static const struct {
		const char *name, *path, *reason, *remedy;
	} t[] = {
		{ "cpufreq-governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
		  "no cpufreq driver exposes a governor (virtual machine?)", "none: the host controls CPU frequency" },
		{ "smt-active", "/sys/devices/system/cpu/smt/active", "the kernel does not report SMT state",
		  "none: a kernel without SMT control" },
		{ "turbo-disabled", "/sys/devices/system/cpu/intel_pstate/no_turbo",
		  "no intel_pstate driver reports turbo state", "none: the frequency driver does not expose it" },
		{ "clocksource", "/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  "the kernel does not report its clocksource", "none" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		char *s = line_of(t[i].path);

		if (s)
			cap(st, t[i].name, "ok", s, NULL, NULL);
		else
			cap(st, t[i].name, "unavailable", NULL, t[i].reason, t[i].remedy);
		free(s);
	}
	return 0;
}
