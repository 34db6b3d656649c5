# Helpers for the rs-synth ground-truth tests (sourced after ../lib.sh): run, q, within.
SYNTH=$RS_BUILD/synth/rs-synth
HERE=$(dirname "$0")
# run NAME SYNTH-ARGS...: generate, report, and check the attribution against the truth.
run() {
    local name=$1
    shift
    rm -rf "$T/$name"
    "$SYNTH" -o "$T/$name" --truth "$T/$name.truth" "$@" || bail "rs-synth $* failed"
    run_timeout 60 "$RS_CLI" report --json "$T/$name" >"$T/$name.json" 2>"$T/$name.err"
    RC=$?
    J=$T/$name.json
    TR=$T/$name.truth
    local dev
    dev=$(jq -r --slurpfile truth "$TR" -f "$HERE/truth.jq" "$J")
    ok "$name: every rank's categories within 5 % of step time of the truth (worst: $dev)" \
        awk -v d="${dev%% *}" 'BEGIN { exit !(d <= 0.05) }'
}
q() { jq -r "$@" "$J"; }
within() { # GOT WANT TOL
    awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'
}

