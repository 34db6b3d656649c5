/* railscope's public API for programs that want to say where their steps are, without NVTX or CUDA.
 *
 * Programs need not link against librailscope: look the function up at run time so the same binary runs
 * with and without the tracer, e.g.
 *     void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
 *     if (mark) mark("step 3", 3);
 * A mark named like a step ("step N", "ProfilerStep#N") starts step N in `railscope report`; any other name
 * can be chosen with `railscope report --step-marker NAME`. Marks cost a string look-up: call them per step,
 * not per message. */
#ifndef RAILSCOPE_PUBLIC_H
#define RAILSCOPE_PUBLIC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Record a MARK event (name, value) on the calling thread, stamped now. Safe from any thread; does nothing
 * when the tracer is not recording. */
void railscope_mark(const char *name, uint64_t value);

#ifdef __cplusplus
}
#endif

#endif
