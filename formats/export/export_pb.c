/* Perfetto backend: hand-encoded protobuf (Trace { repeated TracePacket packet = 1 }). Field numbers are
 * those of Perfetto's trace protos (reference F3, and tests/export/perfetto_subset.proto which the tests
 * decode with protoc). Each input process is one packet sequence (trusted_packet_sequence_id 1 + its input
 * index), opened by a packet that clears the incremental state; event names, categories and argument names
 * are interned on it (InternedData in the packet of first use), name iids numbered in order of first use on
 * the sequence. So a process's packets depend on that process alone (and its index), and the parts of a
 * parallel export (-j), one process each, concatenate into the very bytes of a serial export.
 *
 * Encoding: a packet is built in a scratch buffer, the TrackEvent inside it in a second one, then both get
 * their exact varint length prefixes (no padding), so the file is as small as the data allows.
 */
#include <stdlib.h>
#include <string.h>

#include "export_int.h"
#include "util/xalloc.h"

/* TracePacket */
#define PB_TRACE_PACKET      1
#define PB_TP_TIMESTAMP      8
#define PB_TP_SEQ_ID         10
#define PB_TP_TRACK_EVENT    11
#define PB_TP_INTERNED       12
#define PB_TP_SEQ_FLAGS      13
#define PB_TP_TRACK_DESC     60
#define SEQ_CLEARED          1
#define SEQ_NEEDS            2
/* TrackDescriptor / ProcessDescriptor */
#define PB_TD_UUID           1
#define PB_TD_NAME           2
#define PB_TD_PROCESS        3
#define PB_TD_PARENT         5
#define PB_TD_COUNTER        8
#define PB_PD_PID            1
#define PB_PD_NAME           6
/* TrackEvent */
#define PB_TE_CAT_IIDS       3
#define PB_TE_DEBUG          4
#define PB_TE_TYPE           9
#define PB_TE_NAME_IID       10
#define PB_TE_TRACK          11
#define PB_TE_DOUBLE_COUNTER 44
#define PB_TE_FLOW           47
#define PB_TE_TERM_FLOW      48
#define TE_BEGIN             1
#define TE_END               2
#define TE_INSTANT           3
#define TE_COUNTER           4
/* DebugAnnotation */
#define PB_DA_NAME_IID       1
#define PB_DA_UINT           3
#define PB_DA_INT            4
#define PB_DA_DOUBLE         5
#define PB_DA_STRING         6
#define PB_DA_POINTER        7
/* InternedData */
#define PB_ID_CATEGORIES     1
#define PB_ID_NAMES          2
#define PB_ID_ARGNAMES       3

#define WT_VARINT 0
#define WT_I64    1
#define WT_LEN    2

struct pbuf {
    uint8_t *p;
    size_t n, cap;
};

struct pb {
    struct rs_exp *x;
    struct rs_xout out;
    struct pbuf pk, te, tmp, idata;
    uint32_t *name_iid; /* nid -> its iid on the sequence, 0 = not interned there yet */
    size_t name_iid_cap;
    uint32_t next_iid; /* the last name iid given on the sequence */
    uint8_t cat_done[RS_XCAT_COUNT], key_done[RS_XK_COUNT];
    uint64_t ts;        /* of the packet being built */
    uint8_t *d0, *tlen; /* packet start and TrackEvent length byte in the output buffer */
    uint64_t seq;       /* trusted_packet_sequence_id: 1 + the process's input index */
};

static inline void pb_need(struct pbuf *b, size_t n)
{
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + n) nc *= 2;
        uint8_t *np = rs_xrealloc(b->p, nc, "export_pb np");
        if (!np) abort(); /* scratch buffers are tiny; out of memory here is fatal */
        b->p = np;
        b->cap = nc;
    }
}
static inline void pb_varint(struct pbuf *b, uint64_t v)
{
    pb_need(b, 10);
    uint8_t *d = b->p + b->n;
    while (v >= 0x80) {
        *d++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *d++ = (uint8_t)v;
    b->n = (size_t)(d - b->p);
}
static inline void pb_tag(struct pbuf *b, unsigned field, unsigned wt) { pb_varint(b, (uint64_t)field << 3 | wt); }
static inline void pb_uint(struct pbuf *b, unsigned field, uint64_t v)
{
    pb_tag(b, field, WT_VARINT);
    pb_varint(b, v);
}
static inline void pb_fixed64(struct pbuf *b, unsigned field, uint64_t v)
{
    pb_tag(b, field, WT_I64);
    pb_need(b, 8);
    memcpy(b->p + b->n, &v, 8); /* little-endian host */
    b->n += 8;
}
static inline void pb_double(struct pbuf *b, unsigned field, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    pb_fixed64(b, field, v);
}
static inline void pb_bytes(struct pbuf *b, unsigned field, const void *s, size_t n)
{
    pb_tag(b, field, WT_LEN);
    pb_varint(b, n);
    pb_need(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static inline void pb_sub(struct pbuf *b, unsigned field, const struct pbuf *sub)
{
    pb_bytes(b, field, sub->p, sub->n);
}

/* Interned entry {iid = 1, name = 2} appended to idata under `field`. */
static void intern_entry(struct pb *w, unsigned field, uint64_t iid, const char *s, size_t n)
{
    w->tmp.n = 0;
    pb_uint(&w->tmp, 1, iid);
    pb_bytes(&w->tmp, 2, s, n);
    pb_sub(&w->idata, field, &w->tmp);
}

/* The name's iid on the sequence, interned on first use. Not nid + 1: nids count every name the exporter
 * made before (other processes' too, in a serial export), iids only this sequence's, so they are the same
 * whichever exporter wrote the process. */
static uint32_t name_ref(struct pb *w, uint32_t nid)
{
    if (nid >= w->name_iid_cap) {
        size_t nc = w->name_iid_cap ? w->name_iid_cap : 1024;
        while (nc <= nid) nc *= 2;
        uint32_t *ni = rs_xrealloc(w->name_iid, nc * sizeof *ni, "export_pb ni");
        if (!ni) abort();
        memset(ni + w->name_iid_cap, 0, (nc - w->name_iid_cap) * sizeof *ni);
        w->name_iid = ni;
        w->name_iid_cap = nc;
    }
    if (!w->name_iid[nid]) {
        w->name_iid[nid] = ++w->next_iid;
        const struct rs_xname *nm = rs_xname_get(w->x, nid);
        intern_entry(w, PB_ID_NAMES, w->name_iid[nid], nm->s, nm->len);
    }
    return w->name_iid[nid];
}

/* Write the packet in w->pk as Trace.packet. */
static void pk_flush(struct pb *w)
{
    uint8_t hdr[12];
    size_t h = 0;
    hdr[h++] = PB_TRACE_PACKET << 3 | WT_LEN;
    uint64_t v = w->pk.n;
    while (v >= 0x80) {
        hdr[h++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    hdr[h++] = (uint8_t)v;
    rs_xout_write(&w->out, hdr, h);
    rs_xout_write(&w->out, w->pk.p, w->pk.n);
    w->pk.n = 0;
}

/* Start a packet for a TrackEvent at ts (the event body goes into w->te). */
static void pk_event(struct pb *w, uint64_t ts)
{
    w->te.n = 0;
    w->idata.n = 0;
    w->ts = ts;
}

static inline size_t vlen(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
static inline uint8_t *put_varint(uint8_t *d, uint64_t v)
{
    while (v >= 0x80) {
        *d++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *d++ = (uint8_t)v;
    return d;
}

/* Packets are written straight into the output buffer (no copy of the event body):
 *     d = pk_begin(w, ts, room);  ...TrackEvent fields at d...;  pk_end(w, d);
 * Trace.packet { timestamp, trusted_packet_sequence_id, track_event, [interned_data], sequence_flags }:
 * the packet's and the TrackEvent's lengths are written as one byte, optimistically (almost every packet is
 * under 128 bytes), and the bytes after them moved in the rare case they are not. Field order inside a
 * message is free in protobuf, so the interned data can follow the event that uses it. */
static uint8_t *pk_begin(struct pb *w, uint64_t ts, size_t room)
{
    size_t max = 2 + 11 + 2 + 2 + room + 10 + (w->idata.n ? 11 + w->idata.n : 0) + 2 + 10;
    uint8_t *d0 = (uint8_t *)rs_xout_reserve(&w->out, max), *d = d0 + 2;
    w->d0 = d0;
    d0[0] = PB_TRACE_PACKET << 3 | WT_LEN;
    *d++ = PB_TP_TIMESTAMP << 3 | WT_VARINT;
    d = put_varint(d, ts);
    *d++ = PB_TP_SEQ_ID << 3 | WT_VARINT;
    d = put_varint(d, w->seq);
    *d++ = PB_TP_TRACK_EVENT << 3 | WT_LEN;
    w->tlen = d++;
    return d;
}

/* Length byte at lp for the bytes [lp + 1, *end); returns the new end. */
static inline uint8_t *patch_len(uint8_t *lp, uint8_t *end)
{
    size_t len = (size_t)(end - lp - 1);
    if (len < 0x80) {
        *lp = (uint8_t)len;
        return end;
    }
    size_t extra = vlen(len) - 1; /* room for it was reserved by pk_begin */
    memmove(lp + 1 + extra, lp + 1, len);
    put_varint(lp, len);
    return end + extra;
}

static void pk_end(struct pb *w, uint8_t *d)
{
    d = patch_len(w->tlen, d);
    if (w->idata.n) {
        *d++ = PB_TP_INTERNED << 3 | WT_LEN;
        d = put_varint(d, w->idata.n);
        memcpy(d, w->idata.p, w->idata.n);
        d += w->idata.n;
    }
    *d++ = PB_TP_SEQ_FLAGS << 3 | WT_VARINT;
    *d++ = SEQ_NEEDS;
    d = patch_len(w->d0 + 1, d);
    rs_xout_commit(&w->out, (size_t)(d - w->d0));
}

static void *pb_open(struct rs_exp *x, const struct rs_exp_opts *o, char *err, size_t errlen)
{
    struct pb *w = rs_xcalloc(1, sizeof *w, "export_pb w");
    if (!w) return NULL;
    w->x = x;
    if (rs_xout_open(&w->out, o->out, o->inputs, o->ninputs)) {
        snprintf(err, errlen, "cannot write %s: %s", o->out, rs_xout_strerror(w->out.err));
        free(w);
        return NULL;
    }
    return w;
}

/* A new sequence for the process, its first packet clearing the incremental state: nothing interned
 * before (by another process) is relied upon. */
static int pb_begin_process(void *b, const struct rs_xproc_out *p, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    struct pb *w = b;
    w->seq = 1 + p->index;
    if (w->name_iid) memset(w->name_iid, 0, w->name_iid_cap * sizeof *w->name_iid);
    w->next_iid = 0;
    memset(w->cat_done, 0, sizeof w->cat_done);
    memset(w->key_done, 0, sizeof w->key_done);
    w->pk.n = 0;
    pb_uint(&w->pk, PB_TP_SEQ_ID, w->seq);
    pb_uint(&w->pk, PB_TP_SEQ_FLAGS, SEQ_CLEARED);
    pk_flush(w);
    return 0;
}

static void pb_track(void *b, const struct rs_xtrack *t)
{
    struct pb *w = b;
    const struct rs_xname *nm = rs_xname_get(w->x, t->name);
    struct pbuf *td = &w->te;
    w->pk.n = 0;
    td->n = 0;
    pb_uint(td, PB_TD_UUID, t->uuid);
    pb_bytes(td, PB_TD_NAME, nm->s, nm->len);
    if (t->kind == RS_XT_PROCESS) {
        w->tmp.n = 0;
        pb_uint(&w->tmp, PB_PD_PID, (uint64_t)t->jpid);
        pb_bytes(&w->tmp, PB_PD_NAME, nm->s, nm->len);
        pb_sub(td, PB_TD_PROCESS, &w->tmp);
    } else {
        /* threads too are named child tracks of their process: real tids of different hosts collide */
        pb_uint(td, PB_TD_PARENT, t->parent_uuid);
        if (t->kind == RS_XT_COUNTER) {
            w->tmp.n = 0;
            pb_sub(td, PB_TD_COUNTER, &w->tmp);
        }
    }
    pb_sub(&w->pk, PB_TP_TRACK_DESC, td);
    pk_flush(w);
}

/* The TrackEvent of a slice/instant, written with raw pointer stores after one capacity check: this is
 * the exporter's hot path. Interned entries for first uses go to w->idata on the way. */
static uint8_t *pb_head(struct pb *w, const struct rs_xitem *it, int type)
{
    pk_event(w, it->ts);
    uint32_t name_iid = name_ref(w, it->name);
    if (!w->cat_done[it->cat]) {
        w->cat_done[it->cat] = 1;
        const char *c = rs_xcat_names[it->cat];
        intern_entry(w, PB_ID_CATEGORIES, it->cat + 1ull, c, strlen(c));
    }
    size_t need = 64;
    for (int i = 0; i < it->nargs; i++) {
        const struct rs_xarg *a = &it->args[i];
        if (!w->key_done[a->key]) {
            w->key_done[a->key] = 1;
            const char *k = rs_xkey_names[a->key];
            intern_entry(w, PB_ID_ARGNAMES, a->key + 1ull, k, strlen(k));
        }
        need += 32 + (a->type == RS_XA_STR ? rs_xname_get(w->x, a->v.nid)->len : 0);
    }
    uint8_t *d = pk_begin(w, it->ts, need);
    *d++ = PB_TE_TYPE << 3 | WT_VARINT;
    *d++ = (uint8_t)type;
    *d++ = PB_TE_TRACK << 3 | WT_VARINT;
    d = put_varint(d, it->t->uuid);
    *d++ = PB_TE_NAME_IID << 3 | WT_VARINT;
    d = put_varint(d, name_iid);
    *d++ = PB_TE_CAT_IIDS << 3 | WT_VARINT;
    d = put_varint(d, it->cat + 1ull);
    for (int i = 0; i < it->nargs; i++) {
        const struct rs_xarg *a = &it->args[i];
        /* DebugAnnotation behind a one-byte length, patched after (moved when >= 128) */
        *d++ = PB_TE_DEBUG << 3 | WT_LEN;
        uint8_t *lp = d++, *s0 = d;
        *d++ = PB_DA_NAME_IID << 3 | WT_VARINT;
        d = put_varint(d, a->key + 1ull);
        switch (a->type) {
        case RS_XA_U64:
            *d++ = PB_DA_UINT << 3 | WT_VARINT;
            d = put_varint(d, a->v.u);
            break;
        case RS_XA_I64: /* int64 varint = two's complement */
            *d++ = PB_DA_INT << 3 | WT_VARINT;
            d = put_varint(d, a->v.u);
            break;
        case RS_XA_HEX:
            *d++ = PB_DA_POINTER << 3 | WT_VARINT;
            d = put_varint(d, a->v.u);
            break;
        case RS_XA_DBL:
            *d++ = PB_DA_DOUBLE << 3 | WT_I64;
            memcpy(d, &a->v.d, 8);
            d += 8;
            break;
        case RS_XA_STR: {
            const struct rs_xname *nm = rs_xname_get(w->x, a->v.nid);
            *d++ = PB_DA_STRING << 3 | WT_LEN;
            d = put_varint(d, nm->len);
            memcpy(d, nm->s, nm->len);
            d += nm->len;
            break;
        }
        }
        size_t len = (size_t)(d - s0);
        if (len < 0x80) {
            *lp = (uint8_t)len;
        } else {
            size_t extra = vlen(len) - 1; /* room was counted in `need` (32 per argument) */
            memmove(s0 + extra, s0, len);
            put_varint(lp, len);
            d += extra;
        }
    }
    static const uint8_t flow_tag[2] = {0xf9, 0x02}, term_tag[2] = {0x81, 0x03}; /* 47 and 48, wire type 1 */
    if (it->flow_out) {
        memcpy(d, flow_tag, 2);
        memcpy(d + 2, &it->flow_out, 8);
        d += 10;
    }
    if (it->flow_step) {
        memcpy(d, flow_tag, 2);
        memcpy(d + 2, &it->flow_step, 8);
        d += 10;
    }
    if (it->flow_in) {
        memcpy(d, term_tag, 2);
        memcpy(d + 2, &it->flow_in, 8);
        d += 10;
    }
    return d;
}

static inline uint8_t *te_type_track(uint8_t *d, int type, uint64_t uuid)
{
    *d++ = PB_TE_TYPE << 3 | WT_VARINT;
    *d++ = (uint8_t)type;
    *d++ = PB_TE_TRACK << 3 | WT_VARINT;
    return put_varint(d, uuid);
}

static void pb_slice(void *b, const struct rs_xitem *it)
{
    struct pb *w = b;
    pk_end(w, pb_head(w, it, it->dur ? TE_BEGIN : TE_INSTANT));
    if (!it->dur) return;
    pk_event(w, it->ts + it->dur);
    pk_end(w, te_type_track(pk_begin(w, it->ts + it->dur, 16), TE_END, it->t->uuid));
}

static void pb_instant(void *b, const struct rs_xitem *it)
{
    struct pb *w = b;
    pk_end(w, pb_head(w, it, TE_INSTANT));
}

static void pb_begin(void *b, const struct rs_xitem *it)
{
    struct pb *w = b;
    pk_end(w, pb_head(w, it, TE_BEGIN));
}

static void pb_end(void *b, const struct rs_xtrack *t, uint64_t ts)
{
    struct pb *w = b;
    pk_event(w, ts);
    pk_end(w, te_type_track(pk_begin(w, ts, 16), TE_END, t->uuid));
}

static void pb_counter(void *b, const struct rs_xtrack *t, uint64_t ts, double v)
{
    struct pb *w = b;
    pk_event(w, ts);
    uint8_t *d = te_type_track(pk_begin(w, ts, 32), TE_COUNTER, t->uuid);
    *d++ = (uint8_t)((PB_TE_DOUBLE_COUNTER << 3 | WT_I64) & 0x7f) | 0x80; /* field 44: two-byte tag */
    *d++ = (PB_TE_DOUBLE_COUNTER << 3 | WT_I64) >> 7;
    memcpy(d, &v, 8);
    pk_end(w, d + 8);
}

static void pb_end_process(void *b) { (void)b; }

static int pb_close(void *b, struct rs_exp_stats *st, char *err, size_t errlen)
{
    struct pb *w = b;
    uint64_t bytes = w->out.bytes;
    int e = rs_xout_close(&w->out);
    if (st) {
        st->bytes_out += bytes;
        st->files_out++;
    }
    if (e) snprintf(err, errlen, "write error on %s: %s", w->out.path, strerror(e));
    free(w->pk.p);
    free(w->te.p);
    free(w->tmp.p);
    free(w->idata.p);
    free(w->name_iid);
    free(w);
    return e ? -1 : 0;
}

const struct rs_xbackend rs_xbackend_perfetto = {pb_open,  pb_begin_process, pb_track,   pb_slice,       pb_instant,
                                                 pb_begin, pb_end,           pb_counter, pb_end_process, pb_close};
