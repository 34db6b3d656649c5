#!/bin/bash
# `railscope report --html` draws the tree AllReduce phases (reduce up, broadcast down: reduce_s/bcast_s of
# the analysis) in the AllReduce timeline, as it draws a ring's reduce-scatter/all-gather halves: one
# "tree-reduce" and one "tree-bcast" bar per drawn tree collective, their widths in the ratio of the
# report's reduce_s/broadcast_s, a legend for them; a ring run has neither. No browser needed.
. "$(dirname "$0")/../lib.sh"
need_build railscope synth/rs-synth
need_cmd jq
plan 8

"$RS_BUILD/synth/rs-synth" -o "$T/tree" --algo tree --nodes 4 --gpus 2 --steps 4 --pause 2:4 \
    >/dev/null 2>&1 || bail "rs-synth failed"
run_timeout 60 "$RS_CLI" report --quiet --json --html "$T/tree.html" "$T/tree" >"$T/tree.json"; rc=$?
like "$rc" '^[01]$' "report --json --html on a tree run (exit $rc)"
# the timeline draws the collectives of steps 0 .. nsteps-1 (one svg per step)
want_r=$(jq '.nsteps as $n | [.collectives[] | select(.step >= 0 and .step < $n and .reduce_s > 0)] | length' "$T/tree.json")
want_b=$(jq '.nsteps as $n | [.collectives[] | select(.step >= 0 and .step < $n and .broadcast_s > 0)] | length' "$T/tree.json")
like "$want_r" '^[1-9]' "the analysis found tree phases ($want_r collectives with reduce_s > 0)"
is "$(grep -c '<rect class="phase tree-reduce"' "$T/tree.html")" "$want_r" "one reduce (up) bar per drawn tree collective"
is "$(grep -c '<rect class="phase tree-bcast"' "$T/tree.html")" "$want_b" "one broadcast (down) bar per drawn tree collective"
like "$(cat "$T/tree.html")" 'tree reduce \(up\)</span>.*tree broadcast \(down\)</span>' "the legend names both phases"
# the first drawn collective: bar widths in the ratio of its reduce_s / broadcast_s (bars >= 0.5 px wide)
ratio=$(jq -r '[.collectives[] | select(.step == 0)][0] | if .broadcast_s > 0 then .reduce_s / .broadcast_s else "none" end' "$T/tree.json")
wr=$(grep -m1 -o '<rect class="phase tree-reduce"[^>]*' "$T/tree.html" | sed 's/.*width="\([0-9.]*\)".*/\1/')
wb=$(grep -m1 -o '<rect class="phase tree-bcast"[^>]*' "$T/tree.html" | sed 's/.*width="\([0-9.]*\)".*/\1/')
like "$(awk -v r="$ratio" -v a="$wr" -v b="$wb" 'BEGIN { d = a / b - r; if (d < 0) d = -d; print (r > 0 && b > 1 && d <= 0.02 * r + 0.01) ? "ok" : "off" }')" \
    '^ok$' "bar widths $wr / $wb px match reduce_s / broadcast_s = $ratio"

"$RS_BUILD/synth/rs-synth" -o "$T/ring" --nodes 2 --gpus 2 --steps 3 >/dev/null 2>&1 || bail "rs-synth failed"
run_timeout 60 "$RS_CLI" report --quiet --html "$T/ring.html" "$T/ring" >/dev/null
unlike "$(cat "$T/ring.html")" 'tree-reduce|tree-bcast|tree reduce' "a ring run draws no tree phases"
like "$(grep -c '<title>reduce-scatter ' "$T/ring.html")" '^[1-9]' "and still its reduce-scatter halves"
