/* Host facts from a trace's HOST_FACT events, so doctor's checks run on the host a run was recorded on. */
#include "doctor_trace.h"

#include <stdio.h>

#include "formats/reader.h"

/* One file's facts into f: their number, or -1 with err (the file could not be opened). */
static int facts_of_file(struct rs_facts *f, const char *path, char *used, size_t usedlen, char *err, size_t errlen,
                         struct rs_read_stats *st)
{
    struct rs_reader *r = rs_reader_open(path, err, errlen);
    if (!r) return -1;
    const struct rs_header_info *h = rs_reader_header(r);
    if (used) snprintf(used, usedlen, "%s (host %s)", path, h && h->host ? h->host : "unknown");
    int n = 0;
    struct rs_event e;
    while (rs_reader_next(r, &e) > 0) {
        if (!e.known || e.ev->kind != RS_EV_HOST_FACT) continue;
        const struct rs_ev_HOST_FACT *hf = (const struct rs_ev_HOST_FACT *)e.ev;
        const char *k = rs_reader_string(r, hf->key, NULL), *v = rs_reader_string(r, hf->value, NULL);
        if (k && v && rs_facts_add(f, k, v) == 0) n++;
    }
    if (st) *st = *rs_reader_stats(r);
    rs_reader_close(r);
    return n;
}

/* A directory: the first file by name that holds the tracer's snapshot (its hostfacts/version fact). A process that
 * ends before its writer thread has read it (a short command a job runs: uname, nvidia-smi, a shell) has none, its
 * name may sort first (pids past 99999 sort before shorter ones), and a forked child's file holds only the facts its
 * libraries add (nccl/version), not the snapshot. Failing that, the first file with any facts; with none anywhere,
 * the first file that could be read answers ("no facts", or the reader's reason); with none readable, the first
 * file's error. */
int rs_facts_from_trace(struct rs_facts *f, const char *path, char *used, size_t usedlen, char *err, size_t errlen,
                        struct rs_read_stats *st)
{
    char **paths = NULL;
    char *const ops[1] = {(char *)path};
    int np = rs_expand_paths(1, ops, &paths, err, errlen);
    if (np <= 0) {
        if (np == 0) snprintf(err, errlen, "%s: no trace files", path);
        return -1;
    }
    struct pick {
        struct rs_facts facts;
        int n; /* -1: none yet */
        char used[1024];
        struct rs_read_stats st;
    } snap = {.n = -1}, some = {.n = -1}, first = {.n = -1};
    char first_err[512] = "";
    for (int i = 0; i < np && snap.n < 0; i++) {
        struct pick p = {.n = -1};
        char e[512];
        rs_facts_init(&p.facts);
        p.n = facts_of_file(&p.facts, paths[i], p.used, sizeof p.used, e, sizeof e, &p.st);
        if (p.n < 0 && !first_err[0]) snprintf(first_err, sizeof first_err, "%s", e);
        if (p.n > 0 && rs_facts_get(&p.facts, "hostfacts/version")) snap = p; /* the snapshot: this one */
        else if (p.n > 0 && some.n < 0) some = p;
        else if (p.n == 0 && first.n < 0) first = p;
        else rs_facts_free(&p.facts);
    }
    struct pick *use = snap.n > 0 ? &snap : some.n > 0 ? &some : first.n == 0 ? &first : NULL;
    int n = -1;
    if (use) {
        for (size_t k = 0; k < use->facts.n; k++) rs_facts_add(f, use->facts.v[k].key, use->facts.v[k].value);
        n = use->n;
        if (used) snprintf(used, usedlen, "%s", use->used);
        if (st) *st = use->st;
    } else snprintf(err, errlen, "%s", first_err);
    rs_facts_free(&snap.facts);
    rs_facts_free(&some.facts);
    rs_facts_free(&first.facts);
    rs_paths_free(paths, np);
    return n;
}
