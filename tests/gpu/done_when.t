#!/bin/bash
# bench/gpu/done_when.py (issue 16's verdicts from one device call) on lock-step results and reports whose truth
# this test plants: a mode's step time per group, exit times, a killed process, report shares. Each goal must be
# judged met when the planted value is inside it and NOT met when outside, and the exit status must follow.
# The arithmetic only: the GPU runs themselves are bench/gpu/overhead.sh donewhen's (bench/gpu/RESULTS.md).
. "$(dirname "$0")/../lib.sh"
need_cmd python3
plan 37
DW="$RS_TOP/bench/gpu/done_when.py"

# mk FILE WORKLOAD DEFAULT FULL FLOOR TORCHPROF EXIT_DEFAULT [KILL]: three groups of eight, untraced 20 ms +- a
# per-group drift (which the per-group ratios must cancel), each mode's steps planted as that many times untraced
mk() {
    python3 - "$@" <<'EOF'
import json, os, sys
f, w, d, fu, fl, tp, ex = sys.argv[1:8]
kill = len(sys.argv) > 8
jit = float(os.environ.get("JITTER", "0"))  # the default's ratio per group: d x (1 - jit), d, d x (1 + jit)
pairs = []
for g, drift in enumerate((1.0, 1.07, 0.95)):
    procs = []
    dg = float(d) * (1 + jit * (g - 1))
    for mode, x in (("untraced", 1), ("default", dg), ("full", fu), ("min-full", fl), ("torchprof", tp),
                    ("untraced", 1), ("default", dg), ("full", fu)):
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
# rep FILE COMPUTE_MS IDLE_MS [WARNING]: a report's attribution per step (seconds)
rep() { printf '{"attribution_per_step": {"compute": %s, "h2d_exposed": 0.00001, "host_idle": %s, "other": 0.0001}, "warnings": ["%s"]}\n' \
    "$(python3 -c "print($2 / 1e3)")" "$(python3 -c "print($3 / 1e3)")" "${4:-}" >"$1"; }
line() { printf '%s\n' "$1" | grep -E -- "$2" | head -1; }

mk "$T/good.json" transformer 1.004 1.101 1.100 1.6 1.5
rep "$T/d.json" 14.3 3.4
rep "$T/f.json" 14.3 3.9
out=$(python3 "$DW" --lockstep "$T/good.json" --shares "transformer:$T/d.json:$T/f.json" 2>&1)
rc=$?
diag "$out"
is "$rc" 0 "every goal inside: exit 0"
like "$(line "$out" '^- default /')" '1\.0040 .*: met' "default x1.004 judged met"
like "$(line "$out" 'floor \+ 0\.3')" '\+0\.10 points.*: met' "full - floor +0.1 points judged met"
like "$(line "$out" 'torch\.profiler')" '150 x.*: met' "torch.profiler +60 % vs +0.4 %: 150 x, met"
like "$(line "$out" 'exits within')" '\+0\.50 s.*: met' "exits +0.5 s judged met"
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
like "$(line "$out" 'exits within')" 'group p1 full: no exit time \(killed\).*NOT met' "a killed traced process fails the exit goal"

printf '{"pairs": [' >"$T/trunc.json"
out=$(python3 "$DW" --lockstep "$T/trunc.json" 2>&1)
rc=$?
is "$rc" 2 "a truncated result file: exit 2"
like "$out" '^done_when: .*trunc\.json' "a truncated result file: a one-line error naming it"
out=$(python3 "$DW" --lockstep "$T/good.json" --shares "transformer:$T/d.json:$T/missing.json" 2>&1)
like "$out" 'not measured: .*missing\.json' "a missing report: said, and not counted as met"

# the interval: the same mean with a small spread between groups is met at 95 %, with a large one only as a
# point estimate; a mean over the bound with every group over it is NOT met at 95 %
JITTER=0.002 mk "$T/tight.json" transformer 1.004 1.101 1.100 1.6 1.5
like "$(line "$(python3 "$DW" --lockstep "$T/tight.json" 2>&1)" '^- default /')" ': met at 95 %' \
    "default x1.002/1.004/1.006 per group: met at 95 %"
JITTER=0.02 mk "$T/wide.json" transformer 1.004 1.101 1.100 1.6 1.5
like "$(line "$(python3 "$DW" --lockstep "$T/wide.json" 2>&1)" '^- default /')" ': met \(point estimate; not at 95 %\)' \
    "default x0.984/1.004/1.024 per group: met as a point estimate only"
JITTER=0.002 mk "$T/over.json" transformer 1.03 1.101 1.100 1.6 1.5
like "$(line "$(python3 "$DW" --lockstep "$T/over.json" 2>&1)" '^- default /')" ': NOT met at 95 %' \
    "default x1.028/1.03/1.032 per group: NOT met at 95 %"
JITTER=0.03 mk "$T/straddle.json" transformer 1.02 1.101 1.100 1.6 1.5
like "$(line "$(python3 "$DW" --lockstep "$T/straddle.json" 2>&1)" '^- default /')" ': NOT met \(point estimate; not at 95 %\)' \
    "default x0.99/1.02/1.05 per group: NOT met as a point estimate only"
# a default report whose windows covered no step has no shares to compare: not measured, not "NOT met"
rep "$T/d0.json" 0 0.1 "kernels were recorded in sampling windows: 97 % ... (1 of 1 ranks had no step inside a window to extrapolate from)"
out=$(python3 "$DW" --shares "resnet:$T/d0.json:$T/f.json" 2>&1)
like "$(line "$out" 'shares')" 'not measured: .*covered no step' "a default report without sampled steps: shares not measured"
# Several default reports (a lock-step call's kept default processes): the one whose windows covered the most steps
# is judged, whatever the order; one whose windows covered no step is passed over
rep "$T/d1.json" 10.0 7.7 "GPU activity was sampled: kernels and GPU copy times come from windows covering 1 of 200 steps (1 %)"
rep "$T/d3.json" 14.3 3.4 "GPU activity was sampled: kernels and GPU copy times come from windows covering 3 of 200 steps (2 %)"
out=$(python3 "$DW" --shares "transformer:$T/d1.json,$T/d0.json,$T/d3.json:$T/f.json,$T/f2.json" 2>&1)
diag "$out"
like "$(line "$out" 'within 5 points')" '2\.[0-9]+ points.*: met' "of three default reports the one with 3 sampled steps is judged (met)"
like "$(line "$out" '^   default: ')" 'd3\.json \(3 steps in its windows; the most of 2 usable reports\); full: f\.json \(first of 2\)' \
    "the pick is said: which report, its sampled steps, of how many"
out=$(python3 "$DW" --shares "transformer:$T/d3.json,$T/d1.json:$T/f.json" 2>&1)
like "$(line "$out" '^   default: ')" 'd3\.json' "the order of the candidates does not matter"

# the report's JSON "sampling" (session 12) is read before its sampling line: 4 steps there beat the line's 3
printf '{"attribution_per_step": {"compute": 0.0143, "host_idle": 0.0034}, "sampling": {"ranks": 1, "steps_in_windows": 4}, "warnings": []}\n' >"$T/d4.json"
out=$(python3 "$DW" --shares "transformer:$T/d3.json,$T/d4.json:$T/f.json" 2>&1)
like "$(line "$out" '^   default: ')" 'd4\.json \(4 steps in its windows' "the report's JSON sampling counts are used when present"
# the default reports' own measure of kernel tracing (JSON sampling.window_*, session 16), pooled by window steps:
# 4 steps at +20 % and 12 at +10 % = +12.5 %; a report without it counts for nothing
printf '{"attribution_per_step": {"compute": 0.0143, "host_idle": 0.0034}, "sampling": {"ranks": 1, "steps_in_windows": 4, "window_steps_measured": 4, "window_step_excess": 0.2}, "warnings": []}\n' >"$T/dw4.json"
printf '{"attribution_per_step": {"compute": 0.0143, "host_idle": 0.0034}, "sampling": {"ranks": 1, "steps_in_windows": 12, "window_steps_measured": 12, "window_step_excess": 0.1}, "warnings": []}\n' >"$T/dw12.json"
out=$(python3 "$DW" --shares "transformer:$T/dw4.json,$T/d3.json,$T/dw12.json:$T/f.json" 2>&1)
like "$(line "$out" "own measure")" 'window steps \+12\.5 % over 16 steps of 2 reports$' \
    "the default reports' window cost, pooled by their window steps"

# overhead.sh donewhen's time plan (a dry run on the GPU-less stub): DW_BUDGET is the transformer's; the ResNet
# groups' budget is the call's time left, so a transformer budget that stops its own groups (0 here: none run) does
# not stop ResNet's (at the default 160 s it stopped ResNet's third group, ~180 s in). Mutation: ResNet's budget
# min(DW_BUDGET, left) again -> 0 ResNet groups, not ok 25. (CPU 1: lockstep.t, maybe running beside it, uses 0.)
if [ -x "$RS_CLI" ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    OUT="$T/dw" RS_BUILD="$RS_BUILD" RS_NO_JIT_WARM=1 DW_TWORKLOAD=stub DW_RWORKLOAD=stub DW_CPUS=1 DW_ROUNDS=1 \
        DW_BUDGET=0 DW_TSTEPS=10 DW_RSTEPS=10 bash "$RS_TOP/bench/gpu/overhead.sh" donewhen >"$T/dw.log" 2>&1
    n=$(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))['pairs']))" "$T/dw/lockstep-stub.json" 2>&1)
    is "$n" 1 "donewhen: ResNet's groups run on the time left, whatever the transformer's DW_BUDGET" ||
        diag "$(grep -E '^== lockstep|budget' "$T/dw.log")"
    # a call returns 8 files: everything of $OUT is also in 0-all.tgz (first by name), never itself
    got=$(tar tzf "$T/dw/0-all.tgz" 2>&1 | grep -c -E '^(overhead\.log|lockstep-stub\.json|done_when\.json|0-all\.left\.txt)$')
    is "$got" 4 "0-all.tgz holds the log, the groups, the verdicts and the list of what stayed out"
    self=$(tar tzf "$T/dw/0-all.tgz" 2>&1 | grep -c '^0-all\.tgz')
    is "$self" 0 "0-all.tgz does not hold itself"
else
    skip "no railscope build, no taskset or one CPU"
    skip "no railscope build, no taskset or one CPU"
    skip "no railscope build, no taskset or one CPU"
fi

# overhead.sh fullfloor (session 17, the next call's first job): mirrored groups of min-full, full and full-notick,
# then the pooled ratios against min-full; a dry run on the stub, 2 groups
if [ -x "$RS_CLI" ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    OUT="$T/ff" RS_BUILD="$RS_BUILD" RS_NO_JIT_WARM=1 FF_WORKLOAD=stub DW_CPUS=1 DW_ROUNDS=2 DW_RSTEPS=10 DW_WARMUP=2 \
        bash "$RS_TOP/bench/gpu/overhead.sh" fullfloor >"$T/ff.log" 2>&1
    n=$(python3 -c "import json, sys; p = json.load(open(sys.argv[1]))['pairs']; print(len(p), p[0]['pair'].split(':') == p[1]['pair'].split(':')[::-1])" \
        "$T/ff/lockstep-stub.json" 2>&1)
    is "$n" "2 True" "fullfloor: DW_ROUNDS groups, the second the first's mirror" || diag "$(tail -5 "$T/ff.log")"
    like "$(grep -E '^stub +full +min-full +2 ' "$T/ff.log")" 'stub +full +min-full +2 ' \
        "fullfloor: full pooled against CUPTI's floor (min-full)"
else
    skip "no railscope build, no taskset or one CPU"
    skip "no railscope build, no taskset or one CPU"
fi

# a report of partial input (a killed full process: one long "step") and one with no GPU rank (a process that died
# at start-up, its sampling empty) are passed over, not judged (session 15's call 3 judged both)
printf '{"partial": true, "gpu_ranks": 1, "attribution_per_step": {"compute": 0.9, "host_idle": 5.5}, "warnings": []}\n' >"$T/fpart.json"
printf '{"partial": false, "gpu_ranks": 0, "attribution_per_step": {"other": 0.5}, "sampling": {"ranks": 0, "steps_in_windows": 0}, "warnings": []}\n' >"$T/dnogpu.json"
out=$(python3 "$DW" --shares "transformer:$T/dnogpu.json,$T/d3.json:$T/fpart.json,$T/f.json" 2>&1)
diag "$out"
like "$(line "$out" '^   default: ')" 'd3\.json \(3 steps in its windows; the most of 1 usable reports\); full: f\.json \(first of 1\)' \
    "a partial full report and a default report without a GPU rank are passed over"
like "$(line "$out" 'within 5 points')" '2\.[0-9]+ points.*: met' "the usable pair is judged"

# the parts against the untraced step of the report's own group (named "<workload>-p<row>-...", the row counting
# failed groups too): a failed row 0 first, so row 2 is the second usable group (drift 1.07, untraced 21.4 ms: 14.3 ms
# of compute is 66.82 % of it) and row 3 the third (drift 0.95, 19.0 ms: 75.26 %)
python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d['pairs'].insert(0, dict(pair='untraced:default', ok=False))
json.dump(d, open(sys.argv[2], 'w'))" "$T/good.json" "$T/goodf.json"
rep "$T/transformer-p2-G-default.json" 14.3 3.4
rep "$T/transformer-p3-C-full.json" 14.3 6.5
# (a passed-over report among the candidates must not change which workload's groups are looked up)
out=$(python3 "$DW" --lockstep "$T/goodf.json" \
    --shares "transformer:$T/transformer-p2-G-default.json:$T/fpart.json,$T/transformer-p3-C-full.json" 2>&1)
diag "$out"
like "$(line "$out" "default's parts against")" '\(21\.400 ms\): compute 66\.82 % \(report 80\.29 %, \+13\.47 points\)' \
    "the default's compute against its own group's untraced step (by row, failed rows counted)"
like "$(line "$out" "full's parts against")" '\(19\.000 ms\): compute 75\.26 % \(report 68\.39 %' "and full's, of its own group"
# the default report is taken from full's own lock-step group when it has one there (session 32: the groups run
# minutes apart and the host drifts; across groups a call's transformer shares were 11 points apart, 2.8-4.5 within
# one), even when another group's default sampled more steps; without one in that group, from any group
rep "$T/transformer-p1-B-default.json" 14.3 3.4 "GPU activity was sampled: kernels and GPU copy times come from windows covering 1 of 200 steps (1 %)"
rep "$T/transformer-p2-G-default.json" 14.3 3.4 "GPU activity was sampled: kernels and GPU copy times come from windows covering 3 of 200 steps (2 %)"
rep "$T/transformer-p1-C-full.json" 14.3 6.5
out=$(python3 "$DW" --shares "transformer:$T/transformer-p2-G-default.json,$T/transformer-p1-B-default.json:$T/transformer-p1-C-full.json" 2>&1)
like "$(line "$out" '^   default: ')" 'transformer-p1-B-default\.json \(1 steps in its windows; the most of 1 usable reports of full.s group p1\); full: transformer-p1-C-full' \
    "the default report of full's own group is judged, not another group's with more sampled steps" || diag "$out"
# none usable in full's group (its default's windows covered no step): another group's, said so; a workload named
# with "-p<n>-" of its own does not pass for the group
rep "$T/my-p3-net-p1-G-default.json" 14.3 3.4 "GPU activity was sampled: kernels and GPU copy times come from windows covering no step: no step inside a window"
rep "$T/my-p3-net-p2-B-default.json" 14.3 3.4 "GPU activity was sampled: kernels and GPU copy times come from windows covering 2 of 200 steps (1 %)"
rep "$T/my-p3-net-p1-C-full.json" 14.3 6.5
out=$(python3 "$DW" --shares "my-p3-net:$T/my-p3-net-p1-G-default.json,$T/my-p3-net-p2-B-default.json:$T/my-p3-net-p1-C-full.json" 2>&1)
like "$(line "$out" '^   default: ')" "my-p3-net-p2-B-default\.json \(2 steps in its windows; the most of 1 usable reports; none usable of full's group p1, so from group p2\)" \
    "no usable default in full's group: another group's, and the verdict says so" || diag "$out"
