/* CUDA (CUPTI activity + cudart fallback), NVTX and NVML events (preload/cuda*.c, nvtx.c, nvml.c).
 * GPU-side events carry start in hdr.ts and `end`, both converted to the tracer clock. */
#ifndef RAILSCOPE_EVENTS_CUDA_H
#define RAILSCOPE_EVENTS_CUDA_H

/* copy_kind follows CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, ... 8 DtoD, 10 PtoP); src/dst_kind follow
 * CUpti_ActivityMemoryKind (1 pageable, 2 pinned, 3 device, 4 array, 5 managed, ...). */
#define RS_FIELDS_CUDA_MEMCPY(F) F(ts, end) F(u64, bytes) F(u32, correlation) F(u32, device) F(u32, stream) \
    F(u32, copy_kind) F(u32, src_kind) F(u32, dst_kind) F(u32, src_device) F(u32, dst_device)
#define RS_FIELDS_CUDA_MEMSET(F) F(ts, end) F(u64, bytes) F(u32, correlation) F(u32, device) F(u32, stream) \
    F(u32, value)
#define RS_FIELDS_CUDA_KERNEL(F) F(ts, end) F(str, name) F(u32, correlation) F(u32, device) F(u32, stream) \
    F(i32, grid_x) F(i32, grid_y) F(i32, grid_z) F(i32, block_x) F(i32, block_y) F(i32, block_z)
#define RS_FIELDS_CUDA_SYNC(F) F(ts, end) F(u32, correlation) F(u32, type) F(u32, stream) F(u32, pad)
/* A runtime/driver API call (CUPTI RUNTIME/DRIVER activity), for correlation to host threads. CUPTI hands
 * records over on its own thread, so the calling thread is a field rather than the chunk's tid. */
#define RS_FIELDS_CUDA_API(F) F(ts, end) F(str, name) F(u32, correlation) F(u32, cbid) F(u32, tid)
/* Host-side copy seen by the cudart fallback wrappers (no CUPTI). */
#define RS_FIELDS_CUDA_COPY_CALL(F) F(dur, dur) F(u64, bytes) F(x64, dst) F(x64, src) F(x64, stream) \
    F(u32, copy_kind) F(u32, async) F(u32, src_mem) F(u32, dst_mem) F(i32, ret) F(u32, pad)
/* CUPTI's own count of records it could not deliver. */
#define RS_FIELDS_CUPTI_DROPPED(F) F(u64, count) F(u32, device) F(u32, pad)

/* NVTX: push/pop ranges per thread, start/end ranges by id, marks. */
#define RS_FIELDS_NVTX_PUSH(F) F(u64, payload) F(str, domain) F(str, message) F(u32, category) F(u32, pad)
#define RS_FIELDS_NVTX_POP(F) F(str, domain) F(u32, pad)
#define RS_FIELDS_NVTX_START(F) F(u64, id) F(u64, payload) F(str, domain) F(str, message)
#define RS_FIELDS_NVTX_END(F) F(u64, id)
#define RS_FIELDS_NVTX_MARK(F) F(u64, payload) F(str, domain) F(str, message)

/* NVML counter sample (field = NVML field id, value cumulative as NVML reports it). */
#define RS_FIELDS_NVML_SAMPLE(F) F(u64, value) F(u32, device) F(u32, field)

#define RS_EVENTS_CUDA(X)               \
    X(CUDA_MEMCPY, cuda, RS_FIXED)      \
    X(CUDA_MEMSET, cuda, RS_FIXED)      \
    X(CUDA_KERNEL, cuda, RS_FIXED)      \
    X(CUDA_SYNC, cuda, RS_FIXED)        \
    X(CUDA_API, cuda, RS_FIXED)         \
    X(CUDA_COPY_CALL, cuda, RS_FIXED)   \
    X(CUPTI_DROPPED, cuda, RS_FIXED)    \
    X(NVTX_PUSH, nvtx, RS_FIXED)        \
    X(NVTX_POP, nvtx, RS_FIXED)         \
    X(NVTX_START, nvtx, RS_FIXED)       \
    X(NVTX_END, nvtx, RS_FIXED)         \
    X(NVTX_MARK, nvtx, RS_FIXED)        \
    X(NVML_SAMPLE, nvml, RS_FIXED)

#endif
