# Helpers for the .t files that write a crafted-trace generator (craft.h) into $T/gen.c and check the report's
# straggler verdict on its runs (answer_busy.t, answer_events.t), sourced after ../lib.sh and before plan: what they
# need (skip_all otherwise), and craft_build, craft_report, q, state, named.
need_build railscope
need_cmd cc
need_cmd jq
# craft_build: compile $T/gen.c (with craft.h and the writer) into $T/gen; bail when it does not build
craft_build() {
    cc -std=gnu11 -O1 -D_GNU_SOURCE -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/gen" "$T/gen.c" \
        "$RS_TOP/tracer/writer.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd -lpthread ||
        bail "cannot build the generator"
}
# craft_report NAME: report the generated $T/NAME as JSON ($T/NAME.json, then $J) and text ($T/NAME.txt)
craft_report() {
    "$RS_CLI" report --json "$T/$1" >"$T/$1.json" 2>"$T/$1.err" || diag "report $1: $(head -3 "$T/$1.err")"
    "$RS_CLI" report "$T/$1" >"$T/$1.txt" 2>/dev/null
    J=$T/$1.json
}
q() { jq -r "$@" "$J"; }
# steps, straggler basis, the late ranks ("rank:persistent:late_count/of"), the peer-wait finding's straggler
state() {
    q '"\(.nsteps),\(.straggler_basis),\([.stragglers[] | "\(.rank):\(.persistent):\(.late_count)/\(.of)"] |
        join(" ")),\([.findings[] | select(.category == "peer_wait") | .straggler.rank][0] // "-")"'
}
# the state of the crafted 20-step chain whose rank 1 is late on its own: the persistent straggler in every step, named
named="20,first data send per step,1:true:20/20,1"
