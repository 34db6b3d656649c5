/* MR table and memory-kind classification.
 *
 * The data path finds the memory kind of a posted SGE from its lkey: the lkey names the MR directly, so the
 * MR table (a pointer-keyed table, preload/ptrmap.h, keyed by (context id, lkey): see verbs_int.h) answers
 * in one or two probes, behind a one-entry cache per thread. A slot's kind is written before its key is
 * published; a re-registration of a live key rewrites the kind in place (a reader sees the old or the new).
 *
 * Classification happens once, at registration (control path): CUDA memory via cuPointerGetAttribute from
 * a libcuda that is already loaded (RTLD_NOLOAD: we never load CUDA into a process that has none), mlocked
 * host memory via the VmFlags of the mapping in /proc/self/smaps, plain host memory otherwise. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/dl.h"
#include "preload/verbs_int.h"

uintptr_t vb_mr_keys[VB_MR_SLOTS];
uint8_t vb_mr_kinds[VB_MR_SLOTS];
static pthread_mutex_t mr_lock = PTHREAD_MUTEX_INITIALIZER;
__thread struct vb_mr_cache vb_mr_last __attribute__((tls_model("initial-exec")));
uint32_t vb_mr_gen;

/* Every change, under mr_lock: after the slot's store, so that a reader that sees the new generation
 * also sees the new slot. */
static void mr_changed(void) { __atomic_store_n(&vb_mr_gen, vb_mr_gen + 1, __ATOMIC_RELEASE); }

uint8_t vb_mr_kind_lookup(uint64_t want, uint32_t id, uint32_t lkey)
{
    /* the generation before the table: a change in between leaves the entry stale, never wrong */
    uint32_t gen = __atomic_load_n(&vb_mr_gen, __ATOMIC_ACQUIRE);
    long s = rs_ptrmap_find_h(vb_mr_keys, VB_MR_SLOTS, want, vb_mr_hash(id, lkey));
    uint8_t kind = s >= 0 ? __atomic_load_n(&vb_mr_kinds[s], __ATOMIC_RELAXED) : RS_MEM_UNKNOWN;
    vb_mr_last.key = want;
    vb_mr_last.gen = gen;
    vb_mr_last.kind = kind;
    return kind;
}

void vb_mr_add(const struct vb_ctx_rec *c, uint32_t lkey, uint8_t kind)
{
    uint64_t key = vb_mr_key(c->id, lkey);
    pthread_mutex_lock(&mr_lock);
    /* A live entry with the same key (re-registration after a missed dereg) is replaced in place. */
    int found, s = rs_ptrmap_slot_h(vb_mr_keys, VB_MR_SLOTS, key, vb_mr_hash(c->id, lkey), &found);
    if (s >= 0) {
        __atomic_store_n(&vb_mr_kinds[s], kind, __ATOMIC_RELAXED);
        if (!found) rs_ptrmap_publish(vb_mr_keys, s, key);
    }
    mr_changed();
    pthread_mutex_unlock(&mr_lock);
    if (s < 0) rs_warn_once("verbs: MR table full; posts from further MRs show memory kind 'unknown'");
}

void vb_mr_del(const struct vb_ctx_rec *c, uint32_t lkey)
{
    pthread_mutex_lock(&mr_lock);
    rs_ptrmap_remove_h(vb_mr_keys, VB_MR_SLOTS, vb_mr_key(c->id, lkey), vb_mr_hash(c->id, lkey));
    mr_changed();
    pthread_mutex_unlock(&mr_lock);
}

/* A closed context's MRs: its id may be reused by the next context opened. */
void vb_mr_purge(uint32_t ctx_id)
{
    pthread_mutex_lock(&mr_lock);
    for (unsigned i = 0; i < VB_MR_SLOTS; i++) {
        uintptr_t k = vb_mr_keys[i];
        if (k != RS_PTRMAP_EMPTY && k != RS_PTRMAP_TOMB && (uint32_t)(k >> VB_MR_CTX_SHIFT) == ctx_id)
            __atomic_store_n(&vb_mr_keys[i], RS_PTRMAP_TOMB, __ATOMIC_RELEASE);
    }
    mr_changed();
    pthread_mutex_unlock(&mr_lock);
}

/* ---- classification ---- */

/* CUDA driver ABI values (cuda.h): CUpointer_attribute and CUmemorytype. */
enum { CU_PTR_ATTR_MEMORY_TYPE = 2, CU_PTR_ATTR_IS_MANAGED = 8, CU_PTR_ATTR_DEVICE_ORDINAL = 9 };
enum { CU_MEM_HOST = 1, CU_MEM_DEVICE = 2, CU_MEM_UNIFIED = 4 };
typedef int (*cu_ptr_attr_fn)(void *data, int attribute, unsigned long long ptr);

static int classify_cuda(uint64_t addr, uint8_t *kind, int *dev)
{
    static cu_ptr_attr_fn fn;
    if (!fn) fn = (cu_ptr_attr_fn)rs_dl_loaded("libcuda.so", "cuPointerGetAttribute");
    if (!fn) return 0;
    unsigned int type = 0;
    if (fn(&type, CU_PTR_ATTR_MEMORY_TYPE, addr) != 0) return 0; /* not CUDA memory, or no cuInit yet */
    unsigned int managed = 0;
    int ord = -1;
    fn(&managed, CU_PTR_ATTR_IS_MANAGED, addr);
    fn(&ord, CU_PTR_ATTR_DEVICE_ORDINAL, addr);
    if (managed || type == CU_MEM_UNIFIED) *kind = RS_MEM_MANAGED;
    else if (type == CU_MEM_DEVICE) *kind = RS_MEM_DEVICE;
    else if (type == CU_MEM_HOST) *kind = RS_MEM_PINNED; /* cudaHostAlloc / cudaHostRegister */
    else return 0;
    *dev = *kind == RS_MEM_PINNED ? -1 : ord;
    return 1;
}

/* Any locked memory in the process at all? VmLck in /proc/self/status: a small file, read before the
 * potentially large smaps (a big process has thousands of mappings). */
static int any_locked(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return 1; /* cannot tell: look at smaps */
    char line[128];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmLck:", 6)) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kb != 0;
}

/* Is the mapping holding addr locked (mlock/mlockall)? VmFlags "lo" in /proc/self/smaps. */
static int is_mlocked(uint64_t addr)
{
    if (!any_locked()) return 0;
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f) return 0;
    char line[512];
    int in = 0, locked = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (line[0] != 'V' && sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            if (in) break; /* past our mapping without a VmFlags line */
            in = addr >= lo && addr < hi;
            continue;
        }
        if (in && !strncmp(line, "VmFlags:", 8)) {
            for (char *p = line + 8; (p = strstr(p, " lo")); p += 3)
                if (p[3] == ' ' || p[3] == '\n' || p[3] == 0) locked = 1;
            break;
        }
    }
    fclose(f);
    return locked;
}

uint8_t vb_classify(uint64_t addr, uint64_t len, int *cuda_dev)
{
    (void)len;
    uint8_t kind = RS_MEM_HOST;
    *cuda_dev = -1;
    if (!addr) return RS_MEM_UNKNOWN; /* implicit ODP (NULL, SIZE_MAX) or zero-based device memory */
    if (classify_cuda(addr, &kind, cuda_dev)) return kind;
    return is_mlocked(addr) ? RS_MEM_PINNED : RS_MEM_HOST;
}
