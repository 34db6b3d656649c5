/* Shared between the CUPTI injection (cupti.c), the record conversion (cupti_records.c) and the cudart
 * fallback wrappers (cudart.c). Needs the CUDA/CUPTI headers (compiled only with RS_HAVE_CUDA). */
#ifndef RAILSCOPE_CUDA_INT_H
#define RAILSCOPE_CUDA_INT_H

#include <stdint.h>

#include <cupti.h>

/* What CUPTI is doing for us (CUDA_KERNEL_WINDOW.state). */
enum rs_cupti_state {
    RS_CUPTI_DELIVERING = 0,  /* activity records arrive */
    RS_CUPTI_UNAVAILABLE = 1, /* no libcupti, no injection, or set-up failed */
    RS_CUPTI_TAKEN_OVER = 2,  /* another client (torch.profiler/Kineto) registered its own buffers */
};
extern int rs_cupti_state;           /* enum rs_cupti_state; UNAVAILABLE until InitializeInjection works */
extern uint64_t rs_cuda_copy_calls;  /* cudaMemcpy* calls seen by the cudart wrappers (evidence of work) */
extern int rs_cuda_api_copies;       /* RAILSCOPE_CUDA_COPIES=api (default): the wrappers record copies outside
                                     * windows; cupti: CUPTI records copies whenever it delivers */
extern int rs_cuda_copies_by_cupti;  /* CUPTI records copies now: the wrappers write no CUDA_COPY_CALL */
extern uint64_t rs_cuda_ptr_queries; /* cudaPointerGetAttributes calls made by the wrappers */

/* Records converted into trace events, by kind (for the take-over check and the tests). */
struct rs_cupti_counts {
    uint64_t memcpy, memset, kernel, api, sync, untimed, other;
};
extern struct rs_cupti_counts rs_cupti_counts;

/* Offset subtracted from CUPTI timestamps: 0 when our CLOCK_MONOTONIC timestamp callback is installed,
 * else REALTIME - MONOTONIC measured at set-up (CUPTI's default clock on Linux is CLOCK_REALTIME). */
extern int64_t rs_cupti_ts_offset;

/* A CUDA graph is being captured or instantiated (`fn`, the cudart entry point): CUPTI is never detached from
 * now on; an armed detach is cancelled before the call goes on. */
void rs_cupti_graph_seen(const char *fn);
/* graphs.c: 1 when the process's graph entry points come through the wrappers (preloaded, shared libcudart). */
int rs_cuda_graphs_watched(void);

/* Name of a runtime API callback id (interned id, 0 when unknown); filled at set-up. */
uint32_t rs_cupti_api_name(uint32_t cbid);

/* Convert one activity record into a trace event and emit it (chunk tid 0). Returns 1 when an event was
 * written, 0 when the kind is not one we keep or the record carries no timestamps. */
int rs_cupti_convert(const CUpti_Activity *rec);
/* Forget the kernel names remembered by address (cupti_records.c): a re-attached CUPTI may give a freed name's
 * address to another name. Callers hold cupti.c's conv_lock, as every conversion does. */
void rs_cupti_names_forget(void);

#endif
