#!/bin/bash
# The GPUDirect section, its finding and its evidence against planted cases (rs-mkgd gdr: 2 ranks, 10 steps, each
# 10 sends of 256 KiB and 40 zero-byte receives; audit s18 by helper-50, items 3, 4, 7, 8).
# 3. The section's qualifier used "no GPU activity traced" alone: "USED (... a host-memory program, not a fault)" over
#    "posted 2.6 MB from GPU memory"; "NOT USED (... not a fault)" where a device MR was registered and the top
#    finding said GPUDirect NOT USED is a fault; "UNKNOWN (... a host-memory program)" and "no RDMA traffic recorded"
#    when RAILSCOPE_EVENTS left verbs out. Now the finding's own test (GPU memory registered or posted, or a GPU
#    program) decides, and text, JSON (gpudirect.gpu_memory/fault/note) and HTML (#gd-note) say the same.
# 4. The GPUDirect finding was filed as "intra_node_exposed" with a 5 % floor shown as its cost; now category
#    "gpudirect" with the measured bounce copies (0.2 ms of a 10 ms step), the floor for ranking only.
# 7. "in 50 WRs" counted the 40 receives as sends: now "(10 sends, 40 receives)", send_posts/recv_posts in JSON.
# 8. The HTML QP table printed QP numbers in decimal (264): now 0x108, as the text.
. "$(dirname "$0")/../lib.sh"
need_build tests/analyzer/rs-mkgd railscope
need_cmd jq
plan 23
MK=$RS_BUILD/tests/analyzer/rs-mkgd
rep() { # NAME MODE0 MODE1 [OPT]: traces, text, JSON, HTML
    local n=$1
    shift
    mkdir -p "$T/$n" && "$MK" gdr "$T/$n" "$@" || bail "rs-mkgd gdr $* failed"
    "$RS_CLI" report "$T/$n" >"$T/$n.txt" 2>/dev/null
    "$RS_CLI" report --json "$T/$n" >"$T/$n.json" 2>/dev/null
    "$RS_CLI" report --html "$T/$n.html" "$T/$n" >/dev/null 2>&1
}
gdline() { grep '^GPUDirect RDMA:' "$T/$1.txt"; }
note() { jq -r '.gpudirect.note' "$T/$1.json"; }
htmlnote() { sed -n 's/.*<p id="gd-note">\([^<]*\)<\/p>.*/\1/p' "$T/$1.html"; }

# device memory posted: USED, nothing about a host-memory program
rep dd dev dev
is "$(gdline dd)" "GPUDirect RDMA: USED" "dev/dev: USED, no 'host-memory program' over 'posted from GPU memory'"
is "$(jq -c '.gpudirect | [.verdict, .gpu_memory, .fault, .note]' "$T/dd.json")" '["USED",true,false,""]' \
    "dev/dev JSON: GPU memory, no fault, no note"

# a device MR registered, sends from host memory: NOT USED is a fault, in the section as in the finding
rep dr devreg devreg
like "$(gdline dr)" '^GPUDirect RDMA: NOT USED \(a fault: GPU memory is registered' \
    "devreg: the section calls NOT USED a fault (GPU memory registered)"
unlike "$(gdline dr)" 'not a fault|host-memory program' "devreg: not 'a host-memory program, not a fault'"
is "$(jq -c '.gpudirect | [.gpu_memory, .fault]' "$T/dr.json")" '[true,true]' "devreg JSON: gpu_memory and fault"
is "$(jq -r '[.findings[] | select(.category == "gpudirect")] | length' "$T/dr.json")" 1 \
    "devreg: the GPUDirect finding agrees (category gpudirect)"
is "$(htmlnote dr)" "$(note dr)" "devreg: HTML note = JSON note"
is "$(gdline dr)" "GPUDirect RDMA: NOT USED ($(note dr))" "devreg: text qualifier = JSON note"

# host memory only: NOT USED, not a fault, no finding
rep hh host host
like "$(gdline hh)" '^GPUDirect RDMA: NOT USED \(.*a host-memory program, not a fault\)$' "host/host: not a fault"
is "$(jq -c '[.gpudirect.fault, ([.findings[] | select(.category == "gpudirect")] | length)]' "$T/hh.json")" \
    '[false,0]' "host/host JSON: no fault, no finding"

# verbs not captured: UNKNOWN because nothing was recorded, not a host-memory program
rep nv host host noverbs
like "$(gdline nv)" '^GPUDirect RDMA: UNKNOWN \(verbs not captured' "noverbs: UNKNOWN, verbs not captured"
unlike "$(cat "$T/nv.txt")" 'no RDMA traffic recorded|host-memory program' \
    "noverbs: no 'no RDMA traffic recorded', no 'host-memory program'"
like "$(jq -r '.ranks[0].gpudirect.evidence' "$T/nv.json")" '^verbs not captured' "noverbs: the rank's evidence says so"
is "$(htmlnote nv)" "$(note nv)" "noverbs: HTML note = JSON note"

# 4. bounce copies (a GPU program): the finding's own category, its measured cost, no floor shown
rep bb host host bounce
is "$(jq -r '[.findings[] | select(.text | startswith("GPUDirect"))][0].category' "$T/bb.json")" gpudirect \
    "bounce: the GPUDirect finding's category is gpudirect, not intra_node_exposed"
f=$(jq -c '[.findings[] | select(.category == "gpudirect")][0] | [.cost_s, .step_fraction]' "$T/bb.json")
ok "bounce: cost = the bounce copies measured, 10 x 0.2 ms, 2-2.5 % of the step, not the 5 % floor ($f)" \
    jq -e '[.findings[] | select(.category == "gpudirect")][0] | (.cost_s - 0.002 | fabs) < 1e-6
        and .step_fraction > 0.019 and .step_fraction < 0.025' "$T/bb.json"
like "$(grep -o '<li class="finding"><b>[^<]*</b> ([^)]*)[^:]*: GPUDirect' "$T/bb.html")" \
    '^<li class="finding"><b>2\.[0-4]% of step time</b> \(2 ms over the run, bounce copies' \
    "bounce HTML: the measured share and 'bounce copies', not 5.0% of intra-node communication"
unlike "$(grep -o '<li class="finding">[^<]*<b>[^<]*</b>[^:]*: GPUDirect' "$T/bb.html")" 'intra-node' \
    "bounce HTML: the finding is not labelled intra-node"
like "$(grep '^  [0-9]\. GPUDirect' "$T/bb.txt")" 'bounce copies take 0\.20 ms per step \(2\.[0-4] % of step time\)' \
    "bounce text: the measured cost"

# 7. WRs: 10 sends and 40 receives per rank, said apart
like "$(jq -r '.ranks[0].gpudirect.evidence' "$T/dd.json")" 'in 50 WRs \(10 sends, 40 receives\)' \
    "evidence: 50 WRs, 10 of them sends"
is "$(jq -c '[.ranks[].gpudirect | [.posts, .send_posts, .recv_posts]]' "$T/dd.json")" '[[50,10,40],[50,10,40]]' \
    "JSON: posts, send_posts, recv_posts per rank"
is "$(jq -c '[.ranks[0].qps[0].gpudirect | .posts, .send_posts, .recv_posts]' "$T/dd.json")" '[50,10,40]' \
    "JSON: the same per QP"

# 8. QP numbers in hex in the HTML, as in the text
is "$(grep -c '<td>0x108</td>' "$T/dd.html") $(grep -c '<td>264</td>' "$T/dd.html")" "1 0" \
    "HTML QP table: 0x108, not 264"
exit 0
