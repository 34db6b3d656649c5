/* Sampled GPU activity (issue 16): by default kernels and GPU copy times are recorded only inside sampling
 * windows (CUDA_KERNEL_WINDOW), so a step outside them has no compute and no GPU idle of its own. The steps
 * that lie inside windows give the GPU work of a step (compute, exposed H2D, other); each step outside gets
 * that work and the rest of its GPU-derived time as host idle. Owned by H_GPU; hooked into
 * analyze_local.c (attribute) and analyze.c (the report's note) by one call each. */
#ifndef RAILSCOPE_ANALYZE_SAMPLING_H
#define RAILSCOPE_ANALYZE_SAMPLING_H

#include <stdint.h>

/* Window steps needed before the report's text states the tracing cost they measure (noisy below). */
#define RS_WIN_COST_MIN_STEPS 20

struct pass;
struct rs_analysis;

/* After a rank's steps are attributed: extrapolate compute/H2D/idle/other of the steps outside windows from
 * the steps inside them (when there are any), and count what was sampled for the report's note. Steps whose
 * time was extrapolated no longer count in r->untraced_ns. Thread-safe (ranks are attributed in parallel). */
void an_sampling_extrapolate(struct pass *p);

/* The report's note on sampling (replaces the old "counted as other" warning): what was sampled, over how
 * many steps, and what was extrapolated; `untraced_ns`/`steps_ns` = sums over ranks of what is left
 * unattributed. Resets the counters for the next analysis. */
void an_sampling_note(struct rs_analysis *a, uint64_t untraced_ns, uint64_t steps_ns);

#endif
