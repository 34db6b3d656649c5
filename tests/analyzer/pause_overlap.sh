#!/bin/bash
# pause_overlap.sh EVERY_MS FOR_MS TRACE: the time (s) during which this rank had data-carrying send work
# requests (> 64 bytes: control WRs such as zero-byte credits are no network time, docs/report.md)
# outstanding (union over its QPs of post -> completion, completions in order per QP) while the software
# NIC was paused. The NIC pauses in windows [k*EVERY, k*EVERY+FOR) of CLOCK_MONOTONIC, the tracer clock,
# so this is computed from the raw events, independently of the analyzer.
every=$1 for=$2 trace=$3
"$RS_CLI" dump --json "$trace" |
    jq -r '(select(.kind == "ibv_post_send" and .ret == 0) | "P \(.ts_ns) \(.qp_num) \(.bytes)"),
           (select(.kind == "ibv_wc" and .opcode < 128) | "C \(.ts_ns) \(.qp_num)")' |
    awk -v E="$every" -v F="$for" '
    $1 == "P" { q = $3; by[q, n[q]] = $4; t[q, n[q]++] = $2; next }
    $1 == "C" { q = $3; if (h[q] < n[q]) { if (by[q, h[q]] > 64) iv[++m] = t[q, h[q]] " " $2; h[q]++ } }
    END {
        E *= 1e6; F *= 1e6
        # sort intervals by start (insertion sort is fine for a few thousand)
        for (i = 1; i <= m; i++) { split(iv[i], x, " "); a[i] = x[1]; b[i] = x[2] }
        for (i = 2; i <= m; i++) { ka = a[i]; kb = b[i]; j = i - 1
            while (j > 0 && a[j] > ka) { a[j+1] = a[j]; b[j+1] = b[j]; j-- } a[j+1] = ka; b[j+1] = kb }
        tot = 0; cur = -1
        for (i = 1; i <= m; i++) {
            s = a[i] > cur ? a[i] : cur; e = b[i]
            if (e > s) { tot += overlap(s, e); cur = e }
        }
        printf "%.9f\n", tot / 1e9
    }
    function overlap(s, e,   k, ws, we, o, lo, hi) {
        o = 0
        for (k = int(s / E); k * E < e; k++) {
            ws = k * E; we = ws + F
            lo = s > ws ? s : ws; hi = e < we ? e : we
            if (hi > lo) o += hi - lo
        }
        return o
    }'
