/* NVTX capture: librailscope.so is the NVTX injection library (`railscope record` sets
 * NVTX_INJECTION64_PATH to it). Every module that carries NVTX v3 (libtorch's torch.cuda.nvtx, libnccl's
 * "NCCL" domain, ...) calls InitializeInjectionNvtx2 on its first NVTX call; we fill that module's function
 * tables with the handlers below. Without the variable set at process start NVTX calls are no-ops for the
 * life of the module, so this cannot be attached later.
 *
 * Handles we give out cost nothing: a domain handle and a registered-string handle are the interned string
 * id cast to a pointer, so a message given by handle needs no look-up. ASCII messages are interned through
 * a per-thread cache keyed by their bytes (Python reuses buffers). Extended payloads (NCCL: communicator
 * hash, bytes, reduction op) are kept as their schema id plus their first 24 bytes.
 *
 * The NVTX injection ABI is declared here from NVTX 3's public headers (nvtx3/nvToolsExt.h and
 * nvtx3/nvtxDetail/nvtxTypes.h, shipped with the CUDA toolkit under include/nvtx3/ and at
 * https://github.com/NVIDIA/NVTX/tree/release-v3/c/include/nvtx3), so this file needs no CUDA header. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "formats/nvtx_msg.h"
#include "preload/rs_gpu_common.h"
#include "tracer/rs_tracer.h"

/* ---- ABI ---- */
typedef void (*rs_nvtx_fp)(void);
typedef rs_nvtx_fp **rs_nvtx_table; /* array of pointers to the module's function-pointer slots */
struct rs_nvtx_etbl_callbacks {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int module, rs_nvtx_table *out_table, unsigned *out_size);
};
typedef const void *(*rs_nvtx_get_export_table)(uint32_t id);

enum { RS_NVTX_ETID_CALLBACKS = 1 };
enum { RS_NVTX_MODULE_CORE = 1, RS_NVTX_MODULE_CORE2 = 5 };
enum { /* NVTX_CBID_CORE_* */
       RS_CORE_MarkEx = 1,
       RS_CORE_MarkA = 2,
       RS_CORE_RangeStartEx = 4,
       RS_CORE_RangeStartA = 5,
       RS_CORE_RangeEnd = 7,
       RS_CORE_RangePushEx = 8,
       RS_CORE_RangePushA = 9,
       RS_CORE_RangePop = 11,
};
enum { /* NVTX_CBID_CORE2_* */
       RS_CORE2_DomainMarkEx = 1,
       RS_CORE2_DomainRangeStartEx = 2,
       RS_CORE2_DomainRangeEnd = 3,
       RS_CORE2_DomainRangePushEx = 4,
       RS_CORE2_DomainRangePop = 5,
       RS_CORE2_DomainRegisterStringA = 10,
       RS_CORE2_DomainCreateA = 12,
       RS_CORE2_DomainDestroy = 14,
       RS_CORE2_Initialize = 15,
};
enum { RS_NVTX_MSG_ASCII = 1, RS_NVTX_MSG_REGISTERED = 3 };
#define RS_NVTX_PAYLOAD_EXT ((int32_t)0xDFBD0009)

struct rs_nvtx_attr { /* nvtxEventAttributes_v2 */
    uint16_t version;
    uint16_t size;
    uint32_t category;
    int32_t colorType;
    uint32_t color;
    int32_t payloadType;
    int32_t reserved0; /* number of extended payloads when payloadType is EXT */
    uint64_t payload;  /* union of u64/i64/double/u32/i32/float: kept as raw bytes */
    int32_t messageType;
    union {
        const char *ascii;
        const void *unicode;
        const void *registered;
    } message;
};
_Static_assert(offsetof(struct rs_nvtx_attr, payload) == 24, "nvtxEventAttributes_v2 layout");
_Static_assert(offsetof(struct rs_nvtx_attr, message) == 40, "nvtxEventAttributes_v2 layout");

struct rs_nvtx_payload_data { /* nvtxPayloadData_t */
    uint64_t schemaId;
    size_t size;
    const void *payload;
};

/* ---- state ---- */
static __thread int nvtx_depth;
/* The message cache lives on the heap (4 KiB per thread that uses NVTX, freed at thread exit): static TLS
 * is scarce when the library is dlopen'ed by NVTX or the CUDA driver rather than preloaded. */
static __thread struct rs_strcache_ent *nvtx_msgs;
static __thread int nvtx_msgs_gone; /* freed at this thread's exit: later NVTX calls intern without a cache */
static pthread_key_t msgs_key;
static pthread_once_t msgs_once = PTHREAD_ONCE_INIT;
static uint64_t next_range_id;

/* The key's destructor runs on the exiting thread, and another library's destructor may call NVTX after it
 * (tests/nccl/nvtx.t 11): the thread's pointer goes with the memory. */
static void msgs_free(void *p)
{
    free(p);
    nvtx_msgs = NULL;
    nvtx_msgs_gone = 1;
}

static void msgs_key_make(void) { pthread_key_create(&msgs_key, msgs_free); }

static uint32_t msg_id(const char *s)
{
    if (RS_UNLIKELY(!nvtx_msgs)) {
        if (nvtx_msgs_gone) return rs_intern(s);
        pthread_once(&msgs_once, msgs_key_make);
        nvtx_msgs = calloc(RS_STRCACHE_SLOTS, sizeof *nvtx_msgs);
        if (!nvtx_msgs) return rs_intern(s);
        pthread_setspecific(msgs_key, nvtx_msgs);
    }
    return rs_strcache_id(nvtx_msgs, s);
}

static inline uint32_t handle_id(const void *h) { return (uint32_t)(uintptr_t)h; }

struct rs_nvtx_fields {
    uint64_t pl[3];
    uint64_t schema;
    uint32_t message, category, payload_type;
    uint32_t nnum; /* numbers of the message (formats/nvtx_msg.h): message is then their template */
    uint64_t num[RS_NVTX_MAX_NUMS];
};

/* A message with numbers in it is interned as its template: one string for "step 1", "step 2", ... */
static uint32_t msg_fields(const char *s, struct rs_nvtx_fields *f)
{
    char tmpl[RS_MAX_STRING + 1];
    size_t tlen;
    f->nnum = rs_nvtx_split(s, RS_MAX_STRING, tmpl, &tlen, f->num);
    return msg_id(f->nnum ? tmpl : s);
}

/* ascii: the message of the *A entry points, which take a plain string instead of an attribute. */
static void decode(const struct rs_nvtx_attr *a, const char *ascii, struct rs_nvtx_fields *f)
{
    memset(f, 0, sizeof *f);
    if (ascii) f->message = msg_fields(ascii, f);
    if (!a) return;
    /* Only fields inside the size the caller declares are read (older attribute versions are shorter). */
    size_t sz = a->size ? a->size : sizeof *a;
    if (sz >= offsetof(struct rs_nvtx_attr, category) + 4) f->category = a->category;
    if (sz >= offsetof(struct rs_nvtx_attr, payload) + 8) {
        f->payload_type = (uint32_t)a->payloadType;
        if (a->payloadType == RS_NVTX_PAYLOAD_EXT) {
            const struct rs_nvtx_payload_data *pd = (const void *)(uintptr_t)a->payload;
            if (pd && a->reserved0 >= 1) {
                f->schema = pd->schemaId;
                size_t n = pd->size;
                if (pd->payload && n != (size_t)-1) {
                    if (n > sizeof f->pl) n = sizeof f->pl;
                    memcpy(f->pl, pd->payload, n);
                }
            }
        } else {
            f->pl[0] = a->payload;
        }
    }
    if (sz >= offsetof(struct rs_nvtx_attr, message) + 8) {
        if (a->messageType == RS_NVTX_MSG_ASCII) f->message = a->message.ascii ? msg_fields(a->message.ascii, f) : 0;
        else if (a->messageType == RS_NVTX_MSG_REGISTERED) f->message = handle_id(a->message.registered);
    }
}

/* NVTX_PUSH, NVTX_START and NVTX_MARK carry the decoded attribute under the same field names. */
#define SET_ATTR_FIELDS(ev, f, dom)           \
    do {                                      \
        (ev).payload = (f).pl[0];             \
        (ev).payload2 = (f).pl[1];            \
        (ev).payload3 = (f).pl[2];            \
        (ev).schema = (f).schema;             \
        (ev).domain = (dom);                  \
        (ev).message = (f).message;           \
        (ev).category = (f).category;         \
        (ev).payload_type = (f).payload_type; \
    } while (0)

/* The message's numbers after the event's fields (the event's size grows by 8 a number). */
#define NVTX_EV_BUF(T) uint64_t buf[(sizeof(struct rs_ev_##T) + 8 * RS_NVTX_MAX_NUMS) / 8]
static inline void put_nums(struct rs_ev_hdr *h, const struct rs_nvtx_fields *f)
{
    memcpy((char *)h + h->size, f->num, 8 * (size_t)f->nnum);
    h->size = (uint16_t)(h->size + 8 * f->nnum);
}

/* ---- handlers ---- */
static int push(uint32_t domain, const struct rs_nvtx_attr *a, const char *ascii)
{
    int level = nvtx_depth++;
    if (!rs_on(RS_FAM_nvtx)) return level;
    struct rs_nvtx_fields f;
    decode(a, ascii, &f);
    NVTX_EV_BUF(NVTX_PUSH);
    struct rs_ev_NVTX_PUSH *ev = (struct rs_ev_NVTX_PUSH *)buf;
    RS_EV_INIT(ev, NVTX_PUSH, rs_now());
    SET_ATTR_FIELDS(*ev, f, domain);
    ev->depth = level + 1;
    ev->pad = 0;
    put_nums(&ev->h, &f);
    rs_emit(&ev->h);
    return level;
}

static int pop(uint32_t domain)
{
    if (nvtx_depth <= 0) return -1; /* unbalanced pop: an error, as NVTX documents */
    int level = --nvtx_depth;
    if (rs_on(RS_FAM_nvtx)) {
        struct rs_ev_NVTX_POP ev;
        RS_EV_INIT(&ev, NVTX_POP, rs_now());
        ev.domain = domain;
        ev.depth = level;
        rs_emit(&ev.h);
    }
    return level;
}

static uint64_t start(uint32_t domain, const struct rs_nvtx_attr *a, const char *ascii)
{
    uint64_t id = __atomic_add_fetch(&next_range_id, 1, __ATOMIC_RELAXED);
    if (!rs_on(RS_FAM_nvtx)) return id;
    struct rs_nvtx_fields f;
    decode(a, ascii, &f);
    NVTX_EV_BUF(NVTX_START);
    struct rs_ev_NVTX_START *ev = (struct rs_ev_NVTX_START *)buf;
    RS_EV_INIT(ev, NVTX_START, rs_now());
    ev->id = id;
    SET_ATTR_FIELDS(*ev, f, domain);
    put_nums(&ev->h, &f);
    rs_emit(&ev->h);
    return id;
}

static void end(uint64_t id)
{
    if (!rs_on(RS_FAM_nvtx)) return;
    struct rs_ev_NVTX_END ev;
    RS_EV_INIT(&ev, NVTX_END, rs_now());
    ev.id = id;
    rs_emit(&ev.h);
}

static void mark(uint32_t domain, const struct rs_nvtx_attr *a, const char *ascii)
{
    if (!rs_on(RS_FAM_nvtx)) return;
    struct rs_nvtx_fields f;
    decode(a, ascii, &f);
    NVTX_EV_BUF(NVTX_MARK);
    struct rs_ev_NVTX_MARK *ev = (struct rs_ev_NVTX_MARK *)buf;
    RS_EV_INIT(ev, NVTX_MARK, rs_now());
    SET_ATTR_FIELDS(*ev, f, domain);
    put_nums(&ev->h, &f);
    rs_emit(&ev->h);
}

/* CORE module (default domain). */
static void h_MarkEx(const struct rs_nvtx_attr *a) { mark(0, a, NULL); }
static void h_MarkA(const char *m) { mark(0, NULL, m ? m : ""); }
static uint64_t h_RangeStartEx(const struct rs_nvtx_attr *a) { return start(0, a, NULL); }
static uint64_t h_RangeStartA(const char *m) { return start(0, NULL, m ? m : ""); }
static void h_RangeEnd(uint64_t id) { end(id); }
static int h_RangePushEx(const struct rs_nvtx_attr *a) { return push(0, a, NULL); }
static int h_RangePushA(const char *m) { return push(0, NULL, m ? m : ""); }
static int h_RangePop(void) { return pop(0); }

/* CORE2 module (domains). */
static void h_DomainMarkEx(const void *d, const struct rs_nvtx_attr *a) { mark(handle_id(d), a, NULL); }
static uint64_t h_DomainRangeStartEx(const void *d, const struct rs_nvtx_attr *a)
{
    return start(handle_id(d), a, NULL);
}
static void h_DomainRangeEnd(const void *d, uint64_t id)
{
    (void)d;
    end(id);
}
static int h_DomainRangePushEx(const void *d, const struct rs_nvtx_attr *a) { return push(handle_id(d), a, NULL); }
static int h_DomainRangePop(const void *d) { return pop(handle_id(d)); }
static const void *h_DomainRegisterStringA(const void *d, const char *s)
{
    (void)d;
    return (const void *)(uintptr_t)rs_intern(s);
}
static const void *h_DomainCreateA(const char *name) { return (const void *)(uintptr_t)rs_intern(name); }
static void h_DomainDestroy(const void *d) { (void)d; }
static void h_Initialize(const void *reserved) { (void)reserved; }

struct rs_nvtx_slot {
    int cbid;
    rs_nvtx_fp fn;
};
#define RS_FP(f) ((rs_nvtx_fp)(void (*)(void))(f))

static void fill(rs_nvtx_get_export_table get, int module, const struct rs_nvtx_slot *slots, size_t n)
{
    const struct rs_nvtx_etbl_callbacks *cb = get(RS_NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) return;
    rs_nvtx_table table = NULL;
    unsigned size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table) return;
    for (size_t i = 0; i < n; i++)
        if ((unsigned)slots[i].cbid <= size && table[slots[i].cbid]) *table[slots[i].cbid] = slots[i].fn;
}

RS_EXPORT int InitializeInjectionNvtx2(rs_nvtx_get_export_table get)
{
    rs_core_start(); /* NVTX may be first: its module can make the first call before our constructor */
    /* Not recording NVTX (family off, tracing disabled): decline, and NVTX stays a no-op for this module. */
    if (!get || !rs_on(RS_FAM_nvtx)) return 0;
    static const struct rs_nvtx_slot core[] = {
        {RS_CORE_MarkEx, RS_FP(h_MarkEx)},
        {RS_CORE_MarkA, RS_FP(h_MarkA)},
        {RS_CORE_RangeStartEx, RS_FP(h_RangeStartEx)},
        {RS_CORE_RangeStartA, RS_FP(h_RangeStartA)},
        {RS_CORE_RangeEnd, RS_FP(h_RangeEnd)},
        {RS_CORE_RangePushEx, RS_FP(h_RangePushEx)},
        {RS_CORE_RangePushA, RS_FP(h_RangePushA)},
        {RS_CORE_RangePop, RS_FP(h_RangePop)},
    };
    static const struct rs_nvtx_slot core2[] = {
        {RS_CORE2_DomainMarkEx, RS_FP(h_DomainMarkEx)},
        {RS_CORE2_DomainRangeStartEx, RS_FP(h_DomainRangeStartEx)},
        {RS_CORE2_DomainRangeEnd, RS_FP(h_DomainRangeEnd)},
        {RS_CORE2_DomainRangePushEx, RS_FP(h_DomainRangePushEx)},
        {RS_CORE2_DomainRangePop, RS_FP(h_DomainRangePop)},
        {RS_CORE2_DomainRegisterStringA, RS_FP(h_DomainRegisterStringA)},
        {RS_CORE2_DomainCreateA, RS_FP(h_DomainCreateA)},
        {RS_CORE2_DomainDestroy, RS_FP(h_DomainDestroy)},
        {RS_CORE2_Initialize, RS_FP(h_Initialize)},
    };
    fill(get, RS_NVTX_MODULE_CORE, core, sizeof core / sizeof core[0]);
    fill(get, RS_NVTX_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]);
    return 1;
}
