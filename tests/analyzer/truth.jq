# Compare a `railscope report --json` document (input) with an rs-synth truth file ($truth[0]), per step:
# the report's per-rank totals over its own step count against the truth's over the generated steps.
# Prints: "<max deviation as a fraction of the mean step> <rank> <category> <report s/step> <truth s/step>".
$truth[0] as $t
| ($t.steps) as $n | ($t.step_mean_s) as $sm
| [ $t.ranks[] as $tr
    | (.ranks[] | select(.rank == $tr.rank)) as $r
    | ($r.nsteps | if . > 0 then . else 1 end) as $rn
    | $tr.attribution | keys[] as $k
    | (($r.attribution[$k] // 0) / $rn) as $got | ($tr.attribution[$k] / $n) as $want
    | { d: (($got - $want) / $sm | fabs), rank: $tr.rank, k: $k, got: $got, want: $want } ]
| max_by(.d)
| "\(.d) \(.rank) \(.k) \(.got) \(.want)"
