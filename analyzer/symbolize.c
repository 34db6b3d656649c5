/* A small ELF symbol reader for `railscope dump` (see symbolize.h). Only what symbolisation needs: the
 * section headers, the SHT_SYMTAB and SHT_DYNSYM tables and their string tables, read with pread (a
 * libtorch_cuda.so is a gigabyte; its symbol tables are a few megabytes). Every offset, size, index and
 * name is checked against the file before use; anything odd makes the module "unreadable" (dump then prints
 * module+offset), never a crash. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"
#include "util/xalloc.h"

#define SYM_MAX_TABLE   (256ull << 20) /* bytes of one symbol or string table we accept */
#define SYM_MAX_SYMS    (8u << 20)     /* function symbols kept per module */
#define SYM_MAX_MODULES 4096

struct sym {
    uint64_t addr, size;
    uint32_t name; /* offset into the module's names */
};

struct module {
    char *path;
    size_t path_len;
    int ok;
    struct sym *syms;
    size_t nsyms;
    char *names;
    size_t names_len, names_cap;
};

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

struct rs_symbolizer {
    struct module *mods;
    size_t nmods, cap;
    int demangler_tried;
    cxa_demangle_fn demangle;
    char *last; /* the last demangled name (one frame is printed at a time) */
};

struct rs_symbolizer *rs_sym_new(void) { return rs_xcalloc(1, sizeof(struct rs_symbolizer), "symbolize"); }

void rs_sym_free(struct rs_symbolizer *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nmods; i++) {
        free(s->mods[i].path);
        free(s->mods[i].syms);
        free(s->mods[i].names);
    }
    free(s->mods);
    free(s->last);
    free(s);
}

/* Read exactly n bytes at off, or fail; the range was checked against the file size by the caller. */
static void *read_at(int fd, uint64_t off, uint64_t n)
{
    if (n == 0 || n > SYM_MAX_TABLE) return NULL;
    unsigned char *b = rs_xmalloc((size_t)n, "symbolize b");
    if (!b) return NULL;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, b + got, (size_t)n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(b);
            return NULL;
        }
        got += (size_t)r;
    }
    return b;
}

static int in_file(uint64_t off, uint64_t n, uint64_t size) { return off <= size && n <= size - off; }

static int sym_cmp(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    /* Among symbols at one address, the sized one first (lookups take the first). */
    return (x->size < y->size) - (x->size > y->size);
}

/* Append the function symbols of one symbol table. Returns 0 when the table is unusable. */
static int add_table(struct module *m, int fd, uint64_t fsize, const Elf64_Shdr *sh, const Elf64_Shdr *shs,
                     unsigned shnum)
{
    if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= shnum) return 0;
    const Elf64_Shdr *st = &shs[sh->sh_link];
    if (st->sh_type != SHT_STRTAB) return 0;
    if (!in_file(sh->sh_offset, sh->sh_size, fsize) || !in_file(st->sh_offset, st->sh_size, fsize)) return 0;
    uint64_t nsym = sh->sh_size / sizeof(Elf64_Sym);
    if (nsym == 0 || st->sh_size == 0) return 0;
    Elf64_Sym *syms = read_at(fd, sh->sh_offset, nsym * sizeof(Elf64_Sym));
    char *str = read_at(fd, st->sh_offset, st->sh_size);
    int ok = syms && str;
    for (uint64_t i = 0; ok && i < nsym && m->nsyms < SYM_MAX_SYMS; i++) {
        const Elf64_Sym *s = &syms[i];
        unsigned type = ELF64_ST_TYPE(s->st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF || s->st_value == 0) continue;
        if (s->st_name == 0 || s->st_name >= st->sh_size) continue;
        const char *nm = str + s->st_name;
        const char *end = memchr(nm, '\0', st->sh_size - s->st_name);
        if (!end || end == nm) continue;
        size_t len = (size_t)(end - nm) + 1;
        if (m->names_len + len > SYM_MAX_TABLE) break;
        if (m->nsyms % 4096 == 0) {
            struct sym *ns = rs_xrealloc(m->syms, (m->nsyms + 4096) * sizeof *ns, "symbolize ns");
            if (!ns) break;
            m->syms = ns;
        }
        if (m->names_len + len > m->names_cap) {
            size_t cap = m->names_cap ? m->names_cap : 1u << 16;
            while (cap < m->names_len + len) cap *= 2;
            char *nn = rs_xrealloc(m->names, cap, "symbolize nn");
            if (!nn) break;
            m->names = nn;
            m->names_cap = cap;
        }
        memcpy(m->names + m->names_len, nm, len);
        m->syms[m->nsyms].addr = s->st_value;
        m->syms[m->nsyms].size = s->st_size;
        m->syms[m->nsyms].name = (uint32_t)m->names_len;
        m->names_len += len;
        m->nsyms++;
    }
    free(syms);
    free(str);
    return ok;
}

static void load_module(struct module *m)
{
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return;
    struct stat sb;
    Elf64_Ehdr eh;
    Elf64_Shdr *shs = NULL;
    /* Regular files only: a FIFO or device named in a hostile trace must not block or be read. */
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < (off_t)sizeof eh) goto out;
    uint64_t fsize = (uint64_t)sb.st_size;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) goto out;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0)
        goto out;
    unsigned shnum = eh.e_shnum;
    if (!in_file(eh.e_shoff, (uint64_t)shnum * sizeof(Elf64_Shdr), fsize)) goto out;
    shs = read_at(fd, eh.e_shoff, (uint64_t)shnum * sizeof(Elf64_Shdr));
    if (!shs) goto out;
    int any = 0;
    for (unsigned i = 0; i < shnum; i++)
        if (shs[i].sh_type == SHT_SYMTAB || shs[i].sh_type == SHT_DYNSYM)
            any |= add_table(m, fd, fsize, &shs[i], shs, shnum);
    if (any && m->nsyms) {
        qsort(m->syms, m->nsyms, sizeof *m->syms, sym_cmp);
        m->ok = 1;
    }
out:
    free(shs);
    close(fd);
}

static struct module *module_get(struct rs_symbolizer *s, const char *path, size_t n)
{
    for (size_t i = 0; i < s->nmods; i++)
        if (s->mods[i].path_len == n && memcmp(s->mods[i].path, path, n) == 0) return &s->mods[i];
    if (s->nmods >= SYM_MAX_MODULES || memchr(path, '\0', n)) return NULL;
    if (s->nmods == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct module *nm = rs_xrealloc(s->mods, cap * sizeof *nm, "symbolize nm");
        if (!nm) return NULL;
        s->mods = nm;
        s->cap = cap;
    }
    struct module *m = &s->mods[s->nmods];
    memset(m, 0, sizeof *m);
    m->path = rs_xmalloc(n + 1, "symbolize path");
    if (!m->path) return NULL;
    memcpy(m->path, path, n);
    m->path[n] = '\0';
    m->path_len = n;
    s->nmods++;
    load_module(m);
    return m;
}

const char *rs_sym_lookup(struct rs_symbolizer *s, const char *path, size_t n, uint64_t vaddr, uint64_t *off)
{
    if (!s || !path || !n) return NULL;
    struct module *m = module_get(s, path, n);
    if (!m || !m->ok) return NULL;
    /* The last symbol starting at or below vaddr. */
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].addr <= vaddr) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    /* Walk back over a few neighbours: a sized symbol that contains vaddr wins over a nearer unsized one. */
    const struct sym *best = NULL;
    for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++) {
        const struct sym *c = &m->syms[i - 1];
        if (c->size ? vaddr - c->addr < c->size : !best) {
            if (c->size) {
                best = c;
                break;
            }
            best = c;
        }
    }
    if (!best || (!best->size && vaddr - best->addr > (1u << 20))) return NULL;
    *off = vaddr - best->addr;
    return m->names + best->name;
}

const char *rs_sym_demangle(struct rs_symbolizer *s, const char *name)
{
    if (!s || !name || strncmp(name, "_Z", 2) != 0 || strnlen(name, 4097) > 4096) return name;
    if (!s->demangler_tried) {
        s->demangler_tried = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (h) s->demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
    }
    if (!s->demangle) return name;
    int status = -1;
    char *d = s->demangle(name, NULL, NULL, &status);
    if (status != 0 || !d) {
        free(d);
        return name;
    }
    free(s->last);
    s->last = d;
    return d;
}
