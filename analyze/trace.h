#ifndef PMU_ANALYZE_TRACE_H
#define PMU_ANALYZE_TRACE_H

#include <stdio.h>

#include "bundle.h"

/*
 * Write the Chrome Trace Event Format (JSON object form: {"traceEvents":[...],
 * "displayTimeUnit":"ns","otherData":{...}}) of one repetition of an opened
 * bundle to out: every incarnation as a process (metadata events process_name
 * "comm (iN)", thread_name per tid), its lifetime as a complete event
 * ("ph":"X") on its main thread, each exec as an instant event ("ph":"i",
 * "s":"p") with the path, its exit (code or signal) in the X event's args;
 * every span of spans.jsonl as an X event on its tid (name, args: id,
 * parent), every mark as an instant ("s":"t"); every raw system call
 * (cat "syscall": name the syscall, args path, fd, bytes, error, dur_ns)
 * and every off-CPU interval (cat "off-cpu": "off-CPU S|D|R|other", args
 * state, syscall, runq_ns) as an X event on its thread (oscall.h).
 * The probes stream's spans (cat "span", on the thread that began them,
 * args end_tid and via), GC pauses (cat "gc", "GC RUNTIME KIND") and JIT
 * compiles (cat "jit") as X events and its marks as thread instants
 * (runtime.h).
 * Times in microseconds (ts, dur as JSON numbers with up to 3 decimals)
 * relative to the run's start_ns (run.json); pid/tid are the real
 * pids/tids.  otherData carries the run id, argv, and the note that times
 * are CLOCK_MONOTONIC relative to the run start.  Opens in Perfetto UI and
 * chrome://tracing.
 *
 * rep: 1 for data/, k for data/repeats/<k>/.  The bundle is not validated
 * here (pmuanalyze validates it first); a record that lacks a field the
 * trace needs is skipped.  The cohort is read one incarnation at a time
 * (an_cohort_each()) and spans.jsonl line by line, and events are written
 * one at a time, so memory grows with neither: it holds a compact index of
 * the incarnations' ids and pids, a few bytes each.  The whole cohort is
 * exported, whatever its size (otherData.incarnations says how many).
 * Returns 0 or a negative pmu_err (lib/error.h) with pmu_error() detail:
 * PMU_ERR_INVAL for rep < 1, PMU_ERR_NOTFOUND for a repetition the bundle
 * does not hold, PMU_ERR_IO when out cannot be written.
 */
int pmu_export_chrome_trace(const struct pmu_bundle *b, int rep, FILE *out);

#endif
