#!/bin/bash
# The HTML report renders odd hand-built models (no ranks, no steps, out-of-range values, text needing
# escapes) into whole pages: see html_edge.c.
. "$(dirname "$0")/../lib.sh"
need_build tests/html/html_edge
_tap_planned=1   # the program prints its own plan
run_timeout 20 "$RS_BUILD/tests/html/html_edge"
