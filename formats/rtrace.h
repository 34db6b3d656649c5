/* railscope trace format: the one header shared by the writer (tracer/) and every reader (formats/,
 * analyzer/). The byte layout is described in formats/SPEC.md; keep the two in step.
 *
 * A file is: a preamble (struct rs_file_preamble, uncompressed) followed by the header TLV block, then
 * a sequence of frames. Each frame is a struct rs_frame_hdr followed by one independent zstd frame whose
 * decompressed payload is a sequence of chunks; a chunk is a struct rs_chunk_hdr followed by events of one
 * thread. Every event starts with struct rs_ev_hdr; its size is fixed per kind (from the tables below)
 * except for kinds marked RS_VARLEN, whose size field covers a trailing byte array.
 *
 * Adding an event kind: add one line to the family's list in formats/events_*.h plus its field list.
 * Structs, names, field descriptors (for dump/JSON) and size checks are all generated from there.
 */
#ifndef RAILSCOPE_RTRACE_H
#define RAILSCOPE_RTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RS_MAGIC        "RSTRACE1"  /* 8 bytes, no NUL on disk */
#define RS_FORMAT_MAJOR 1           /* readers refuse a different major */
#define RS_FORMAT_MINOR 1           /* readers accept any minor; unknown kinds are skipped by size */
#define RS_FRAME_MAGIC  0x52464d31u /* "1MFR" little-endian: start of each frame */
#define RS_CHUNK_MAGIC  0x4b484331u /* "1CHK" */

/* Limits a reader enforces on hostile input. */
#define RS_MAX_HEADER_BYTES     (1u << 20)
#define RS_MAX_FRAME_RAW        (64u << 20)
#define RS_MAX_FRAME_COMPRESSED (64u << 20)
#define RS_MAX_STRING           4096

typedef uint8_t rs_u8;
typedef uint16_t rs_u16;
typedef uint32_t rs_u32;
typedef uint64_t rs_u64;
typedef int32_t rs_i32;
typedef int64_t rs_i64;
typedef uint32_t rs_str; /* id of an interned string (RS_EV_STRING); 0 = none */
typedef uint64_t rs_x64; /* printed in hex: addresses, keys, handles, wr_ids */
typedef uint32_t rs_x32;
typedef uint64_t rs_ts;  /* a second timestamp (ns, tracer clock), normalised like hdr.ts in dumps */
typedef uint64_t rs_dur; /* a duration in ns */

struct rs_file_preamble {
    char magic[8]; /* RS_MAGIC */
    uint16_t major, minor;
    uint32_t header_bytes; /* length of the TLV block that follows */
};

/* Header TLV block: repeated { uint16 tag; uint16 len; bytes[len] }, integers little-endian 8-byte. */
#define RS_HDR_TAGS(X)                                                                    \
    X(1, HOST, str) /* hostname */                                                        \
    X(2, PID, u64)                                                                        \
    X(3, PPID, u64)                                                                       \
    X(4, RANK, i64) /* -1 when the launcher did not say */                                \
    X(5, LOCAL_RANK, i64)                                                                 \
    X(6, WORLD_SIZE, i64)                                                                 \
    X(7, CMDLINE, str)        /* argv joined by NUL bytes */                              \
    X(8, START_REALTIME, u64) /* ns since the epoch */                                    \
    X(9, START_MONO, u64)     /* tracer clock (CLOCK_MONOTONIC ns) at the same instant */ \
    X(10, CLOCK, str)         /* "monotonic" or "tsc" */                                  \
    X(11, EVENTS, str)        /* enabled event families as configured */                  \
    X(12, TRACER_VERSION, str)                                                            \
    X(13, EXE, str)                                                                       \
    X(14, BOOT_ID, str) /* /proc/sys/kernel/random/boot_id: same host, same monotonic clock */

enum rs_hdr_tag {
#define RS_HDR_ENUM(n, name, type) RS_HDR_##name = n,
    RS_HDR_TAGS(RS_HDR_ENUM)
#undef RS_HDR_ENUM
};

struct rs_frame_hdr {
    uint32_t magic;      /* RS_FRAME_MAGIC */
    uint32_t compressed; /* bytes of zstd data that follow */
    uint32_t raw;        /* bytes after decompression */
    uint32_t checksum;   /* crc32c-free: 32-bit FNV-1a over the compressed bytes */
    uint64_t seq;        /* frame number from 0, to spot gaps */
};

struct rs_chunk_hdr {
    uint32_t magic; /* RS_CHUNK_MAGIC */
    uint32_t tid;   /* kernel thread id; 0 for the writer's own records */
    uint32_t bytes; /* event bytes that follow */
    uint32_t flags; /* RS_CHUNK_TS_DELTA: hdr.ts of each event after the first is a delta */
};
#define RS_CHUNK_TS_DELTA 1u
/* RS_CHUNK_FIELD_DELTA (2): fields stored as differences from the previous event of the same kind; defined
 * with its parameters in events_core.h and described in SPEC.md. */

struct rs_ev_hdr {
    uint64_t ts;   /* ns, tracer clock; event start for events with a duration */
    uint16_t kind; /* enum rs_kind */
    uint16_t size; /* whole event in bytes, multiple of 8 */
    uint32_t aux;  /* small per-kind value documented in the field list (often a return code) */
};

/* Field types usable in event field lists; each maps to an rs_<type> typedef above. */
enum rs_ftype {
    RS_T_u8,
    RS_T_u16,
    RS_T_u32,
    RS_T_u64,
    RS_T_i32,
    RS_T_i64,
    RS_T_str,
    RS_T_x64,
    RS_T_x32,
    RS_T_ts,
    RS_T_dur
};

/* Event families: configuration (RAILSCOPE_EVENTS) enables them by name. */
#define RS_FAMILIES(X) \
    X(core, 0)         \
    X(verbs, 1)        \
    X(cuda, 2)         \
    X(nccl, 3)         \
    X(nvtx, 4)         \
    X(nvml, 5)         \
    X(host, 6)

enum rs_family {
#define RS_FAM_ENUM(name, bit) RS_FAM_##name = bit,
    RS_FAMILIES(RS_FAM_ENUM)
#undef RS_FAM_ENUM
        RS_FAM_COUNT
};

#define RS_FIXED  0
#define RS_VARLEN 1 /* size covers a trailing byte array after the fixed fields */

#include "events_core.h"
#include "events_verbs.h"
#include "events_cuda.h"
#include "events_nccl.h"

/* The master list: X(KIND, family, varlen). Each KIND has RS_FIELDS_KIND(F) with F(type, name). */
#define RS_EVENTS(X) RS_EVENTS_CORE(X) RS_EVENTS_VERBS(X) RS_EVENTS_CUDA(X) RS_EVENTS_NCCL(X)

/* Kind numbers are fixed per family range, so adding a kind to one list never renumbers another family's
 * kinds (files stay readable across versions): core 1-63, verbs 64-127, cuda/nvtx/nvml 128-191,
 * nccl 192-255. Numbers in the gaps are unknown kinds: readers skip them by size. Within a list, append
 * new kinds at the end. */
enum rs_kind {
    RS_EV_NONE = 0,
#define RS_KIND_ENUM(k, fam, var) RS_EV_##k,
    RS_EVENTS_CORE(RS_KIND_ENUM) RS_EV_CORE_END_,
    RS_EV_VERBS_BASE_ = 63,
    RS_EVENTS_VERBS(RS_KIND_ENUM) RS_EV_VERBS_END_,
    RS_EV_CUDA_BASE_ = 127,
    RS_EVENTS_CUDA(RS_KIND_ENUM) RS_EV_CUDA_END_,
    RS_EV_NCCL_BASE_ = 191,
    RS_EVENTS_NCCL(RS_KIND_ENUM)
#undef RS_KIND_ENUM
        RS_EV_COUNT
};
_Static_assert(RS_EV_CORE_END_ <= 64, "core kinds overflow their range 1-63");
_Static_assert(RS_EV_VERBS_END_ <= 128, "verbs kinds overflow their range 64-127");
_Static_assert(RS_EV_CUDA_END_ <= 192, "cuda kinds overflow their range 128-191");
_Static_assert(RS_EV_COUNT <= 256, "nccl kinds overflow their range 192-255");

/* One struct per kind: struct rs_ev_<KIND> { struct rs_ev_hdr h; fields... }.
 * Field lists are ordered so that no padding appears (checked below); put 8-byte fields first. */
#define RS_STRUCT_FIELD(t, n) rs_##t n;
#define RS_STRUCT_DEF(k, fam, var)     \
    struct rs_ev_##k {                 \
        struct rs_ev_hdr h;            \
        RS_FIELDS_##k(RS_STRUCT_FIELD) \
    };
RS_EVENTS(RS_STRUCT_DEF)
#undef RS_STRUCT_DEF

#define RS_FIELD_SIZE(t, n) +sizeof(rs_##t)
#define RS_SIZE_CHECK(k, fam, var)                                                                    \
    _Static_assert(sizeof(struct rs_ev_##k) == sizeof(struct rs_ev_hdr) RS_FIELDS_##k(RS_FIELD_SIZE), \
                   "padding in struct rs_ev_" #k);                                                    \
    _Static_assert(sizeof(struct rs_ev_##k) % 8 == 0, "struct rs_ev_" #k " not a multiple of 8");
RS_EVENTS(RS_SIZE_CHECK)
#undef RS_SIZE_CHECK
#undef RS_FIELD_SIZE

/* Descriptor tables, defined once in formats/rtrace_tables.c and linked into both the library and the CLI. */
/* Fields follow the header contiguously in list order (no padding, checked above), so a field's offset is
 * sizeof(struct rs_ev_hdr) plus the sizes (rs_ftype_size) of the fields before it. */
struct rs_field_desc {
    const char *name;
    uint8_t type; /* enum rs_ftype */
};
extern const uint8_t rs_ftype_size[];
extern const char *const rs_ftype_names[];
struct rs_kind_desc {
    const char *name; /* the enum name, e.g. "IBV_POST_SEND"; rs_kind_name() gives lower case */
    uint8_t family;   /* enum rs_family */
    uint8_t varlen;   /* RS_VARLEN or RS_FIXED */
    uint16_t size;    /* fixed part in bytes, header included */
    uint16_t nfields;
    const struct rs_field_desc *fields;
};
extern const struct rs_kind_desc rs_kinds[RS_EV_COUNT];
extern const char *const rs_family_names[RS_FAM_COUNT];

/* A STRING record (id, n bytes of s, zero padding) built in buf, which has room for sizeof(struct rs_ev_STRING) +
 * n + 7 bytes; returns its size. The writer's, and the exporter's for joined NVTX messages (cli/export.c). */
static inline size_t rs_string_record(void *buf, uint64_t ts, uint32_t id, const char *s, size_t n)
{
    struct rs_ev_STRING *e = (struct rs_ev_STRING *)buf;
    size_t size = (sizeof *e + n + 7) & ~(size_t)7;
    memset(buf, 0, size);
    e->h.ts = ts;
    e->h.kind = RS_EV_STRING;
    e->h.size = (uint16_t)size;
    e->id = id;
    e->len = (uint32_t)n;
    memcpy(e + 1, s, n);
    return size;
}

/* Fill the common header of a fixed-size event. */
#define RS_EV_INIT(ev, KIND, tsv)                             \
    do {                                                      \
        (ev)->h.ts = (tsv);                                   \
        (ev)->h.kind = RS_EV_##KIND;                          \
        (ev)->h.size = (uint16_t)sizeof(struct rs_ev_##KIND); \
        (ev)->h.aux = 0;                                      \
    } while (0)

static inline uint32_t rs_fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u;
    }
    return h;
}

#endif
