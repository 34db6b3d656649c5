/* NCCL events: API wrappers (preload/nccl.c) and the profiler plugin (preload/nccl_profiler.c).
 * comm_hash is NCCL's commHash where known (profiler init gives it; API wrappers record the comm pointer
 * and the hash once it is learned), so the analyzer joins ranks by (comm_hash, seq). */
#ifndef RAILSCOPE_EVENTS_NCCL_H
#define RAILSCOPE_EVENTS_NCCL_H

/* func ids for NCCL_CALL.func */
#define RS_NCCL_FUNCS(X) X(0, AllReduce) X(1, ReduceScatter) X(2, AllGather) X(3, Broadcast) X(4, Reduce) \
    X(5, AlltoAll) X(6, Send) X(7, Recv) X(8, GroupStart) X(9, GroupEnd)

#define RS_FIELDS_NCCL_COMM_INIT(F) F(x64, comm) F(x64, comm_hash) F(dur, dur) F(i32, rank) F(i32, nranks) \
    F(i32, cuda_device) F(u32, how)
#define RS_FIELDS_NCCL_COMM_END(F) F(x64, comm) F(u32, abort) F(i32, ret)
/* One API call: hdr.ts = entry, dur = time in the call (launch cost, not GPU time). */
#define RS_FIELDS_NCCL_CALL(F) F(dur, dur) F(x64, comm) F(u64, count) F(x64, stream) F(u64, seq) \
    F(u32, func) F(u32, datatype) F(u32, op) F(i32, peer) F(i32, rank) F(i32, nranks) F(i32, ret) F(u32, pad)

/* Profiler plugin events. `handle` identifies the event for its children (parent field). */
#define RS_FIELDS_NCCL_PROF_INIT(F) F(x64, comm_hash) F(x64, context) F(i32, rank) F(i32, nranks) \
    F(x32, mask) F(u32, version) F(str, comm_name) F(u32, pad)
#define RS_FIELDS_NCCL_COLL(F) F(ts, end) F(x64, handle) F(x64, comm_hash) F(u64, seq) F(u64, count) \
    F(str, func) F(str, algo) F(str, proto) F(u32, nchannels) F(u32, nwarps) F(u32, datatype) F(i32, rank) \
    F(i32, root)
#define RS_FIELDS_NCCL_P2P(F) F(ts, end) F(x64, handle) F(x64, comm_hash) F(u64, count) F(str, func) \
    F(i32, peer) F(u32, datatype) F(u32, nchannels)
#define RS_FIELDS_NCCL_PROXY_OP(F) F(ts, end) F(x64, handle) F(x64, parent) F(u64, chunk_size) F(u32, channel) \
    F(i32, peer) F(u32, nsteps) F(u32, is_send)
#define RS_FIELDS_NCCL_PROXY_STEP(F) F(ts, end) F(x64, handle) F(x64, parent) F(u32, step) F(u32, is_send)
/* A state transition of a ProxyStep (SendGPUWait, SendPeerWait, SendWait, RecvWait, RecvFlushWait,
 * RecvGPUWait ...): state = NCCL's ncclProfilerEventState_t value; trans_size = bytes so far. */
#define RS_FIELDS_NCCL_PROXY_STATE(F) F(x64, handle) F(u64, trans_size) F(u32, state) F(u32, pad)
#define RS_FIELDS_NCCL_KERNEL_CH(F) F(ts, end) F(x64, parent) F(u64, gpu_start) F(u64, gpu_stop) F(u32, channel) \
    F(u32, pad)
#define RS_FIELDS_NCCL_GROUP(F) F(ts, end) F(x64, handle) F(x64, comm_hash)
/* Net plugin IB QP event (NCCL built with them): one posted WR as NCCL saw it. */
#define RS_FIELDS_NCCL_NET_IB(F) F(ts, end) F(x64, parent) F(u64, wr_id) F(u64, length) F(u32, qp_num) \
    F(u32, opcode) F(u32, device) F(u32, pad)

#define RS_EVENTS_NCCL(X)                \
    X(NCCL_COMM_INIT, nccl, RS_FIXED)    \
    X(NCCL_COMM_END, nccl, RS_FIXED)     \
    X(NCCL_CALL, nccl, RS_FIXED)         \
    X(NCCL_PROF_INIT, nccl, RS_FIXED)    \
    X(NCCL_COLL, nccl, RS_FIXED)         \
    X(NCCL_P2P, nccl, RS_FIXED)          \
    X(NCCL_PROXY_OP, nccl, RS_FIXED)     \
    X(NCCL_PROXY_STEP, nccl, RS_FIXED)   \
    X(NCCL_PROXY_STATE, nccl, RS_FIXED)  \
    X(NCCL_KERNEL_CH, nccl, RS_FIXED)    \
    X(NCCL_GROUP, nccl, RS_FIXED)        \
    X(NCCL_NET_IB, nccl, RS_FIXED)

#endif
