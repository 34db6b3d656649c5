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

/* A directory: the first file by name that holds facts. A process that ends before its writer thread has read
 * them (a short command a job runs: uname, nvidia-smi, a shell) has none, and its name may sort first (pids
 * past 99999 sort before shorter ones). With none anywhere, the first file answers (its reason, or "no facts"). */
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
    int n = facts_of_file(f, paths[0], used, usedlen, err, errlen, st);
    for (int i = 1; i < np && n == 0; i++) {
        char u[1024], e2[512];
        struct rs_read_stats s2;
        int m = facts_of_file(f, paths[i], u, sizeof u, e2, sizeof e2, &s2);
        if (m <= 0) continue;
        n = m;
        if (used) snprintf(used, usedlen, "%s", u);
        if (st) *st = s2;
    }
    rs_paths_free(paths, np);
    return n;
}
