/* Host facts from a trace's HOST_FACT events, so doctor's checks run on the host a run was recorded on. */
#include "doctor_trace.h"

#include <stdio.h>

#include "formats/reader.h"

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
    struct rs_reader *r = rs_reader_open(paths[0], err, errlen);
    if (!r) {
        rs_paths_free(paths, np);
        return -1;
    }
    const struct rs_header_info *h = rs_reader_header(r);
    if (used) snprintf(used, usedlen, "%s (host %s)", paths[0], h && h->host ? h->host : "unknown");
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
    rs_paths_free(paths, np);
    return n;
}
