/* The host-facts table: a sorted array of owned key/value strings. */
#include "doctor_facts.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void rs_facts_init(struct rs_facts *f) { memset(f, 0, sizeof *f); }

void rs_facts_free(struct rs_facts *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].key);
        free(f->v[i].value);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

int rs_facts_add(struct rs_facts *f, const char *key, const char *value)
{
    if (!key || !value) return -1;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 256;
        struct rs_fact *v = realloc(f->v, cap * sizeof *v);
        if (!v) return -1;
        f->v = v;
        f->cap = cap;
    }
    char *k = strdup(key), *val = strdup(value);
    if (!k || !val) {
        free(k);
        free(val);
        return -1;
    }
    f->v[f->n].key = k;
    f->v[f->n].value = val;
    f->n++;
    f->sorted = 0;
    return 0;
}

void rs_facts_cb(void *facts, const char *key, const char *value) { (void)rs_facts_add(facts, key, value); }

int rs_facts_load(struct rs_facts *f, FILE *in, int *badline)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int n = 0, lineno = 0;
    while ((len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0 || line[0] == '#') continue;
        char *eq = strchr(line, '=');
        if (!eq || eq == line) {
            free(line);
            if (badline) *badline = lineno;
            return -1;
        }
        *eq = '\0';
        if (rs_facts_add(f, line, eq + 1) != 0) {
            free(line);
            if (badline) *badline = lineno;
            return -1;
        }
        n++;
    }
    free(line);
    return n;
}

/* Stable order for equal keys: the later addition must win, so sort by (key, insertion index). */
struct idx_fact {
    struct rs_fact f;
    size_t i;
};
static int cmp_idx(const void *a, const void *b)
{
    const struct idx_fact *x = a, *y = b;
    int c = rs_natcmp(x->f.key, y->f.key);
    if (c) return c;
    return x->i < y->i ? -1 : x->i > y->i;
}

void rs_facts_sort(struct rs_facts *f)
{
    if (f->sorted) return;
    f->sorted = 1;
    if (f->n < 2) return;
    struct idx_fact *t = malloc(f->n * sizeof *t);
    if (!t) return; /* lookups fall back to a linear scan (sorted stays set but order is insertion) */
    for (size_t i = 0; i < f->n; i++) {
        t[i].f = f->v[i];
        t[i].i = i;
    }
    qsort(t, f->n, sizeof *t, cmp_idx);
    size_t o = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (i + 1 < f->n && strcmp(t[i].f.key, t[i + 1].f.key) == 0) {
            free(t[i].f.key); /* superseded by the later one */
            free(t[i].f.value);
            continue;
        }
        f->v[o++] = t[i].f;
    }
    f->n = o;
    free(t);
}

static const char *get(struct rs_facts *f, const char *key)
{
    rs_facts_sort(f);
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = rs_natcmp(f->v[mid].key, key);
        if (c == 0) return f->v[mid].value;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = 0; i < f->n; i++) /* only reached when the sort could not allocate */
        if (strcmp(f->v[i].key, key) == 0) return f->v[i].value;
    return NULL;
}

const char *rs_facts_get(struct rs_facts *f, const char *fmt, ...)
{
    char key[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(key, sizeof key, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof key) return NULL;
    return get(f, key);
}

int rs_facts_children(struct rs_facts *f, char (*out)[RS_FACT_NAME], int max, const char *fmt, ...)
{
    char pre[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof pre) return 0;
    rs_facts_sort(f);
    size_t pl = (size_t)k;
    int n = 0;
    for (size_t i = 0; i < f->n && n < max; i++) {
        const char *key = f->v[i].key;
        if (strncmp(key, pre, pl) != 0) continue;
        const char *c = key + pl, *e = strchr(c, '/');
        size_t l = e ? (size_t)(e - c) : strlen(c);
        if (l == 0 || l >= RS_FACT_NAME) continue;
        if (n > 0 && strlen(out[n - 1]) == l && strncmp(out[n - 1], c, l) == 0)
            continue; /* sorted: duplicates are adjacent */
        int dup = 0;  /* natural order can interleave (mlx5_1/x, mlx5_10, mlx5_1/y does not happen, but be safe) */
        for (int j = 0; j < n && !dup; j++) dup = strlen(out[j]) == l && strncmp(out[j], c, l) == 0;
        if (dup) continue;
        memcpy(out[n], c, l);
        out[n][l] = '\0';
        n++;
    }
    return n;
}
