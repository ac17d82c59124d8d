#include <string.h>

#include "spec.h"
#include "util.h"

/*
 * Status vocabulary shared by every collector, capability and field
 * (bundle-spec/README.md, "Status").
 */
const char *const pmu_status_values[] = { "ok", "not-requested", "unavailable", "no-events",
					  "failed", NULL };
const char *const pmu_unit_values[] = { "ns", "count", "bytes", "id", "ppm", "hz", NULL };

static const char *const modes[] = { "none", "light", "full", NULL };
static const char *const results[] = { "complete", "truncated", "interrupted", "invalid", NULL };
static const char *const exit_kinds[] = { "exited", "signaled", "not-started", "unknown", NULL };
static const char *const lc_events[] = { "requested", "probed", "opened", "attached", "drop",
					 "malformed", "stopped", "detached", "final", NULL };
static const char *const phases[] = { "i", "B", "E", NULL };
static const char *const image_roles[] = { "exec", "object", NULL };
static const char *const ev_kinds[] = { "software", "hardware", "raw", "pmu", "pfm", NULL };
static const char *const ev_units[] = { "ns", "count", NULL };
static const char *const scopes_req[] = { "auto", "inherit", "cgroup", NULL };
static const char *const scopes_used[] = { "inherit", "cgroup", NULL };
static const char *const cohort_scopes[] = { "incarnations", "cgroup", NULL };
static const char *const stat_scopes[] = { "cgroup", "system", NULL };
static const char *const end_exits[] = { "exited", "signaled", "unknown", NULL };
static const char *const campaign_kinds[] = { "modes", "variants", NULL };
static const char *const system_scope[] = { "system", NULL };
/* how per-incarnation counts were counted (19.3): the ptrace follower's
 * per-thread counters, or the eBPF follower's per-CPU counters charged at
 * each context switch */
static const char *const count_methods[] = { "per-thread", "per-cpu-switch", NULL };
/* the nine resource totals of spec 12.5, in their order */
const char *const pmu_resource_fields[] = { "cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults",
					    "major_faults", "voluntary_switches", "involuntary_switches",
					    "read_bytes", "write_bytes", NULL };

#define F(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc }
#define N(k, req, unit, doc) { k, PMU_FT_INT, req, unit, NULL, NULL, doc }
#define NA(k, req, unit, doc) { k, PMU_FT_ARR_INT, req, unit, NULL, NULL, doc }
#define O(k, t, req, sub, doc) { k, PMU_FT_##t, req, NULL, &sub, NULL, doc }
#define E(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc }
#define STATUS(req) E("status", req, pmu_status_values, "ok, not-requested, unavailable, no-events or failed")
/* fields added in spec 1.1 */
#define F11(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc, 1 }
#define N11(k, req, unit, doc) { k, PMU_FT_INT, req, unit, NULL, NULL, doc, 1 }
#define O11(k, t, req, sub, doc) { k, PMU_FT_##t, req, NULL, &sub, NULL, doc, 1 }
#define E11(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc, 1 }
/* fields added in spec 1.4 */
#define F14(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc, 4 }
/* fields added in spec 1.2 */
#define F12(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc, 2 }
#define N12(k, req, unit, doc) { k, PMU_FT_INT, req, unit, NULL, NULL, doc, 2 }
#define E12(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc, 2 }
#define STATUS12(req) E12("status", req, pmu_status_values, "ok, not-requested, unavailable, no-events or failed")
/* fields added in spec 1.4 */
#define F14(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc, 4 }
#define N14(k, req, unit, doc) { k, PMU_FT_INT, req, unit, NULL, NULL, doc, 4 }
#define E14(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc, 4 }
/* fields added in spec 1.5 */
#define E15(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc, 5 }
/* fields added in spec 1.6 */
#define F16(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc, 6 }
#define N16(k, req, unit, doc) { k, PMU_FT_INT, req, unit, NULL, NULL, doc, 6 }
#define E16(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc, 6 }
/* fields added in spec 1.7 */
#define F17(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc, 7 }
#define N17(k, req, unit, doc) { k, PMU_FT_INT, req, unit, NULL, NULL, doc, 7 }
#define E17(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc, 7 }
/* fields added in spec 1.8 */
#define F18(k, t, req, doc) { k, PMU_FT_##t, req, NULL, NULL, NULL, doc, 8 }
#define N18(k, req, unit, doc) { k, PMU_FT_INT, req, unit, NULL, NULL, doc, 8 }
#define E18(k, req, ev, doc) { k, PMU_FT_ENUM, req, NULL, NULL, ev, doc, 8 }
#define OBJ(name, arr) static const struct pmu_objdef name = { #name, arr, PMU_ARRAY_SIZE(arr) }
#define DOCHEAD F("spec", STR, true, "spec version, \"" PMU_SPEC_VERSION "\""), \
		F("type", STR, true, "document type"), \
		F("units", UNITS, true, "unit of every numeric field name the document type defines")

static const struct pmu_field tool_f[] = {
	F("name", STR, true, "program name"),
	F("version", STR, true, "program version"),
};
OBJ(tool, tool_f);

static const struct pmu_field exit_f[] = {
	E("kind", true, exit_kinds, "how the process ended"),
	N("code", false, "id", "exit code, when kind is exited"),
	N("signal", false, "id", "terminating signal number, when kind is signaled"),
};
OBJ(exit_info, exit_f);

static const struct pmu_field collector_ref_f[] = {
	F("name", STR, true, "collector name; its files are under data/collectors/<name>/"),
	F("requested", BOOL, true, "whether this run asked for the collector"),
};
OBJ(collector_ref, collector_ref_f);

static const struct pmu_field campaign_f[] = {
	F("id", STR, true, "campaign id, the same in every bundle of the campaign"),
	F("modes", ARR_STR, true, "the modes of the campaign, in the order they were interleaved (variants: the mode "
	  "of each variant)"),
	N("position", true, "id", "0-based place of this run in the campaign's run order"),
	E14("kind", false, campaign_kinds, "modes (pmurec --ab: one command in several modes) or variants (pmurec "
	    "--variants: several commands in one mode); absent: modes"),
	F14("variants", ARR_STR, false, "the variants' names, in the order they were interleaved; present exactly when "
	    "kind is variants"),
	F14("variant", STR, false, "this bundle's variant, one of variants; present exactly when kind is variants"),
};
OBJ(campaign, campaign_f);

/*
 * The host's CPU time over one repetition (spec 1.4).  Host-wide, scope
 * system: it includes the cohort's own CPU time and is never the cohort's.
 */
static const struct pmu_field host_load_f[] = {
	E14("scope", true, system_scope, "system: the whole host, the cohort included; never the cohort's own"),
	E14("status", true, pmu_status_values, "ok, or unavailable with reason and remedy (the validator refuses the "
	    "vocabulary's other values here)"),
	F14("reason", STR, false, "why it is unavailable"),
	F14("remedy", STR, false, "how to make it available"),
	F14("source", STR, false, "where it was read (Linux: /proc/stat, its aggregate cpu line); present when ok"),
	N14("interval_ns", false, "ns", "time between the two reads, inside the run's window; present when ok"),
	N14("cpus", false, "count", "CPUs the times are summed over; present when ok"),
	N14("resolution_ns", false, "ns", "the source's resolution, one clock tick; present when ok"),
	N14("busy_ns", false, "ns", "CPU time of the whole host not idle, iowait or steal (user, nice, system, irq, "
	    "softirq; guest time is inside user), summed over the CPUs; present when ok"),
	N14("steal_ns", false, "ns", "time the hypervisor ran something else while a CPU wanted to run, summed over "
	    "the CPUs; present when ok"),
	N14("idle_ns", false, "ns", "idle time, summed over the CPUs; present when ok"),
	N14("iowait_ns", false, "ns", "idle time with I/O outstanding, summed over the CPUs (proc(5): not reliable); "
	    "present when ok"),
	N14("recorder_cpu_ns", false, "ns", "the recorder's own CPU time (user + system of all its threads, "
	    "getrusage RUSAGE_SELF) over the same interval: part of busy_ns, and not the cohort's; present when ok"),
};
OBJ(host_load, host_load_f);

static const struct pmu_field command_rusage_f[] = {
	N12("cpu_user_ns", true, "ns", "user CPU time"),
	N12("cpu_system_ns", true, "ns", "system CPU time"),
	N12("max_rss_bytes", true, "bytes", "largest resident set size of the command or a descendant it waited for"),
	N12("minor_faults", true, "count", "minor page faults"),
	N12("major_faults", true, "count", "major page faults"),
	F12("source", STR, true, "where the totals come from"),
};
OBJ(command_rusage, command_rusage_f);

static const struct pmu_field run_f[] = {
	DOCHEAD,
	F("run_id", STR, true, "unique id of this run"),
	O("tool", OBJ, true, tool, "the recorder that wrote the bundle"),
	E("mode", true, modes, "recording mode"),
	F("argv", ARR_STR, true, "the command as given"),
	F("cwd", STR, true, "working directory of the command"),
	N("start_ns", true, "ns", "CLOCK_MONOTONIC at the start of the run window"),
	N("end_ns", true, "ns", "CLOCK_MONOTONIC at the end of the run window"),
	N("realtime_anchor_ns", true, "ns", "CLOCK_REALTIME read together with monotonic_anchor_ns"),
	N("monotonic_anchor_ns", true, "ns", "CLOCK_MONOTONIC read together with realtime_anchor_ns"),
	O("exit", OBJ, true, exit_info, "how the command ended"),
	E("result", true, results, "complete, truncated, interrupted or invalid"),
	F("result_reason", STR, false, "why the result is not complete"),
	F("tolerate_loss", BOOL, true, "the user asked to accept lost records"),
	O("collectors", ARR_OBJ, true, collector_ref, "every collector known to the recorder"),
	N11("seed", false, "id", "the --seed given, exported to the command as PMUREC_SEED"),
	N11("repeat", false, "count", "number of recorded repetitions; present in data/run.json of a bundle with repetitions"),
	N11("repetition", false, "id", "1-based number of this repetition, when the bundle has repetitions"),
	N11("warmup", false, "count", "unrecorded warm-up runs made before the first repetition"),
	O11("campaign", OBJ, false, campaign, "the A/B campaign this run belongs to (pmurec --ab)"),
	{ "command_rusage", PMU_FT_OBJ, false, NULL, &command_rusage, NULL,
	  "wait4(2) totals of the launched command, including the descendants it waited for: the same source in "
	  "every mode (absent when attached)", 2 },
	{ "host_load", PMU_FT_OBJ, true, NULL, &host_load, NULL,
	  "the host's CPU time during this repetition, from its start_ns to its end_ns: busy, steal, idle and iowait "
	  "(scope system, never the cohort's)", 4 },
};
OBJ(run, run_f);

static const struct pmu_field host_f[] = {
	F("os", STR, true, "operating system"),
	F("arch", STR, true, "machine architecture"),
	F("kernel", STR, true, "kernel release"),
	F("cpu", STR, false, "CPU model"),
};
OBJ(host, host_f);

static const struct pmu_field capability_f[] = {
	F("name", STR, true, "capability name"),
	STATUS(true),
	F("value", STR, false, "what was read, as text"),
	F("reason", STR, false, "why it is not ok (required for unavailable and failed)"),
	F("remedy", STR, false, "how to make it available (required for unavailable)"),
};
OBJ(capability, capability_f);

static const struct pmu_field capabilities_f[] = {
	DOCHEAD,
	O("host", OBJ, true, host, "the host that recorded"),
	O("capabilities", ARR_OBJ, true, capability, "what the host can measure, and why not"),
};
OBJ(capabilities, capabilities_f);

static const struct pmu_field image_f[] = {
	F("path", STR, true, "path of the executable or shared object"),
	STATUS(true),
	N("size_bytes", false, "bytes", "file size"),
	F("sha256", HEX64, false, "SHA-256 of the file"),
	F("build_id", STR, false, "GNU build-id, hex"),
	E11("role", false, image_roles, "exec (an executed image) or object (a mapped executable object)"),
	F11("comment", STR, false, "compilers named in the ELF .comment section"),
	F11("producer", STR, false, "DW_AT_producer of the image's debug info (compiler and flags), where it exists"),
	F("reason", STR, false, "why the image could not be described"),
	F("remedy", STR, false, "how to fix it"),
};
OBJ(image, image_f);

static const struct pmu_field prov_tool_f[] = {
	F("name", STR, true, "program name"),
	F("version", STR, true, "program version"),
	F("revision", STR, true, "source revision"),
	F("build_flags", STR, false, "compiler flags of the build"),
};
OBJ(prov_tool, prov_tool_f);

static const struct pmu_field provenance_f[] = {
	DOCHEAD,
	O("tool", OBJ, true, prov_tool, "the recorder"),
	F("config_hash", HEX64, true, "SHA-256 of the canonical recording configuration"),
	O("images", ARR_OBJ, true, image, "executed images and loaded objects"),
	F("environment", MAP_STR, true, "recorded environment variables (none unless allowed)"),
	O11("settings", ARR_OBJ, false, capability, "host settings that bear on timing: governor, SMT, turbo, clocksource"),
	/* 1.3: the image list is bounded, so the document is small by construction;
	 * a sentence, not a number, so the units map of 1.3 stays as it is */
	{ "images_note", PMU_FT_STR, false, NULL, NULL, NULL,
	  "present when images were left out of the bounded list: how many, and the bound (since 1.3)", 3 },
};
OBJ(provenance, provenance_f);

static const struct pmu_field exec_f[] = {
	N("t_ns", true, "ns", "CLOCK_MONOTONIC of the exec"),
	F("path", STR, true, "executed image"),
};
OBJ(exec_rec, exec_f);

static const struct pmu_field resource_status_f[] = {
	STATUS(true),
	F("source", STR, false, "where the value was read"),
	F("reason", STR, false, "why it is not ok (required for unavailable and failed)"),
	F("remedy", STR, false, "how to get it (required for unavailable)"),
};
OBJ(resource_status, resource_status_f);

/* Per-incarnation totals: a value is present exactly when fields.<name>
 * says ok (FIELD-STATUS). */
static const struct pmu_field resources_f[] = {
	N11("cpu_user_ns", false, "ns", "user CPU time"),
	N11("cpu_system_ns", false, "ns", "system CPU time"),
	N11("max_rss_bytes", false, "bytes", "peak resident set size"),
	N11("minor_faults", false, "count", "minor page faults"),
	N11("major_faults", false, "count", "major page faults"),
	N11("voluntary_switches", false, "count", "voluntary context switches"),
	N11("involuntary_switches", false, "count", "involuntary context switches"),
	N11("read_bytes", false, "bytes", "bytes read through read-like system calls"),
	N11("write_bytes", false, "bytes", "bytes written through write-like system calls"),
	O11("fields", MAP_OBJ, true, resource_status, "status and source of each total above, by name"),
};
OBJ(resources, resources_f);

static const struct pmu_field incarnation_f[] = {
	F("id", STR, true, "incarnation id, unique in the bundle"),
	N("pid", true, "id", "process id"),
	N("start_ns", true, "ns", "CLOCK_MONOTONIC at fork (or first sight)"),
	N("end_ns", false, "ns", "CLOCK_MONOTONIC at exit; absent when alive at the end"),
	F("parent", STR, false, "parent incarnation id; absent for the root"),
	F("preexisting", BOOL, true, "existed before the recorder attached"),
	F("comm", STR, true, "command name"),
	NA("tids", true, "id", "thread ids of the incarnation"),
	O("exec", ARR_OBJ, true, exec_rec, "exec chain, in order"),
	O("exit", OBJ, true, exit_info, "how it ended"),
	O11("resources", OBJ, false, resources, "resource totals, each with its status and source"),
};
OBJ(incarnation, incarnation_f);

static const struct pmu_field cohort_f[] = {
	DOCHEAD,
	F("root", STR, true, "id of the root incarnation"),
	O("incarnations", ARR_OBJ, true, incarnation, "every process incarnation of the cohort"),
};
OBJ(cohort, cohort_f);

const struct pmu_docdef pmu_docs[] = {
	{ "run.json", "run", &run, true, true },
	{ "capabilities.json", "capabilities", &capabilities, true, false },
	{ "provenance.json", "provenance", &provenance, true, false },
	/* up to 1.2; spec 1.3 has the cohort stream instead */
	{ "cohort.json", "cohort", &cohort, true, true, 2 },
};
const size_t pmu_ndocs = PMU_ARRAY_SIZE(pmu_docs);

/* ---- streams ------------------------------------------------------------ */

static const struct pmu_field header_f[] = {
	F("type", STR, true, "\"header\""),
	F("spec", STR, true, "spec version"),
	F("stream", STR, true, "stream kind"),
	F("units", UNITS, true, "unit of every numeric field name of the stream's records"),
};
OBJ(header, header_f);

static const char *const span_vias[] = { "ctl", "usdt", NULL };

static const struct pmu_field span_f[] = {
	F("type", STR, true, "\"span\""),
	F("id", STR, true, "span id, unique in the bundle"),
	F("parent", STR, false, "parent span id"),
	F("inc", STR, true, "incarnation id"),
	N("tid", true, "id", "thread that began the span"),
	F("name", STR, true, "span name"),
	N("begin_ns", true, "ns", "CLOCK_MONOTONIC at begin"),
	N("end_ns", true, "ns", "CLOCK_MONOTONIC at end; records are ordered by it"),
	E18("via", false, span_vias, "the path that delivered it: ctl (the control channel, PMUREC_CTL_FD); spans the probes collector saw through USDT probes are in its stream (section 24)"),
};
OBJ(span, span_f);

static const struct pmu_field lifecycle_f[] = {
	F("type", STR, true, "\"lifecycle\""),
	N("t_ns", true, "ns", "CLOCK_MONOTONIC"),
	E("event", true, lc_events, "lifecycle step"),
	STATUS(false),
	F("reason", STR, false, "why (required with unavailable and failed)"),
	F("remedy", STR, false, "how to fix it (required with unavailable)"),
	F("evidence", STR, false, "what proves the collector attached (required on attached)"),
	N("count", false, "count", "records dropped or malformed (drop, malformed)"),
};
OBJ(lifecycle, lifecycle_f);

static const struct pmu_field event_f[] = {
	F("type", STR, true, "\"event\""),
	N("t_ns", true, "ns", "CLOCK_MONOTONIC"),
	F("inc", STR, true, "incarnation id"),
	N("pid", true, "id", "process id"),
	N("tid", true, "id", "thread id"),
	F("name", STR, true, "event name"),
	E("ph", true, phases, "i (instant), B (enter) or E (exit)"),
	N("value", false, "count", "value carried by the event"),
};
OBJ(event, event_f);

static const struct pmu_field loss_f[] = {
	F("type", STR, true, "\"loss\""),
	N("t_ns", true, "ns", "CLOCK_MONOTONIC"),
	N("lost", true, "count", "records lost"),
	F("reason", STR, false, "why"),
};
OBJ(loss, loss_f);

static const struct pmu_field malformed_f[] = {
	F("type", STR, true, "\"malformed\""),
	N("t_ns", true, "ns", "CLOCK_MONOTONIC"),
	F("reason", STR, true, "what was wrong"),
	N("bytes", false, "bytes", "size of the malformed input"),
};
OBJ(malformed, malformed_f);

static const struct pmu_field truncation_f[] = {
	F("type", STR, true, "\"truncation\""),
	N("t_ns", true, "ns", "CLOCK_MONOTONIC"),
	F("reason", STR, true, "why the stream ends early"),
};
OBJ(truncation, truncation_f);

static const struct pmu_field mark_f[] = {
	F("type", STR, true, "\"mark\""),
	N("t_ns", true, "ns", "CLOCK_MONOTONIC of the mark; records are ordered by it"),
	F("inc", STR, true, "incarnation id"),
	N("tid", true, "id", "thread that made the mark"),
	F("name", STR, true, "mark name"),
};
OBJ(mark, mark_f);

/* ---- counts (spec 1.2): the counting collector ---------------------------- */

static const struct pmu_field scope_f[] = {
	F12("type", STR, true, "\"scope\""),
	E12("requested", true, scopes_req, "the cohort scope asked for: auto, inherit or cgroup"),
	E12("used", true, scopes_used, "the scope in effect: cgroup, or inherit (the followed process tree)"),
	STATUS12(true),
	F12("cgroup", STR, false, "the cohort's leaf cgroup, when used"),
	F12("controllers", STR, false, "cgroup controllers enabled for the leaf"),
	F12("note", STR, false, "what the cgroup could not have, and why"),
	F12("reason", STR, false, "why the cgroup scope is unavailable"),
	F12("remedy", STR, false, "how to get it"),
};
OBJ(scope_rec, scope_f);

static const struct pmu_field counter_f[] = {
	F12("type", STR, true, "\"counter\""),
	F12("name", STR, true, "counter name, unique in the stream; count records refer to it"),
	F12("given", STR, true, "the event as the user wrote it (or the default set's name)"),
	E12("kind", true, ev_kinds, "software, hardware, raw, pmu (sysfs PMU terms) or pfm (libpfm4)"),
	E12("unit", true, ev_units, "ns: values are in value_ns/raw_ns; count: in value/raw"),
	N12("perf_type", true, "id", "perf_event_attr.type"),
	F12("config", STR, true, "perf_event_attr.config, 0x-prefixed hex"),
	F12("config1", STR, false, "perf_event_attr.config1, when not 0"),
	F12("config2", STR, false, "perf_event_attr.config2, when not 0"),
	F12("exclude_user", BOOL, true, "user mode not counted"),
	F12("exclude_kernel", BOOL, true, "kernel mode not counted"),
	F12("exclude_hv", BOOL, true, "hypervisor not counted"),
	N12("group", false, "id", "the counter group it was read in, when ok"),
	STATUS12(true),
	F12("reason", STR, false, "why it is not counted"),
	F12("remedy", STR, false, "how to count it"),
	F12("note", STR, false, "how the name was resolved"),
};
OBJ(counter, counter_f);

static const struct pmu_field fallback_f[] = {
	F12("type", STR, true, "\"fallback\""),
	N12("t_ns", true, "ns", "CLOCK_MONOTONIC of the probe"),
	F12("what", STR, true, "the feature given up"),
	F12("reason", STR, true, "why, and what is counted instead"),
	F12("counter", STR, false, "the counter concerned, when only one"),
};
OBJ(fallback, fallback_f);

static const struct pmu_field count_f[] = {
	F12("type", STR, true, "\"count\""),
	N12("t_ns", true, "ns", "CLOCK_MONOTONIC of the read (the thread's end)"),
	F12("inc", STR, true, "incarnation id"),
	N12("tid", true, "id", "thread id"),
	F12("counter", STR, true, "counter name"),
	E15("method", true, count_methods, "how the thread was counted: per-thread (its own counters, opened before "
		"it ran) or per-cpu-switch (per-CPU counters, each slice charged at the context switch)"),
	STATUS12(true),
	N12("value", false, "count", "the value of a count-unit counter, when ok (an estimate when estimate is true)"),
	N12("value_ns", false, "ns", "the value of an ns-unit counter, when ok"),
	F12("estimate", BOOL, false, "the value is scaled from a multiplexed count (raw * enabled / running); with ok"),
	N12("running_ppm", false, "ppm", "running / enabled time in parts per million; with ok"),
	F12("suspect_zero", BOOL, false, "a hardware counter read 0 while it ran for 1 ms or more"),
	N12("raw", false, "count", "the kernel's count of a count-unit counter, when it ran"),
	N12("raw_ns", false, "ns", "the kernel's count of an ns-unit counter, when it ran"),
	N12("enabled_ns", false, "ns", "time the counter was enabled"),
	N12("running_ns", false, "ns", "time the counter was on the PMU"),
	N12("lost", false, "count", "the kernel's lost count (read_format LOST)"),
	F12("reason", STR, false, "why there is no value"),
	F12("remedy", STR, false, "how to get one"),
};
OBJ(count_rec, count_f);

/* The members after "value" of a sum (a total, the cohort's): its ns form,
 * and how its parts make it an estimate, a suspect zero or no value. */
#define SUM_VALUE_TAIL                                                                      \
	N12("value_ns", false, "ns", "the same, for an ns-unit counter"),                   \
	F12("estimate", BOOL, false, "some part is an estimate"),                           \
	N12("running_ppm", false, "ppm", "the smallest running fraction of the parts"),     \
	F12("suspect_zero", BOOL, false, "0, and some part is a suspect zero"),             \
	F12("reason", STR, false, "why there is no value"),                                 \
	F12("remedy", STR, false, "how to get one")

static const struct pmu_field total_f[] = {
	F12("type", STR, true, "\"total\""),
	N12("t_ns", true, "ns", "CLOCK_MONOTONIC: the incarnation's end, or its last read"),
	F12("inc", STR, true, "incarnation id"),
	F12("counter", STR, true, "counter name"),
	N12("threads", true, "count", "count records summed"),
	E15("method", true, count_methods, "the method of the counts summed"),
	STATUS12(true),
	N12("value", false, "count", "sum of the incarnation's count values, when every one is ok"),
	SUM_VALUE_TAIL,
};
OBJ(total_rec, total_f);

static const struct pmu_field cohort_total_f[] = {
	F12("type", STR, true, "\"cohort\""),
	N12("t_ns", true, "ns", "CLOCK_MONOTONIC at the end of the recording"),
	F12("counter", STR, true, "counter name"),
	E12("scope", true, cohort_scopes, "incarnations: the sum of the totals; cgroup: the cohort cgroup's own count"),
	N12("parts", false, "count", "totals (or CPUs) summed"),
	E15("method", false, count_methods, "scope incarnations: the method of the totals summed (absent for cgroup)"),
	STATUS12(true),
	N12("value", false, "count", "the cohort's value, when ok"),
	SUM_VALUE_TAIL,
};
OBJ(cohort_total, cohort_total_f);

static const struct pmu_field cgstat_f[] = {
	F12("type", STR, true, "\"cgstat\""),
	N12("t_ns", true, "ns", "CLOCK_MONOTONIC at the end of the recording"),
	E12("scope", true, stat_scopes, "cgroup: the cohort's leaf; system: the whole host, a diagnostic never "
		"to be shown as the cohort's"),
	F12("file", STR, true, "the file read, e.g. cpu.stat, io.stat, memory.pressure"),
	F12("key", STR, true, "the key, in the bundle's units: e.g. usage_ns (the kernel's usage_usec), rbytes, "
		"some_total_ns; \"-\" on the record of a file that could not be read"),
	STATUS12(true),
	N12("value", false, "count", "change over the recording of a count, or the end value of a count gauge"),
	N12("value_ns", false, "ns", "change over the recording of a time"),
	N12("value_bytes", false, "bytes", "change over the recording of a byte count, or the end value of a gauge"),
	F12("gauge", BOOL, false, "the value is a level at the end, not a change"),
	F12("reason", STR, false, "why there is no value"),
	F12("remedy", STR, false, "how to get one"),
};
OBJ(cgstat, cgstat_f);

static const struct pmu_recdef counts_recs[] = {
	{ "scope", &scope_rec, 2 }, { "counter", &counter, 2 }, { "fallback", &fallback, 2 },
	{ "count", &count_rec, 2 }, { "total", &total_rec, 2 }, { "cohort", &cohort_total, 2 },
	{ "cgstat", &cgstat, 2 },
};

/* ---- cohort (spec 1.3): the cohort as a stream ----------------------------
 * One incarnation is an incarnation record when it joins, thread, exec and
 * resource records, and its end record last (bundle-spec/README.md 12.6). */

static const struct pmu_field c_incarnation_f[] = {
	F("type", STR, true, "\"incarnation\""),
	F("id", STR, true, "incarnation id, unique in the repetition"),
	N("pid", true, "id", "process id"),
	N("start_ns", true, "ns", "CLOCK_MONOTONIC at fork (or first sight)"),
	F("preexisting", BOOL, true, "existed before the recorder attached"),
	F("parent", STR, false, "parent incarnation id, of an earlier incarnation record; absent for the root only"),
};
OBJ(c_incarnation, c_incarnation_f);

static const struct pmu_field c_thread_f[] = {
	F("type", STR, true, "\"thread\""),
	F("inc", STR, true, "incarnation id"),
	N("tid", true, "id", "thread id; the main thread (tid == pid) included"),
};
OBJ(c_thread, c_thread_f);

static const struct pmu_field c_exec_f[] = {
	F("type", STR, true, "\"exec\""),
	F("inc", STR, true, "incarnation id"),
	N("t_ns", true, "ns", "CLOCK_MONOTONIC of the exec"),
	F("path", STR, true, "executed image"),
	F14("argv", ARGV, false,
	    "the argv of the exec as the kernel had it (invalid UTF-8 as U+FFFD), at most " PMU_XSTR(PMU_ARGV_MAX_ARGS)
	    " strings and " PMU_XSTR(PMU_ARGV_MAX_BYTES) " bytes counting each string's NUL; exactly one of argv "
	    "and argv_reason"),
	F14("argv_truncated", BOOL, false,
	    "true, present only when argv is cut at the bound or at the follower's capture (its last string may be cut "
	    "short)"),
	F14("argv_reason", STR, false, "why the argv could not be read, instead of argv"),
};
OBJ(c_exec, c_exec_f);

static const struct pmu_field c_resource_f[] = {
	F("type", STR, true, "\"resource\""),
	F("inc", STR, true, "incarnation id"),
	E("field", true, pmu_resource_fields, "the total: one of the nine of spec 12.5"),
	STATUS(true),
	F("source", STR, false, "where the value was read"),
	N("cpu_user_ns", false, "ns", "user CPU time, when field is cpu_user_ns and status ok"),
	N("cpu_system_ns", false, "ns", "system CPU time, when field is cpu_system_ns and status ok"),
	N("max_rss_bytes", false, "bytes", "peak resident set size, when field is max_rss_bytes and status ok"),
	N("minor_faults", false, "count", "minor page faults, when field is minor_faults and status ok"),
	N("major_faults", false, "count", "major page faults, when field is major_faults and status ok"),
	N("voluntary_switches", false, "count", "voluntary context switches, when field is voluntary_switches and status ok"),
	N("involuntary_switches", false, "count", "involuntary context switches, when field is involuntary_switches and status ok"),
	N("read_bytes", false, "bytes", "bytes read through read-like system calls, when field is read_bytes and status ok"),
	N("write_bytes", false, "bytes", "bytes written through write-like system calls, when field is write_bytes and status ok"),
	F("reason", STR, false, "why it is not ok (required for unavailable and failed)"),
	F("remedy", STR, false, "how to get it (required for unavailable)"),
};
OBJ(c_resource, c_resource_f);

static const struct pmu_field c_end_f[] = {
	F("type", STR, true, "\"end\""),
	F("inc", STR, true, "incarnation id"),
	N("end_ns", false, "ns", "CLOCK_MONOTONIC at exit; absent when alive at the end of the run"),
	F("comm", STR, true, "final command name (\"?\" when unknown)"),
	E("exit", true, end_exits, "exited (with code), signaled (with signal) or unknown (neither)"),
	N("code", false, "id", "exit code, when exit is exited"),
	N("signal", false, "id", "terminating signal number, when exit is signaled"),
};
OBJ(c_end, c_end_f);

static const struct pmu_recdef cohort_recs[] = {
	{ "incarnation", &c_incarnation, 3 }, { "thread", &c_thread, 3 }, { "exec", &c_exec, 3 },
	{ "resource", &c_resource, 3 }, { "end", &c_end, 3 },
};


/* ---- samples and maps (spec 1.6): the sampling collector (section 22) ------ */

static const char *const call_graphs[] = { "none", "fp", "dwarf", NULL };
static const char *const clocks[] = { "monotonic", NULL };
static const char *const kernel_modes[] = { "sampled", "excluded", NULL };
static const char *const loss_whats[] = { "records", "samples", NULL };
static const char *const throttle_whats[] = { "throttle", "unthrottle", NULL };
static const char *const kallsyms_st[] = { "recorded", "unreadable", "not-needed", "not-requested", NULL };
static const char *const map_origins[] = { "proc-maps", "mmap2", NULL };
static const char *const bid_sources[] = { "mmap2", "file", "memory", NULL };
static const char *const retained_kinds[] = { "binary", "debug", "debug-alt", "vdso", "jit-map", NULL };

static const struct pmu_field s_config_f[] = {
	F16("type", STR, true, "\"config\""),
	F16("event", STR, true, "the event sampled on: cycles, cpu-clock, or the one --sample-event named"),
	F16("event_reason", STR, true, "why this event"),
	N16("freq_hz", false, "hz", "samples per second asked for (-F); absent with period"),
	N16("period", false, "count", "events per sample (--period); absent with freq_hz"),
	E16("call_graph", true, call_graphs, "call chains: none, fp (frame pointers) or dwarf (user registers and stack copies)"),
	N16("stack_bytes", false, "bytes", "user stack bytes copied per sample, with call_graph dwarf"),
	F16("regs_mask", STR, false, "sample_regs_user as 0x-prefixed hex, with call_graph dwarf"),
	F16("arch", STR, true, "the machine's architecture as uname -m names it (x86_64, aarch64)"),
	N16("max_stack", true, "count", "kernel.perf_event_max_stack: a chain of this many frames may be cut"),
	N16("ring_bytes", true, "bytes", "data area of each CPU's ring buffer"),
	F16("ring_reason", STR, true, "how the ring size was chosen (perf_event_mlock_kb, CPUs, --sample-ring-kb)"),
	N16("ncpus", true, "count", "CPUs with an event and a ring (one each)"),
	E16("scope", true, scopes_used, "inherit (the root's event, inherited per CPU) or cgroup (the cohort's cgroup per CPU)"),
	F16("scope_reason", STR, false, "why this scope"),
	E16("kernel", true, kernel_modes, "whether kernel code is sampled"),
	F16("kernel_reason", STR, false, "why kernel code is excluded"),
	N16("max_sample_rate_hz", true, "hz", "kernel.perf_event_max_sample_rate at the start"),
	E16("clock", true, clocks, "the clock of t_ns: monotonic"),
};
OBJ(s_config, s_config_f);

static const struct pmu_field s_sample_f[] = {
	F16("type", STR, true, "\"sample\""),
	N16("t_ns", true, "ns", "when the sample was taken"),
	F16("inc", STR, true, "incarnation id"),
	N16("pid", true, "id", "process id"),
	N16("tid", true, "id", "thread id"),
	N16("cpu", true, "id", "the CPU it was taken on"),
	F16("ip", STR, true, "instruction pointer, 0x-prefixed lowercase hex"),
	F16("kernel_ip", BOOL, true, "the ip is in the kernel"),
	N16("period", false, "count", "events since the previous sample (absent when the period is fixed)"),
	F16("chain", STR, false, "call chain, innermost first: 0x-prefixed hex addresses separated by one space, the kernel's context markers removed; the first kframes are kernel addresses"),
	N16("kframes", false, "count", "how many of chain's first addresses are kernel addresses"),
	F16("chain_cut", BOOL, false, "true: the chain reached max_stack and is cut"),
	F16("regs", STR, false, "user registers in regs_mask order, 0x-prefixed hex separated by one space (call_graph dwarf)"),
	F16("stack", STR, false, "the user stack copy from the stack pointer up, base64 (call_graph dwarf)"),
	F16("user_abi", STR, false, "with regs: the sampled thread's ABI: 64 or 32"),
};
OBJ(s_sample, s_sample_f);

static const struct pmu_field s_loss_f[] = {
	F16("type", STR, true, "\"loss\""),
	N16("t_ns", true, "ns", "when the loss was reported"),
	N16("cpu", true, "id", "the CPU whose ring lost"),
	N16("lost", true, "count", "how many were lost"),
	E16("what", true, loss_whats, "records (PERF_RECORD_LOST: the ring was full) or samples (PERF_RECORD_LOST_SAMPLES)"),
};
OBJ(s_loss, s_loss_f);

static const struct pmu_field s_throttle_f[] = {
	F16("type", STR, true, "\"throttle\""),
	N16("t_ns", true, "ns", "when"),
	N16("cpu", true, "id", "the CPU"),
	E16("what", true, throttle_whats, "throttle (the kernel stopped sampling: too many samples per tick) or unthrottle"),
};
OBJ(s_throttle, s_throttle_f);

static const struct pmu_field s_ksym_f[] = {
	F16("type", STR, true, "\"ksym\""),
	F16("addr", STR, true, "a kernel function's start, 0x-prefixed hex"),
	F16("name", STR, true, "its name in /proc/kallsyms"),
};
OBJ(s_ksym, s_ksym_f);

static const struct pmu_field s_summary_f[] = {
	F16("type", STR, true, "\"summary\""),
	N16("samples", true, "count", "sample records in the stream"),
	N16("unattributed", true, "count", "samples of no cohort incarnation, left out of the stream"),
	N16("lost_records", true, "count", "the sum of the loss records of what records"),
	N16("lost_samples", true, "count", "the sum of the loss records of what samples"),
	N16("throttles", true, "count", "throttle records of what throttle"),
	N16("max_sample_rate_end_hz", true, "hz", "kernel.perf_event_max_sample_rate at the end (the kernel lowers it when sampling takes too long)"),
	E16("kallsyms", true, kallsyms_st, "the ksym records: recorded, unreadable, not-needed (no kernel address sampled) or not-requested (light mode)"),
	F16("kallsyms_reason", STR, false, "why kallsyms is unreadable"),
};
OBJ(s_summary, s_summary_f);

static const struct pmu_recdef samples_recs[] = {
	{ "config", &s_config, 6 }, { "sample", &s_sample, 6 }, { "loss", &s_loss, 6 },
	{ "throttle", &s_throttle, 6 }, { "ksym", &s_ksym, 6 }, { "summary", &s_summary, 6 },
};

static const struct pmu_field m_map_f[] = {
	F16("type", STR, true, "\"map\""),
	N16("t_ns", true, "ns", "when the mapping took effect: the incarnation's start or exec (origin proc-maps) or the mmap (mmap2); the stream is not in t_ns order"),
	F16("inc", STR, true, "incarnation id"),
	N16("pid", true, "id", "process id"),
	N16("tid", true, "id", "the thread that mapped it (the pid for proc-maps)"),
	F16("start", STR, true, "first address, 0x-prefixed hex"),
	F16("end", STR, true, "the address after the last, 0x-prefixed hex"),
	F16("pgoff", STR, true, "file offset of start, 0x-prefixed hex"),
	F16("path", STR, true, "the mapped file, or [vdso], [anon:...], //anon"),
	F16("build_id", STR, false, "GNU build-id of the mapped object, lowercase hex"),
	E16("build_id_source", false, bid_sources, "where the build-id came from: mmap2 (the kernel), file (its ELF note) or memory ([vdso])"),
	F16("build_id_reason", STR, false, "why an executable map has no build-id"),
	E16("origin", true, map_origins, "proc-maps (there at attach or at the process's start) or mmap2 (a record of the kernel)"),
};
OBJ(m_map, m_map_f);

static const struct pmu_field m_kmap_f[] = {
	F16("type", STR, true, "\"kmap\""),
	F16("start", STR, true, "the kernel's text start, 0x-prefixed hex"),
	F16("end", STR, true, "the address after the kernel's core text, 0x-prefixed hex"),
	F16("build_id", STR, false, "the running kernel's build-id (/sys/kernel/notes)"),
	F16("build_id_reason", STR, false, "why there is none"),
};
OBJ(m_kmap, m_kmap_f);

static const struct pmu_field m_retained_f[] = {
	F16("type", STR, true, "\"retained\""),
	F16("build_id", STR, false, "the build-id the copy was checked against (absent for jit-map)"),
	E16("kind", true, retained_kinds, "binary, debug (its separate debug file), debug-alt (dwz), vdso or jit-map"),
	F16("path", STR, true, "where it was found on the recording host"),
	F16("file", STR, true, "the copy in the bundle: build-id/xx/yyyy[.debug] relative to data/ (shared by the repetitions), or collectors/<name>/perf-PID.map relative to the repetition's directory"),
	N16("size_bytes", false, "bytes", "its size"),
};
OBJ(m_retained, m_retained_f);

static const struct pmu_field m_unretained_f[] = {
	F16("type", STR, true, "\"unretained\""),
	F16("build_id", STR, false, "the object's build-id, when known"),
	F16("path", STR, true, "the object"),
	F16("reason", STR, true, "why it was not copied"),
};
OBJ(m_unretained, m_unretained_f);

static const struct pmu_recdef maps_recs[] = {
	{ "kmap", &m_kmap, 6 }, { "map", &m_map, 6 }, { "retained", &m_retained, 6 }, { "unretained", &m_unretained, 6 },
};

/* ---- syscalls, syscall-stats and sched (spec 1.7): OS events (section 23) -- */

static const char *const os_filters[] = { "members", "cgroup", NULL };
static const char *const ftypes[] = { "reg", "dir", "chr", "blk", "fifo", "sock", "lnk", "anon", "unknown", NULL };
static const char *const path_sources[] = { "dentry", "argument", "argument+cwd", "argument+dirfd", "relative", "proc-fd", NULL };
static const char *const path2_sources[] = { "argument", "argument+cwd", "argument+dirfd", "relative", NULL };
static const char *const path_cuts[] = { "head", "tail", "head+tail", NULL };
static const char *const os_loss_whats[] = { "reserve", "inflight-map", "stats-map", "thread-map", NULL };
static const char *const off_states[] = { "S", "D", "R", "other", NULL };
static const char *const off_chains[] = { "none", "fp", NULL };

static const struct pmu_field y_config_f[] = {
	F17("type", STR, true, "\"config\""),
	F17("mechanism", STR, true, "how calls are seen, e.g. \"raw_tp sys_enter/sys_exit (eBPF)\""),
	E17("filter", true, os_filters, "the in-kernel cohort filter: members (a map of the cohort's processes, kept at fork and exit) or cgroup (the cohort's cgroup id)"),
	F17("raw_calls", STR, true, "the system calls that get a raw call record, names separated by one space; every other call is only in syscall-stats"),
	N17("ring_bytes", true, "bytes", "the BPF ring buffer's size"),
	N17("ncpus", true, "count", "possible CPUs (loss is counted per CPU)"),
	N17("max_output_bytes", false, "bytes", "the bound on the raw call records (--max-output-bytes); absent: none"),
	F17("arch", STR, true, "the machine's architecture as uname -m names it: syscall numbers are this architecture's"),
	E17("clock", true, clocks, "the clock of t_ns: monotonic"),
};
OBJ(y_config, y_config_f);

static const struct pmu_field y_call_f[] = {
	F17("type", STR, true, "\"call\""),
	N17("t_ns", true, "ns", "when the call returned (sys_exit); it began at t_ns - dur_ns"),
	N17("dur_ns", true, "ns", "the call's duration, sys_enter to sys_exit, exact"),
	N17("seq", true, "count", "the kernel's sequence number of the record (1, 2, ...; a gap is a lost record)"),
	F17("inc", STR, true, "incarnation id"),
	N17("pid", true, "id", "process id"),
	N17("tid", true, "id", "thread id"),
	F17("syscall", STR, true, "the system call's name (the kernel's, without sys_)"),
	N17("nr", true, "id", "its number on arch"),
	N17("ret", false, "count", "the return value when it is not an error (absent when the call failed)"),
	N17("errno", false, "id", "the error number when the call failed (returned -errno)"),
	F17("error", STR, false, "its name (ENOENT ...), with errno"),
	N17("bytes", false, "bytes", "bytes transferred: the return value of a successful read, write, send or copy call"),
	N17("fd", false, "id", "the fd the call took (read, write, close, fcntl, ioctl ...) or returned (open, dup, socket, accept ...)"),
	N17("newfd", false, "id", "dup2/dup3's target fd"),
	N17("fd2", false, "id", "the second fd of pipe, pipe2 and socketpair (the first is fd)"),
	F17("dev", STR, false, "file identity: the device of the file's inode, MAJOR:MINOR (pipes and sockets: their pseudo filesystem's)"),
	N17("ino", false, "id", "file identity: the inode number, read in the kernel at the call"),
	E17("ftype", false, ftypes, "the file's type: reg, dir, chr, blk, fifo, sock, lnk, anon (an anonymous inode) or unknown"),
	F17("path", STR, false, "the file's path (open, creat, rename, unlink, mkdir, truncate, execve ...), as path_source says"),
	E17("path_source", false, path_sources, "dentry (resolved in the kernel from the opened file), argument (the caller's string, absolute), argument+cwd (a relative argument joined to the process's working directory), argument+dirfd (a relative argument joined to the path of the directory fd it came with, the *at calls), relative (the caller's relative argument as given: its directory could not be read) or proc-fd (/proc/PID/fd)"),
	E17("path_truncated", false, path_cuts, "the path is not whole: head (its leading components are missing: the kernel kept those nearest the file, the path is a tail of the real one), tail (its end is missing: longer than the 255 bytes kept) or head+tail; absent: whole"),
	F17("path2", STR, false, "the second path argument (rename's new name), as path2_source says"),
	E17("path2_source", false, path2_sources, "with path2: argument (absolute, as given), argument+cwd, argument+dirfd or relative, as path_source"),
	E17("path2_truncated", false, path_cuts, "path2 is not whole, as path_truncated"),
	F17("flags", STR, false, "open flags, fcntl or other flags argument, 0x-prefixed hex"),
	F17("request", STR, false, "ioctl's request, 0x-prefixed hex"),
	F17("request_name", STR, false, "its name from the kernel's uapi headers, where one matches"),
	F17("cmd", STR, false, "fcntl's command name (F_DUPFD, F_SETLK ...)"),
	F17("args", STR, true, "the six raw arguments as the kernel saw them, 0x-prefixed hex separated by one space"),
};
OBJ(y_call, y_call_f);

static const struct pmu_field y_fd_f[] = {
	F17("type", STR, true, "\"fd\""),
	N17("t_ns", true, "ns", "when it was read"),
	F17("inc", STR, true, "incarnation id"),
	N17("pid", true, "id", "process id"),
	N17("fd", true, "id", "an fd that was open before the run (read once from /proc/PID/fd)"),
	F17("dev", STR, false, "file identity, as in call"),
	N17("ino", false, "id", "file identity, as in call"),
	E17("ftype", false, ftypes, "the file's type"),
	F17("path", STR, true, "what /proc/PID/fd/FD reads (pipe:[N], socket:[N] for those)"),
	E17("path_source", true, path_sources, "proc-fd"),
};
OBJ(y_fd, y_fd_f);

static const struct pmu_field y_loss_f[] = {
	F17("type", STR, true, "\"loss\""),
	N17("t_ns", true, "ns", "when the loss was read"),
	N17("cpu", true, "id", "the CPU that counted it"),
	N17("lost", true, "count", "how many were lost since the previous loss record of that CPU and what"),
	E17("what", true, os_loss_whats, "reserve (a record found the ring full), inflight-map (a call's entry could not be kept: its exit has no record), stats-map (the in-kernel statistics map was full: that call is in no stat), thread-map (a thread's scheduling state could not be kept)"),
};
OBJ(y_loss, y_loss_f);

static const struct pmu_field y_trunc_f[] = {
	F17("type", STR, true, "\"truncation\""),
	N17("t_ns", true, "ns", "when the bound was reached"),
	N17("max_output_bytes", true, "bytes", "the bound"),
	F17("reason", STR, true, "why raw records stopped; the statistics go on"),
};
OBJ(y_trunc, y_trunc_f);

static const struct pmu_field y_summary_f[] = {
	F17("type", STR, true, "\"summary\""),
	N17("calls", true, "count", "call records in the stream"),
	N17("fd_records", true, "count", "fd records in the stream"),
	N17("seq_end", true, "count", "the last sequence number the kernel handed out: calls + unattributed + truncated + lost reserves"),
	N17("unattributed", true, "count", "raw records of no cohort incarnation, left out"),
	N17("truncated", true, "count", "raw records not written after the bound"),
	N17("lost", true, "count", "the sum of the stream's loss records"),
	N17("malformed", true, "count", "records from the kernel that could not be decoded"),
};
OBJ(y_summary, y_summary_f);

static const struct pmu_recdef syscalls_recs[] = {
	{ "config", &y_config, 7 }, { "fd", &y_fd, 7 }, { "call", &y_call, 7 }, { "loss", &y_loss, 7 },
	{ "truncation", &y_trunc, 7 }, { "summary", &y_summary, 7 },
};

static const struct pmu_field st_stat_f[] = {
	F17("type", STR, true, "\"stat\""),
	F17("inc", STR, true, "incarnation id"),
	N17("pid", true, "id", "process id"),
	F17("syscall", STR, true, "the system call's name"),
	N17("nr", true, "id", "its number"),
	N17("errno", false, "id", "the calls that failed with this errno (absent: those that succeeded)"),
	F17("error", STR, false, "its name, with errno"),
	F17("dev", STR, false, "file identity of the fd the calls took or returned, as in call"),
	N17("ino", false, "id", "file identity, as in call"),
	E17("ftype", false, ftypes, "the file's type"),
	F17("path", STR, false, "the file's path as the raw records (or fd records) knew it"),
	N17("count", true, "count", "calls"),
	N17("total_ns", true, "ns", "their summed duration"),
	N17("min_ns", true, "ns", "the shortest"),
	N17("max_ns", true, "ns", "the longest"),
	N17("bytes", false, "bytes", "bytes transferred, summed (read, write, send and copy calls)"),
	F17("hist", STR, true, "the durations' histogram: BUCKET:COUNT pairs ascending by bucket, separated by one space, only buckets with a count (section 23.4's log-linear buckets); the counts sum to count"),
};
OBJ(st_stat, st_stat_f);

static const struct pmu_field st_unentered_f[] = {
	F17("type", STR, true, "\"unentered\""),
	F17("inc", STR, true, "incarnation id"),
	N17("pid", true, "id", "process id"),
	F17("syscall", STR, true, "the system call's name"),
	N17("nr", true, "id", "its number"),
	N17("errno", false, "id", "the calls that failed with this errno (absent: those that succeeded)"),
	F17("error", STR, false, "its name, with errno"),
	N17("count", true, "count", "calls seen only leaving the kernel, with no duration: refused by seccomp before the sys_enter tracepoint (as strace counts them), or in flight when the collector attached (attach mode, or the command's wait behind pmurec's launch barrier)"),
};
OBJ(st_unentered, st_unentered_f);

static const struct pmu_field st_summary_f[] = {
	F17("type", STR, true, "\"summary\""),
	N17("stats", true, "count", "stat records in the stream"),
	N17("calls", true, "count", "the sum of their counts"),
	N17("lost", true, "count", "calls in no stat (the map was full, or their entry was not kept); the syscalls stream's loss records say which"),
	N17("unattributed", true, "count", "calls of no cohort incarnation, left out"),
	N17("unentered", true, "count", "the sum of the unentered records' counts (not in calls)"),
};
OBJ(st_summary, st_summary_f);

static const struct pmu_recdef syscall_stats_recs[] = {
	{ "stat", &st_stat, 7 }, { "unentered", &st_unentered, 7 }, { "summary", &st_summary, 7 },
};

static const struct pmu_field sc_config_f[] = {
	F17("type", STR, true, "\"config\""),
	F17("mechanism", STR, true, "how switches are seen, e.g. \"raw_tp sched_switch/sched_wakeup/sched_migrate_task (eBPF)\""),
	E17("filter", true, os_filters, "the in-kernel cohort filter, as in syscalls"),
	N17("ring_bytes", true, "bytes", "the BPF ring buffer's size"),
	N17("ncpus", true, "count", "possible CPUs"),
	N17("min_off_ns", true, "ns", "off-CPU intervals shorter than this get no off record (they are in the thread totals); 0: every one"),
	E17("chains", true, off_chains, "whether off records carry the user call chain at the switch (fp, when sampling with call chains is on)"),
	E17("clock", true, clocks, "the clock of t_ns: monotonic"),
};
OBJ(sc_config, sc_config_f);

static const struct pmu_field sc_off_f[] = {
	F17("type", STR, true, "\"off\""),
	N17("t_ns", true, "ns", "when the thread was back on a CPU (the interval's end); it left at t_ns - off_ns"),
	N17("off_ns", true, "ns", "the off-CPU interval, switch out to switch in, exact"),
	F17("inc", STR, true, "incarnation id"),
	N17("pid", true, "id", "process id"),
	N17("tid", true, "id", "thread id"),
	E17("state", true, off_states, "the thread's state as it left: S (sleeping, interruptible), D (uninterruptible), R (preempted, still runnable) or other"),
	N17("wait_ns", false, "ns", "switch out to its wakeup (S, D, other): the time it waited"),
	N17("runq_ns", true, "ns", "its wakeup (or, for R, its switch out) to switch in: the time runnable on a runqueue; wait_ns + runq_ns = off_ns"),
	F17("syscall", STR, false, "the system call in progress when it left the CPU"),
	N17("waker_tid", false, "id", "the thread that woke it (any process's)"),
	N17("cpu_out", true, "id", "the CPU it left"),
	N17("cpu_in", true, "id", "the CPU it came back on"),
	F17("chain", STR, false, "the user call chain when it left, innermost first, 0x-prefixed hex separated by one space (chains fp)"),
};
OBJ(sc_off, sc_off_f);

static const struct pmu_field sc_thread_f[] = {
	F17("type", STR, true, "\"thread\""),
	N17("t_ns", true, "ns", "when the totals were read: the thread's exit, or the collector's stop"),
	F17("inc", STR, true, "incarnation id"),
	N17("pid", true, "id", "process id"),
	N17("tid", true, "id", "thread id"),
	N17("start_ns", true, "ns", "when the collector first saw the thread (its fork, or the open)"),
	F17("exited", BOOL, true, "true: t_ns is its exit; false: it was still alive at the stop"),
	N17("on_cpu_ns", true, "ns", "time on a CPU"),
	N17("runq_ns", true, "ns", "time runnable, waiting for a CPU"),
	N17("sleep_ns", true, "ns", "time sleeping (S, waiting for its wakeup)"),
	N17("blocked_ns", true, "ns", "time blocked (D, waiting for its wakeup)"),
	N17("other_ns", true, "ns", "time off-CPU in any other state (stopped, traced ...)"),
	N17("unobserved_ns", true, "ns", "t_ns - start_ns less the five above: time the collector could not place (from start to the first switch)"),
	N17("voluntary", true, "count", "switches out in S, D or other"),
	N17("involuntary", true, "count", "switches out while runnable (R, preempted)"),
	N17("migrations", true, "count", "moves to another CPU"),
};
OBJ(sc_thread, sc_thread_f);

static const struct pmu_field sc_summary_f[] = {
	F17("type", STR, true, "\"summary\""),
	N17("offs", true, "count", "off records in the stream"),
	N17("threads", true, "count", "thread records in the stream"),
	N17("short_offs", true, "count", "off-CPU intervals under min_off_ns, in the totals only"),
	N17("unattributed", true, "count", "records of no cohort incarnation, left out"),
	N17("lost", true, "count", "the sum of the stream's loss records"),
	N17("malformed", true, "count", "records from the kernel that could not be decoded"),
};
OBJ(sc_summary, sc_summary_f);

static const struct pmu_recdef sched_recs[] = {
	{ "config", &sc_config, 7 }, { "off", &sc_off, 7 }, { "thread", &sc_thread, 7 }, { "loss", &y_loss, 7 },
	{ "summary", &sc_summary, 7 },
};


/* ---- probes and alloc (spec 1.8): runtime evidence (section 24) ------------ */

static const char *const pr_roles[] = { "runtime", "mark", "span_begin", "span_end", "gc_begin", "gc_end", "alloc",
					"startup_end", "thread_start", "thread_stop", "jit_begin", "jit_end", "raw", NULL };
static const char *const pr_runtimes[] = { "pmu", "python", "hotspot", NULL };
static const char *const pr_loss_whats[] = { "reserve", "open-map", "inc-map", NULL };
static const char *const pr_unended_whats[] = { "span", "gc", "jit", "thread", NULL };
static const char *const al_vias[] = { "uprobe", "preload", NULL };
static const char *const al_funcs[] = { "malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "memalign", "valloc", "pvalloc", "mmap", NULL };
static const char *const al_loss_whats[] = { "reserve", "pending-map", "live-map", "channel", NULL };

static const struct pmu_field pr_config_f[] = {
	F18("type", STR, true, "\"config\""),
	F18("mechanism", STR, true, "how probes are seen, e.g. \"USDT uprobes (eBPF, libbpf)\""),
	E18("filter", true, os_filters, "the in-kernel cohort filter, as in syscalls (section 23)"),
	F18("providers", STR, true, "the providers whose probes the probe map (section 24.2) turns into records, separated by one space"),
	F18("requested", STR, false, "the probes named with --probe PROVIDER:NAME, separated by one space; absent: none"),
	N18("abi", true, "count", "the pmu provider's probe ABI version this recorder reads (include/pmu/probe.h: PMU_PROBE_ABI)"),
	N18("ring_bytes", true, "bytes", "the BPF ring buffer's size"),
	N18("ncpus", true, "count", "possible CPUs (loss is counted per CPU)"),
	E18("clock", true, clocks, "the clock of t_ns: monotonic"),
};
OBJ(pr_config, pr_config_f);

static const struct pmu_field pr_probe_f[] = {
	F18("type", STR, true, "\"probe\""),
	N18("t_ns", true, "ns", "when its hits were read: the collector's stop (probe records come last, before the summary)"),
	F18("binary", STR, true, "the ELF file that carries it (.note.stapsdt), as opened"),
	F18("build_id", STR, false, "that file's GNU build-id, lowercase hex"),
	F18("provider", STR, true, "its provider"),
	F18("name", STR, true, "its name"),
	F18("args", STR, false, "its argument layout from the note (e.g. \"-4@%eax 8@%rdx\"); absent: no arguments"),
	F18("semaphore", BOOL, true, "whether it has a semaphore (raised by the kernel only while attached)"),
	E18("role", true, pr_roles, "what the probe map makes of it (section 24.2): raw for a probe named with --probe and not in the map"),
	F18("attached", BOOL, true, "whether it was attached"),
	N18("attached_ns", false, "ns", "when it was attached (with attached): hits before are not seen"),
	F18("reason", STR, false, "why it was not attached (required when attached is false)"),
	N18("hits", true, "count", "its hits by cohort threads while attached (0 with attached false)"),
};
OBJ(pr_probe, pr_probe_f);

static const struct pmu_field pr_runtime_f[] = {
	F18("type", STR, true, "\"runtime\""),
	N18("t_ns", true, "ns", "when it declared itself (pmu:runtime)"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread id"),
	F18("name", STR, true, "the runtime's name as the program gave it"),
	N18("abi", true, "count", "the probe ABI version the program was built with"),
};
OBJ(pr_runtime, pr_runtime_f);

static const struct pmu_field pr_mark_f[] = {
	F18("type", STR, true, "\"mark\""),
	N18("t_ns", true, "ns", "when the probe fired"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread id"),
	F18("name", STR, true, "the mark's name: the program's (pmu:mark), or startup-end for a runtime's startup boundary (hotspot:vm__init__end)"),
	F18("source", STR, true, "the probe that made it, PROVIDER:NAME"),
	E18("via", true, span_vias, "usdt"),
};
OBJ(pr_mark, pr_mark_f);

static const struct pmu_field pr_span_f[] = {
	F18("type", STR, true, "\"span\""),
	N18("t_ns", true, "ns", "its end (end_ns): records are ordered by it"),
	F18("id", STR, true, "the span id as the program gave it, in decimal; unique per incarnation"),
	F18("parent", STR, false, "the parent span's id, a span of the same incarnation begun on any thread; absent: none (the probe's parent 0)"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread that began it"),
	N18("end_tid", true, "id", "thread that ended it"),
	F18("name", STR, true, "span name"),
	N18("begin_ns", true, "ns", "CLOCK_MONOTONIC at span_begin"),
	N18("end_ns", true, "ns", "CLOCK_MONOTONIC at span_end"),
	E18("via", true, span_vias, "usdt"),
};
OBJ(pr_span, pr_span_f);

static const struct pmu_field pr_gc_f[] = {
	F18("type", STR, true, "\"gc\""),
	N18("t_ns", true, "ns", "the pause's end: records are ordered by it"),
	N18("begin_ns", true, "ns", "the pause's begin"),
	N18("dur_ns", true, "ns", "t_ns - begin_ns"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread that began it"),
	E18("runtime", true, pr_runtimes, "whose probes: pmu (gc_begin/gc_end), python (gc__start/gc__done), hotspot (gc__begin/gc__end, mem__pool__gc__begin/end)"),
	F18("kind", STR, true, "pmu: the program's kind; python: gen0, gen1 or gen2; hotspot: full or minor (gc__begin's argument), or pool for a memory pool's collection"),
	F18("pool", STR, false, "hotspot: the memory pool and its manager, MANAGER/POOL (with kind pool)"),
	N18("collected", false, "count", "python: objects collected (gc__done's argument)"),
	F18("source", STR, true, "the begin probe, PROVIDER:NAME"),
};
OBJ(pr_gc, pr_gc_f);

static const struct pmu_field pr_thread_f[] = {
	F18("type", STR, true, "\"thread\""),
	N18("t_ns", true, "ns", "its thread__stop, or the collector's stop"),
	N18("begin_ns", true, "ns", "its thread__start"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "the native thread id the runtime gave"),
	E18("runtime", true, pr_runtimes, "hotspot"),
	F18("name", STR, true, "the runtime's thread name"),
	F18("daemon", BOOL, false, "a daemon thread"),
	F18("ended", BOOL, true, "true: t_ns is its thread__stop; false: it was alive at the stop"),
};
OBJ(pr_thread, pr_thread_f);

static const struct pmu_field pr_jit_f[] = {
	F18("type", STR, true, "\"jit\""),
	N18("t_ns", true, "ns", "the compile's end"),
	N18("begin_ns", true, "ns", "the compile's begin"),
	N18("dur_ns", true, "ns", "t_ns - begin_ns"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "the compiler thread"),
	E18("runtime", true, pr_runtimes, "hotspot"),
	F18("compiler", STR, true, "the compiler's name (C1, C2 ...)"),
	F18("method", STR, true, "CLASS.METHOD SIGNATURE, each cut at 127 bytes"),
	F18("success", BOOL, true, "whether the compile succeeded"),
};
OBJ(pr_jit, pr_jit_f);

static const struct pmu_field pr_hit_f[] = {
	F18("type", STR, true, "\"hit\""),
	N18("t_ns", true, "ns", "when the probe fired"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread id"),
	F18("provider", STR, true, "the probe's provider (named with --probe)"),
	F18("name", STR, true, "the probe's name"),
	N18("nargs", true, "count", "its argument count"),
	F18("args", STR, false, "its arguments' values in decimal as the note's sizes and signs give them, separated by one space (absent: none)"),
};
OBJ(pr_hit, pr_hit_f);

static const struct pmu_field pr_allocs_f[] = {
	F18("type", STR, true, "\"allocs\""),
	N18("t_ns", true, "ns", "the incarnation's end, or the collector's stop"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("count", true, "count", "pmu:alloc hits, exact"),
	N18("bytes", true, "bytes", "the bytes they reported, summed, exact"),
};
OBJ(pr_allocs, pr_allocs_f);

static const struct pmu_field pr_unended_f[] = {
	F18("type", STR, true, "\"unended\""),
	N18("t_ns", true, "ns", "the incarnation's end, or the collector's stop"),
	E18("what", true, pr_unended_whats, "what began and never ended: a span, a GC pause, a JIT compile or a thread (hotspot threads alive at the stop are thread records)"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread that began it"),
	F18("id", STR, false, "the span's id (what span)"),
	F18("name", STR, true, "its name (span name, GC kind, method)"),
	N18("begin_ns", true, "ns", "when it began"),
};
OBJ(pr_unended, pr_unended_f);

static const struct pmu_field pr_loss_f[] = {
	F18("type", STR, true, "\"loss\""),
	N18("t_ns", true, "ns", "when the loss was read"),
	N18("cpu", true, "id", "the CPU that counted it"),
	N18("lost", true, "count", "how many were lost since the previous loss record of that CPU and what"),
	E18("what", true, pr_loss_whats, "reserve (a hit found the ring full), open-map (a begin could not be kept: its end pairs with nothing), inc-map (a pmu:alloc hit could not be summed)"),
};
OBJ(pr_loss, pr_loss_f);

static const struct pmu_field pr_summary_f[] = {
	F18("type", STR, true, "\"summary\""),
	N18("probes", true, "count", "probe records in the stream"),
	N18("attached", true, "count", "of them attached"),
	N18("hits", true, "count", "the sum of their hits"),
	N18("spans", true, "count", "span records"),
	N18("marks", true, "count", "mark records"),
	N18("gcs", true, "count", "gc records"),
	N18("raw_hits", true, "count", "hit records"),
	N18("unended", true, "count", "unended records"),
	N18("unmatched", true, "count", "ends that paired with no begin (span_end of an unknown id, gc_end with no gc_begin), left out"),
	N18("unattributed", true, "count", "hits of no cohort incarnation, left out"),
	N18("lost", true, "count", "the sum of the stream's loss records"),
	N18("malformed", true, "count", "records from the kernel that could not be decoded"),
};
OBJ(pr_summary, pr_summary_f);

static const struct pmu_recdef probes_recs[] = {
	{ "config", &pr_config, 8 }, { "runtime", &pr_runtime, 8 }, { "mark", &pr_mark, 8 }, { "span", &pr_span, 8 },
	{ "gc", &pr_gc, 8 }, { "thread", &pr_thread, 8 }, { "jit", &pr_jit, 8 }, { "hit", &pr_hit, 8 },
	{ "allocs", &pr_allocs, 8 }, { "unended", &pr_unended, 8 }, { "loss", &pr_loss, 8 }, { "probe", &pr_probe, 8 },
	{ "summary", &pr_summary, 8 },
};

static const struct pmu_field al_config_f[] = {
	F18("type", STR, true, "\"config\""),
	E18("via", true, al_vias, "uprobe (uprobes on the C library in use, eBPF; root) or preload (pmurec's LD_PRELOAD interposer; dynamically linked targets)"),
	F18("library", STR, true, "the C library probed (uprobe) or the interposer loaded (preload), as opened"),
	F18("functions", STR, true, "the functions sampled, separated by one space"),
	N18("sample_bytes", true, "bytes", "the mean sampling interval: each thread samples the allocation in which its byte count crosses a threshold drawn from an exponential distribution of this mean (a Poisson process over bytes)"),
	F18("chains", BOOL, true, "whether samples carry the user call chain (with sampling call chains, --call-graph fp)"),
	N18("ring_bytes", false, "bytes", "the BPF ring buffer's size (uprobe)"),
	N18("ncpus", true, "count", "possible CPUs"),
	E18("clock", true, clocks, "the clock of t_ns: monotonic"),
};
OBJ(al_config, al_config_f);

static const struct pmu_field al_sample_f[] = {
	F18("type", STR, true, "\"sample\""),
	N18("t_ns", true, "ns", "when the allocation returned"),
	N18("seq", true, "count", "the sample's number in the stream (1, 2, ...); free records name it"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread id"),
	E18("func", true, al_funcs, "the allocating function"),
	N18("size", true, "bytes", "the bytes asked for"),
	F18("addr", STR, false, "the address returned, 0x-prefixed hex (absent: the allocation failed)"),
	N18("est_bytes", true, "bytes", "estimate: the bytes this sample stands for, size / (1 - exp(-size / sample_bytes)), rounded"),
	N18("est_objects_milli", true, "count", "estimate: the allocations it stands for, 1 / (1 - exp(-size / sample_bytes)), in thousandths, rounded"),
	F18("chain", STR, false, "the user call chain at the allocation, innermost first, 0x-prefixed hex separated by one space (chains true)"),
};
OBJ(al_sample, al_sample_f);

static const struct pmu_field al_free_f[] = {
	F18("type", STR, true, "\"free\""),
	N18("t_ns", true, "ns", "when it was freed (free, or realloc moving it)"),
	N18("sample_seq", true, "count", "the sample whose allocation this frees"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	N18("tid", true, "id", "thread id"),
};
OBJ(al_free, al_free_f);

static const struct pmu_field al_inc_f[] = {
	F18("type", STR, true, "\"inc\""),
	N18("t_ns", true, "ns", "the incarnation's end (exited true), or the collector's stop"),
	F18("inc", STR, true, "incarnation id"),
	N18("pid", true, "id", "process id"),
	F18("exited", BOOL, true, "whether it ended before the stop"),
	N18("samples", true, "count", "sample records of it"),
	N18("est_bytes", true, "bytes", "estimate: bytes allocated, the sum of its samples' est_bytes"),
	N18("est_objects", true, "count", "estimate: allocations, the sum of its samples' est_objects_milli / 1000, rounded"),
	N18("live_samples", true, "count", "its samples not freed at t_ns"),
	N18("live_est_bytes", true, "bytes", "estimate: bytes live at t_ns (at exit, when exited), the sum of those samples' est_bytes"),
	N18("dropped", true, "count", "samples it took that are not in the stream (the ring was full, a map was full): in no estimate"),
};
OBJ(al_inc, al_inc_f);

static const struct pmu_field al_loss_f[] = {
	F18("type", STR, true, "\"loss\""),
	N18("t_ns", true, "ns", "when the loss was read"),
	N18("cpu", false, "id", "the CPU that counted it (uprobe)"),
	N18("lost", true, "count", "how many were lost since the previous loss record of that CPU and what"),
	E18("what", true, al_loss_whats, "reserve (a sample found the ring full), pending-map (an allocation's entry could not be kept until its return), live-map (a sampled address could not be kept: its free is not seen), channel (preload: the interposer could not send)"),
};
OBJ(al_loss, al_loss_f);

static const struct pmu_field al_summary_f[] = {
	F18("type", STR, true, "\"summary\""),
	N18("samples", true, "count", "sample records"),
	N18("frees", true, "count", "free records"),
	N18("est_bytes", true, "bytes", "estimate: the sum of the samples' est_bytes"),
	N18("unattributed", true, "count", "samples of no cohort incarnation, left out"),
	N18("lost", true, "count", "the sum of the stream's loss records"),
	N18("malformed", true, "count", "records that could not be decoded"),
};
OBJ(al_summary, al_summary_f);

static const struct pmu_recdef alloc_recs[] = {
	{ "config", &al_config, 8 }, { "sample", &al_sample, 8 }, { "free", &al_free, 8 }, { "inc", &al_inc, 8 },
	{ "loss", &al_loss, 8 }, { "summary", &al_summary, 8 },
};

/* Spans and marks share one stream, ordered by end_ns (span) and t_ns (mark). */
static const struct pmu_recdef span_recs[] = { { "span", &span, 0 }, { "mark", &mark, 1 } };
static const struct pmu_recdef lifecycle_recs[] = { { "lifecycle", &lifecycle } };
static const struct pmu_recdef event_recs[] = {
	{ "event", &event }, { "loss", &loss }, { "malformed", &malformed }, { "truncation", &truncation },
};

const struct pmu_streamdef pmu_streams[] = {
	{ "spans", "spans.jsonl", false, true, span_recs, PMU_ARRAY_SIZE(span_recs), &header },
	{ "lifecycle", "lifecycle.jsonl", true, true, lifecycle_recs, PMU_ARRAY_SIZE(lifecycle_recs), &header },
	{ "events", "events.jsonl", true, false, event_recs, PMU_ARRAY_SIZE(event_recs), &header },
	{ "counts", "counts.jsonl", true, false, counts_recs, PMU_ARRAY_SIZE(counts_recs), &header, 2 },
	{ "cohort", "cohort.jsonl", false, true, cohort_recs, PMU_ARRAY_SIZE(cohort_recs), &header, 3 },
	{ "samples", "samples.jsonl", true, false, samples_recs, PMU_ARRAY_SIZE(samples_recs), &header, 6 },
	{ "maps", "maps.jsonl", true, false, maps_recs, PMU_ARRAY_SIZE(maps_recs), &header, 6 },
	{ "syscalls", "syscalls.jsonl", true, false, syscalls_recs, PMU_ARRAY_SIZE(syscalls_recs), &header, 7 },
	{ "syscall-stats", "syscall-stats.jsonl", true, false, syscall_stats_recs, PMU_ARRAY_SIZE(syscall_stats_recs), &header, 7 },
	{ "sched", "sched.jsonl", true, false, sched_recs, PMU_ARRAY_SIZE(sched_recs), &header, 7 },
	{ "probes", "probes.jsonl", true, false, probes_recs, PMU_ARRAY_SIZE(probes_recs), &header, 8 },
	{ "alloc", "alloc.jsonl", true, false, alloc_recs, PMU_ARRAY_SIZE(alloc_recs), &header, 8 },
};
const size_t pmu_nstreams = PMU_ARRAY_SIZE(pmu_streams);

const struct pmu_field *pmu_objdef_field(const struct pmu_objdef *o, const char *key, size_t klen)
{
	for (size_t i = 0; i < o->nfields; i++)
		if (strlen(o->fields[i].key) == klen && !memcmp(o->fields[i].key, key, klen))
			return &o->fields[i];
	return NULL;
}

const struct pmu_recdef *pmu_streamdef_rec(const struct pmu_streamdef *s, const char *type, size_t tlen)
{
	for (size_t i = 0; i < s->nrecs; i++)
		if (strlen(s->recs[i].type) == tlen && !memcmp(s->recs[i].type, type, tlen))
			return &s->recs[i];
	return NULL;
}

bool pmu_enum_has(const char *const *enumv, const char *s, size_t len)
{
	for (; *enumv; enumv++)
		if (strlen(*enumv) == len && !memcmp(*enumv, s, len))
			return true;
	return false;
}

struct unit_find {
	const char *key, *unit;
};

static void find_unit(void *ctx, const char *key, const char *unit)
{
	struct unit_find *u = ctx;

	if (!u->unit && !strcmp(key, u->key))
		u->unit = unit;
}

const char *pmu_objdef_unit(const struct pmu_objdef *o, const char *key)
{
	struct unit_find u = { key, NULL };

	pmu_objdef_units(o, find_unit, &u);
	return u.unit;
}

static void units_rec(const struct pmu_objdef *o, int minor, void (*fn)(void *, const char *, const char *),
		      void *ctx, int depth)
{
	if (depth > 8)
		return;
	for (size_t i = 0; i < o->nfields; i++) {
		const struct pmu_field *f = &o->fields[i];

		if (f->since > minor)
			continue;
		if (f->unit)
			fn(ctx, f->key, f->unit);
		if (f->sub)
			units_rec(f->sub, minor, fn, ctx, depth + 1);
	}
}

void pmu_objdef_units(const struct pmu_objdef *o, void (*fn)(void *, const char *, const char *),
		      void *ctx)
{
	units_rec(o, PMU_SPEC_MINOR, fn, ctx, 0);
}

void pmu_objdef_units_v(const struct pmu_objdef *o, int minor,
			void (*fn)(void *, const char *, const char *), void *ctx)
{
	units_rec(o, minor, fn, ctx, 0);
}
