/* Host facts from a trace: the HOST_FACT snapshot the tracer records at start (hostfacts/hostfacts.h). */
#ifndef RAILSCOPE_DOCTOR_TRACE_H
#define RAILSCOPE_DOCTOR_TRACE_H

#include <stddef.h>

#include "doctor_facts.h"

/* Loads the HOST_FACT events of one trace file, or of the first trace file (by name) of a directory.
 * Returns the number of facts (0 = the trace has none, e.g. recorded without the host family), or -1
 * with a one-line reason in err. *used (optional) gets the file read and its host name ("" if unknown),
 * as "FILE (host H)". */
int rs_facts_from_trace(struct rs_facts *f, const char *path, char *used, size_t usedlen, char *err, size_t errlen);

#endif
