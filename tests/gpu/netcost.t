#!/bin/bash
# bench/gpu/netcost.py (issue 16: the default's cost on NCCL's network path) run here with --dry: the ranks sleep
# instead of calling NCCL. A mode planted 20 % slower must come out 1.1-1.35 times untraced at both sizes; a traced
# mode (railscope record around the two-rank job) must run and its trace be summarised; an unknown mode is refused.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_build railscope
plan 6
out=$(RS_BUILD=$RS_BUILD python3 "$RS_TOP/bench/gpu/netcost.py" --dry --modes untraced,stub-slow20,default --rounds 2 \
    --iters 25 --sizes 20000000,1000 --work "$T/w" --out "$T/o" 2>&1)
ok "the harness wrote its result" test -s "$T/o/netcost.json" || diag "$out"
ratio() { python3 -c "import json; print(json.load(open('$T/o/netcost.json'))['summary']['$1']['ratio'])"; }
ok "planted 20 %: found at 20 MB ($(ratio stub-slow20/20000000))" \
    python3 -c "import sys; sys.exit(0 if 1.1 <= $(ratio stub-slow20/20000000) <= 1.35 else 1)"
ok "planted 20 %: found at 1 kB ($(ratio stub-slow20/1000))" \
    python3 -c "import sys; sys.exit(0 if 1.1 <= $(ratio stub-slow20/1000) <= 1.35 else 1)"
like "$out" "events: +[0-9]+ in [0-9]+ frames" "the traced job's trace is summarised (railscope info)"
bad=$(python3 "$RS_TOP/bench/gpu/netcost.py" --dry --modes untraced,nosuch --out "$T/o2" 2>&1)
is "$?" 2 "an unknown mode is a usage error (exit 2)"
like "$bad" "unknown mode nosuch" "and says which"
