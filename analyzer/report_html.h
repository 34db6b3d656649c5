/* The HTML report: one self-contained file (inline SVG and CSS, a little inline JS, no network, no
 * external resources) drawn from the analysis model (analyzer/analysis.h). `railscope report --html FILE`
 * calls rs_report_html() after rs_analyze().
 *
 * Panels: per-rank stacked bars of the step breakdown, the AllReduce phase timeline of one step (chosen in
 * the page; the slowest by default), per-QP bandwidth, the GPUDirect verdict with its evidence, the top
 * findings, and the run's warnings (partial inputs, drops).
 */
#ifndef RAILSCOPE_REPORT_HTML_H
#define RAILSCOPE_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "analysis.h"

/* Write the report to `path` ("-" = stdout). Returns 0, or -1 with a one-line reason in err (no
 * "railscope:" prefix) when the file cannot be written. */
int rs_report_html(const struct rs_analysis *a, const char *path, char *err, size_t errlen);
/* Same on an open stream (tests); returns 0 or -1 on a write error. */
int rs_report_html_write(const struct rs_analysis *a, FILE *f);

#endif
