/* CUDA (CUPTI activity + cudart fallback), NVTX and NVML events (preload/cuda/, nvtx.c, nvml.c).
 * GPU-side events carry start in hdr.ts and `end`, both on the tracer clock (CUPTI is given our
 * CLOCK_MONOTONIC timestamp callback before any activity kind is enabled). CUPTI records are delivered on
 * CUPTI's own thread, so they are written with chunk tid 0; the host thread is a field where CUPTI knows it. */
#ifndef RAILSCOPE_EVENTS_CUDA_H
#define RAILSCOPE_EVENTS_CUDA_H
/* Hand-aligned tables: */
/* clang-format off */

/* copy_kind follows CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD,
 * 9 HtoH, 10 PtoP); src/dst_kind follow CUpti_ActivityMemoryKind (1 pageable, 2 pinned, 3 device, 4 array,
 * 5 managed, 6 device static, 7 managed static). correlation = the RUNTIME API record's correlation id
 * (CUPTI's runtimeCorrelationId; the driver one where there is no runtime call), drv_corr = the driver's.
 * flags bit 0 = async. Peer copies (CUPTI MEMCPY2) have copy_kind 10 and src/dst_device set; other copies
 * have src_device = dst_device = device. */
#define RS_FIELDS_CUDA_MEMCPY(F) F(ts, end) F(u64, bytes) F(u32, correlation) F(u32, device) F(u32, stream) \
    F(u32, copy_kind) F(u32, src_kind) F(u32, dst_kind) F(u32, src_device) F(u32, dst_device)              \
    F(u32, drv_corr) F(u32, flags)
/* memory_kind as src_kind above; flags bit 0 = async. */
#define RS_FIELDS_CUDA_MEMSET(F) F(ts, end) F(u64, bytes) F(u32, correlation) F(u32, device) F(u32, stream) \
    F(u32, value) F(u32, memory_kind) F(u32, flags)
/* name = the mangled kernel name (interned once per distinct name). */
#define RS_FIELDS_CUDA_KERNEL(F) F(ts, end) F(str, name) F(u32, correlation) F(u32, device) F(u32, stream) \
    F(i32, grid_x) F(i32, grid_y) F(i32, grid_z) F(i32, block_x) F(i32, block_y) F(i32, block_z)
/* type follows CUpti_ActivitySynchronizationType (1 event sync, 2 stream wait event, 3 stream sync,
 * 4 context sync); stream = 0xffffffff when not applicable. */
#define RS_FIELDS_CUDA_SYNC(F) F(ts, end) F(u32, correlation) F(u32, type) F(u32, stream) F(u32, pad)
/* A runtime API call (CUPTI RUNTIME activity) that launches, copies, sets or synchronises; name is the
 * runtime function (e.g. "cudaMemcpyAsync_v3020"), tid the calling thread (gettid), ret its cudaError_t. */
#define RS_FIELDS_CUDA_API(F) F(ts, end) F(str, name) F(u32, correlation) F(u32, cbid) F(u32, tid) F(u32, ret) \
    F(u32, pad)
/* Host-side copy seen by the cudart wrappers: written whenever CUPTI is not recording copies — by default
 * outside the sampling windows (see CUDA_KERNEL_WINDOW.flags), and when CUPTI is not delivering (not loaded,
 * failed, or taken over by another CUPTI client). hdr.ts/dur = the call on the calling thread.
 * copy_kind = cudaMemcpyKind as passed (0 H2H, 1 H2D, 2 D2H, 3 D2D, 4 default); src_mem/dst_mem =
 * cudaMemoryType of the pointers when known (0 unregistered host = pageable, 1 host pinned, 2 device,
 * 3 managed), 0xffffffff = not looked up. */
/* stack = the CALL_STACK site id of the call when it is a copy from/to pageable host memory and stacks are
 * on (RAILSCOPE_STACKS), 0 = none (this word was padding, always 0, before). */
#define RS_FIELDS_CUDA_COPY_CALL(F) F(dur, dur) F(u64, bytes) F(x64, dst) F(x64, src) F(x64, stream) \
    F(u32, copy_kind) F(u32, async) F(u32, src_mem) F(u32, dst_mem) F(i32, ret) F(u32, stack)
/* CUPTI's own count of records it could not deliver (cumulative as CUPTI reports it). */
#define RS_FIELDS_CUPTI_DROPPED(F) F(u64, count) F(u32, device) F(u32, pad)
/* GPU-activity state changes (a sampling window opens or closes), so readers know where kernel and GPU copy
 * records are complete: on = 1 from hdr.ts on (CONCURRENT_KERNEL enabled), 0 = off. mode: 0 off (no GPU-side
 * timing), 1 sampled windows, 2 all. state: 0 = CUPTI delivering, 1 = CUPTI unavailable, 2 = taken over by
 * another CUPTI client (copies then come as CUDA_COPY_CALL). flags (was pad, always 0 before session 5):
 * bit 0 RS_KWIN_API_COPIES = copies are recorded by the cudart wrappers (CUDA_COPY_CALL) whenever on = 0 or
 * state != 0, and by CUPTI (CUDA_MEMCPY/CUDA_MEMSET, GPU times) while on = 1 — a copy at a boundary may
 * appear in both; without the bit, CUPTI records copies at all times while it delivers.
 * bit 1 RS_KWIN_DETACHED (since session 20): on = 0 and CUPTI was finalized at hdr.ts, the detach after a window
 * (RAILSCOPE_CUDA_DETACH): from the window's close to hdr.ts CUPTI stayed attached with nothing enabled, which is
 * not free; readers that do not know the bit see one more "off" while already off and change nothing. */
#define RS_FIELDS_CUDA_KERNEL_WINDOW(F) F(u32, on) F(u32, mode) F(u32, state) F(x32, flags)
#define RS_KWIN_API_COPIES 1u
#define RS_KWIN_DETACHED 2u

/* NVTX: push/pop ranges per thread, start/end ranges by id, marks. domain 0 = the default domain.
 * payload_type follows nvtxPayloadType_t (1 u64, 2 i64, 3 double, 4 u32, 5 i32, 6 float; 0 none) with
 * payload holding the raw 8 bytes; for NVTX extended payloads (payload_type 0xDFBD0009, used by NCCL)
 * schema is the payload's schema id and payload/payload2/payload3 its first 24 bytes as little-endian
 * words (NCCL's collectives: comm hash, bytes, reduction op). depth = nesting level after the push.
 * PUSH, START and MARK may carry a message's numbers after their fields, message then being its template
 * (formats/nvtx_msg.h, SPEC.md "NVTX message numbers"). */
#define RS_FIELDS_NVTX_PUSH(F) F(u64, payload) F(u64, payload2) F(u64, payload3) F(x64, schema) F(str, domain) \
    F(str, message) F(u32, category) F(x32, payload_type) F(i32, depth) F(u32, pad)
#define RS_FIELDS_NVTX_POP(F) F(str, domain) F(i32, depth)
#define RS_FIELDS_NVTX_START(F) F(u64, id) F(u64, payload) F(u64, payload2) F(u64, payload3) F(x64, schema) \
    F(str, domain) F(str, message) F(u32, category) F(x32, payload_type)
#define RS_FIELDS_NVTX_END(F) F(u64, id)
#define RS_FIELDS_NVTX_MARK(F) F(u64, payload) F(u64, payload2) F(u64, payload3) F(x64, schema) F(str, domain) \
    F(str, message) F(u32, category) F(x32, payload_type)

/* NVML counter sample: field = NVML field id (138/139 NVLink data TX/RX KiB, 197/198 PCIe TX/RX bytes),
 * value cumulative as NVML reports it, scope = link id or 0xffffffff for the sum over links. */
#define RS_FIELDS_NVML_SAMPLE(F) F(u64, value) F(u32, device) F(u32, field) F(u32, scope) F(u32, pad)

/* The host call stack of a chosen event (today: cudaMemcpy, cudaMemcpyAsync, cudaMemcpy2D[Async] to or from pageable
 * host memory),
 * written once per call site (site = 1, 2, ... per process; later calls from the site name it, e.g.
 * CUDA_COPY_CALL.stack) on the calling thread, hdr.ts = the call's entry. for_kind = the kind of the event it
 * explains (CUDA_COPY_CALL when one follows with stack = site, CUDA_MEMCPY when CUPTI delivers the copy
 * later). flags: bit 0 unwound by libunwind (else glibc backtrace), bit 1 truncated at the depth limit.
 * After the fixed part, `depth` frames of 16 bytes, innermost first, the tracer's own frames removed:
 *     u64 pc       return address in the caller (absolute, this process)
 *     u32 module   string id of the path of the object holding pc (0 unknown)
 *     u32 offset   pc - the object's load bias = its ELF virtual address (0xffffffff unknown)
 * Offline symbolisers look up offset - 1 (the call instruction) in the module file's .symtab/.dynsym. */
#define RS_FIELDS_CALL_STACK(F) F(u32, depth) F(u32, for_kind) F(u32, site) F(x32, flags)
struct rs_stack_frame {
    uint64_t pc;
    uint32_t module;
    uint32_t offset;
};
#define RS_STACK_LIBUNWIND 1u
#define RS_STACK_TRUNCATED 2u
#define RS_STACK_OFFSET_UNKNOWN 0xffffffffu

#define RS_EVENTS_CUDA(X)                   \
    X(CUDA_MEMCPY, cuda, RS_FIXED)          \
    X(CUDA_MEMSET, cuda, RS_FIXED)          \
    X(CUDA_KERNEL, cuda, RS_FIXED)          \
    X(CUDA_SYNC, cuda, RS_FIXED)            \
    X(CUDA_API, cuda, RS_FIXED)             \
    X(CUDA_COPY_CALL, cuda, RS_FIXED)       \
    X(CUPTI_DROPPED, cuda, RS_FIXED)        \
    X(CUDA_KERNEL_WINDOW, cuda, RS_FIXED)   \
    X(NVTX_PUSH, nvtx, RS_FIXED)            \
    X(NVTX_POP, nvtx, RS_FIXED)             \
    X(NVTX_START, nvtx, RS_FIXED)           \
    X(NVTX_END, nvtx, RS_FIXED)             \
    X(NVTX_MARK, nvtx, RS_FIXED)            \
    X(NVML_SAMPLE, nvml, RS_FIXED)          \
    X(CALL_STACK, cuda, RS_VARLEN)

/* clang-format on */
#endif
