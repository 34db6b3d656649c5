/* Bench-only switches for bench/gpu/parttoggle.py: turn the tracer's event families off and on inside one traced
 * process, so that what each part costs is measured against itself, step blocks taking turns, without the 1-10 %
 * that two processes of one workload differ by on the GPU host (bench/gpu/RESULTS.md, sessions 7-21: lock-step
 * groups cannot split a 1 % cost into its parts). Inert unless RAILSCOPE_BENCH_HOOKS=1 is in the environment, so
 * no program can change a user's capture by calling them by accident. */
#include <stdlib.h>
#include <string.h>

#include "core_int.h"

int rs_bench_hooks_on(void)
{
    const char *v = getenv("RAILSCOPE_BENCH_HOOKS");
    return v && !strcmp(v, "1");
}

/* Keep only the families in `keep` (bits 1u << RS_FAM_x; core always stays) of those the configuration enabled;
 * keep = 0 puts them all back. Returns the families enabled at the first call, or -1 when the hooks are off or
 * the core is not running (the mask is 0 before start and after shutdown: left alone, so a shutdown's 0 is never
 * overwritten). Wrappers read the mask with relaxed loads each call: a change is seen by the next call. */
RS_EXPORT int railscope_bench_keep(unsigned keep)
{
    static unsigned configured;
    if (!rs_bench_hooks_on()) return -1;
    unsigned m = __atomic_load_n(&rs_enabled_mask, __ATOMIC_RELAXED);
    if (!m) return -1;
    unsigned zero = 0;
    __atomic_compare_exchange_n(&configured, &zero, m, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    unsigned all = __atomic_load_n(&configured, __ATOMIC_RELAXED);
    unsigned want = keep ? all & (keep | 1u << RS_FAM_core) : all;
    while (m && !__atomic_compare_exchange_n(&rs_enabled_mask, &m, want, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    return m ? (int)all : -1;
}
