/* Names of the values of enum-like event fields (opcodes, memory kinds, copy kinds, statuses...), for dump
 * --json (issue 18 item 6: names beside the numbers, as strace prints them) and the exporters. One list per
 * enum, X(value, "name"), and one table saying which (kind, field) uses which list: a new enum field is one
 * row in RS_ENUM_FIELDS (checked at compile time: the field must exist in the kind's struct), no code.
 * Spellings follow the source API (ibv_* enum names without the prefix, CUPTI's/Kineto's memcpy and memory
 * kind strings, ncclResult_t names...). Header-only: anything that includes rtrace.h can use it.
 *
 *     const char *n = rs_enum_name(rs_enum_of(RS_EV_IBV_POST_SEND, i), value);  NULL when unknown
 *
 * Also the decoders of hdr.aux values that pack several fields (rs_aux_fields, below).
 */
#ifndef RAILSCOPE_RTRACE_ENUMS_H
#define RAILSCOPE_RTRACE_ENUMS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rtrace.h"

/* Hand-aligned tables: */
/* clang-format off */

/* enum ibv_wr_opcode (IBV_POST_SEND.opcode) */
#define RS_ENUM_WR_OPCODE(X) X(0, "RDMA_WRITE") X(1, "RDMA_WRITE_WITH_IMM") X(2, "SEND") X(3, "SEND_WITH_IMM") \
    X(4, "RDMA_READ") X(5, "ATOMIC_CMP_AND_SWP") X(6, "ATOMIC_FETCH_AND_ADD") X(7, "LOCAL_INV") X(8, "BIND_MW")   \
    X(9, "SEND_WITH_INV") X(10, "TSO") X(11, "DRIVER1") X(14, "FLUSH") X(15, "ATOMIC_WRITE")
/* enum ibv_wc_opcode (IBV_WC.opcode; NCCL_NET_IB.opcode is NCCL's own) */
#define RS_ENUM_WC_OPCODE(X) X(0, "SEND") X(1, "RDMA_WRITE") X(2, "RDMA_READ") X(3, "COMP_SWAP") X(4, "FETCH_ADD") \
    X(5, "BIND_MW") X(6, "LOCAL_INV") X(7, "TSO") X(8, "FLUSH") X(9, "ATOMIC_WRITE") X(128, "RECV")                 \
    X(129, "RECV_RDMA_WITH_IMM") X(130, "TM_ADD") X(131, "TM_DEL") X(132, "TM_SYNC") X(133, "TM_RECV")             \
    X(134, "TM_NO_TAG") X(135, "DRIVER1") X(136, "DRIVER2") X(137, "DRIVER3")
/* enum ibv_wc_status */
#define RS_ENUM_WC_STATUS(X) X(0, "SUCCESS") X(1, "LOC_LEN_ERR") X(2, "LOC_QP_OP_ERR") X(3, "LOC_EEC_OP_ERR")         \
    X(4, "LOC_PROT_ERR") X(5, "WR_FLUSH_ERR") X(6, "MW_BIND_ERR") X(7, "BAD_RESP_ERR") X(8, "LOC_ACCESS_ERR")      \
    X(9, "REM_INV_REQ_ERR") X(10, "REM_ACCESS_ERR") X(11, "REM_OP_ERR") X(12, "RETRY_EXC_ERR")                      \
    X(13, "RNR_RETRY_EXC_ERR") X(14, "LOC_RDD_VIOL_ERR") X(15, "REM_INV_RD_REQ_ERR") X(16, "REM_ABORT_ERR")        \
    X(17, "INV_EECN_ERR") X(18, "INV_EEC_STATE_ERR") X(19, "FATAL_ERR") X(20, "RESP_TIMEOUT_ERR")                   \
    X(21, "GENERAL_ERR") X(22, "TM_ERR") X(23, "TM_RNDV_INCOMPLETE")
/* enum ibv_qp_type, ibv_qp_state, ibv_mtu, ibv_wq_type */
#define RS_ENUM_QP_TYPE(X) X(2, "RC") X(3, "UC") X(4, "UD") X(8, "RAW_PACKET") X(9, "XRC_SEND") X(10, "XRC_RECV") \
    X(255, "DRIVER")
#define RS_ENUM_QP_STATE(X) X(0, "RESET") X(1, "INIT") X(2, "RTR") X(3, "RTS") X(4, "SQD") X(5, "SQE") X(6, "ERR") \
    X(7, "UNKNOWN")
#define RS_ENUM_MTU(X) X(1, "256") X(2, "512") X(3, "1024") X(4, "2048") X(5, "4096")
#define RS_ENUM_WQ_TYPE(X) X(0, "RQ")
/* CUpti_ActivityMemcpyKind, CUpti_ActivityMemoryKind (the strings CUPTI and Kineto print) */
#define RS_ENUM_CUPTI_COPY(X) X(0, "Unknown") X(1, "HtoD") X(2, "DtoH") X(3, "HtoA") X(4, "AtoH") X(5, "AtoA") \
    X(6, "AtoD") X(7, "DtoA") X(8, "DtoD") X(9, "HtoH") X(10, "PtoP")
#define RS_ENUM_CUPTI_MEM(X) X(0, "Unknown") X(1, "Pageable") X(2, "Pinned") X(3, "Device") X(4, "Array") \
    X(5, "Managed") X(6, "Device Static") X(7, "Managed Static")
/* CUpti_ActivitySynchronizationType */
#define RS_ENUM_CUPTI_SYNC(X) X(0, "Unknown") X(1, "EventSynchronize") X(2, "StreamWaitEvent") \
    X(3, "StreamSynchronize") X(4, "ContextSynchronize")
/* cudaMemcpyKind, cudaMemoryType (CUDA_COPY_CALL) */
#define RS_ENUM_CUDA_COPY(X) X(0, "HtoH") X(1, "HtoD") X(2, "DtoH") X(3, "DtoD") X(4, "Default")
#define RS_ENUM_CUDA_MEM(X) X(0, "Pageable") X(1, "Pinned") X(2, "Device") X(3, "Managed")
/* CUDA_KERNEL_WINDOW.mode / .state (events_cuda.h) */
#define RS_ENUM_KWIN_MODE(X) X(0, "off") X(1, "sampled") X(2, "all")
#define RS_ENUM_KWIN_STATE(X) X(0, "delivering") X(1, "unavailable") X(2, "taken_over")
/* ncclDataType_t, ncclRedOp_t, ncclResult_t */
#define RS_ENUM_NCCL_TYPE(X) X(0, "int8") X(1, "uint8") X(2, "int32") X(3, "uint32") X(4, "int64") X(5, "uint64") \
    X(6, "float16") X(7, "float32") X(8, "float64") X(9, "bfloat16") X(10, "float8e4m3") X(11, "float8e5m2")
#define RS_ENUM_NCCL_OP(X) X(0, "sum") X(1, "prod") X(2, "max") X(3, "min") X(4, "avg")
#define RS_ENUM_NCCL_RESULT(X) X(0, "ncclSuccess") X(1, "ncclUnhandledCudaError") X(2, "ncclSystemError") \
    X(3, "ncclInternalError") X(4, "ncclInvalidArgument") X(5, "ncclInvalidUsage") X(6, "ncclRemoteError")  \
    X(7, "ncclInProgress")
/* NCCL_COMM_INIT.how, NCCL_COMM_END.abort, NCCL_PROXY_STATE.state, NCCL_TRANSPORT.dir/.transport
 * (events_nccl.h) */
#define RS_ENUM_NCCL_INIT(X) X(0, "ncclCommInitRank") X(1, "ncclCommInitRankConfig") X(2, "ncclCommInitAll") \
    X(3, "ncclCommSplit") X(4, "ncclCommInitRankScalable")
#define RS_ENUM_NCCL_END(X) X(0, "ncclCommDestroy") X(1, "ncclCommAbort") X(2, "ncclCommFinalize")
#define RS_ENUM_NCCL_STATE(X) X(8, "SendGPUWait") X(9, "SendWait") X(10, "RecvWait") X(11, "RecvFlushWait") \
    X(12, "RecvGPUWait") X(19, "ProxyOpInProgress") X(20, "SendPeerWait")
#define RS_ENUM_NCCL_DIR(X) X(0, "send") X(1, "recv") X(2, "unknown")
#define RS_ENUM_NCCL_TRANSPORT(X) X(0, "other") X(1, "P2P") X(2, "SHM") X(3, "NET/IB") X(4, "NET/Socket") \
    X(5, "NET") X(6, "CollNet") X(7, "NVLS")
/* PROC_END.reason (tracer/lifecycle.c), DROPS.reason (tracer/writer.h) */
#define RS_ENUM_END_REASON(X) X(0, "exit") X(1, "signal") X(2, "exec") X(3, "_exit")
#define RS_ENUM_DROP_REASON(X) X(0, "buffer_full") X(1, "write_error") X(2, "shutdown")

/* Which field uses which list: X(KIND, field, LIST). MEM_KIND is events_verbs.h's RS_MEM_NAMES and
 * NCCL_FUNC events_nccl.h's RS_NCCL_FUNCS. */
#define RS_ENUM_FIELDS(X)                                                                                       \
    X(IBV_REG_MR, mem, MEM_KIND)         X(IBV_POST_SEND, mem, MEM_KIND)      X(IBV_POST_RECV, mem, MEM_KIND) \
    X(IBV_POST_SEND, opcode, WR_OPCODE)  X(IBV_WC, opcode, WC_OPCODE)         X(IBV_WC, status, WC_STATUS)    \
    X(IBV_CREATE_QP, qp_type, QP_TYPE)   X(IBV_MODIFY_QP, state, QP_STATE)    X(IBV_MODIFY_QP, path_mtu, MTU) \
    X(IBV_CREATE_WQ, wq_type, WQ_TYPE)                                                                          \
    X(CUDA_MEMCPY, copy_kind, CUPTI_COPY) X(CUDA_MEMCPY, src_kind, CUPTI_MEM) X(CUDA_MEMCPY, dst_kind, CUPTI_MEM) \
    X(CUDA_MEMSET, memory_kind, CUPTI_MEM) X(CUDA_SYNC, type, CUPTI_SYNC)                                         \
    X(CUDA_COPY_CALL, copy_kind, CUDA_COPY) X(CUDA_COPY_CALL, src_mem, CUDA_MEM)                                 \
    X(CUDA_COPY_CALL, dst_mem, CUDA_MEM) X(CUDA_KERNEL_WINDOW, mode, KWIN_MODE)                                  \
    X(CUDA_KERNEL_WINDOW, state, KWIN_STATE)                                                                     \
    X(NCCL_CALL, func, NCCL_FUNC)        X(NCCL_CALL, datatype, NCCL_TYPE)    X(NCCL_CALL, op, NCCL_OP)        \
    X(NCCL_CALL, ret, NCCL_RESULT)       X(NCCL_COMM_INIT, how, NCCL_INIT)    X(NCCL_COMM_INIT, ret, NCCL_RESULT) \
    X(NCCL_COMM_END, abort, NCCL_END)    X(NCCL_COMM_END, ret, NCCL_RESULT)   X(NCCL_PROXY_STATE, state, NCCL_STATE) \
    X(NCCL_TRANSPORT, dir, NCCL_DIR)     X(NCCL_TRANSPORT, transport, NCCL_TRANSPORT)                            \
    X(PROC_END, reason, END_REASON)      X(DROPS, reason, DROP_REASON)

/* clang-format on */

/* The lists as arrays indexed by value (NULL = a value without a name). */
#define RS_ENUM_ENTRY(v, s) [v] = s,
#define RS_ENUM_ARRAY(id)   static const char *const rs_enum_##id[] = {RS_ENUM_##id(RS_ENUM_ENTRY)};
RS_ENUM_ARRAY(WR_OPCODE)
RS_ENUM_ARRAY(WC_OPCODE)
RS_ENUM_ARRAY(WC_STATUS)
RS_ENUM_ARRAY(QP_TYPE)
RS_ENUM_ARRAY(QP_STATE)
RS_ENUM_ARRAY(MTU)
RS_ENUM_ARRAY(WQ_TYPE)
RS_ENUM_ARRAY(CUPTI_COPY)
RS_ENUM_ARRAY(CUPTI_MEM)
RS_ENUM_ARRAY(CUPTI_SYNC)
RS_ENUM_ARRAY(CUDA_COPY)
RS_ENUM_ARRAY(CUDA_MEM)
RS_ENUM_ARRAY(KWIN_MODE)
RS_ENUM_ARRAY(KWIN_STATE)
RS_ENUM_ARRAY(NCCL_TYPE)
RS_ENUM_ARRAY(NCCL_OP)
RS_ENUM_ARRAY(NCCL_RESULT)
RS_ENUM_ARRAY(NCCL_INIT)
RS_ENUM_ARRAY(NCCL_END)
RS_ENUM_ARRAY(NCCL_STATE)
RS_ENUM_ARRAY(NCCL_DIR)
RS_ENUM_ARRAY(NCCL_TRANSPORT)
RS_ENUM_ARRAY(END_REASON)
RS_ENUM_ARRAY(DROP_REASON)
static const char *const rs_enum_MEM_KIND[] = RS_MEM_NAMES;
#define RS_ENUM_NCCL_FUNC_ENTRY(v, name) [v] = #name,
static const char *const rs_enum_NCCL_FUNC[] = {RS_NCCL_FUNCS(RS_ENUM_NCCL_FUNC_ENTRY)};
#undef RS_ENUM_NCCL_FUNC_ENTRY
#undef RS_ENUM_ARRAY
#undef RS_ENUM_ENTRY

/* number of entries of list id's array (one past its largest value) */
#define RS_ENUM_N(id) ((uint32_t)(sizeof rs_enum_##id / sizeof rs_enum_##id[0]))

struct rs_enum {
    const char *const *names;
    uint32_t n;
};
struct rs_enum_field {
    uint16_t kind;
    const char *field;
    struct rs_enum e;
};
static const struct rs_enum_field rs_enum_fields[] = {
#define RS_ENUM_ROW(k, f, id) {RS_EV_##k, #f, {rs_enum_##id, RS_ENUM_N(id)}},
    RS_ENUM_FIELDS(RS_ENUM_ROW)
#undef RS_ENUM_ROW
};
/* every row names a field its kind has (a typo or a renamed field fails the build) */
#define RS_ENUM_CHECK(k, f, id) +sizeof(((struct rs_ev_##k *)0)->f)
_Static_assert(0 RS_ENUM_FIELDS(RS_ENUM_CHECK) > 0, "RS_ENUM_FIELDS names fields of its kinds");
#undef RS_ENUM_CHECK

/* The value list of field i of a kind (rs_kinds[kind].fields[i]), NULL when the field is not an enum.
 * Resolved once per process into a table by (kind, field index). */
static inline const struct rs_enum *rs_enum_of(unsigned kind, unsigned i)
{
    static const struct rs_enum *by_field[RS_EV_COUNT][32];
    static int ready;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        for (size_t r = 0; r < sizeof rs_enum_fields / sizeof rs_enum_fields[0]; r++) {
            const struct rs_kind_desc *d = &rs_kinds[rs_enum_fields[r].kind];
            for (unsigned f = 0; f < d->nfields && f < 32; f++)
                if (!strcmp(d->fields[f].name, rs_enum_fields[r].field))
                    by_field[rs_enum_fields[r].kind][f] = &rs_enum_fields[r].e;
        }
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    return kind < RS_EV_COUNT && i < 32 ? by_field[kind][i] : NULL;
}

/* The name of value v in e (NULL when e is NULL or v has no name). */
static inline const char *rs_enum_name(const struct rs_enum *e, uint64_t v)
{
    return e && v < e->n ? e->names[v] : NULL;
}

/* hdr.aux values that pack several fields, as named fields (dump prints them after the kind's own fields, the same in
 * text and JSON). One decoder per such kind, rs_aux_<KIND>(aux, out): fills up to RS_AUX_MAX fields and returns how
 * many, 0 when the value is not such a record (an older tracer's 0: printed raw, as before). A kind is one row in
 * RS_AUX_DECODERS. */
enum rs_aux_type {
    RS_AUX_NULL, /* not recorded: null in JSON, - in text */
    RS_AUX_BOOL,
    RS_AUX_U64,
    RS_AUX_US /* v in ns, printed in us with 3 decimals */
};
struct rs_aux_field {
    const char *name;
    uint8_t type; /* enum rs_aux_type */
    uint64_t v;
};
#define RS_AUX_MAX 8

/* IBV_WC (formats/events_verbs.h RS_WC_AUX_*): the empty polls right before the poll that found it. armed; the run's
 * empty polls as its class's range (empty_polls_max null: 2^30 or more); waited_us, the time from the run's first
 * empty poll (the lower end of its 1.024 us unit; null with no empty poll), waited_capped when it is 34.36 s or
 * more. */
static inline unsigned rs_aux_IBV_WC(uint32_t aux, struct rs_aux_field *f)
{
    if (!(aux & RS_WC_AUX_SEEN)) return 0;
    uint32_t k = aux >> RS_WC_AUX_CLASS_SHIFT & RS_WC_AUX_CLASS_MASK, w = aux & RS_WC_AUX_WAIT_MASK;
    f[0] = (struct rs_aux_field){"armed", RS_AUX_BOOL, !!(aux & RS_WC_AUX_ARMED)};
    f[1] = (struct rs_aux_field){"empty_polls_min", RS_AUX_U64, rs_wc_aux_polls(aux)};
    f[2] = (struct rs_aux_field){"empty_polls_max", k == RS_WC_AUX_CLASS_MASK ? RS_AUX_NULL : RS_AUX_U64,
                                 k ? (1ull << k) - 1 : 0};
    f[3] = (struct rs_aux_field){"waited_us", k ? RS_AUX_US : RS_AUX_NULL, (uint64_t)w << RS_WC_AUX_WAIT_SHIFT};
    f[4] = (struct rs_aux_field){"waited_capped", RS_AUX_BOOL, k && w == RS_WC_AUX_WAIT_MASK};
    return 5;
}

#define RS_AUX_DECODERS(X) X(IBV_WC)

/* The named fields of an event's hdr.aux (out: room for RS_AUX_MAX), 0 when its kind packs none or aux holds none. */
static inline unsigned rs_aux_fields(unsigned kind, uint32_t aux, struct rs_aux_field *out)
{
    switch (kind) {
#define RS_AUX_CASE(k) \
    case RS_EV_##k: return rs_aux_##k(aux, out);
        RS_AUX_DECODERS(RS_AUX_CASE)
#undef RS_AUX_CASE
    default: return 0;
    }
}

#endif
