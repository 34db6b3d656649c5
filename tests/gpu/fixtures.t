#!/bin/bash
# Real multi-rank NCCL traces, recorded on one H200 by tests/gpu/scenarios.sh (ranks with distinct
# NCCL_HOSTID, planted stragglers, pinned/pageable batches, NVTX step names of several forms, NET/Socket),
# checked here without a GPU: `railscope report --json` of each tests/gpu/fixtures/<scenario>/trace against
# the truth.json the scenario's own scripts wrote (tests/gpu/check_scen.py: steps, straggler named and the
# others' wait, transport recorded, no intra-node time, GPUDirect NOT USED, pinned/pageable H2D bytes).
# Checks listed in tests/gpu/fixtures/TODO fail on the current analyzer (issue 15, analysis side): they are
# TAP TODO tests (reported, not failing the suite) until the analyzer gets them right; a TODO check that
# passes shows up as "unexpectedly succeeded": then remove its line from the TODO file.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
FX=$RS_TOP/tests/gpu/fixtures
[ -x "$RS_CLI" ] || skip_all "no $RS_CLI"
ls "$FX"/*/truth.json >/dev/null 2>&1 || skip_all "no fixtures in $FX"
TODO_IDS=$(grep -v '^#' "$FX/TODO" 2>/dev/null | awk '{print $1}')
lines=()
for d in "$FX"/*/; do
    d=${d%/}
    out=$(RS_CLI=$RS_CLI python3 "$RS_TOP/tests/gpu/check_scen.py" "$d" 2>&1)
    while IFS= read -r l; do
        case $l in PASS\ * | FAIL\ *) lines+=("$l") ;; esac
    done <<<"$out"
    if ! grep -q '^SUMMARY' <<<"$out"; then lines+=("FAIL $(basename "$d"):checker: $(tail -1 <<<"$out")"); fi
done
# The checker's own checks: straggler_named reads the analyzer's verdict (its peer-wait finding's structured
# fields, findings[].straggler), so a real report altered to name the wrong rank, a tie not in the truth, or a
# tie missing its ranks must fail it, and a tie where none was planted must pass. The words are not read: the
# words alone altered (texttie) change nothing, the fields removed (nofields: a stale report) fail.
# Each: fixture, alteration (mk_alt below), PASS or FAIL expected, what the got text must say.
alts=("s4_cpu none PASS rank 2" "s4_cpu rank0 FAIL rank 0" "s4_cpu tie02 FAIL tie of ranks \[0, 2\]"
    "s4_cpu tie23 FAIL tie of ranks \[2, 3\]" "s4_cpu nofinding FAIL no rank named"
    "s4_cpu texttie PASS rank 2" "s4_cpu nofields FAIL no structured verdict"
    "s4_cpu split FAIL verdict rank 2 contradicts the finding's rank -1"
    "s2_base rank0 FAIL rank 0" "s2_base tie01 PASS tie of ranks \[0, 1\]"
    "s2_base tie FAIL a tie without two distinct ranks" "s2_base tie1 FAIL a tie without two distinct ranks"
    "s2_base tie19 FAIL a tie without two distinct ranks of the run (\[1, 9\]"
    "s2_base tienokey FAIL tied_ranks None is not a list"
    "s2_gpu_s24 none PASS no rank named" "s2_gpu_s24 rank0 PASS rank 0" "s2_gpu_s24 rank1 FAIL rank 1"
    "s2_gpu_s24 tie01 FAIL tie of ranks \[0, 1\]" "s2_gpu_s24 costly1 FAIL no rank named")
mk_alt() { # FIXTURE ALTERATION OUT: the fixture's real report, altered
    "$RS_CLI" report --json "$FX/$1/trace" 2>/dev/null | python3 -c '
import json, sys
alt, rep = sys.argv[1], json.load(sys.stdin)
f = [x for x in rep["findings"] if x["category"] == "peer_wait"]
if not f:  # a fixture without a peer-wait finding: add one
    f = [dict(category="peer_wait", rank=-1, qp=0, cost_s=0.001, step_fraction=0.01,
              straggler=dict(verdict="none", rank=-1, tied_ranks=[], tie_margin=0.05), text="")]
    rep["findings"].append(f[0])
f = f[0]
# the words of analyzer/analyze_verdict.c for a tie
tie_text = ("Ranks wait 0.80 ms per step (1 %% of step time) in collectives for late ranks (no single rank is "
            "consistently last: 2 late ranks, tied: ranks %s, 0.38 ms per step each)")
if alt.startswith("rank"):
    f["rank"] = f["straggler"]["rank"] = int(alt[4:])
    f["straggler"].update(verdict="rank", tied_ranks=[])
elif alt.startswith("tie"):  # tieNM: a tie of ranks N and M; tie, tie1: fewer than two; tienokey: no list
    ranks = [int(c) for c in alt[3:]] if alt[3:].isdigit() else []
    f["rank"] = -1
    f["straggler"].update(verdict="tie", rank=-1, tied_ranks=ranks)
    if alt == "tienokey":
        del f["straggler"]["tied_ranks"]
    f["text"] = tie_text % " and ".join(map(str, ranks))
elif alt == "nofinding":
    rep["findings"] = [x for x in rep["findings"] if x["category"] != "peer_wait"]
elif alt == "texttie":  # the words say a tie, the fields still name the rank
    f["text"] = tie_text % "0 and 2"
elif alt == "nofields":
    del f["straggler"]
elif alt == "split":  # the fields name the rank, the finding names none
    f["rank"] = -1
elif alt == "costly1":  # the straggler table makes rank 1 the costliest late rank
    for x in rep["stragglers"]:
        x["cost_per_step_s"] = 0.004 if x["rank"] == 1 else 0.0001
elif alt != "none":
    sys.exit("unknown alteration " + alt)
json.dump(rep, sys.stdout)' "$2" >"$3"
}
for a in "${alts[@]}"; do
    read -r fx alt want said <<<"$a"
    if [ ! -d "$FX/$fx" ]; then
        lines+=("SKIPCHECK checker:$fx:$alt: no fixture $fx")
        continue
    fi
    mk_alt "$fx" "$alt" "$T/$fx.$alt.json"
    got=$(RS_CLI=$RS_CLI python3 "$RS_TOP/tests/gpu/check_scen.py" --straggler-only "$FX/$fx" "$T/$fx.$alt.json" 2>&1 |
        grep "^[A-Z]* [^ ]*:straggler_named:")
    if [[ $got == "$want "* ]] && grep -q -- "got .*$said" <<<"$got"; then
        lines+=("PASS checker:$fx:$alt: straggler_named $want on the fixture's report altered ($alt): ${got%%  expected*}")
    else
        lines+=("FAIL checker:$fx:$alt: straggler_named on the fixture's report altered ($alt): ${got:-(no line)}; expected $want, got ... $said")
    fi
done
# A planted GPU straggler that the script's own hook times judge persistently late must be named: the same real
# report ("no rank named") against the fixture's truth with measured_late saying persistent fails.
if [ -d "$FX/s2_gpu_s24" ]; then
    cp -r "$FX/s2_gpu_s24" "$T/gpupers"
    python3 -c 'import json,sys; p=sys.argv[1]; t=json.load(open(p)); t["measured_late"]["0"]["persistent"]=True
json.dump(t, open(p, "w"))' "$T/gpupers/truth.json"
    got=$(RS_CLI=$RS_CLI python3 "$RS_TOP/tests/gpu/check_scen.py" --straggler-only "$T/gpupers" 2>&1 |
        grep "^[A-Z]* s2_gpu:straggler_named:")
    if [[ $got == "FAIL "*"got no rank named"* ]]; then
        lines+=("PASS checker:s2_gpu_s24:persistent: straggler_named FAIL when the truth measured rank 0 persistently late")
    else
        lines+=("FAIL checker:s2_gpu_s24:persistent: straggler_named with the truth's rank 0 persistent: ${got:-(no line)}; expected FAIL")
    fi
else
    lines+=("SKIPCHECK checker:s2_gpu_s24:persistent: no fixture s2_gpu_s24")
fi
plan ${#lines[@]}
for l in "${lines[@]}"; do
    st=${l%% *}
    rest=${l#* }
    if [ "$st" = SKIPCHECK ]; then
        skip "${rest//#/\\#}"
        continue
    fi
    rest=${rest//#/\\#}
    id=${rest%%: *}
    todo=""
    grep -qxF "$id" <<<"$TODO_IDS" && todo=" # TODO issue 15: analyzer (tests/gpu/fixtures/TODO)"
    _tap_n=$((_tap_n + 1))
    if [ "$st" = PASS ]; then
        echo "ok $_tap_n - $rest$todo"
    else
        echo "not ok $_tap_n - $rest$todo"
        [ -z "$todo" ] && _tap_fail=$((_tap_fail + 1))
    fi
done
