/* Host facts from a trace: the HOST_FACT snapshot the tracer records at start (hostfacts/hostfacts.h). */
#ifndef RAILSCOPE_DOCTOR_TRACE_H
#define RAILSCOPE_DOCTOR_TRACE_H

#include <stddef.h>

#include "doctor_facts.h"
#include "formats/reader.h"

/* Loads the HOST_FACT events of one trace file, or of the first trace file (by name) of a directory that has any
 * (a short-lived process may end before its snapshot is taken).
 * Returns the number of facts (0 = none could be read: recorded without the host family, or a file cut
 * before its snapshot), or -1 with a one-line reason in err. *used (optional) gets the file read and its
 * host name ("" if unknown), as "FILE (host H)"; *st (optional) how reading it ended (st->status,
 * st->reason), so a damaged or incomplete file is not taken for a whole one. */
int rs_facts_from_trace(struct rs_facts *f, const char *path, char *used, size_t usedlen, char *err, size_t errlen,
                        struct rs_read_stats *st);

#endif
