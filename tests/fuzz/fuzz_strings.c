/* Fuzz target: the string table. The input is a small program that builds one chunk of events:
 *     op 0: STRING record  u32 id (low bits pick a small id, 0, the PARTIAL slot or a huge one), u16 len
 *           claimed, u8 n, n bytes (the claimed length may lie)
 *     op 1: THREAD_START naming a string id        op 2: PARTIAL with a `why` string id
 *     op 3: WARNING naming a string id             op 4: end the frame here (strings carry across frames)
 * Then every id the program mentioned is looked up after the drain, as report/dump would. */
#include "fuzz_common.h"

static uint32_t pick_id(uint32_t x)
{
    switch (x & 7) {
    case 0: return 0;
    case 1: return 0x7fffffffu;                     /* the writer's PARTIAL reason slot */
    case 2: return (1u << 22) - 1 + ((x >> 3) & 3); /* around the reader's id limit */
    case 3: return x;                               /* anything */
    default: return 1 + ((x >> 3) & 511);           /* small dense ids, where the real tables live */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    struct fz_buf f = {0}, ev = {0};
    uint32_t ids[64];
    unsigned nids = 0;
    uint64_t seq = 0;
    fz_put_min_header(&f);
    struct rs_chunk_hdr c = {RS_CHUNK_MAGIC, 9, 0, 0};
    fz_put(&ev, &c, sizeof c);
    int ops = 0;
    while (fz_left(&in) && ops++ < 256) {
        uint8_t op = fz_u8(&in) % 5;
        uint32_t id = pick_id(fz_u32(&in));
        if (nids < 64) ids[nids++] = id;
        if (op == 0) {
            uint16_t claimed = fz_u16(&in);
            const uint8_t *s;
            size_t n = fz_take(&in, fz_u8(&in), &s);
            struct rs_ev_STRING st;
            size_t size_ev = (sizeof st + n + 7) & ~(size_t)7;
            st.h.ts = 1000;
            st.h.kind = RS_EV_STRING;
            st.h.size = (uint16_t)size_ev;
            st.h.aux = 0;
            st.id = id;
            st.len = (claimed & 0x8000) ? claimed : (uint32_t)n;
            fz_put(&ev, &st, sizeof st);
            fz_put(&ev, s, n);
            fz_zero(&ev, size_ev - sizeof st - n);
        } else if (op == 1) {
            struct rs_ev_THREAD_START t;
            memset(&t, 0, sizeof t);
            RS_EV_INIT(&t, THREAD_START, 2000);
            t.name = id;
            fz_put(&ev, &t, sizeof t);
        } else if (op == 2) {
            struct rs_ev_PARTIAL p;
            memset(&p, 0, sizeof p);
            RS_EV_INIT(&p, PARTIAL, 3000);
            p.err = (int32_t)fz_u32(&in);
            p.why = id;
            fz_put(&ev, &p, sizeof p);
        } else if (op == 3) {
            struct rs_ev_WARNING w;
            memset(&w, 0, sizeof w);
            RS_EV_INIT(&w, WARNING, 4000);
            w.message = id;
            fz_put(&ev, &w, sizeof w);
        }
        if (op == 4 || !fz_left(&in)) {
            uint32_t bytes = (uint32_t)(ev.n - sizeof c);
            memcpy(ev.b + 8, &bytes, 4);
            fz_put_raw_frame(&f, ev.b, ev.n, seq++);
            ev.n = 0;
            fz_put(&ev, &c, sizeof c);
        }
    }
    char path[64];
    int fd = fz_file(f.b, f.n, path, sizeof path);
    if (fd >= 0) {
        fz_drain_path(path, 1 << 20);
        /* Look the ids up on a fresh reader after a full drain, as report does for names. */
        char err[256];
        struct rs_reader *r = rs_reader_open(path, err, sizeof err);
        if (r) {
            struct rs_event e;
            while (rs_reader_next(r, &e) > 0) {}
            for (unsigned i = 0; i < nids; i++) {
                size_t len = 0;
                const char *s = rs_reader_string(r, ids[i], &len);
                if (s) fz_check_string(s, len);
            }
            fz_check_stats(rs_reader_stats(r));
            rs_reader_close(r);
        }
        close(fd);
    }
    free(f.b);
    free(ev.b);
    return 0;
}
