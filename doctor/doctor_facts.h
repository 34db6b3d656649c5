/* A host-facts table: the key/value pairs of hostfacts/hostfacts.h (collected live, loaded from a facts
 * file, or taken from a trace's HOST_FACT events), sorted for lookup. Keys: docs/doctor.md. */
#ifndef RAILSCOPE_DOCTOR_FACTS_H
#define RAILSCOPE_DOCTOR_FACTS_H

#include <stddef.h>
#include <stdio.h>

#include "hostfacts/hostfacts.h" /* rs_natcmp */

struct rs_fact {
    char *key, *value;
};

struct rs_facts {
    struct rs_fact *v;
    size_t n, cap;
    int sorted;
};

#define RS_FACT_NAME 64 /* longest path component rs_facts_children() returns */

void rs_facts_init(struct rs_facts *f);
void rs_facts_free(struct rs_facts *f);
/* Adds a copy; a later value for the same key replaces the earlier one. 0 ok, -1 out of memory. */
int rs_facts_add(struct rs_facts *f, const char *key, const char *value);
/* Adapter with rs_hostfacts_cb's signature (arg = struct rs_facts *). */
void rs_facts_cb(void *facts, const char *key, const char *value);
/* Loads "key=value" lines (blank lines and lines starting with '#' skipped). Returns the number loaded,
 * or -1 with *badline set on a malformed line. */
int rs_facts_load(struct rs_facts *f, FILE *in, int *badline);
/* Sorts (natural order: mlx5_2 before mlx5_10) and drops duplicates; lookups call it as needed. */
void rs_facts_sort(struct rs_facts *f);
/* Value of the formatted key, or NULL. */
const char *rs_facts_get(struct rs_facts *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Distinct next path components under a formatted prefix ending in '/' (e.g. "ib/" gives device names
 * and "count"), in natural order; returns how many were stored (at most max). */
int rs_facts_children(struct rs_facts *f, char (*out)[RS_FACT_NAME], int max, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
