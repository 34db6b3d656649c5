/* Internal interface between the exporter's translator (export_xlate.c) and its backends (export_pb.c,
 * export_json.c). The translator owns names, tracks and lanes; a backend only encodes what it is handed,
 * in the order it is handed, into its output (export_out.c). */
#ifndef RAILSCOPE_EXPORT_INT_H
#define RAILSCOPE_EXPORT_INT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "export.h"

/* Categories: Kineto's names where Kineto has one (so HTA classifies them), ours otherwise. */
#define RS_XCATS(X) \
    X(cuda_runtime) \
    X(cuda_driver)  \
    X(kernel)       \
    X(gpu_memcpy)   \
    X(gpu_memset) X(cuda_sync) X(user_annotation) X(cpu_instant_event) X(rdma) X(verbs) X(nccl) X(railscope) X(ac2g)
enum rs_xcat {
#define RS_XCAT_ENUM(n) RS_XCAT_##n,
    RS_XCATS(RS_XCAT_ENUM)
#undef RS_XCAT_ENUM
        RS_XCAT_COUNT
};
extern const char *const rs_xcat_names[RS_XCAT_COUNT];

/* ---- buffered output file ---- */
struct rs_xout {
    int fd;
    char *buf;
    size_t len, cap;
    uint64_t bytes; /* written to this file so far (flushed + buffered) */
    int err;        /* first errno */
    char path[4096];
};
/* Opens path for writing, or refuses it (err RS_XOUT_EINPUT) when it is one of the inputs. Returns 0 or err. */
int rs_xout_open(struct rs_xout *o, const char *path, const struct rs_file_id *inputs, size_t ninputs);
#define RS_XOUT_EINPUT (-1)          /* not an errno: the output is one of the input traces */
const char *rs_xout_strerror(int e); /* strerror, and RS_XOUT_EINPUT's reason */
int rs_xout_flush(struct rs_xout *o);
int rs_xout_close(struct rs_xout *o); /* flush, close; returns 0 or errno */
static inline char *rs_xout_reserve(struct rs_xout *o, size_t n)
{
    if (o->len + n > o->cap) rs_xout_flush(o);
    return o->buf + o->len; /* cap is far larger than any single item */
}
static inline void rs_xout_commit(struct rs_xout *o, size_t n)
{
    o->len += n;
    o->bytes += n;
}
static inline void rs_xout_write(struct rs_xout *o, const void *p, size_t n)
{
    if (n > o->cap / 2) {
        rs_xout_flush(o);
        const char *c = p;
        while (n) { /* oversized: in pieces */
            size_t k = n < o->cap / 2 ? n : o->cap / 2;
            rs_xout_write(o, c, k);
            c += k;
            n -= k;
        }
        return;
    }
    char *d = rs_xout_reserve(o, n);
    memcpy(d, p, n);
    rs_xout_commit(o, n);
}
#define RS_XOUT_MAX_ITEM (192u << 10) /* any one encoded item stays below this (names are capped) */

/* ---- names: every string the backends see is a name id (nid) into one table ---- */
#define RS_XNAME_MAX 512 /* longer names (kernel signatures...) are cut here */
struct rs_xname {
    const char *s;    /* NUL-terminated */
    const char *json; /* the same as a JSON string literal, quotes included */
    uint32_t len, json_len;
};
const struct rs_xname *rs_xname_get(const struct rs_exp *x, uint32_t nid);
uint32_t rs_xname_intern(struct rs_exp *x, const char *s);

/* ---- tracks ---- */
enum rs_xtrack_kind { RS_XT_PROCESS, RS_XT_THREAD, RS_XT_CHILD, RS_XT_COUNTER };
struct rs_xtrack {
    uint64_t uuid, parent_uuid; /* perfetto uuids (process track = parent of everything in it) */
    uint32_t kind;              /* enum rs_xtrack_kind */
    uint32_t name;              /* nid */
    int64_t jpid, jtid;         /* JSON pid/tid (format dependent, chosen by the translator) */
    int32_t sort;               /* display order within the process */
    uint32_t tid;               /* real thread id (RS_XT_THREAD) */
    uint64_t pid;               /* real pid (process/thread descriptors) */
    int declared;
    uint8_t jpt_len; /* "pid":P,"tid":T for JSON, formatted once */
    char jpt[47];
};

enum rs_xarg_type { RS_XA_U64, RS_XA_I64, RS_XA_HEX, RS_XA_DBL, RS_XA_STR };
struct rs_xarg {
    uint8_t key; /* enum rs_xkey */
    uint8_t type;
    union {
        uint64_t u;
        int64_t i;
        double d;
        uint32_t nid;
    } v;
};
/* Argument keys (perfetto interns them; JSON writes the quoted form). Kineto's spellings where they exist. */
/* clang-format off */
#define RS_XKEYS(X)                                                                                                    \
    X(bytes, "bytes")                                                                                                  \
    X(correlation, "correlation")                                                                                      \
    X(device, "device")                                                                                                \
    X(stream, "stream")                                                                                                \
    X(qp, "qp_num")                                                                                                    \
    X(wr_id, "wr_id") X(opcode, "opcode") X(status, "status") X(signaled, "signaled")                                  \
        X(gbps, "memory bandwidth (GB/s)") X(grid, "grid") X(block, "block") X(cbid, "cbid") X(seq, "seq")             \
            X(count, "count") X(algo, "algo") X(proto, "proto") X(nchannels, "nChannels") X(channel, "channel")        \
                X(peer, "peer") X(comm, "comm") X(message, "message") X(mem, "memory") X(value, "value") X(ret, "ret") \
                    X(length, "length") X(step, "step") X(rank, "rank") X(events, "events")                            \
                        X(completed_by, "completed_by_wr_id") X(copy_kind, "copy_kind") X(domain, "domain")            \
                            X(dur_ns, "dur_ns") X(end_from, "end_from") X(enqueue_ns, "enqueue_ns")                    \
                                X(children, "children") X(cq, "cq") X(comp_channel, "comp_channel")            \
                                    X(flags, "flags") X(err, "errno")
/* clang-format on */
enum rs_xkey {
#define RS_XKEY_ENUM(id, s) RS_XK_##id,
    RS_XKEYS(RS_XKEY_ENUM)
#undef RS_XKEY_ENUM
        RS_XK_COUNT
};
extern const char *const rs_xkey_names[RS_XK_COUNT];

#define RS_XARGS_MAX 8
struct rs_xitem {
    const struct rs_xtrack *t;
    uint64_t ts, dur; /* aligned ns */
    uint32_t name;    /* nid */
    uint8_t cat;      /* enum rs_xcat */
    uint8_t nargs;
    uint64_t flow_out;  /* a flow starts here (0 = none) */
    uint64_t flow_step; /* a flow passes through here */
    uint64_t flow_in;   /* a flow ends here */
    struct rs_xarg args[RS_XARGS_MAX];
};

struct rs_xproc_out {
    uint64_t index; /* 0-based input index */
    uint64_t pid;
    int64_t rank, world_size;
    const char *host;
    const struct rs_xtrack *track; /* the process track */
};

struct rs_xbackend {
    void *(*open)(struct rs_exp *x, const struct rs_exp_opts *o, char *err, size_t errlen);
    int (*begin_process)(void *b, const struct rs_xproc_out *p, char *err, size_t errlen);
    void (*track)(void *b, const struct rs_xtrack *t); /* declare (or rename) before first use */
    void (*slice)(void *b, const struct rs_xitem *it); /* complete slice [ts, ts+dur] */
    void (*instant)(void *b, const struct rs_xitem *it);
    void (*begin)(void *b, const struct rs_xitem *it); /* open slice (NVTX push) */
    void (*end)(void *b, const struct rs_xtrack *t, uint64_t ts);
    void (*counter)(void *b, const struct rs_xtrack *t, uint64_t ts, double v);
    void (*end_process)(void *b);
    int (*close)(void *b, struct rs_exp_stats *st, char *err, size_t errlen); /* frees b */
};
extern const struct rs_xbackend rs_xbackend_perfetto, rs_xbackend_chrome, rs_xbackend_kineto;
/* An exporter feeding a caller's backend (e.g. the HTML report collecting bandwidth counters); o->format
 * still decides JSON-style placement and is otherwise unused. */
struct rs_exp *rs_exp_open_with(const struct rs_exp_opts *o, const struct rs_xbackend *be, char *err, size_t errlen);

/* Small formatting helpers shared by the backends (no printf on the hot path): two digits per step. */
extern const char rs_xdigits2[200];
static inline size_t rs_xfmt_u64(char *p, uint64_t v)
{
    char t[20];
    size_t n = 20;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        n -= 2;
        t[n] = rs_xdigits2[2 * r];
        t[n + 1] = rs_xdigits2[2 * r + 1];
    }
    if (v >= 10) {
        n -= 2;
        t[n] = rs_xdigits2[2 * v];
        t[n + 1] = rs_xdigits2[2 * v + 1];
    } else t[--n] = (char)('0' + v);
    memcpy(p, t + n, 20 - n);
    return 20 - n;
}
static inline size_t rs_xfmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        p[0] = '-';
        return 1 + rs_xfmt_u64(p + 1, (uint64_t)0 - (uint64_t)v);
    }
    return rs_xfmt_u64(p, (uint64_t)v);
}
/* ns as microseconds with 3 decimals ("12.345"), as Chrome JSON wants. */
static inline size_t rs_xfmt_us(char *p, uint64_t ns)
{
    size_t n = rs_xfmt_u64(p, ns / 1000);
    unsigned f = (unsigned)(ns % 1000);
    p[n] = '.';
    p[n + 1] = (char)('0' + f / 100);
    p[n + 2] = (char)('0' + f / 10 % 10);
    p[n + 3] = (char)('0' + f % 10);
    return n + 4;
}
void rs_xwarn(const struct rs_exp *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
