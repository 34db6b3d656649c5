/* Test helper: print the events of one family from trace files, one line each, fields by name from the
 * format's descriptors:  <kind> ts=<ns> tid=<tid> aux=<aux> field=value ...  (strings resolved).
 * Independent of the CLI, so the verbs tests do not depend on the analyzer's state.
 *   vt_dump FAMILY PATH...      (directories expand to their *.rtrace files) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/reader.h"

static uint64_t rd(const uint8_t *p, unsigned sz)
{
    uint64_t v = 0;
    memcpy(&v, p, sz);
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: vt_dump FAMILY PATH...\n");
        return 2;
    }
    int fam = -1;
    for (int i = 0; i < RS_FAM_COUNT; i++)
        if (!strcmp(rs_family_names[i], argv[1])) fam = i;
    if (fam < 0 && strcmp(argv[1], "all")) {
        fprintf(stderr, "vt_dump: unknown family %s\n", argv[1]);
        return 2;
    }
    char **paths, err[256];
    int n = rs_expand_paths(argc - 2, argv + 2, &paths, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "vt_dump: %s\n", err);
        return 2;
    }
    int rc = 0;
    for (int f = 0; f < n; f++) {
        struct rs_reader *r = rs_reader_open(paths[f], err, sizeof err);
        if (!r) {
            fprintf(stderr, "vt_dump: %s\n", err);
            rc = 2;
            continue;
        }
        struct rs_event e;
        while (rs_reader_next(r, &e) > 0) {
            if (!e.known) continue;
            const struct rs_kind_desc *d = rs_kind_get(e.ev->kind);
            if (!d || (fam >= 0 && d->family != fam)) continue;
            printf("%s ts=%" PRIu64 " tid=%u aux=%u", rs_kind_lname(e.ev->kind), e.ts, e.tid, e.ev->aux);
            const uint8_t *b = (const uint8_t *)e.ev;
            for (unsigned i = 0; i < d->nfields; i++) {
                const struct rs_field_desc *fd = &d->fields[i];
                if (!strcmp(fd->name, "pad")) continue;
                unsigned sz = rs_ftype_size[fd->type];
                uint64_t v = rd(b + rs_field_offset(d, i), sz);
                switch (fd->type) {
                case RS_T_i32: printf(" %s=%d", fd->name, (int32_t)v); break;
                case RS_T_i64: printf(" %s=%" PRId64, fd->name, (int64_t)v); break;
                case RS_T_x64:
                case RS_T_x32: printf(" %s=0x%" PRIx64, fd->name, v); break;
                case RS_T_str: {
                    const char *s = rs_reader_string(r, (uint32_t)v, NULL);
                    printf(" %s=%s", fd->name, s ? s : "?");
                    break;
                }
                default: printf(" %s=%" PRIu64, fd->name, v); break;
                }
            }
            printf("\n");
        }
        const struct rs_read_stats *st = rs_reader_stats(r);
        if (st->status != RS_READ_OK) fprintf(stderr, "vt_dump: %s: %s\n", paths[f], st->reason);
        if (st->drop_events) fprintf(stderr, "vt_dump: %s: %" PRIu64 " events dropped\n", paths[f], st->drop_events);
        rs_reader_close(r);
    }
    rs_paths_free(paths, n);
    return rc;
}
