/* NCCL events: API wrappers (preload/nccl.c) and the profiler plugin (preload/nccl_profiler.c).
 * comm_hash is NCCL's commHash where known (the profiler's init gives it; the API wrappers learn it when
 * the plugin's init runs inside their ncclCommInit* call), so the analyzer joins ranks by
 * (comm_hash, func, seq). Handles: every plugin event gets a process-unique `handle` (1, 2, ...); children
 * name it in `parent` (Coll -> ProxyOp -> ProxyStep -> NET_IB/NET_SOCK, Coll -> KernelCh). Plugin events
 * are written when NCCL stops them (hdr.ts = start, end = stop), PROXY_STATE when the state changes. */
#ifndef RAILSCOPE_EVENTS_NCCL_H
#define RAILSCOPE_EVENTS_NCCL_H
/* Hand-aligned tables: */
/* clang-format off */

/* func ids for NCCL_CALL.func */
#define RS_NCCL_FUNCS(X) X(0, AllReduce) X(1, ReduceScatter) X(2, AllGather) X(3, Broadcast) X(4, Reduce) \
    X(5, AlltoAll) X(6, Send) X(7, Recv) X(8, GroupStart) X(9, GroupEnd) X(10, Gather) X(11, Scatter)
#define RS_NCCL_NFUNCS 12

/* how: 0 ncclCommInitRank, 1 ncclCommInitRankConfig, 2 ncclCommInitAll (one event per comm), 3 ncclCommSplit,
 * 4 ncclCommInitRankScalable. comm_hash: NCCL's, learned from the profiler's init on the calling thread; else
 * railscope's own key, alike on every rank (preload/nccl.c key_from_id); 0 = neither (ncclCommInitAll). */
#define RS_FIELDS_NCCL_COMM_INIT(F) F(x64, comm) F(x64, comm_hash) F(dur, dur) F(i32, rank) F(i32, nranks) \
    F(i32, cuda_device) F(u32, how) F(i32, ret) F(u32, pad)
/* abort: 0 ncclCommDestroy, 1 ncclCommAbort, 2 ncclCommFinalize. */
#define RS_FIELDS_NCCL_COMM_END(F) F(x64, comm) F(u32, abort) F(i32, ret)
/* One API call: hdr.ts = entry, dur = time in the call (enqueue cost, not GPU time). seq counts calls per
 * (comm, func) from 0, like NCCL's own coll seqNumber (so seq here = NCCL_COLL.seq of the same call when
 * nothing is graph-captured). peer = root (Broadcast/Reduce/Gather/Scatter) or peer (Send/Recv), -1 else.
 * datatype/op are ncclDataType_t/ncclRedOp_t values; ret is the ncclResult_t returned. */
#define RS_FIELDS_NCCL_CALL(F) F(dur, dur) F(x64, comm) F(u64, count) F(x64, stream) F(u64, seq) \
    F(x64, comm_hash) F(u32, func) F(u32, datatype) F(u32, op) F(i32, peer) F(i32, rank) F(i32, nranks)   \
    F(i32, ret) F(u32, pad)

/* Profiler plugin init (once per communicator): version = the table NCCL picked (4, 5 or 6), mask = the
 * event mask we asked for. */
#define RS_FIELDS_NCCL_PROF_INIT(F) F(x64, comm_hash) F(x64, context) F(i32, rank) F(i32, nranks) \
    F(x32, mask) F(u32, version) F(str, comm_name) F(i32, nnodes)
/* Coll: end = NCCL's stopEvent, which means "enqueued", not completed. */
#define RS_FIELDS_NCCL_COLL(F) F(ts, end) F(x64, handle) F(x64, comm_hash) F(u64, seq) F(u64, count) \
    F(x64, parent) F(str, func) F(str, algo) F(str, proto) F(u32, nchannels) F(u32, nwarps) F(str, datatype) \
    F(i32, rank) F(i32, root)
#define RS_FIELDS_NCCL_P2P(F) F(ts, end) F(x64, handle) F(x64, comm_hash) F(u64, count) F(x64, parent) \
    F(str, func) F(i32, peer) F(str, datatype) F(u32, nchannels) F(i32, rank) F(u32, pad)
/* chunk_size = NCCL's ProxyOp chunkSize (chunk * sliceSteps), nsteps = network transfers it will make. */
#define RS_FIELDS_NCCL_PROXY_OP(F) F(ts, end) F(x64, handle) F(x64, parent) F(u64, chunk_size) F(u32, channel) \
    F(i32, peer) F(u32, nsteps) F(u32, is_send)
/* trans_size = the last transSize NCCL reported for the step (bytes). */
#define RS_FIELDS_NCCL_PROXY_STEP(F) F(ts, end) F(x64, handle) F(x64, parent) F(u64, trans_size) F(u32, step) \
    F(u32, is_send)
/* A state transition of a ProxyStep or ProxyOp: state = ncclProfilerEventState_t (8 SendGPUWait,
 * 20 SendPeerWait, 9 SendWait, 10 RecvWait, 11 RecvFlushWait, 12 RecvGPUWait, 19 ProxyOpInProgress);
 * trans_size = bytes NCCL reported with it. hdr.ts = when NCCL recorded the state. */
#define RS_FIELDS_NCCL_PROXY_STATE(F) F(x64, handle) F(u64, trans_size) F(u32, state) F(u32, pad)
/* gpu_start/gpu_stop: the GPU globaltimer (ns) values NCCL's kernel wrote for this channel. */
#define RS_FIELDS_NCCL_KERNEL_CH(F) F(ts, end) F(x64, parent) F(u64, gpu_start) F(u64, gpu_stop) F(u32, channel) \
    F(u32, pad)
#define RS_FIELDS_NCCL_GROUP(F) F(ts, end) F(x64, handle) F(x64, comm_hash)
/* Net plugin IB QP event (NCCL built with NET_PROFILER=1 only): one posted WR as NCCL saw it; end = when
 * NCCL polled its completion. parent = the ProxyStep. */
#define RS_FIELDS_NCCL_NET_IB(F) F(ts, end) F(x64, parent) F(u64, wr_id) F(u64, length) F(u32, qp_num) \
    F(u32, opcode) F(u32, device) F(u32, pad)
/* Net plugin socket event: op as NCCL's socket plugin reports it. */
#define RS_FIELDS_NCCL_NET_SOCK(F) F(ts, end) F(x64, parent) F(u64, length) F(i32, fd) F(i32, op)
/* v5 API-level plugin events (GroupApi 0x100, CollApi 0x200, P2pApi 0x400, KernelLaunch 0x800 in type);
 * root = collective root, or group depth for GroupApi; graph = 1 when captured in a CUDA graph. Off by
 * default (the API wrappers record the same calls). */
#define RS_FIELDS_NCCL_PROF_API(F) F(ts, end) F(x64, handle) F(x64, parent) F(u64, count) F(x64, stream) \
    F(str, func) F(u32, type) F(i32, root) F(u32, graph)

/* The transport NCCL chose for one connection, from NCCL's own INFO log ("Channel 02/0 : 0[0] -> 1[0] [send]
 * via NET/Socket/0"; preload/nccl_profiler.c captures it, see docs/cuda-nccl.md). src -> dst are ranks of
 * the communicator comm_hash (0 = not known); channel/conn as NCCL printed them; dir 0 send side, 1 receive
 * side, 2 not said (P2P/SHM lines). transport: 0 other, 1 P2P, 2 SHM, 3 NET/IB, 4 NET/Socket, 5 NET (another
 * plugin), 6 CollNet, 7 NVLS. via = NCCL's text after "via " (e.g. "NET/IB/0/GDRDMA", "P2P/CUMEM/read").
 * "Using network X" lines give channel = src = dst = -1, via = "NET/X". hdr.ts = when railscope read the
 * line (NCCL's log carries no time), not when NCCL connected. */
#define RS_FIELDS_NCCL_TRANSPORT(F) F(x64, comm_hash) F(i32, channel) F(i32, conn) F(i32, src) F(i32, dst) \
    F(u32, dir) F(u32, transport) F(str, via) F(u32, nccl_tid)

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
    X(NCCL_NET_IB, nccl, RS_FIXED)       \
    X(NCCL_NET_SOCK, nccl, RS_FIXED)     \
    X(NCCL_PROF_API, nccl, RS_FIXED)     \
    X(NCCL_TRANSPORT, nccl, RS_FIXED)

/* clang-format on */
#endif
