/* env/ facts: the environment variables that steer NCCL's and the verbs stack's choice of NIC, GID,
 * GPUDirect and transport. Only variables that are set are emitted (absent = the library's default). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hostfacts_int.h"

extern char **environ;

/* clang-format off */
#define RS_HOSTFACT_ENV(X)                                                                                             \
    X(NCCL_IB_HCA)                                                                                                     \
    X(NCCL_IB_GID_INDEX)                                                                                               \
    X(NCCL_IB_ROCE_VERSION_NUM)                                                                                        \
    X(NCCL_IB_ADDR_FAMILY)                                                                                             \
    X(NCCL_IB_ADDR_RANGE) X(NCCL_IB_DISABLE) X(NCCL_IB_TC) X(NCCL_IB_SL) X(NCCL_IB_TIMEOUT) X(                         \
        NCCL_IB_QPS_PER_CONNECTION) X(NCCL_IB_PCI_RELAXED_ORDERING) X(NCCL_IB_ADAPTIVE_ROUTING) X(NCCL_IB_MERGE_NICS)  \
        X(NCCL_SOCKET_IFNAME) X(NCCL_NET) X(NCCL_NET_PLUGIN) X(NCCL_NET_GDR_LEVEL) X(NCCL_NET_GDR_READ)                \
            X(NCCL_NET_GDR_C2C) X(NCCL_DMABUF_ENABLE) X(NCCL_P2P_DISABLE) X(NCCL_P2P_LEVEL) X(NCCL_SHM_DISABLE)        \
                X(NCCL_CROSS_NIC) X(NCCL_TOPO_FILE) X(NCCL_ALGO) X(NCCL_PROTO) X(NCCL_MIN_NCHANNELS)                   \
                    X(NCCL_MAX_NCHANNELS) X(NCCL_DEBUG) X(CUDA_VISIBLE_DEVICES) X(UCX_NET_DEVICES) X(UCX_IB_GID_INDEX) \
                        X(SOFTNIC_RATE_GBPS) /* the test NIC's link rate: lets the analyzer explain softnic runs */ \
                            X(NCCL_PROFILER_PLUGIN) X(CUDA_INJECTION64_PATH) /* another tool's: what is missing */
/* clang-format on */

static const char *const watched[] = {
#define X(name) #name,
    RS_HOSTFACT_ENV(X)
#undef X
};

#define N_WATCHED (sizeof watched / sizeof watched[0])

static void emit(rs_hostfacts_cb cb, void *arg, size_t w, const char *val)
{
    char key[96], v[HF_VAL];
    snprintf(key, sizeof key, "env/%s", watched[w]);
    snprintf(v, sizeof v, "%s", val);
    for (char *p = v; *p; p++)
        if (*p == '\n' || *p == '\t') *p = ' ';
    cb(arg, key, v);
}

/* One "NAME=value" entry: remember the first value of a watched name. */
static void take(const char *e, size_t len, char (*vals)[HF_VAL], unsigned char *have)
{
    for (size_t w = 0; w < N_WATCHED; w++) {
        size_t l = strlen(watched[w]);
        if (!have[w] && len > l && memcmp(e, watched[w], l) == 0 && e[l] == '=') {
            size_t vl = len - l - 1 < HF_VAL - 1 ? len - l - 1 : HF_VAL - 1;
            memcpy(vals[w], e + l + 1, vl);
            vals[w][vl] = '\0';
            have[w] = 1;
        }
    }
}

/* The environment the process was started with, from /proc/self/environ: reading `environ` from the
 * tracer's thread could race with the application's setenv() (which may free the array being read).
 * Variables the program sets after exec are therefore not seen here. Streamed through a fixed buffer. */
void hf_collect_env_proc(rs_hostfacts_cb cb, void *arg)
{
    int fd = hf_fd_open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char vals[N_WATCHED][HF_VAL], buf[4096], ent[1024];
    unsigned char have[N_WATCHED] = {0};
    size_t el = 0;
    for (int chunks = 0; chunks < 4096; chunks++) { /* environments are at most a few MiB */
        ssize_t r = hf_fd_read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] == '\0') {
                take(ent, el, vals, have);
                el = 0;
            } else if (el < sizeof ent) {
                ent[el++] = buf[i]; /* longer entries are cut: values are kept to HF_VAL anyway */
            }
        }
    }
    if (el) take(ent, el, vals, have);
    hf_fd_close(fd);
    for (size_t w = 0; w < N_WATCHED; w++)
        if (have[w]) emit(cb, arg, w, vals[w]);
}

void rs_hostfacts_collect_env(char *const *envp, rs_hostfacts_cb cb, void *arg)
{
    if (!cb) return;
    if (!envp) envp = environ;
    if (!envp) return;
    /* Walk the watched list (not envp) so the output order is fixed; first definition wins, as with getenv. */
    for (size_t w = 0; w < N_WATCHED; w++) {
        size_t l = strlen(watched[w]);
        const char *val = NULL;
        for (char *const *e = envp; *e && !val; e++)
            if (strncmp(*e, watched[w], l) == 0 && (*e)[l] == '=') val = *e + l + 1;
        if (val) emit(cb, arg, w, val);
    }
}
