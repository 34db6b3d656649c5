/* RDMA verbs events (preload/verbs*.c). See rtrace.h for the mechanism. */
#ifndef RAILSCOPE_EVENTS_VERBS_H
#define RAILSCOPE_EVENTS_VERBS_H
#include <stdint.h>

/* Hand-aligned tables: */
/* clang-format off */

/* Memory kind of posted or registered memory. */
enum rs_mem_kind { RS_MEM_UNKNOWN = 0, RS_MEM_HOST = 1, RS_MEM_PINNED = 2, RS_MEM_DEVICE = 3,
                   RS_MEM_MANAGED = 4, RS_MEM_DMABUF = 5, RS_MEM_MIXED = 6 };
#define RS_MEM_NAMES { "unknown", "host", "pinned", "device", "managed", "dmabuf", "mixed" }

/* Written by preload/verbs*.c (docs/verbs.md). Calls with a duration keep `dur`; for calls that create an
 * object (open_device, alloc_pd, create_cq/qp) hdr.aux is errno when the call failed (object 0).
 * OPEN_DEVICE: hdr.aux = 2 for ibv_import_device. REG_MR: hdr.aux = 1 for ibv_rereg_mr (err = its return);
 * iova is the iova argument (dmabuf MRs: mr->addr holds the offset); mem is enum rs_mem_kind, decided at
 * registration; cuda_device is the CUDA ordinal or -1. CREATE_CQ/CREATE_QP: ext 0 = ibv_create_cq/qp,
 * 1 = through verbs_context create_cq_ex/create_qp_ex or mlx5dv_create_cq/qp, 2 = QP with ibv_wr_* builders
 * (patched). */
#define RS_FIELDS_IBV_OPEN_DEVICE(F) F(x64, ctx) F(str, device) F(u32, pad)
#define RS_FIELDS_IBV_CLOSE_DEVICE(F) F(x64, ctx) F(i32, ret) F(u32, pad)
#define RS_FIELDS_IBV_ALLOC_PD(F) F(x64, pd) F(x64, ctx)
#define RS_FIELDS_IBV_REG_MR(F) F(x64, addr) F(u64, length) F(x64, iova) F(x64, ctx) F(x64, pd) F(x64, mr) \
    F(dur, dur) F(x32, lkey) F(x32, rkey) F(x32, access) F(u32, mem) F(i32, dmabuf_fd) F(i32, cuda_device) \
    F(i32, err) F(u32, pad)
#define RS_FIELDS_IBV_DEREG_MR(F) F(x64, mr) F(i32, ret) F(u32, pad)
#define RS_FIELDS_IBV_CREATE_CQ(F) F(x64, cq) F(x64, ctx) F(u32, cqe) F(u32, ext)
#define RS_FIELDS_IBV_DESTROY_CQ(F) F(x64, cq) F(i32, ret) F(u32, pad)
#define RS_FIELDS_IBV_CREATE_QP(F) F(x64, qp) F(x64, ctx) F(x64, pd) F(x64, send_cq) F(x64, recv_cq) F(x64, srq) \
    F(u32, qp_num) F(u32, qp_type) F(u32, max_send_wr) F(u32, max_recv_wr) F(u32, ext) F(u32, pad)
#define RS_FIELDS_IBV_MODIFY_QP(F) F(u32, qp_num) F(x32, attr_mask) F(u32, state) F(u32, dest_qpn) \
    F(u32, path_mtu) F(u32, gid_index) F(u32, timeout) F(u32, retry_cnt) F(u32, rnr_retry) F(u32, port) \
    F(i32, ret) F(u32, pad)
#define RS_FIELDS_IBV_DESTROY_QP(F) F(u32, qp_num) F(i32, ret)
/* One event per work request in the posted list; ret is the call's return for the failing WR (bad_wr)
 * and for the WRs after it (not posted), 0 for WRs the provider accepted. hdr.aux = 1 for wr_* builders. */
#define RS_FIELDS_IBV_POST_SEND(F) F(x64, wr_id) F(u64, bytes) F(x64, remote_addr) F(x64, local_addr) \
    F(u32, qp_num) F(u32, opcode) F(x32, send_flags) F(u32, num_sge) F(x32, rkey) F(x32, imm) F(u32, mem) \
    F(i32, ret)
#define RS_FIELDS_IBV_POST_RECV(F) F(x64, wr_id) F(u64, bytes) F(x64, local_addr) F(u32, qp_num) F(u32, srq) \
    F(u32, num_sge) F(u32, mem) F(i32, ret) F(u32, pad)
/* One work completion, stamped with its poll time (all completions of one poll share it). imm in host byte
 * order. From an ibv_cq_ex without IBV_WC_EX_WITH_QP_NUM / BYTE_LEN, qp_num is the CQ's only QP (else 0)
 * and bytes 0. hdr.aux: how the poller had been looking for it (RS_WC_AUX_* below; 0 in older traces). */
#define RS_FIELDS_IBV_WC(F) F(x64, wr_id) F(x64, cq) F(u32, qp_num) F(u32, status) F(u32, opcode) \
    F(u32, bytes) F(u32, vendor_err) F(x32, imm) F(x32, wc_flags) F(u32, src_qp)
/* Empty polls on one CQ since the previous POLL_EMPTY of that CQ (hdr.ts = start of the interval), and the
 * time spent busy-polling it empty (runs of >= 2 empty polls, ended by a completion or req_notify_cq). */
#define RS_FIELDS_IBV_POLL_EMPTY(F) F(x64, cq) F(u64, count) F(dur, dur)
#define RS_FIELDS_IBV_REQ_NOTIFY(F) F(x64, cq) F(u32, solicited) F(i32, ret)
/* Shared receive queues (ibv_create_srq, verbs_context create_srq_ex: ext 0 / 1) and receive work queues
 * (verbs_context create_wq, i.e. ibv_create_wq). id is the number IBV_POST_RECV.srq carries for this SRQ's
 * posts: from 2 up, never reused in a process (srq 1: an SRQ created behind the tracer's back). Posts to a
 * WQ (ibv_post_wq_recv) are IBV_POST_RECV with hdr.aux = 2 and qp_num = the WQ's wq_num. Creation events
 * carry errno in hdr.aux on failure (object 0). */
#define RS_FIELDS_IBV_CREATE_SRQ(F) F(x64, srq) F(x64, ctx) F(x64, pd) F(u32, id) F(u32, max_wr) F(u32, ext) \
    F(u32, pad)
#define RS_FIELDS_IBV_DESTROY_SRQ(F) F(x64, srq) F(u32, id) F(i32, ret)
#define RS_FIELDS_IBV_CREATE_WQ(F) F(x64, wq) F(x64, ctx) F(x64, pd) F(x64, cq) F(u32, wq_num) F(u32, wq_type) \
    F(u32, max_wr) F(u32, pad)
#define RS_FIELDS_IBV_DESTROY_WQ(F) F(x64, wq) F(u32, wq_num) F(i32, ret)
/* One wait for a CQ's completion event (ibv_get_cq_event, session 21 on): hdr.ts = the call, dur = the time in it
 * (blocked on the completion channel's descriptor until an armed CQ's event came, or returned at once when one was
 * already there), cq = the CQ whose event it returned (0 on failure), channel = the completion channel, ret = the
 * call's return (0, or -1 with errno in hdr.aux). flags (RS_CQEV_* below) say whether the thread can have blocked
 * in the call at all and whether the event was already there when it was made. */
#define RS_FIELDS_IBV_GET_CQ_EVENT(F) F(x64, cq) F(x64, channel) F(dur, dur) F(i32, ret) F(x32, flags)

#define RS_EVENTS_VERBS(X)              \
    X(IBV_OPEN_DEVICE, verbs, RS_FIXED) \
    X(IBV_CLOSE_DEVICE, verbs, RS_FIXED) \
    X(IBV_ALLOC_PD, verbs, RS_FIXED)    \
    X(IBV_REG_MR, verbs, RS_FIXED)      \
    X(IBV_DEREG_MR, verbs, RS_FIXED)    \
    X(IBV_CREATE_CQ, verbs, RS_FIXED)   \
    X(IBV_DESTROY_CQ, verbs, RS_FIXED)  \
    X(IBV_CREATE_QP, verbs, RS_FIXED)   \
    X(IBV_MODIFY_QP, verbs, RS_FIXED)   \
    X(IBV_DESTROY_QP, verbs, RS_FIXED)  \
    X(IBV_POST_SEND, verbs, RS_FIXED)   \
    X(IBV_POST_RECV, verbs, RS_FIXED)   \
    X(IBV_WC, verbs, RS_FIXED)          \
    X(IBV_POLL_EMPTY, verbs, RS_FIXED)  \
    X(IBV_REQ_NOTIFY, verbs, RS_FIXED)  \
    X(IBV_CREATE_SRQ, verbs, RS_FIXED)  \
    X(IBV_DESTROY_SRQ, verbs, RS_FIXED) \
    X(IBV_CREATE_WQ, verbs, RS_FIXED)   \
    X(IBV_DESTROY_WQ, verbs, RS_FIXED)  \
    X(IBV_GET_CQ_EVENT, verbs, RS_FIXED)

/* clang-format on */

/* IBV_WC hdr.aux (tracers from session 20 on; always 0 before, so a reader tells old from new per event by
 * RS_WC_AUX_SEEN): the empty polls of the completion's CQ right before the poll that found it, the run of them
 * that poll ended (a run starts with the first empty poll after the CQ's previous completions or after
 * ibv_req_notify_cq). All completions of one poll (one ibv_cq_ex start_poll batch) carry the same value.
 *   bit 31      RS_WC_AUX_SEEN: recorded (0: an older tracer, or a CQ it had no record of)
 *   bit 30      RS_WC_AUX_ARMED: ibv_req_notify_cq was called on the CQ since its previous completions: the
 *               program may have waited in ibv_get_cq_event, which no poll shows (IBV_GET_CQ_EVENT records
 *               that wait from session 21 on; before, it was not traced)
 *   bits 25-29  the run's empty polls, as a class: 0 none, k >= 1 from 2^(k-1) to 2^k - 1 (31: 2^30 or more)
 *   bits 0-24   the time from the run's first empty poll to this poll, in units of 1024 ns (all ones: 34.4 s or
 *               more); 0 with no empty poll
 * With no empty poll the time since the CQ's previous poll that returned completions is in the trace, not here:
 * the latest earlier time among the CQ's IBV_WC events (none: not known). A program polling the CQ while it
 * waited for the completion has a run of empty polls before it, or found it soon after its previous completions;
 * a program away (busy with something else) when it arrived found it on its first poll after being away, as
 * long after its previous completions, or after one empty poll and as long. */
#define RS_WC_AUX_SEEN        0x80000000u
#define RS_WC_AUX_ARMED       0x40000000u
#define RS_WC_AUX_CLASS_SHIFT 25
#define RS_WC_AUX_CLASS_MASK  0x1fu
#define RS_WC_AUX_WAIT_MASK   0x1ffffffu
#define RS_WC_AUX_WAIT_SHIFT  10 /* ns to units */

/* The class and time bits of a run of polls >= 1 empty polls over wait_ns. A few instructions: the tracer computes
 * it when a poll ends a run. */
static inline uint32_t rs_wc_aux_run(uint64_t polls, uint64_t wait_ns)
{
    uint32_t k = 64u - (uint32_t)__builtin_clzll(polls);
    uint64_t w = wait_ns >> RS_WC_AUX_WAIT_SHIFT;
    return (k < RS_WC_AUX_CLASS_MASK ? k : RS_WC_AUX_CLASS_MASK) << RS_WC_AUX_CLASS_SHIFT |
           (w < RS_WC_AUX_WAIT_MASK ? (uint32_t)w : RS_WC_AUX_WAIT_MASK);
}
/* The whole value (writers of crafted traces): polls empty polls (0: none, wait_ns ignored), armed 0 or 1. */
static inline uint32_t rs_wc_aux(uint64_t polls, uint64_t wait_ns, int armed)
{
    return RS_WC_AUX_SEEN | (armed ? RS_WC_AUX_ARMED : 0) | (polls ? rs_wc_aux_run(polls, wait_ns) : 0);
}
/* The fewest empty polls recorded: the class's lower end (0, 1, 2, 4, ... 2^30). */
static inline uint64_t rs_wc_aux_polls(uint32_t aux)
{
    uint32_t k = aux >> RS_WC_AUX_CLASS_SHIFT & RS_WC_AUX_CLASS_MASK;
    return k ? 1ull << (k - 1) : 0;
}
/* The time recorded in ns (the lower end of its unit), UINT64_MAX for all ones (34.4 s or more). */
static inline uint64_t rs_wc_aux_wait_ns(uint32_t aux)
{
    uint32_t w = aux & RS_WC_AUX_WAIT_MASK;
    return w == RS_WC_AUX_WAIT_MASK ? UINT64_MAX : (uint64_t)w << RS_WC_AUX_WAIT_SHIFT;
}

/* IBV_GET_CQ_EVENT.flags, from the tracer's looks at the channel's descriptor right before the call (a poll() with no
 * timeout, and fcntl(F_GETFL) when that found an event, both raw system calls: nothing the program can see):
 *   RS_CQEV_PENDING   an event was already there when the thread looked: with one thread per channel the call
 *                     returned without blocking (the CQ's completion had come before the thread asked); another
 *                     thread may take that event first and this one block for the next (the analyzer takes a
 *                     PENDING wait longer than 1 ms on a blocking descriptor as blocked). Without it (and without
 *                     RS_CQEV_UNKNOWN) there was none: a call that returned an event blocked until it came (or the
 *                     event came between the look and the call, as good as blocked), one that failed with EAGAIN
 *                     had a non-blocking descriptor
 *   RS_CQEV_NONBLOCK  (with RS_CQEV_PENDING) the descriptor was O_NONBLOCK: the call cannot block, and a program
 *                     that waits does it in poll/epoll/select on the descriptor before the call (not traced)
 *   RS_CQEV_UNKNOWN   the tracer could not look (the poll or the fcntl failed): nothing above is known */
#define RS_CQEV_NONBLOCK 0x1u
#define RS_CQEV_PENDING  0x2u
#define RS_CQEV_UNKNOWN  0x4u
#endif
