/* The one RDMA fact sysfs does not show: a port's active MTU. Queried through libibverbs (dlopen'ed:
 * the CLI has no link-time dependency on it) for the devices already in the facts table. */
#ifndef RAILSCOPE_DOCTOR_VERBS_H
#define RAILSCOPE_DOCTOR_VERBS_H

#include <stddef.h>

#include "doctor_facts.h"

/* Adds ib/<dev>/port/<p>/active_mtu for every device and port present in f that libibverbs can open.
 * Returns the number of facts added, or -1 with a reason in err (no libibverbs, no devices). */
int rs_facts_add_verbs(struct rs_facts *f, char *err, size_t errlen);

#endif
