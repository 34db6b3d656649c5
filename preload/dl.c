/* Symbol resolution for the interposers (API in preload/dl.h) and the dlsym/dlvsym interposition that lets
 * railscope see libraries loaded with dlopen + dlsym/dlvsym (NCCL loads libibverbs that way).
 *
 * The real dlsym/dlvsym: this library exports `dlsym` and `dlvsym`, so any call to them from inside it —
 * including dlsym(RTLD_NEXT, "dlsym") — lands in our own wrapper. We therefore find glibc's definitions by
 * reading the dynamic symbol table of the loaded libc (or libdl before glibc 2.34) directly, walking the
 * dynamic linker's list of loaded objects (_r_debug.r_map) and the ELF hash tables: no symbol look-up and
 * no libc call, so no recursion whatever the load order, and nothing a sanitizer intercepts (TSan and ASan
 * call dlsym before their own interceptors, dl_iterate_phdr and dladdr included, are ready).
 *
 * Caller identity: glibc's dlsym uses its return address to decide what RTLD_NEXT (and the local scope of
 * RTLD_DEFAULT) means. Every look-up that we do not redirect is therefore a tail call into the real
 * function (the compiler emits a jmp; tests/verbs/harmless.t checks RTLD_NEXT), so the application's own
 * caller is the one glibc sees. RTLD_NEXT look-ups are never redirected.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/dl.h"
#include "tracer/rs_tracer.h"

/* dlsym can be called before anything else in the process is initialised: AddressSanitizer's own start-up
 * resolves its interceptors with dlsym(RTLD_NEXT, ...) before its shadow memory exists. Everything dlsym
 * and dlvsym reach is therefore left uninstrumented (sanitizer builds only; no effect otherwise). */
#define RS_DL_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

/* ...and uses no libc string function, which a sanitizer may have intercepted but not yet resolved. */
RS_DL_EARLY static int dl_streq(const char *a, const char *b)
{
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}
RS_DL_EARLY static uint32_t dl_hash(const char *s) /* FNV-1a */
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}
RS_DL_EARLY static int dl_prefix(const char *s, const char *p)
{
    while (*p && *s == *p) s++, p++;
    return !*p;
}

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

static dlsym_fn real_dlsym;
static dlvsym_fn real_dlvsym;

/* ---- our own object, to never hand out pointers into it ---- */

/* The static linker defines these for each object: our ELF header and the end of our image. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char _end[] __attribute__((visibility("hidden")));

RS_DL_EARLY static int is_self(const void *p) { return p && (const char *)p >= __ehdr_start && (const char *)p < _end; }
int rs_dl_is_self(const void *p) { return is_self(p); }

int rs_dl_self_preloaded(char *path, size_t n)
{
    Dl_info self;
    if (n) path[0] = 0;
    if (!dladdr((void *)rs_dl_self_preloaded, &self) || !self.dli_fname || !self.dli_fname[0]) return 0;
    snprintf(path, n, "%s", self.dli_fname);
    const char *pre = getenv("LD_PRELOAD"), *me = strrchr(self.dli_fname, '/');
    me = me ? me + 1 : self.dli_fname;
    size_t ml = strlen(me);
    for (const char *t = pre; t && *t;) { /* each token's last path component against ours */
        size_t l = strcspn(t, ": \t");
        const char *b = t;
        for (const char *c = t; c < t + l; c++)
            if (*c == '/') b = c + 1;
        if ((size_t)(t + l - b) == ml && !memcmp(b, me, ml)) return 1;
        t += l;
        t += strspn(t, ": \t");
    }
    return 0;
}

/* ---- reading a loaded object's dynamic symbol table ---- */

RS_DL_EARLY static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) h = h * 33 + *c;
    return h;
}

RS_DL_EARLY static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0, g;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        h = (h << 4) + *c;
        g = h & 0xf0000000u;
        if (g) h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* glibc relocates most d_ptr entries of a writable .dynamic in place; some objects (vDSO, read-only
 * dynamic sections) keep them relative. Accept both. */
RS_DL_EARLY static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) v) { return v < base ? base + v : v; }

RS_DL_EARLY static int defined_func(const ElfW(Sym) * s)
{
    int t = ELF64_ST_TYPE(s->st_info);
    return s->st_shndx != SHN_UNDEF && s->st_value && (t == STT_FUNC || t == STT_GNU_IFUNC);
}

RS_DL_EARLY static void *elf_lookup(uintptr_t base, const ElfW(Dyn) * dyn, const char *name)
{
    if (!dyn) return NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnuhash = NULL, *hash = NULL;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_GNU_HASH: gnuhash = (const uint32_t *)dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_HASH: hash = (const uint32_t *)dyn_ptr(base, d->d_un.d_ptr); break;
        default: break;
        }
    }
    if (!symtab || !strtab) return NULL;
    const ElfW(Sym) *s = NULL;
    if (gnuhash) {
        uint32_t nbuckets = gnuhash[0], symoffset = gnuhash[1], bloom_size = gnuhash[2];
        const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnuhash + 4);
        const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
        const uint32_t *chain = buckets + nbuckets;
        uint32_t h = gnu_hash(name);
        if (!nbuckets) return NULL;
        for (uint32_t idx = buckets[h % nbuckets]; idx >= symoffset && idx; idx++) {
            uint32_t ch = chain[idx - symoffset];
            if ((h | 1) == (ch | 1) && dl_streq(strtab + symtab[idx].st_name, name) && defined_func(&symtab[idx])) {
                s = &symtab[idx];
                break;
            }
            if (ch & 1) break;
        }
    } else if (hash) {
        uint32_t nbucket = hash[0];
        const uint32_t *bucket = hash + 2, *chain = bucket + nbucket;
        if (!nbucket) return NULL;
        for (uint32_t idx = bucket[sysv_hash(name) % nbucket]; idx; idx = chain[idx])
            if (dl_streq(strtab + symtab[idx].st_name, name) && defined_func(&symtab[idx])) {
                s = &symtab[idx];
                break;
            }
    }
    if (!s) return NULL;
    if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC) return NULL; /* dlsym is never an IFUNC in glibc */
    return (void *)(base + s->st_value);
}

/* The dynamic linker's list of loaded objects, set up before any constructor or preloaded code runs. */
RS_DL_EARLY static void resolve_real(void)
{
    if (__atomic_load_n(&real_dlvsym, __ATOMIC_ACQUIRE)) return;
    for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
        const char *n = m->l_name ? m->l_name : "", *b = n;
        for (const char *p = n; *p; p++)
            if (*p == '/') b = p + 1;
        /* Only glibc's own objects: libc.so.6 (glibc >= 2.34) or libdl.so.2 (older). */
        if (!dl_prefix(b, "libc.so") && !dl_prefix(b, "libdl.so")) continue;
        void *s = elf_lookup(m->l_addr, m->l_ld, "dlsym"), *v = elf_lookup(m->l_addr, m->l_ld, "dlvsym");
        if (s && v && !is_self(s)) {
            __atomic_store_n(&real_dlsym, (dlsym_fn)s, __ATOMIC_RELEASE);
            __atomic_store_n(&real_dlvsym, (dlvsym_fn)v, __ATOMIC_RELEASE);
            return;
        }
    }
}

__attribute__((constructor(101))) static void dl_init(void) { resolve_real(); }

/* ---- redirect table: fixed size, append-only, readers lock-free ---- */

#define RS_DL_MAX_REDIRECTS 128
static struct {
    struct rs_dl_redirect r;
    uint32_t hash;
} redirects[RS_DL_MAX_REDIRECTS];
static int n_redirects;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

void rs_dl_register(const struct rs_dl_redirect *r, int n)
{
    pthread_mutex_lock(&reg_lock);
    int k = __atomic_load_n(&n_redirects, __ATOMIC_RELAXED);
    for (int i = 0; i < n && k < RS_DL_MAX_REDIRECTS; i++) {
        if (!r[i].name || !r[i].wrapper || !r[i].real_slot) continue;
        redirects[k].r = r[i];
        redirects[k].hash = dl_hash(r[i].name);
        k++;
    }
    __atomic_store_n(&n_redirects, k, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&reg_lock);
    if (k == RS_DL_MAX_REDIRECTS) rs_warn_once("dlsym redirect table full (%d entries)", RS_DL_MAX_REDIRECTS);
}

/* `version` NULL = plain dlsym (the object's default version, which is what registrations name). */
RS_DL_EARLY static const struct rs_dl_redirect *find_redirect(const char *name, const char *version)
{
    int n = __atomic_load_n(&n_redirects, __ATOMIC_ACQUIRE);
    if (!n || !name) return NULL;
    uint32_t h = dl_hash(name);
    for (int i = 0; i < n; i++) {
        if (redirects[i].hash != h || !dl_streq(redirects[i].r.name, name)) continue;
        const char *want = redirects[i].r.version;
        if (version && want && !dl_streq(version, want)) continue;
        return &redirects[i].r;
    }
    return NULL;
}

RS_DL_EARLY static void *apply(const struct rs_dl_redirect *r, void *found)
{
    if (found && (found == r->wrapper || is_self(found))) return r->absent && r->absent() ? NULL : found;
    if (!found) return found;
    __atomic_store_n(r->real_slot, found, __ATOMIC_RELEASE);
    return r->wrapper;
}

/* Look-ups we do not redirect are tail calls (see the top of this file): keep these functions simple so
 * that the compiler keeps emitting `jmp` for them. */
RS_DL_EARLY RS_EXPORT void *dlsym(void *handle, const char *name)
{
    dlsym_fn real = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    if (RS_UNLIKELY(!real)) {
        resolve_real();
        real = real_dlsym;
        if (!real) return NULL; /* cannot happen with glibc; never call NULL */
    }
    const struct rs_dl_redirect *r;
    if (handle == RTLD_NEXT || !(r = find_redirect(name, NULL))) return real(handle, name);
    return apply(r, real(handle, name));
}

RS_DL_EARLY RS_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
    dlvsym_fn real = __atomic_load_n(&real_dlvsym, __ATOMIC_ACQUIRE);
    if (RS_UNLIKELY(!real)) {
        resolve_real();
        real = real_dlvsym;
        if (!real) return NULL;
    }
    const struct rs_dl_redirect *r;
    if (handle == RTLD_NEXT || !(r = find_redirect(name, version))) return real(handle, name, version);
    return apply(r, real(handle, name, version));
}

/* ---- the resolution API ---- */

RS_DL_EARLY void *rs_dl_next(const char *name)
{
    resolve_real();
    if (!real_dlsym) return NULL;
    void *p = real_dlsym(RTLD_NEXT, name);
    return is_self(p) ? NULL : p;
}

void *rs_dl_sym(void *handle, const char *name)
{
    resolve_real();
    return real_dlsym && handle ? real_dlsym(handle, name) : NULL;
}

RS_DL_EARLY void *rs_dl_next_v(const char *name, const char *version)
{
    resolve_real();
    if (!real_dlvsym) return NULL;
    void *p = real_dlvsym(RTLD_NEXT, name, version);
    return is_self(p) ? NULL : p;
}

#define RS_DL_MAX_CAND 16
#define RS_DL_PATH     512
struct cand_list {
    const char *lib;
    int n;
    char path[RS_DL_MAX_CAND][RS_DL_PATH];
};

static int cand_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct cand_list *c = arg;
    const char *n = info->dlpi_name;
    if (!n || !*n || !strstr(n, c->lib) || c->n >= RS_DL_MAX_CAND) return 0;
    size_t len = strlen(n);
    if (len >= RS_DL_PATH) return 0;
    memcpy(c->path[c->n++], n, len + 1);
    return 0;
}

static void *loaded_lookup(const char *lib, const char *name, const char *version)
{
    resolve_real();
    if (!real_dlsym || !lib || !name) return NULL;
    /* Collect first, dlopen after: dlopen inside the dl_iterate_phdr callback could deadlock. */
    static __thread int busy; /* a constructor run by the NOLOAD dlopen below must not come back here */
    if (busy) return NULL;
    busy = 1;
    struct cand_list c;
    c.lib = lib;
    c.n = 0;
    dl_iterate_phdr(cand_cb, &c);
    void *found = NULL;
    for (int i = 0; i < c.n && !found; i++) {
        void *h = dlopen(c.path[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void *p = version ? real_dlvsym(h, name, version) : real_dlsym(h, name);
        if (p && !is_self(p)) found = p;
        dlclose(h); /* balances the reference RTLD_NOLOAD took; the object stays loaded */
    }
    busy = 0;
    return found;
}

void *rs_dl_loaded(const char *lib, const char *name) { return loaded_lookup(lib, name, NULL); }

void *rs_dl_loaded_v(const char *lib, const char *name, const char *version)
{
    return loaded_lookup(lib, name, version);
}

void *rs_dl_real(const char *lib, const char *name)
{
    void *p = rs_dl_next(name);
    return p ? p : rs_dl_loaded(lib, name);
}

void *rs_dl_real_v(const char *lib, const char *name, const char *version)
{
    void *p = rs_dl_next_v(name, version);
    return p ? p : rs_dl_loaded_v(lib, name, version);
}
