/*
 * The capabilities the eBPF collectors and follower need (caps.h): read
 * once per question with capget(2), the one place that reads them.
 */
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/caps.h"

uint64_t pmu_caps_effective(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &hdr, d))
		return geteuid() == 0 ? UINT64_MAX : 0;
	return d[0].effective | (uint64_t)d[1].effective << 32;
}

bool pmu_caps_bpf(void)
{
	uint64_t eff = pmu_caps_effective();

	return (eff & PMU_CAP_SYS_ADMIN) || ((eff & PMU_CAP_PERFMON) && (eff & PMU_CAP_BPF));
}
