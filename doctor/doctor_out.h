/* Doctor's renderers: verdict lines (text) and a JSON document. */
#ifndef RAILSCOPE_DOCTOR_OUT_H
#define RAILSCOPE_DOCTOR_OUT_H

#include <stdio.h>

#include "doctor_checks.h"

/* quiet: only WARN and FAIL lines (and the summary). */
void rs_doctor_print_text(FILE *o, const struct rs_verdicts *v, int quiet);
void rs_doctor_print_json(FILE *o, const struct rs_verdicts *v);
/* key=value lines, the format rs_facts_load() reads back. */
void rs_doctor_print_facts(FILE *o, struct rs_facts *f);

#endif
