#!/bin/bash
# The JSON report's numbers: rs_fmt_g9 (analyzer/fmt_num.c, a fast "%.9g") must print exactly what
# printf prints, for random doubles of every magnitude, the report's kinds of values, decimal rounding
# ties and decade edges (rs-fmtcheck prints the first mismatch).
. "$(dirname "$0")/../lib.sh"
need_build tests/analyzer/rs-fmtcheck
plan 1
out=$(run_timeout 60 "$RS_BUILD/tests/analyzer/rs-fmtcheck" 300000)
like "$out" '^ok [0-9]+$' "rs_fmt_g9 == printf %.9g ($out)"
