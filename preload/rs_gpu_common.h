/* Small helpers shared by the CUDA/CUPTI, NCCL and NVTX interposers (owned by the cuda/nccl area).
 * Header-only, no CUDA headers: included from preload/nccl*.c, preload/nvtx.c and preload/cuda/. */
#ifndef RAILSCOPE_GPU_COMMON_H
#define RAILSCOPE_GPU_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload/ptrmap.h"
#include "tracer/rs_tracer.h"

/* String ids for strings whose address is stable for the life of the process (NCCL's func/algo/proto
 * literals, CUPTI's kernel names): preload/ptrmap's table keyed by the pointer, slots claimed with CAS, so
 * the hot path is a few loads and no lock. A slot whose id is not yet published reads as a miss and falls
 * back to rs_intern, which returns the same id for the same bytes. Claims stop at 3/4 full, which keeps
 * every probe sequence short; past that, strings not in the table are interned every time (correct,
 * slower). The hash is multiplicative: string literals sit a few bytes apart, where ptrmap's default hash
 * (made for heap blocks of >= 64 bytes) would give neighbours one slot. */
#define RS_PTRCACHE_SLOTS 4096u
struct rs_ptrcache {
    uintptr_t key[RS_PTRCACHE_SLOTS];
    uint32_t id[RS_PTRCACHE_SLOTS];
    unsigned used; /* slots claimed (may overshoot 3/4 by one per racing thread) */
};

static inline unsigned rs_ptrcache_hash(const char *s)
{
    return (unsigned)(((uintptr_t)s >> 3) * 0x9E3779B97F4A7C15ull >> 40);
}

static inline uint32_t rs_ptrcache_known(struct rs_ptrcache *c, int slot, const char *s)
{
    uint32_t id = __atomic_load_n(&c->id[slot], __ATOMIC_ACQUIRE);
    return id ? id : rs_intern(s);
}

static inline uint32_t rs_ptrcache_id(struct rs_ptrcache *c, const char *s)
{
    if (!s) return 0;
    unsigned h = rs_ptrcache_hash(s);
    long slot = rs_ptrmap_find_h(c->key, RS_PTRCACHE_SLOTS, (uintptr_t)s, h);
    if (RS_LIKELY(slot >= 0)) return rs_ptrcache_known(c, (int)slot, s);
    if (__atomic_load_n(&c->used, __ATOMIC_RELAXED) >= RS_PTRCACHE_SLOTS / 4 * 3) return rs_intern(s);
    int fresh, claimed = rs_ptrmap_claim_h(c->key, RS_PTRCACHE_SLOTS, (uintptr_t)s, h, &fresh);
    if (claimed < 0) return rs_intern(s);
    if (!fresh) return rs_ptrcache_known(c, claimed, s); /* another thread claimed it meanwhile */
    __atomic_fetch_add(&c->used, 1, __ATOMIC_RELAXED);
    uint32_t id = rs_intern(s);
    __atomic_store_n(&c->id[claimed], id, __ATOMIC_RELEASE);
    return id;
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
    void *ctx; /* a v1-v3 plugin context (NCCL 2.23-2.26 give init no communicator): rs_nccl_prof_bind */
};
extern __thread struct rs_nccl_init_tls rs_nccl_init_tls;

/* The wrapper tells a v1-v3 plugin context (from the TLS above) its communicator's rank and size, which those
 * versions' init lacks; the context announces itself (NCCL_PROF_INIT) on its first collective. */
void rs_nccl_prof_bind(void *ctx, int rank, int nranks);
/* The rank and size of the communicator of the NCCL call in progress on this thread (a group: of its calls, when
 * they name one communicator): 1, or 0 when there is none (preload/nccl.c). */
int rs_nccl_call_comm(int *rank, int *nranks);
/* That communicator's hash is NCCL's `hash` (the profiler plugin saw it in a Coll or P2p): the API records carry it
 * from now on, where the init wrapper could not learn it (NCCL 2.23-2.27 run the init of ncclCommInitRankConfig,
 * ncclCommSplit and ncclCommInitRankScalable on a thread of their own; v1-v3 init has no hash). 1 when there was a
 * communicator to tell. */
int rs_nccl_call_learn(uint64_t hash);

/* NCCL is starting (an init wrapper, the profiler plugin's init; application threads): decide once whether
 * NCCL's log is echoed to stdout (preload/nccl_profiler.c), so that the writer's tick never calls getenv. */
void rs_nlog_decide_echo(void);

/* The optional NVML counter sampler (preload/nvml.c), started by the CUDA injection. */
void rs_nvml_start(void);

#endif
