# Helpers for the tests that record tests/analyzer/answer_chain on the software NIC and check the report's answer
# rule (straggler_answers.t, answer_stream.t, tests/softnic/answer_events.t), sourced after ../lib.sh and before plan:
# what they need (skip_all otherwise), and rec, q, state, prog, answered, events, thr.
# The file sets CHAIN_OPTS (an array) to the answer_chain options common to its runs before it calls rec.
need_cmd jq
need_build railscope librailscope.so softnic/libibverbs.so.1 tests/analyzer/answer_chain
CHAIN_OPTS=()

# rec NAME ARGS...: record answer_chain "${CHAIN_OPTS[@]}" ARGS on the software NIC (2 Gb/s) into $T/NAME, its output
# in $T/NAME.out; report it as JSON ($T/NAME.json, then $J) and text ($T/NAME.txt)
rec() {
    local name=$1
    shift
    rm -rf "$T/$name"
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T SOFTNIC_RATE_GBPS=2 run_timeout 60 "$RS_CLI" record -q \
        -o "$T/$name" -- "$RS_BUILD/tests/analyzer/answer_chain" "${CHAIN_OPTS[@]}" "$@" >"$T/$name.out" 2>&1 ||
        diag "record $name: $(tail -3 "$T/$name.out")"
    run_timeout 30 "$RS_CLI" report --json "$T/$name" >"$T/$name.json" 2>"$T/$name.err" ||
        diag "report $name: $(head -3 "$T/$name.err")"
    run_timeout 30 "$RS_CLI" report "$T/$name" >"$T/$name.txt" 2>/dev/null
    J=$T/$name.json
}
q() { jq -r "$@" "$J"; }
# steps, straggler basis, the late ranks ("rank:persistent"), the peer-wait finding's straggler ("-": no finding)
state() {
    q '"\(.nsteps),\(.straggler_basis),\([.stragglers[] | "\(.rank):\(.persistent)"] | join(" ")),\([.findings[] |
        select(.category == "peer_wait") | .straggler.rank][0] // "-")"'
}
# prog NAME RANK WHAT: the program's per-step times (ms) of WHAT (got, done, sent) on that rank
prog() { sed -n "s/^rank $2: $3 ms: //p" "$T/$1.out"; }
thr() { jq -r '[0.020, 0.01 * .step_mean_s * 1e3] | max' "$T/$1.json"; } # the lateness threshold, ms
# answered NAME R S: the truth for a responder from the program's clock, by the report's rule (analyze_join.c
# answers()): in a step rank R answers rank S when it polled the message no later than the threshold after S polled
# its send's completion. Prints "answered clearly-late" step counts: polled within half the threshold, after twice
# the threshold (and 50 us).
answered() {
    awk -v g="$(prog "$1" "$2" got)" -v d="$(prog "$1" "$3" done)" -v t="$(thr "$1")" 'BEGIN { n = split(g, x, " ")
        split(d, y, " "); for (i = 1; i <= n; i++) { a += x[i] <= y[i] + t / 2; l += x[i] > y[i] + 2 * t + 0.05 }
        print a + 0, l + 0 }'
}
# events NAME RANK: that rank's trace as JSON lines
events() { "$RS_CLI" dump --json "$(jq -r --argjson r "$2" '.ranks[] | select(.rank == $r) | .path' "$T/$1.json")"; }
# ran NAME: how many steps each of the 3 ranks sent its token in ("20 20 20 ": all of them)
ran() { for r in 0 1 2; do prog "$1" $r sent | wc -w; done | tr '\n' ' '; }
# nobody_late NAME MIN COUNT DESC: the run where every rank answers (the chain without a late rank): when ranks 1 and 2
# each answered their sender promptly (COUNT NAME R S's first number: answered, or the file's own rule) in more than
# MIN of the 20 steps, the report compares nobody ("cannot tell", DESC) and its text says so; otherwise both checks
# are skipped (loaded host)
nobody_late() {
    local name=$1 min=$2 count=$3 desc=$4 bad="" rs
    for rs in 1:0 2:1; do
        set -- $("$count" "$name" "${rs%:*}" "${rs#*:}")
        diag "$name: rank ${rs%:*} answered rank ${rs#*:} promptly in $1 of 20 steps"
        [ "$1" -gt "$min" ] || bad="$bad rank ${rs%:*} prompt in only $1 of 20;"
    done
    if [ -z "$bad" ]; then
        is "$(state)" "20,none: round trips,,-" "$desc"
        like "$(grep '^Stragglers' "$T/$name.txt")" 'cannot tell' "$name: the text says 'cannot tell'"
    else
        skip "loaded host:$bad" 2
    fi
}
