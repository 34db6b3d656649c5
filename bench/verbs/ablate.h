/* Force-included by bench/verbs/ablate.sh when it rebuilds preload/verbs_ops.c: compiles the tracer clock
 * (VB_ABLATE_CLOCK) and/or the event copy (VB_ABLATE_EMIT) out of the data path, to measure the verbs
 * code's own share of the overhead. Never part of the product build. */
#include "tracer/rs_tracer.h"
#ifdef VB_ABLATE_CLOCK
#define rs_now() ((uint64_t)1)
#endif
#ifdef VB_ABLATE_EMIT
/* The event still has to be built in memory (an empty asm that reads it and clobbers memory): only the
 * copy into the ring is left out, not the verbs code that fills the event. */
#define rs_emit(h)                                  \
    ({                                              \
        __asm__ volatile("" : : "r"(h) : "memory"); \
        1;                                          \
    })
#endif
