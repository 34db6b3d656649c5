/* Small helpers shared by the CUDA/CUPTI, NCCL and NVTX interposers (owned by the cuda/nccl area).
 * Header-only, no CUDA headers: included from preload/nccl*.c, preload/nvtx.c and preload/cuda/. */
#ifndef RAILSCOPE_GPU_COMMON_H
#define RAILSCOPE_GPU_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/rs_tracer.h"

/* String ids for strings whose address is stable for the life of the process (NCCL's func/algo/proto
 * literals, CUPTI's kernel names): a fixed open-addressing table keyed by the pointer, filled with CAS, so
 * the hot path is a few loads and no lock. A slot whose id is not yet published reads as a miss and falls
 * back to rs_intern, which returns the same id for the same bytes. Full table: rs_intern every time
 * (correct, slower). */
#define RS_PTRCACHE_SLOTS 4096u
struct rs_ptrcache {
    const char *key[RS_PTRCACHE_SLOTS];
    uint32_t id[RS_PTRCACHE_SLOTS];
};

static inline uint32_t rs_ptrcache_id(struct rs_ptrcache *c, const char *s)
{
    if (!s) return 0;
    uintptr_t h = ((uintptr_t)s >> 3) * 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < 16; i++) {
        unsigned slot = (unsigned)((h >> 40) + i) & (RS_PTRCACHE_SLOTS - 1);
        const char *k = __atomic_load_n(&c->key[slot], __ATOMIC_ACQUIRE);
        if (k == s) {
            uint32_t id = __atomic_load_n(&c->id[slot], __ATOMIC_ACQUIRE);
            return id ? id : rs_intern(s);
        }
        if (k == NULL) {
            const char *expect = NULL;
            if (__atomic_compare_exchange_n(&c->key[slot], &expect, s, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                uint32_t id = rs_intern(s);
                __atomic_store_n(&c->id[slot], id, __ATOMIC_RELEASE);
                return id;
            }
            if (expect == s) return rs_intern(s);
        }
    }
    return rs_intern(s);
}

/* String ids by content, per thread, for strings whose address may be reused with other bytes (NVTX
 * messages from Python): a direct-mapped cache keyed by a 64-bit FNV-1a of the bytes and the length. */
#define RS_STRCACHE_SLOTS 256u
struct rs_strcache_ent {
    uint64_t hash;
    uint32_t len;
    uint32_t id;
};
static inline uint64_t rs_fnv1a64(const char *s, size_t *len_out)
{
    uint64_t h = 1469598103934665603ull;
    size_t n = 0;
    for (; s[n] && n < RS_MAX_STRING; n++) {
        h ^= (unsigned char)s[n];
        h *= 1099511628211ull;
    }
    *len_out = n;
    return h;
}
static inline uint32_t rs_strcache_id(struct rs_strcache_ent *tab, const char *s)
{
    if (!s) return 0;
    size_t n;
    uint64_t h = rs_fnv1a64(s, &n);
    struct rs_strcache_ent *e = &tab[(h ^ (h >> 29)) & (RS_STRCACHE_SLOTS - 1)];
    if (e->id && e->hash == h && e->len == n) return e->id;
    uint32_t id = rs_intern_n(s, n);
    if (id) {
        e->hash = h;
        e->len = (uint32_t)n;
        e->id = id;
    }
    return id;
}

/* Environment switches read once at set-up time (never on a hot path). */
static inline int rs_env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && strcmp(v, value) == 0;
}

/* Set by the NCCL API wrappers around ncclCommInit* on the calling thread; the profiler plugin's init,
 * which NCCL runs inside that call, stores the communicator's hash there so the wrapper can tie the
 * ncclComm_t pointer to NCCL's commHash (defined in preload/nccl.c). */
struct rs_nccl_init_tls {
    int active; /* inside an ncclCommInit or ncclCommSplit wrapper */
    int seen;   /* the plugin's init ran on this thread during the call */
    uint64_t comm_hash;
};
extern __thread struct rs_nccl_init_tls rs_nccl_init_tls;

/* The optional NVML counter sampler (preload/nvml.c), started by the CUDA injection. */
void rs_nvml_start(void);

#endif
