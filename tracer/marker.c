/* The public marker API (include/railscope.h): named points in time that programs without NVTX use to
 * delimit their steps. Not a hot path: interning the name takes the string table's lock. */
#include "../include/railscope.h"
#include "rs_tracer.h"

RS_EXPORT void railscope_mark(const char *name, uint64_t value)
{
    if (!name || !rs_on(RS_FAM_core) || !rs_guard_enter()) return;
    struct rs_ev_MARK ev;
    RS_EV_INIT(&ev, MARK, rs_now());
    ev.value = value;
    ev.name = rs_intern(name);
    ev.pad = 0;
    rs_emit(&ev.h);
    rs_guard_exit();
}
