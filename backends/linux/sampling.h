#ifndef PMU_LINUX_SAMPLING_H
#define PMU_LINUX_SAMPLING_H

/*
 * The sampling collector's options (pmurec -F, --period, --call-graph,
 * --sample-event, --sample-ring-kb, --allow-loss, --retain-binaries),
 * given through struct pmu_run_config.sampling (backends/collector.h).
 */
#include <stdbool.h>
#include <stdint.h>

enum pmu_call_graph { PMU_CG_DEFAULT = -1, PMU_CG_NONE = 0, PMU_CG_FP = 1, PMU_CG_DWARF = 2 };
enum pmu_retain_what { PMU_RETAIN_NONE, PMU_RETAIN_SAMPLED, PMU_RETAIN_ALL };

struct pmu_sampling_opts {
	unsigned freq_hz;               /* -F; 0: the mode's default (light 99, full 999) unless period */
	uint64_t period;                /* --period; 0: by frequency */
	int call_graph;                 /* enum pmu_call_graph */
	unsigned stack_bytes;           /* dwarf: user stack bytes per sample (0: 8192) */
	const char *event;              /* --sample-event; NULL: cycles or cpu-clock */
	unsigned ring_kb;               /* --sample-ring-kb; 0: from perf_event_mlock_kb */
	bool allow_loss;                /* --allow-loss */
	int retain;                     /* enum pmu_retain_what */
};

#endif
