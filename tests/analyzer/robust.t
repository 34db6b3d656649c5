#!/bin/bash
# Hostile but decodable input: rs-synth --garbage adds events of random kinds with random fields, ids and
# times to every rank file. The report must neither crash nor hang, must print valid JSON, and must exit
# 0 or 1. Also: empty directories, a lone launcher file, and a non-trace file.
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope synth/rs-synth
SYNTH=$RS_BUILD/synth/rs-synth
plan 15
for seed in 1 2 3 4 5 6 7 8 9 10; do
    rm -rf "$T/g"
    "$SYNTH" -o "$T/g" --nodes 2 --gpus 2 --steps 4 --kernels 5 --pause 1:3 --garbage $((seed * 60)) --seed $seed
    run_timeout 30 "$RS_CLI" report --json "$T/g" >"$T/g.json" 2>"$T/g.err"
    rc=$?
    ok "garbage seed $seed: exit $rc (0/1), valid JSON" test $rc -le 1 -a -s "$T/g.json" -a "$(jq -e 'has("ranks")' "$T/g.json")" = true
done
# the same rank files twice (a copied directory): duplicate ranks and repeated collective keys
rm -rf "$T/dup" && "$SYNTH" -o "$T/dup" --nodes 1 --gpus 3 --steps 3 --no-plugin --straggler 1:2 >/dev/null
for f in "$T"/dup/*.rtrace; do cp "$f" "${f%.rtrace}-copy.rtrace"; done
run_timeout 30 "$RS_CLI" report --json "$T/dup" >"$T/dup.json" 2>/dev/null
is "$?" 0 "duplicated rank files: report completes"
like "$(jq -r '.warnings[]' "$T/dup.json")" 'appears in more than one file' "duplicated rank files: said so"
mkdir -p "$T/empty"
out=$("$RS_CLI" report "$T/empty" 2>&1); rc=$?
like "$rc $out" '^2 railscope: ' "empty directory: one-line error, exit 2"
printf 'hello' >"$T/notatrace.rtrace"
out=$("$RS_CLI" report "$T/notatrace.rtrace" 2>&1); rc=$?
like "$rc $out" '^2 railscope: report: no readable trace' "a non-trace file alone: exit 2"
out=$("$RS_CLI" report --help); rc=$?
like "$rc $out" '^0 usage: railscope report' "--help"
