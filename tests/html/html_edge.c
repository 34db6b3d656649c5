/* Renders hand-built analysis models that the analyzer rarely produces but a damaged run can: no ranks,
 * ranks without steps or QPs, collectives outside any step, zero and huge values, text needing escapes.
 * The HTML must come out whole (closing tag present), escaped, and without a crash. Prints TAP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/report_html.h"

static int n;
static void check(int cond, const char *what) { printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what); }

static char *render(const struct rs_analysis *a, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = rs_report_html_write(a, f);
    fclose(f);
    return buf;
}

int main(void)
{
    printf("1..10\n");
    struct rs_analysis empty;
    memset(&empty, 0, sizeof empty);
    int rc;
    /* as the analyzer marks a run with nothing to analyse: one line, no panels */
    char *h = render(&empty, &rc);
    check(rc == 0 && strstr(h, "</html>") && strstr(h, "id=\"nothing\"") && !strstr(h, "allreduce-timeline"),
          "a model with nothing analysable: a whole page saying so, no panels");
    free(h);
    empty.analysable = 1; /* the panels' own edge cases below */
    h = render(&empty, &rc);
    check(rc == 0 && strstr(h, "</html>"), "an empty model renders a whole page");
    check(strstr(h, "No collectives joined") != NULL, "empty model: the AllReduce panel says there is nothing");
    free(h);

    struct rs_an_rank ranks[2];
    memset(ranks, 0, sizeof ranks);
    ranks[0].rank = 0;
    strcpy(ranks[0].host, "<script>alert(1)</script>");
    ranks[1].rank = 1;
    ranks[1].input = RS_AN_TRUNCATED;
    struct rs_an_step st[2] = {{.id = 7, .start_ns = 0, .end_ns = 1000000},
                               {.id = 8, .start_ns = 1000000, .end_ns = 1000000}};
    st[0].attr[RS_CAT_COMPUTE] = 1e-3;
    ranks[0].steps = st;
    ranks[0].nsteps = 2;
    ranks[0].attr[RS_CAT_COMPUTE] = 1e-3;
    ranks[0].attr[RS_CAT_STALL] = 1e300; /* absurd, must not break the layout code */
    struct rs_an_qp qp = {.qp_num = 5, .peer_rank = 1, .bytes_sent = 123};
    ranks[0].qps = &qp;
    ranks[0].nqps = 1; /* path empty: no trace to read for the bandwidth panel */
    struct rs_an_coll co[2];
    memset(co, 0, sizeof co);
    strcpy(co[0].func, "AllReduce");
    co[0].step = 7; /* a collective's step is the step's id, as the steps' ids (7, 8): not its position */
    co[0].first_arrival_ns = 10;
    co[0].last_arrival_ns = 10; /* zero skew, zero duration */
    co[0].end_ns = 10;
    strcpy(co[1].func, "Broadcast");
    co[1].step = -1; /* outside any step */
    struct rs_analysis a;
    memset(&a, 0, sizeof a);
    a.analysable = 1;
    a.ranks = ranks;
    a.nranks = 2;
    a.colls = co;
    a.ncolls = 2;
    a.nsteps = 2;
    a.partial = 1;
    a.nfindings = 1;
    a.findings[0].cat = 99; /* out of range */
    strcpy(a.findings[0].text, "QP 5 stalls & \"waits\" <long>");
    a.nwarnings = 1;
    strcpy(a.warnings[0], "rank 1: truncated");
    a.gd_verdict = 42;
    struct rs_an_hostcheck hc = {.fail = 1};
    strcpy(hc.host, "node<1>");
    strcpy(hc.check, "gdr.peermem");
    strcpy(hc.msg, "nvidia_peermem not loaded & \"GPUDirect\" off");
    strcpy(hc.fix, "modprobe nvidia_peermem");
    a.hostchecks = &hc;
    a.nhostchecks = 1;
    h = render(&a, &rc);
    check(rc == 0 && strstr(h, "</html>"), "an odd model renders a whole page");
    check(!strstr(h, "<script>alert"), "host names are escaped");
    check(strstr(h, "&lt;long&gt;") && strstr(h, "&amp;"), "finding text is escaped");
    check(strstr(h, "id=\"partial\"") != NULL, "a partial run says so");
    const char *s7 = strstr(h, "id=\"step-7\""), *s8 = strstr(h, "id=\"step-8\"");
    const char *ar = strstr(h, ">AllReduce #");
    check(s7 && s8 && strstr(h, "<option value=\"7\" selected>step 7 (slowest)") &&
              strstr(h, "<option value=\"8\">step 8") && ar && ar > s7 && ar < s8,
          "one chooser entry per step id, the slowest selected, its collective drawn in it");
    check(strstr(h, ">UNKNOWN<") != NULL, "an out-of-range verdict shows as UNKNOWN");
    check(strstr(h, "id=\"host-checks\"") && strstr(h, "node&lt;1&gt;") && strstr(h, ">FAIL<"),
          "host checks are listed, escaped, with their verdict");
    free(h);
    return 0;
}
