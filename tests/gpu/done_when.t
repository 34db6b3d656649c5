#!/bin/bash
# bench/gpu/done_when.py (issue 16's verdicts from one device call) on lock-step results and reports whose truth
# this test plants: a mode's step time per group, exit times, a killed process, report shares. Each goal must be
# judged met when the planted value is inside it and NOT met when outside, and the exit status must follow.
# The arithmetic only: the GPU runs themselves are bench/gpu/overhead.sh donewhen's (bench/gpu/RESULTS.md).
. "$(dirname "$0")/../lib.sh"
need_cmd python3
plan 16
DW="$RS_TOP/bench/gpu/done_when.py"

# mk FILE WORKLOAD DEFAULT FULL FLOOR TORCHPROF EXIT_DEFAULT [KILL]: three groups of eight, untraced 20 ms +- a
# per-group drift (which the per-group ratios must cancel), each mode's steps planted as that many times untraced
mk() {
    python3 - "$@" <<'EOF'
import json, sys
f, w, d, fu, fl, tp, ex = sys.argv[1:8]
kill = len(sys.argv) > 8
pairs = []
for g, drift in enumerate((1.0, 1.07, 0.95)):
    procs = []
    for mode, x in (("untraced", 1), ("default", d), ("full", fu), ("min-full", fl), ("torchprof", tp),
                    ("untraced", 1), ("default", d), ("full", fu)):
        ms = 20 * drift * float(x)
        e = float(ex) if mode in ("default", "full") else 1.0
        r = dict(mode=mode, mean_ms=ms, median_ms=ms, exit_s=e, exit_valid=True, killed=False)
        if kill and g == 1 and mode == "full":
            r.update(exit_s=None, exit_valid=False, killed=True)
        procs.append(r)
    pairs.append(dict(pair=":".join(p["mode"] for p in procs), ok=True, procs=procs))
json.dump(dict(workload=w, pairs=pairs), open(f, "w"))
EOF
}
# rep FILE COMPUTE_MS IDLE_MS: a report's attribution per step (seconds)
rep() { printf '{"attribution_per_step": {"compute": %s, "h2d_exposed": 0.00001, "host_idle": %s, "other": 0.0001}}\n' \
    "$(python3 -c "print($2 / 1e3)")" "$(python3 -c "print($3 / 1e3)")" >"$1"; }
line() { printf '%s\n' "$1" | grep -E -- "$2" | head -1; }

mk "$T/good.json" transformer 1.004 1.101 1.100 1.6 1.5
rep "$T/d.json" 14.3 3.4
rep "$T/f.json" 14.3 3.9
out=$(python3 "$DW" --lockstep "$T/good.json" --shares "transformer:$T/d.json:$T/f.json" 2>&1)
rc=$?
diag "$out"
is "$rc" 0 "every goal inside: exit 0"
like "$(line "$out" '^- default /')" '1\.0040 .*met' "default x1.004 judged met"
like "$(line "$out" 'floor \+ 0\.3')" '\+0\.10 points.*: met' "full - floor +0.1 points judged met"
like "$(line "$out" 'torch\.profiler')" '150 x.*met' "torch.profiler +60 % vs +0.4 %: 150 x, met"
like "$(line "$out" 'exits within')" '\+0\.50 s.*met' "exits +0.5 s judged met"
like "$(line "$out" 'within 5 points')" '2\.[0-9]+ points.*: met' "shares 2 points apart judged met"

mk "$T/bad.json" transformer 1.03 1.13 1.10 1.2 3.5
rep "$T/f2.json" 14.3 6.5
out=$(python3 "$DW" --lockstep "$T/bad.json" --shares "transformer:$T/d.json:$T/f2.json" 2>&1)
rc=$?
diag "$out"
is "$rc" 1 "goals outside: exit 1"
like "$(line "$out" '^- default /')" 'NOT met' "default x1.03 judged NOT met"
like "$(line "$out" 'floor \+ 0\.3')" '\+3\.00 points.*NOT met' "full - floor +3 points judged NOT met"
like "$(line "$out" 'torch\.profiler')" ' 7 x.*NOT met' "torch.profiler +20 % vs +3 %: 7 x, NOT met"
like "$(line "$out" 'exits within')" '\+2\.50 s.*NOT met' "exits +2.5 s judged NOT met"
like "$(line "$out" 'within 5 points')" 'NOT met' "shares ~10 points apart judged NOT met"

mk "$T/killed.json" resnet 1.004 1.101 1.100 1.6 1.0 kill
out=$(python3 "$DW" --lockstep "$T/killed.json" 2>&1)
like "$(line "$out" 'exits within')" 'group 2 full: no exit time \(killed\).*NOT met' "a killed traced process fails the exit goal"

printf '{"pairs": [' >"$T/trunc.json"
out=$(python3 "$DW" --lockstep "$T/trunc.json" 2>&1)
rc=$?
is "$rc" 2 "a truncated result file: exit 2"
like "$out" '^done_when: .*trunc\.json' "a truncated result file: a one-line error naming it"
out=$(python3 "$DW" --lockstep "$T/good.json" --shares "transformer:$T/d.json:$T/missing.json" 2>&1)
like "$out" 'unusable report .*missing\.json.*NOT measured' "a missing report: said, and not counted as met"
