/* Call stacks for chosen events (see stack.h). No link-time dependency on libunwind (the GPU host has no
 * libunwind.h, and bash must load the preload without it): libunwind.so.8 is dlopen'ed RTLD_LOCAL at first
 * use (local, so its weak `backtrace` never interposes glibc's) and `unw_backtrace` is called through our
 * own declaration; without it, glibc's backtrace() does the same job, more slowly.
 *
 * Each call unwinds at most RS_STACK_DEPTH frames of the caller (plus the few of our own, dropped), hashes
 * the return-address chain and looks it up in a fixed lock-free table: a new site gets the next id and
 * one CALL_STACK event whose frames carry, besides the address, the path of the object holding it (an
 * interned string: written once per file whatever the number of stacks) and the offset from its load
 * bias, so `railscope dump` can symbolise offline from the module files. Module look-ups (dladdr1) happen
 * only for new sites. Nothing here takes a lock of ours; dladdr1/dlopen take the loader's recursive lock. */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/ptrmap.h"
#include "preload/stack.h"
#include "tracer/rs_tracer.h"

#define RS_STACK_DEPTH 32    /* frames kept per stack */
#define RS_STACK_OWN   8     /* room for our own frames at the top, dropped */
#define RS_SITE_SLOTS  1024u /* distinct call sites per process; more are counted, not recorded */

int rs_stack_mode = 1;
static int stack_env_bad;

/* Our own object's address range, to drop the tracer's frames from the top of a stack. */
static uintptr_t own_lo, own_hi;

typedef int (*unw_backtrace_fn)(void **buffer, int size); /* libunwind's, declared here: no libunwind.h */
static unw_backtrace_fn unw_bt;
static int unw_state; /* 0 not tried, 1 being loaded, 2 settled (unw_bt NULL = absent) */

static uintptr_t site_key[RS_SITE_SLOTS];
static uint32_t site_id[RS_SITE_SLOTS];
static uint32_t next_site;
static uint64_t sites_lost;
static uint32_t exe_id;

static int own_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t a = *(uintptr_t *)arg, lo = UINTPTR_MAX, hi = 0;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (s < lo) lo = s;
        if (e > hi) hi = e;
        if (a >= s && a < e) mine = 1;
    }
    if (!mine) return 0;
    own_lo = lo;
    own_hi = hi;
    return 1;
}

static void stack_after_fork_child(void)
{
    /* The child writes its own file: its sites start again so each gets its CALL_STACK there. */
    memset(site_key, 0, sizeof site_key);
    memset(site_id, 0, sizeof site_id);
    next_site = 0;
    sites_lost = 0;
}

__attribute__((constructor)) static void stack_init(void)
{
    const char *v = getenv("RAILSCOPE_STACKS");
    if (!v || !*v || !strcmp(v, "on") || !strcmp(v, "1")) rs_stack_mode = 1;
    else if (!strcmp(v, "off") || !strcmp(v, "0")) rs_stack_mode = 0;
    else if (!strcmp(v, "glibc")) rs_stack_mode = 2;
    else stack_env_bad = 1;
    uintptr_t self = (uintptr_t)&stack_init;
    dl_iterate_phdr(own_range_cb, &self);
    pthread_atfork(NULL, NULL, stack_after_fork_child);
}

static unw_backtrace_fn libunwind(void)
{
    int st = __atomic_load_n(&unw_state, __ATOMIC_ACQUIRE), zero = 0;
    if (st == 0 && __atomic_compare_exchange_n(&unw_state, &zero, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
        unw_backtrace_fn f = h ? (unw_backtrace_fn)dlsym(h, "unw_backtrace") : NULL;
        if (!f) rs_debug("stacks: libunwind.so.8 not loadable, using glibc backtrace()");
        __atomic_store_n(&unw_bt, f, __ATOMIC_RELEASE);
        __atomic_store_n(&unw_state, 2, __ATOMIC_RELEASE);
        return f;
    }
    /* Another thread is loading it: this one call uses glibc's unwinder. */
    return st == 2 ? __atomic_load_n(&unw_bt, __ATOMIC_ACQUIRE) : NULL;
}

static uint32_t module_of(uintptr_t pc, uint32_t *offset)
{
    Dl_info info;
    struct link_map *lm = NULL;
    *offset = RS_STACK_OFFSET_UNKNOWN;
    /* pc - 1: the call instruction, so a call ending a function is found in its object. */
    if (!dladdr1((void *)(pc - 1), &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return 0;
    uint64_t off = (uint64_t)pc - (uint64_t)lm->l_addr;
    if (off < RS_STACK_OFFSET_UNKNOWN) *offset = (uint32_t)off;
    if (lm->l_name && lm->l_name[0]) return rs_intern(lm->l_name);
    /* The main program's link map has an empty name. */
    uint32_t id = __atomic_load_n(&exe_id, __ATOMIC_RELAXED);
    if (!id) {
        char path[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        id = n > 0 ? rs_intern_n(path, (size_t)n) : 0;
        __atomic_store_n(&exe_id, id, __ATOMIC_RELAXED);
    }
    return id;
}

static void write_stack(uint32_t site, uint32_t for_kind, uint64_t ts, void *const *pcs, int n, uint32_t flags)
{
    uint64_t buf[(sizeof(struct rs_ev_CALL_STACK) + RS_STACK_DEPTH * sizeof(struct rs_stack_frame)) / 8];
    struct rs_ev_CALL_STACK *ev = (struct rs_ev_CALL_STACK *)buf;
    struct rs_stack_frame *f = (struct rs_stack_frame *)(ev + 1);
    ev->h.ts = ts;
    ev->h.kind = RS_EV_CALL_STACK;
    ev->h.size = (uint16_t)(sizeof *ev + (size_t)n * sizeof *f);
    ev->h.aux = 0;
    ev->depth = (uint32_t)n;
    ev->for_kind = for_kind;
    ev->site = site;
    ev->flags = flags;
    for (int i = 0; i < n; i++) {
        f[i].pc = (uint64_t)(uintptr_t)pcs[i];
        f[i].module = module_of((uintptr_t)pcs[i], &f[i].offset);
    }
    rs_emit(&ev->h);
}

uint32_t rs_stack_site(uint32_t for_kind, uint64_t ts)
{
    int mode = __atomic_load_n(&rs_stack_mode, __ATOMIC_RELAXED);
    if (!mode) return 0;
    if (RS_UNLIKELY(stack_env_bad))
        rs_warn_once("RAILSCOPE_STACKS: unknown value '%s' (on, glibc, off): using on", getenv("RAILSCOPE_STACKS"));
    void *pcs[RS_STACK_DEPTH + RS_STACK_OWN];
    const int cap = RS_STACK_DEPTH + RS_STACK_OWN;
    unw_backtrace_fn unw = mode == 1 ? libunwind() : NULL;
    /* Another thread is still loading libunwind: skip this call instead of unwinding with glibc's
     * backtrace(), whose chain can differ from libunwind's and would give the site a second stack (seen:
     * 8 threads hitting a new site at once under ASan). A later call records the site. */
    if (mode == 1 && !unw && __atomic_load_n(&unw_state, __ATOMIC_ACQUIRE) != 2) return 0;
    uint32_t flags = 0;
    int n;
    if (unw) {
        n = unw(pcs, cap);
        flags |= RS_STACK_LIBUNWIND;
    } else {
        n = backtrace(pcs, cap);
    }
    if (n >= cap) flags |= RS_STACK_TRUNCATED;
    int skip = 0;
    while (skip < n && (uintptr_t)pcs[skip] >= own_lo && (uintptr_t)pcs[skip] < own_hi) skip++;
    n -= skip;
    if (n <= 0) return 0;
    if (n > RS_STACK_DEPTH) {
        n = RS_STACK_DEPTH;
        flags |= RS_STACK_TRUNCATED;
    }
    void *const *chain = pcs + skip;
    uint64_t h = 0x9E3779B97F4A7C15ull * (uint64_t)(n + 1);
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uintptr_t)chain[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    /* The site table: a pointer-keyed table (preload/ptrmap.h) on the chain's hash, claimed lock-free. */
    uintptr_t key = h | 2; /* never 0 (empty) or 1 (a tombstone) */
    int fresh, slot = rs_ptrmap_claim_h(site_key, RS_SITE_SLOTS, key, (unsigned)(h >> 17), &fresh);
    if (slot >= 0 && fresh) {
        uint32_t id = __atomic_add_fetch(&next_site, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&site_id[slot], id, __ATOMIC_RELEASE);
        write_stack(id, for_kind, ts, chain, n, flags);
        return id;
    }
    /* Another thread may have claimed the slot and not published its id yet: 0 then, just once. */
    if (slot >= 0) return __atomic_load_n(&site_id[slot], __ATOMIC_ACQUIRE);
    if (__atomic_fetch_add(&sites_lost, 1, __ATOMIC_RELAXED) == 0)
        rs_warn("stacks: the call-site table is full (%u slots): new call sites are not recorded", RS_SITE_SLOTS);
    return 0;
}
