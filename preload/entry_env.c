/* A by-hand launch (`LD_PRELOAD=librailscope.so RAILSCOPE_OUT=run1 python train.py`) records what
 * `railscope record` does: the library is also the CUDA injection, NCCL's profiler plugin and the NVTX
 * injection, and those three are entered only through CUDA_INJECTION64_PATH, NCCL_PROFILER_PLUGIN and
 * NVTX_INJECTION64_PATH. Without them a preloaded process recorded no kernel, no profiler event and no NVTX
 * range: its collectives came from the API calls alone (enqueue times), and a run whose network was slowed
 * reported it as 99.8 % "other" (session 26, the real fixture s2_slownet without its plugin events).
 *
 * Set here, at load, for the families that are on and only where the variable is unset (or empty): a user's own
 * injection or plugin stays, with one warning naming what will be missing. Only when LD_PRELOAD names this
 * library: it was then loaded at start, before main, when no thread of the program can be reading the
 * environment (the writer thread never does). Loaded later by dlopen (as the injection or the plugin), a setenv
 * could race the program's getenv, and nothing would still read these variables anyway. The value is this
 * library's absolute path, so a program that changes directory still finds it. The program sees the variables,
 * as it does under `railscope record` (docs/recording.md). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "preload/dl.h"
#include "tracer/rs_tracer.h"

/* clang-format off */
#define RS_ENTRY_VARS(X)                                                                                              \
    X(RS_FAM_cuda, CUDA_INJECTION64_PATH, "CUDA kernels and GPU copy times are not recorded")                         \
    X(RS_FAM_nccl, NCCL_PROFILER_PLUGIN, "NCCL's profiler events (collectives on the GPU, proxy and network steps) "  \
                                          "are not recorded: collectives come from the API calls alone")              \
    X(RS_FAM_nvtx, NVTX_INJECTION64_PATH, "NVTX ranges (step names) are not recorded")
/* clang-format on */

/* Whether path names the same file as ours (a link, another spelling of the path), or is our bare file name,
 * which dlopen looks up in the library path. */
static int same_file(const char *path, const char *self, const struct stat *ours)
{
    struct stat st;
    const char *base = strrchr(self, '/');
    if (!strchr(path, '/')) return !strcmp(path, base ? base + 1 : self);
    return stat(path, &st) == 0 && st.st_dev == ours->st_dev && st.st_ino == ours->st_ino;
}

/* The warning is given once per process tree: the first traced process says it and marks the environment its
 * children inherit (a job's shell steps and workers would each say it again). */
static void set_entry(enum rs_family fam, const char *var, const char *missing, const char *self,
                      const struct stat *ours, int *warned)
{
    if (!rs_on(fam)) return;
    const char *v = getenv(var);
    if (!v || !*v) {
        setenv(var, self, 1);
        return;
    }
    const char *told = getenv("RAILSCOPE_ENTRY_WARNED");
    if (!same_file(v, self, ours) && !(told && *told)) {
        rs_warn("%s=%s is not this library: %s", var, v, missing);
        *warned = 1;
    }
}

__attribute__((constructor)) static void entry_env_setup(void)
{
    rs_core_start(); /* the families (RAILSCOPE_EVENTS); 0 when untraced: setuid, RAILSCOPE_DISABLE */
    char loaded[PATH_MAX], self[PATH_MAX];
    struct stat ours;
    if (!__atomic_load_n(&rs_enabled_mask, __ATOMIC_RELAXED) || !rs_dl_self_preloaded(loaded, sizeof loaded) ||
        !realpath(loaded, self) || stat(self, &ours) != 0)
        return;
    int warned = 0;
#define X(fam, var, missing) set_entry(fam, #var, missing, self, &ours, &warned);
    RS_ENTRY_VARS(X)
#undef X
    if (warned) setenv("RAILSCOPE_ENTRY_WARNED", "1", 1);
}
