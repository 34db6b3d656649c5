/* Call stacks for chosen events only (preload/stack.c): the caller's stack is unwound, hashed, and written
 * as a CALL_STACK event the first time a call site is seen; later calls from the same site only get its id.
 * RAILSCOPE_STACKS = on (default: libunwind if libunwind.so.8 can be dlopen'ed, else glibc's backtrace),
 * glibc (always glibc's backtrace), off. */
#ifndef RAILSCOPE_STACK_H
#define RAILSCOPE_STACK_H

#include <stdint.h>

/* 0 off, 1 auto (libunwind, else glibc), 2 glibc only; set by the library constructor. */
extern int rs_stack_mode;
static inline int rs_stacks_on(void) { return __atomic_load_n(&rs_stack_mode, __ATOMIC_RELAXED) != 0; }

/* Unwind the calling thread's stack and return its call site id (1, 2, ...), writing a CALL_STACK event
 * (hdr.ts = ts, for_kind) when the site is new. 0 when stacks are off, the unwinder found no caller frame,
 * or the site table is full. Costs one unwind per call: call it only for rare, slow events, with the
 * tracer's reentrancy guard held and no lock held; never from a signal handler. */
uint32_t rs_stack_site(uint32_t for_kind, uint64_t ts);

#endif
